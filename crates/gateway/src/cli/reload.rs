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
