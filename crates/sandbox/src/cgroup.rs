//! A pids cgroup per command, where the gateway may make one (it runs as
//! root, or its service manager delegated its cgroup). The kernel then
//! bounds the tasks of the command and everything it starts, and when the
//! command ends every process left in it is killed — also one that left
//! the command's process group. Works with cgroup v2 and with a v1 `pids`
//! hierarchy.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder commands' cgroups are made in.
#[derive(Debug, Clone)]
pub(crate) struct PidsCgroup {
    base: PathBuf,
    v2: bool,
}

/// One command's cgroup, removed (and emptied) on drop.
#[derive(Debug)]
pub(crate) struct Slot {
    dir: PathBuf,
    v2: bool,
    /// `<dir>/cgroup.procs`, which the child writes itself into.
    pub(crate) procs: CString,
}

impl PidsCgroup {
    /// Where this process may make pids cgroups, tried for real once.
    pub(crate) fn find() -> Option<Self> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let (mount, v2) = pids_mount(&mountinfo)?;
        let path = own_path(&own, v2)?;
        let parent = mount.join(path.trim_start_matches('/'));
        let base = parent.join("switchboard-tools");
        if v2 {
            // Enabling a controller for children fails where this cgroup
            // has processes of its own and is not the root: then no cgroup.
            std::fs::write(parent.join("cgroup.subtree_control"), "+pids").ok()?;
        }
        match std::fs::create_dir(&base) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        if v2 {
            std::fs::write(base.join("cgroup.subtree_control"), "+pids").ok()?;
        }
        remove_stale(&base, v2);
        let found = Self { base, v2 };
        // A trial slot proves the whole path works before anything relies on it.
        let trial = found.slot(1)?;
        drop(trial);
        Some(found)
    }

    /// The folder commands' cgroups are made in.
    pub(crate) fn base(&self) -> &Path {
        &self.base
    }

    /// A new cgroup for one command, allowing `max_tasks` tasks.
    pub(crate) fn slot(&self, max_tasks: u32) -> Option<Slot> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = self.base.join(format!("{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let slot = Slot {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?,
            dir,
            v2: self.v2,
        };
        std::fs::write(slot.dir.join("pids.max"), max_tasks.to_string()).ok()?;
        Some(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        kill_all(&self.dir, self.v2);
        if std::fs::remove_dir(&self.dir).is_ok() {
            return;
        }
        // Killed processes leave the cgroup once the kernel has reaped
        // them; retry off the caller's thread.
        let (dir, v2) = (self.dir.clone(), self.v2);
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                kill_all(&dir, v2);
                if std::fs::remove_dir(&dir).is_ok() {
                    return;
                }
            }
            tracing::warn!(cgroup = %dir.display(), "a command's cgroup could not be removed");
        });
    }
}

/// Empty and remove the cgroups left by gateways that are gone (named
/// `<pid>-<n>`; a process that ended before its retries finished).
fn remove_stale(base: &Path, v2: bool) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(p, _)| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            kill_all(&entry.path(), v2);
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Kill every process in the cgroup at `dir`.
fn kill_all(dir: &Path, v2: bool) {
    if v2 && std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        // SAFETY: kill with a pid read from the cgroup and a constant signal.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The mount point of the hierarchy with the pids controller, and whether it is v2.
fn pids_mount(mountinfo: &str) -> Option<(PathBuf, bool)> {
    let mut v1 = None;
    for line in mountinfo.lines() {
        // `<id> <parent> <dev> <root> <mount point> <opts> [optional...] - <fstype> <source> <super opts>`
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = left.split(' ').nth(4).map(PathBuf::from);
        let mut right = right.split(' ');
        let (fstype, _source, super_opts) = (right.next(), right.next(), right.next().unwrap_or(""));
        match (fstype, mount_point) {
            (Some("cgroup2"), Some(mp)) => {
                let controllers = std::fs::read_to_string(mp.join("cgroup.controllers")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "pids") {
                    return Some((mp, true));
                }
            }
            (Some("cgroup"), Some(mp)) if super_opts.split(',').any(|o| o == "pids") => v1 = Some((mp, false)),
            _ => {}
        }
    }
    v1
}

/// This process's cgroup path in the hierarchy (`0::/path` for v2, `N:pids:/path` for v1).
fn own_path(cgroup: &str, v2: bool) -> Option<String> {
    cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if v2 {
            id == "0" && controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == "pids")
        };
        matches.then(|| path.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_pids_hierarchy_and_own_path() {
        let v1 = "30 25 0:26 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                  31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(pids_mount(v1), Some((PathBuf::from("/sys/fs/cgroup/pids"), false)));
        assert_eq!(pids_mount("1 2 0:1 / /x rw - ext4 /dev/vda rw\n"), None);
        let own = "8:pids:/app\n4:memory:/other\n0::/unified/path\n";
        assert_eq!(own_path(own, false).as_deref(), Some("/app"));
        assert_eq!(own_path(own, true).as_deref(), Some("/unified/path"));
    }
}
