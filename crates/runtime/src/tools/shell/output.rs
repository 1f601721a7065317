//! Reading a command's output without holding more than the cap in memory,
//! and ending it — with everything it started — on timeout or cancel.

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

/// Bytes of stdout and of stderr kept; the rest is read and counted.
pub(crate) const MAX_OUTPUT: usize = 16 * 1024;

pub(crate) enum End {
    Exited(i32),
    Signalled,
    TimedOut,
    Cancelled,
    Failed(String),
}

pub(crate) struct Run {
    stdout: Captured,
    stderr: Captured,
    pub end: End,
}

#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    dropped: usize,
}

impl Captured {
    fn render(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!("\n[truncated: {} more bytes]", self.dropped));
        }
        text
    }
}

impl Run {
    /// stdout, then stderr under a `[stderr]` line when there is any.
    pub(super) fn text(&self) -> String {
        let mut text = self.stdout.render();
        let stderr = self.stderr.render();
        if !stderr.trim().is_empty() {
            text.push_str("\n[stderr]\n");
            text.push_str(&stderr);
        }
        text
    }
}

/// Keep the first `MAX_OUTPUT` bytes of `reader`, count the rest, until
/// the end of the output or `stop`.
async fn capture(reader: Option<impl AsyncRead + Unpin>, stop: CancellationToken) -> Captured {
    let mut out = Captured::default();
    let Some(mut reader) = reader else {
        return out;
    };
    let mut buf = [0u8; 8192];
    loop {
        let read = tokio::select! {
            r = reader.read(&mut buf) => r,
            () = stop.cancelled() => return out,
        };
        match read {
            Ok(0) | Err(_) => return out,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(out.kept.len());
                let keep = n.min(room);
                out.kept.extend_from_slice(&buf[..keep]);
                out.dropped += n - keep;
            }
        }
    }
}

/// Kill the process group `pgid` (the command was started as its own
/// group; the group outlives its leader while members remain).
fn kill_group(pgid: Option<u32>) {
    if let Some(pid) = pgid {
        // SAFETY: killpg only sends a signal.
        unsafe {
            libc::killpg(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// How long output is still read after the command ended and what it left
/// was killed (a process that escaped both may hold the pipes).
const DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Wait for `child` to end (its output read as it comes), or kill its
/// whole group when `timeout` passes or `cancel` fires. `ended` runs as
/// soon as the command has ended, to kill what else it left (its cgroup).
pub(crate) async fn collect(
    mut child: Child,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
    ended: impl FnOnce(),
) -> Run {
    // Taken now: once the child has been waited for, tokio forgets its id.
    let pgid = child.id();
    let stop = CancellationToken::new();
    let stdout = tokio::spawn(capture(child.stdout.take(), stop.clone()));
    let stderr = tokio::spawn(capture(child.stderr.take(), stop.clone()));
    let end = tokio::select! {
        status = child.wait() => match status {
            Ok(s) => match s.code() {
                Some(c) => End::Exited(c),
                None => End::Signalled,
            },
            Err(e) => End::Failed(e.to_string()),
        },
        _ = tokio::time::sleep(timeout) => End::TimedOut,
        _ = cancel.cancelled() => End::Cancelled,
    };
    // Whatever the end, nothing the command started outlives it: its
    // group, then its cgroup (which also holds what left the group).
    kill_group(pgid);
    ended();
    let _ = child.wait().await;
    let drained = tokio::time::sleep(DRAIN);
    tokio::pin!(drained);
    let mut readers = futures::future::join(stdout, stderr);
    let (stdout, stderr) = tokio::select! {
        both = &mut readers => both,
        () = &mut drained => {
            stop.cancel();
            readers.await
        }
    };
    Run {
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::Duration;

    fn start(script: &str, dir: &std::path::Path) -> Child {
        tokio::process::Command::new("/bin/sh")
            .args(["-c", script])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }

    #[tokio::test]
    async fn output_is_capped_while_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let child = start("head -c 3000000 /dev/zero", dir.path());
        let run = collect(child, Duration::from_secs(30), &CancellationToken::new(), || ()).await;
        assert!(matches!(run.end, End::Exited(0)));
        assert_eq!(run.stdout.kept.len(), MAX_OUTPUT);
        assert_eq!(run.stdout.dropped, 3_000_000 - MAX_OUTPUT);
        assert!(
            run.text()
                .ends_with(&format!("[truncated: {} more bytes]", 3_000_000 - MAX_OUTPUT))
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_what_the_command_started() {
        let dir = tempfile::tempdir().unwrap();
        let child = start("(sleep 1; touch late) & echo started; exec sleep 60", dir.path());
        let run = collect(child, Duration::from_millis(300), &CancellationToken::new(), || ()).await;
        assert!(matches!(run.end, End::TimedOut));
        assert_eq!(run.stdout.render().trim(), "started");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(
            !dir.path().join("late").exists(),
            "the background child outlived the timeout"
        );
    }

    #[tokio::test]
    async fn what_a_finished_command_left_in_its_group_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let child = start("(sleep 1; touch late) & echo started", dir.path());
        let run = collect(child, Duration::from_secs(30), &CancellationToken::new(), || ()).await;
        assert!(matches!(run.end, End::Exited(0)));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(
            !dir.path().join("late").exists(),
            "the background child outlived the command"
        );
    }

    #[tokio::test]
    async fn an_escaped_process_holding_the_output_does_not_hold_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let child = start("setsid sleep 8 & echo started", dir.path());
        let started = std::time::Instant::now();
        let run = collect(child, Duration::from_secs(30), &CancellationToken::new(), || ()).await;
        assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
        assert_eq!(run.stdout.render().trim(), "started");
    }
}
