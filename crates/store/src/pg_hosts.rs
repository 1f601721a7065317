//! A PostgreSQL `database_url` that names several servers, in libpq's
//! form (`postgres://user@db1:5432,db2:5432/switchboard`): the servers of
//! one database where a failover may move the primary. sqlx connects to
//! one host, so this module picks which: the first in the list that
//! answers and takes writes (libpq's `target_session_attrs=read-write`,
//! which a gateway always needs). When the database stops answering the
//! store asks again (see `Store::heartbeat`), and new connections go to
//! the host that answers now; connections opened before the move are
//! dropped instead of reused. A name that DNS moves needs none of this:
//! every new connection looks the name up again. docs/operations.md,
//! "What happens when the database goes away".

use crate::{StoreError, redact_url};
use parking_lot::Mutex;
use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one server may take to connect and answer before the next is
/// tried.
const PROBE: Duration = Duration::from_secs(3);

/// After a move, how long connections opened are still taken for the
/// old server's (see `opened_before_move`).
const SETTLE: Duration = Duration::from_secs(1);

/// How often a lost database is looked for.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The servers of one database, and which one connections go to.
#[derive(Debug)]
pub(crate) struct Hosts {
    each: Vec<(String, PgConnectOptions)>,
    /// Which of `each` new connections go to, and since when.
    now: Mutex<(usize, Instant)>,
    /// Whether a task looks for the database now.
    looking: AtomicBool,
}

impl Hosts {
    /// The servers `url` names (one for the usual single-host URL).
    pub(crate) fn parse(url: &str) -> Result<Hosts, StoreError> {
        let each = split(url)
            .into_iter()
            .map(|one| {
                PgConnectOptions::from_str(&one)
                    .map(|o| (redact_url(&one), o))
                    .map_err(|e| StoreError::Connect(redact_url(&one), e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Hosts {
            each,
            // No move yet: every connection is trusted.
            now: Mutex::new((0, Instant::now().checked_sub(SETTLE).unwrap_or_else(Instant::now))),
            looking: AtomicBool::new(false),
        })
    }

    /// Whether there is more than one server to choose from.
    pub(crate) fn several(&self) -> bool {
        self.each.len() > 1
    }

    /// Where connections go now.
    pub(crate) fn current(&self) -> PgConnectOptions {
        self.each[self.now.lock().0].1.clone()
    }

    /// Whether a connection `age` old was opened before the last move
    /// (it may still reach the old primary, now gone or read-only). A
    /// connection attempt begun just before the move may finish just after
    /// it: those of `SETTLE` after the move are not trusted either.
    pub(crate) fn opened_before_move(&self, age: Duration) -> bool {
        let moved_at = self.now.lock().1;
        Instant::now()
            .checked_sub(age)
            .is_some_and(|opened| opened < moved_at + SETTLE)
    }

    /// The database stopped answering: look for it every `LOOK_EVERY`
    /// (beside the queries waiting for a connection, which pick up the
    /// new address at their next try) until a server takes writes, and
    /// send `pool`'s new connections there. One search at a time.
    pub(crate) fn look_for_it(self: &Arc<Self>, pool: &sqlx::PgPool) {
        if !self.several() || self.looking.swap(true, Ordering::AcqRel) {
            return;
        }
        let (hosts, pool) = (self.clone(), pool.clone());
        tokio::spawn(async move {
            loop {
                match hosts.find_primary().await {
                    Ok(Some(moved)) => {
                        pool.set_connect_options(moved);
                        break;
                    }
                    Ok(None) => break,
                    Err(e) => tracing::debug!(error = %e, "no server of database_url takes writes yet"),
                }
                tokio::time::sleep(LOOK_EVERY).await;
            }
            hosts.looking.store(false, Ordering::Release);
        });
    }

    /// Find the first server that takes writes; the options to connect to
    /// it when it is not the one connections go to now. With no server
    /// answering, what each said.
    ///
    /// The server in use is asked first and kept while it takes writes:
    /// an old primary that comes back writable after a failover (not
    /// fenced) must not draw some instances back to it while others stay
    /// on the new one.
    pub(crate) async fn find_primary(&self) -> Result<Option<PgConnectOptions>, StoreError> {
        let mut why = Vec::new();
        let current = self.now.lock().0;
        let order = std::iter::once(current).chain((0..self.each.len()).filter(|i| *i != current));
        for i in order {
            let (name, options) = &self.each[i];
            match probe(options).await {
                Ok(()) => {
                    let mut now = self.now.lock();
                    if now.0 == i {
                        return Ok(None);
                    }
                    tracing::warn!(host = %name, "the database answers on another server now; new connections go there");
                    *now = (i, Instant::now());
                    return Ok(Some(options.clone()));
                }
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        Err(StoreError::Connect(
            "every server of database_url".into(),
            why.join("; "),
        ))
    }
}

/// Connect to one server and ask whether it takes writes.
async fn probe(options: &PgConnectOptions) -> Result<(), String> {
    let ask = async {
        let mut conn = PgConnection::connect_with(options).await.map_err(|e| e.to_string())?;
        let (standby,): (bool,) =
            sqlx::query_as("SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'")
                .fetch_one(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
        let _ = conn.close().await;
        if standby {
            return Err("a standby (read-only)".to_string());
        }
        Ok(())
    };
    tokio::time::timeout(PROBE, ask)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", PROBE.as_secs())))
}

/// One URL per server of `url`: `postgres://u@a:1,b:2/db?q` gives
/// `postgres://u@a:1/db?q` and `postgres://u@b:2/db?q`.
pub(crate) fn split(url: &str) -> Vec<String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return vec![url.to_string()];
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (creds, hosts) = match authority.rfind('@') {
        Some(at) => authority.split_at(at + 1),
        None => ("", authority),
    };
    if !hosts.contains(',') {
        return vec![url.to_string()];
    }
    hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|host| format!("{scheme}://{creds}{host}{tail}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_list_gives_one_url_per_server() {
        assert_eq!(
            split("postgres://u:pw@a:5432,b:5433/db?sslmode=disable"),
            [
                "postgres://u:pw@a:5432/db?sslmode=disable",
                "postgres://u:pw@b:5433/db?sslmode=disable"
            ]
        );
        assert_eq!(split("postgresql://a,b/db"), ["postgresql://a/db", "postgresql://b/db"]);
        assert_eq!(split("postgres://u@h:1/db"), ["postgres://u@h:1/db"]);
        let hosts = Hosts::parse("postgres://u@a:1,b:2/db").unwrap();
        assert!(hosts.several());
        assert_eq!((hosts.current().get_host(), hosts.current().get_port()), ("a", 1));
        assert!(!Hosts::parse("postgres://u@a:1/db").unwrap().several());
    }

    #[test]
    fn connections_opened_before_a_move_are_told_apart() {
        let hosts = Hosts::parse("postgres://u@a:1,b:2/db").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        *hosts.now.lock() = (1, Instant::now() - SETTLE);
        assert!(hosts.opened_before_move(Duration::from_millis(15)));
        assert!(!hosts.opened_before_move(Duration::ZERO));
    }
}
