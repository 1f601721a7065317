//! `switchboard approvals`: print the approval audit trail.

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;
use switchboard_store::Store;

pub(crate) async fn run(config_path: &Path, limit: i64) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let store = Store::open(&config.database_url).await?;
    let rows = store.approvals().recent(limit).await?;
    if rows.is_empty() {
        println!("No approval requests recorded.");
    }
    for r in rows {
        let place = match (&r.channel, &r.chat) {
            (Some(c), Some(chat)) => format!("{c}:{chat}"),
            _ => "-".into(),
        };
        let decided = match (&r.decided_by, &r.decided_from) {
            (Some(by), Some(from)) => format!(" by {by} from {from}"),
            (Some(by), None) => format!(" by {by}"),
            _ => String::new(),
        };
        let reason = r.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default();
        println!(
            "{id} {status}{decided}{reason} | agent {agent} | tool {tool} [{risk}] {summary} | prompt in {place} | created {created} decided {at}",
            id = r.id,
            status = r.status,
            agent = r.agent,
            tool = r.tool,
            risk = r.risk,
            summary = r.summary,
            created = r.created_at / 1000,
            at = r
                .decided_at
                .map(|t| (t / 1000).to_string())
                .unwrap_or_else(|| "-".into()),
        );
    }
    store.close().await;
    Ok(ExitCode::SUCCESS)
}
