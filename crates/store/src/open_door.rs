//! Whether a PostgreSQL control plane lets anyone in without a password.
//! A command allowed the whole network (`network = "any"`) reaches every
//! address the gateway reaches; if the database lets it in by address
//! alone (`trust` in pg_hba.conf), it can write approvals, console
//! sessions and pairings itself (docs/security.md, "The control plane").

use crate::pg_hosts::split;
use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use std::str::FromStr;
use std::time::Duration;

/// How long one attempt may take.
const ATTEMPT: Duration = Duration::from_secs(3);

/// The `user@host:port` of each server of `url` (a PostgreSQL URL) that
/// took a connection with no password, as the URL's user or as
/// `postgres`; empty when every one asked for a password or could not
/// be reached (or `url` is not PostgreSQL's).
pub async fn open_without_password(url: &str) -> Vec<String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Vec::new();
    }
    let mut open = Vec::new();
    for one in split(url) {
        let Ok(options) = PgConnectOptions::from_str(&one) else {
            continue;
        };
        // A UNIX socket is out of a command's reach (seccomp refuses them).
        if options.get_socket().is_some() {
            continue;
        }
        let mut users = vec![options.get_username().to_string()];
        if !users.iter().any(|u| u == "postgres") {
            users.push("postgres".into());
        }
        for user in users {
            // What a command could try: the address and a name, and nothing
            // of the gateway's (no password, no client certificate).
            let mut bare = PgConnectOptions::new_without_pgpass()
                .host(options.get_host())
                .port(options.get_port())
                .username(&user)
                .password("");
            if let Some(db) = options.get_database() {
                bare = bare.database(db);
            }
            let tried = tokio::time::timeout(ATTEMPT, PgConnection::connect_with(&bare)).await;
            if let Ok(Ok(conn)) = tried {
                let _ = conn.close().await;
                open.push(format!("{user}@{}:{}", options.get_host(), options.get_port()));
            }
        }
    }
    open
}
