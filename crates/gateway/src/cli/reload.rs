//! `switchboard reload`: ask the gateways running on this host against
//! this configuration's database to apply their configuration file again
//! (SIGHUP each; docs/operations.md). Each gateway reads its own file and
//! logs what it applied; `switchboard status` shows each one's digest.

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;
use switchboard_store::Store;

pub(crate) async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::cluster::instance::set_lease(config.cluster.lease_secs);
    let store = Store::open_existing(&config.database_url).await?;
    let (now, here) = (store.now_ms(), crate::cluster::instance::host());
    let instances = store.instances().await;
    store.close().await;
    let gateways: Vec<_> = instances?
        .into_iter()
        .filter(|i| i.role == "run" && i.host == here && !crate::cluster::instance::is_dead(i, &here, now))
        .collect();
    if gateways.is_empty() {
        println!("no gateway runs on this host against this database; nothing to reload");
        return Ok(ExitCode::FAILURE);
    }
    let mut failed = false;
    for g in gateways {
        let Ok(pid) = libc::pid_t::try_from(g.pid) else {
            continue;
        };
        // The row names a pid; only a gateway of this binary, run by this
        // user, is signalled (a pid reused since, or a row anyone could
        // write to a shared database, names some other process).
        if let Err(why) = is_our_gateway(pid) {
            failed = true;
            println!("not signalling pid {pid}: {why}; send it SIGHUP yourself if it is the gateway");
            continue;
        }
        // SAFETY: sends a signal to a process id read from the control
        // plane; no memory is shared.
        if unsafe { libc::kill(pid, libc::SIGHUP) } == 0 {
            println!("asked gateway pid {pid} to reload its configuration (its log says what it applied)");
        } else {
            failed = true;
            println!("cannot signal gateway pid {pid}: {}", std::io::Error::last_os_error());
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Whether `pid` runs this very binary as `run`, under this user.
fn is_our_gateway(pid: libc::pid_t) -> Result<(), String> {
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    let exe = std::fs::read_link(proc.join("exe")).map_err(|e| format!("cannot see its program ({e})"))?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    if exe != me {
        return Err(format!("it runs {}, not {}", exe.display(), me.display()));
    }
    let cmdline = std::fs::read(proc.join("cmdline")).map_err(|e| e.to_string())?;
    if !cmdline.split(|b| *b == 0).any(|arg| arg == b"run") {
        return Err("it is not `switchboard run`".into());
    }
    let status = std::fs::read_to_string(proc.join("status")).map_err(|e| e.to_string())?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|u| u.parse::<u32>().ok());
    // SAFETY: geteuid has no preconditions.
    let me_uid = unsafe { libc::geteuid() };
    if uid != Some(me_uid) {
        return Err("it runs as another user".into());
    }
    Ok(())
}
