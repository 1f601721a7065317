//! Processes sharing the control plane, and reclaiming what dead ones left:
//! their running runs become `lost`, their pending approvals `expired`.
//! Whether an instance is dead is the caller's judgement (heartbeat age,
//! whether its process still exists); the store only records and reclaims.

use crate::stmt::Stmt;
use crate::{ApprovalRow, Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// A registered process.
#[derive(Debug, Clone, FromRow)]
pub struct InstanceRow {
    /// The instance id.
    pub id: String,
    /// The machine it runs on.
    pub host: String,
    /// Its process id there.
    pub pid: i64,
    /// When it started (Unix ms).
    pub started_at: i64,
    /// Its last heartbeat (Unix ms).
    pub heartbeat_at: i64,
    /// `run` (a gateway) or `chat` (a terminal session).
    pub role: String,
    /// A digest of the configuration file it runs (empty until set).
    pub config_digest: String,
    /// Its build (empty: a build from before versions were recorded).
    pub version: String,
    /// The newest schema its build knows (0: not recorded).
    pub schema_version: i64,
}

/// What reclaiming left behind: runs now lost, approvals now expired, and
/// replies a gone instance was delivering (handed to the outbox worker;
/// one whose send had reached the platform arrives twice).
#[derive(Debug, Default)]
pub struct Reclaimed {
    /// Runs now `lost`.
    pub lost_runs: Vec<String>,
    /// Approval requests now expired (their prompts are to be edited).
    pub expired_approvals: Vec<ApprovalRow>,
    /// Replies a gone instance was delivering, now the outbox worker's.
    pub replies_in_doubt: Vec<crate::OutboxRow>,
}

/// Rows of `table` whose instance is not registered (gone, or from before
/// instances were recorded).
pub(crate) fn orphan(table: &str) -> String {
    format!("({table}.instance_id IS NULL OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = {table}.instance_id))")
}

impl Store {
    /// Register this process; its runs and approvals carry the id from now on.
    pub async fn register_instance(&self, host: &str, pid: u32, role: &str) -> Result<String, StoreError> {
        let id = self
            .instance_id()
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
        self.register_as(id, host, pid, role).await
    }

    /// Record the digest of the configuration this instance runs.
    pub async fn set_config_digest(&self, digest: &str) -> Result<(), StoreError> {
        let Some(id) = self.instance_id() else {
            return Ok(());
        };
        self.exec(
            Stmt::new("UPDATE instances SET config_digest = $1 WHERE id = $2")
                .bind(digest)
                .bind(id),
        )
        .await
        .map(drop)
    }

    /// Register again under a new id, after the other gateways took this
    /// instance for dead and reclaimed its work: what is still marked with
    /// the old id stays theirs to adopt, and this one never acts for it.
    pub async fn register_anew(&self, host: &str, pid: u32, role: &str) -> Result<String, StoreError> {
        self.register_as(uuid::Uuid::new_v4().to_string(), host, pid, role)
            .await
    }

    async fn register_as(&self, id: String, host: &str, pid: u32, role: &str) -> Result<String, StoreError> {
        let now = self.now_ms();
        self.exec(
            Stmt::new(
                "INSERT INTO instances (id, host, pid, started_at, heartbeat_at, role, version, schema_version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&id)
            .bind(host)
            .bind(i64::from(pid))
            .bind(now)
            .bind(now)
            .bind(role)
            .bind(crate::BUILD_VERSION)
            .bind(self.schema()),
        )
        .await?;
        *self.instance.write() = Some(Box::leak(id.clone().into_boxed_str()));
        self.reach.start(now);
        Ok(id)
    }

    /// Which life of this process this is: 0 from the start, one more
    /// each time a heartbeat finds that the others took it for dead. What
    /// it took or adopted in an earlier life (messages, runs) the others
    /// reclaimed: a value kept beside such work tells it apart without a
    /// read, from the moment the loss is found (before `register_anew`).
    pub fn life(&self) -> u64 {
        self.lives_lost.load(std::sync::atomic::Ordering::Acquire)
    }

    /// This process's instance id and its life, read together (the life
    /// moves on under the same lock as the id), for rows written under that
    /// id: see `Inbox::take`.
    pub(crate) fn identity(&self) -> (Option<&'static str>, u64) {
        let id = self.instance.read();
        (*id, self.life())
    }

    /// This process's instance id, once registered.
    pub fn instance_id(&self) -> Option<&'static str> {
        *self.instance.read()
    }

    /// Say this instance is alive; it says so every `every`. False when
    /// its row is gone: the other instances took it for dead (it was
    /// paused or cut off while they reached the database, for longer than
    /// the lease) and reclaimed its work; it must register again
    /// (`register_anew`).
    pub async fn heartbeat(&self, every: std::time::Duration) -> Result<bool, StoreError> {
        let Some(id) = self.instance_id() else {
            return Ok(true);
        };
        let now = self.now_ms();
        // A server gone silently (its host dead, the network cut) leaves a
        // query waiting on TCP for minutes: a beat not written within 5 s
        // counts as failed, so the database is looked for all the same.
        let write = self.exec(
            Stmt::new("UPDATE instances SET heartbeat_at = $1 WHERE id = $2")
                .bind(now)
                .bind(id),
        );
        let written = tokio::time::timeout(std::time::Duration::from_secs(5), write)
            .await
            .unwrap_or_else(|_| {
                Err(StoreError::Connect(
                    "database_url".into(),
                    "the heartbeat was not written within 5 s".into(),
                ))
            });
        match written {
            Ok(n) => {
                // Two beats since the last write began: the database was
                // away (or this process paused); the silence it judges
                // others by starts again. (A peer is dead after three
                // beats of silence, and an outage silences it for the
                // outage and up to two beats more; one beat of slack is
                // left for the loop's own work.)
                self.reach.reached(now, 2 * every.as_millis() as i64);
                if n == 0 {
                    let _id = self.instance.write();
                    self.lives_lost.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                }
                Ok(n == 1)
            }
            Err(e) => {
                self.reach.lost();
                // It may answer on another server (see `pg_hosts`).
                if let (Some(hosts), crate::Pools::Postgres(pool)) = (&self.pg_hosts, &self.pools) {
                    hosts.look_for_it(pool);
                }
                Err(e)
            }
        }
    }

    /// Whether the database takes writes now (a write that changes
    /// nothing: this instance's heartbeat set to itself); false when this
    /// instance's row is gone (the others took it for dead and adopted
    /// its messages).
    pub async fn writable(&self) -> Result<bool, StoreError> {
        let id = self.instance_id().unwrap_or("");
        self.exec(Stmt::new("UPDATE instances SET heartbeat_at = heartbeat_at WHERE id = $1").bind(id))
            .await
            .map(|n| n == 1)
    }

    /// Since when this process has reached the database without a break,
    /// on its clock (0 before it registered): another instance's silence
    /// counts only from then on (see `reach`).
    pub fn reachable_since(&self) -> i64 {
        self.reach.since()
    }

    /// Leave cleanly: what this instance still had running is reclaimed by
    /// the next process that looks.
    pub async fn unregister_instance(&self) -> Result<(), StoreError> {
        if let Some(id) = self.instance_id() {
            self.exec(Stmt::new("DELETE FROM instances WHERE id = $1").bind(id))
                .await?;
        }
        Ok(())
    }

    /// Every registered process, oldest first.
    pub async fn instances(&self) -> Result<Vec<InstanceRow>, StoreError> {
        let all = read!(self, |p| sqlx::query_as::<_, InstanceRow>(
            "SELECT id, host, pid, started_at, heartbeat_at, role, config_digest, version, schema_version
             FROM instances ORDER BY started_at"
        )
        .fetch_all(p)
        .await);
        match all {
            // `status`, `backup` and `reload` open a database as it is: one
            // an older build migrated has no build columns yet.
            Err(e) if self.database_schema().await? < crate::NEEDS_SCHEMA => {
                tracing::debug!(error = %e, "instances of a database older than this build");
                Ok(read!(self, |p| sqlx::query_as::<_, InstanceRow>(
                    "SELECT id, host, pid, started_at, heartbeat_at, role, config_digest,
                            '' AS version, CAST(0 AS BIGINT) AS schema_version
                     FROM instances ORDER BY started_at"
                )
                .fetch_all(p)
                .await)?)
            }
            all => Ok(all?),
        }
    }

    /// Forget the instances `dead`, then reclaim every running run and
    /// pending approval no live instance owns.
    pub async fn reclaim(&self, dead: &[String]) -> Result<Reclaimed, StoreError> {
        // A dead instance's channels are free at once (not when its leases
        // run out).
        let forget: Vec<Stmt> = dead
            .iter()
            .flat_map(|id| {
                [
                    Stmt::new("DELETE FROM instances WHERE id = $1").bind(id),
                    Stmt::new("UPDATE channel_leases SET renewed_at = 0 WHERE owner = $1").bind(id),
                ]
            })
            .collect();
        if !forget.is_empty() {
            self.exec_all(forget).await?;
        }
        // Replies a gone instance was delivering: the outbox worker's now.
        let replies_in_doubt = read!(self, |p| sqlx::query_as::<_, crate::OutboxRow>(AssertSqlSafe(format!(
            "SELECT {} FROM outbox WHERE status = 'pending' AND instance_id IS NOT NULL AND {}",
            crate::outbox::COLUMNS,
            orphan("outbox")
        )))
        .fetch_all(p)
        .await)?;
        let release: Vec<Stmt> = replies_in_doubt
            .iter()
            .map(|r| {
                // Still the gone instance's: a live one may have taken it meanwhile.
                Stmt::new(
                    "UPDATE outbox SET next_attempt_at = $1, instance_id = NULL WHERE id = $2 AND status = 'pending'
                     AND instance_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = outbox.instance_id)",
                )
                    .bind(self.now_ms())
                    .bind(r.id)
            })
            .collect();
        if !release.is_empty() {
            self.exec_all(release).await?;
            self.wake_outbox();
        }
        let lost_runs: Vec<String> = read!(self, |p| sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT id FROM runs WHERE status = 'running' AND {}",
            orphan("runs")
        )))
        .fetch_all(p)
        .await)?;
        let lose: Vec<Stmt> = lost_runs
            .iter()
            .map(|id| {
                Stmt::new(
                    "UPDATE runs SET status = 'lost', ended_at = $1, error = 'the gateway stopped while this run was active'
                     WHERE id = $2 AND status = 'running'",
                )
                .bind(self.now_ms())
                .bind(id)
            })
            .collect();
        if !lose.is_empty() {
            self.exec_all(lose).await?;
        }
        let expired_approvals = read!(self, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(format!(
            "SELECT {} FROM approvals WHERE status = 'pending' AND {}",
            crate::approvals::COLUMNS,
            orphan("approvals")
        )))
        .fetch_all(p)
        .await)?;
        for r in &expired_approvals {
            let end = crate::ApprovalEnd::unattended(crate::ApprovalStatus::Expired, "the gateway restarted");
            self.approvals().decide(&r.id, &end).await?;
        }
        Ok(Reclaimed {
            lost_runs,
            expired_approvals,
            replies_in_doubt,
        })
    }
}
