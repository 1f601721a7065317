//! `switchboard check`: validate a configuration file.

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;

pub(crate) fn run(path: &Path) -> anyhow::Result<ExitCode> {
    match Config::load(path) {
        Ok(config) => {
            for w in config.warnings() {
                println!("warning: {w}");
            }
            for line in crate::sandbox_report::lines(&config.sandbox) {
                println!("{line}");
            }
            println!(
                "{}: ok ({} agent(s), {} provider(s), {} channel(s))",
                path.display(),
                config.agents.len(),
                config.providers.len(),
                config.channels.instances().len()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            print!("{e}");
            Ok(ExitCode::from(2))
        }
    }
}
