//! The run tree: every child run (spawn_subagent, delegate, sessions_spawn,
//! cron) as a row with its parent, owner chain, status, heartbeat, progress,
//! usage and outcome.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Running now.
    Running,
    /// Ended with an answer.
    Completed,
    /// Ended with an error.
    Failed,
    /// Stopped by a person or its parent.
    Cancelled,
    /// Ran out of time.
    TimedOut,
    /// Its process stopped while it ran.
    Lost,
}

stored_words!(RunStatus, "run status", {
    Running => "running",
    Completed => "completed",
    Failed => "failed",
    Cancelled => "cancelled",
    TimedOut => "timed_out",
    Lost => "lost",
});

/// What started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunKind {
    /// A same-identity helper (`spawn_subagent`).
    #[default]
    SpawnSubagent,
    /// Work handed to another agent (`delegate`).
    Delegate,
    /// A child session (`sessions_spawn`).
    SessionsSpawn,
    /// A scheduled job.
    Cron,
}

stored_words!(RunKind, "run kind", {
    SpawnSubagent => "spawn_subagent",
    Delegate => "delegate",
    SessionsSpawn => "sessions_spawn",
    Cron => "cron",
});

/// A run about to start.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    /// The run id.
    pub id: String,
    /// What kind of child run it is.
    pub kind: RunKind,
    /// The run that started it (none for a child of a person's turn).
    pub parent_id: Option<String>,
    /// The root of its tree.
    pub root_id: String,
    /// Aliases of the callers, root first, ending with the run's requester.
    pub owner_chain: Vec<String>,
    /// Delegation depth below the person's turn.
    pub depth: i64,
    /// The agent it runs as.
    pub agent: String,
    /// Its session.
    pub session_key: String,
    /// The channel the work was asked from.
    pub origin_channel: Option<String>,
    /// The chat the work was asked from.
    pub origin_chat: Option<String>,
    /// The thread the work was asked from.
    pub origin_thread: Option<String>,
    /// A label given at spawn (`background` for background tasks).
    pub label: Option<String>,
    /// The task, cut to 500 characters.
    pub task: Option<String>,
    /// The model it runs on.
    pub model: Option<String>,
    /// The person whose message started the tree.
    pub requester: Option<String>,
    /// The session that asked for this run (sessions_spawn children).
    pub requester_session: Option<String>,
    /// Its end is announced into the chat (background tasks, session
    /// children): a crash before the announcement is queued is caught at
    /// the next start.
    pub announce: bool,
}

/// A run of the registry.
#[derive(Debug, Clone, FromRow)]
pub struct RunRow {
    /// The run id.
    pub id: String,
    /// What kind of child run it is.
    #[sqlx(try_from = "String")]
    pub kind: RunKind,
    /// The run that started it (none for a child of a person's turn).
    pub parent_id: Option<String>,
    /// The root of its tree.
    pub root_id: String,
    /// Callers, root first.
    #[sqlx(try_from = "crate::list::StoredList")]
    pub owner_chain: Vec<String>,
    /// Delegation depth below the person's turn.
    pub depth: i64,
    /// The agent it runs as.
    pub agent: String,
    /// Its session.
    pub session_key: String,
    /// The channel the work was asked from.
    pub origin_channel: Option<String>,
    /// The chat the work was asked from.
    pub origin_chat: Option<String>,
    /// The thread the work was asked from.
    pub origin_thread: Option<String>,
    /// A label given at spawn (`background` for background tasks).
    pub label: Option<String>,
    /// The task, cut to 500 characters.
    pub task: Option<String>,
    /// The model it runs on.
    pub model: Option<String>,
    /// Where it stands.
    #[sqlx(try_from = "String")]
    pub status: RunStatus,
    /// Its last heartbeat (Unix ms).
    pub heartbeat_at: Option<i64>,
    /// Its progress object (JSON).
    pub progress: Option<String>,
    /// When it was recorded (Unix ms).
    pub created_at: i64,
    /// When it started (Unix ms).
    pub started_at: Option<i64>,
    /// When it ended (Unix ms).
    pub ended_at: Option<i64>,
    /// Prompt tokens spent.
    pub tokens_in: i64,
    /// Answer tokens spent.
    pub tokens_out: i64,
    /// Spend in micro-dollars.
    pub cost_micros: i64,
    /// Its final answer.
    pub output: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The person whose message started the tree.
    pub requester: Option<String>,
    /// The session that asked for it.
    pub requester_session: Option<String>,
    /// The gateway instance that runs it.
    pub instance_id: Option<String>,
}

impl NewRun {
    /// The row as `insert_run` (which returned `created_at`) and a
    /// successful `finish_run` left it, without reading it back: for
    /// rendering the run's announcement right after it ended.
    pub fn ended(&self, created_at: i64, ended_at: i64, status: RunStatus, end: &RunEnd<'_>) -> RunRow {
        RunRow {
            id: self.id.clone(),
            kind: self.kind,
            parent_id: self.parent_id.clone(),
            root_id: self.root_id.clone(),
            owner_chain: self.owner_chain.clone(),
            depth: self.depth,
            agent: self.agent.clone(),
            session_key: self.session_key.clone(),
            origin_channel: self.origin_channel.clone(),
            origin_chat: self.origin_chat.clone(),
            origin_thread: self.origin_thread.clone(),
            label: self.label.clone(),
            task: self.task.clone(),
            model: self.model.clone(),
            status,
            heartbeat_at: Some(created_at),
            progress: end.progress.map(str::to_string),
            created_at,
            started_at: Some(created_at),
            ended_at: Some(ended_at),
            tokens_in: end.tokens_in,
            tokens_out: end.tokens_out,
            cost_micros: end.cost_micros,
            output: end.output.map(str::to_string),
            error: end.error.map(str::to_string),
            requester: self.requester.clone(),
            requester_session: self.requester_session.clone(),
            instance_id: None,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Default)]
pub struct RunEnd<'a> {
    /// Its final answer.
    pub output: Option<&'a str>,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// Prompt tokens spent.
    pub tokens_in: i64,
    /// Answer tokens spent.
    pub tokens_out: i64,
    /// Spend in micro-dollars.
    pub cost_micros: i64,
    /// The final progress object (JSON), written with the ending.
    pub progress: Option<&'a str>,
}

const COLUMNS: &str =
    "id, kind, parent_id, root_id, owner_chain, depth, agent, session_key, origin_channel, origin_chat,
    origin_thread, label, task, model, status, heartbeat_at, progress, created_at, started_at, ended_at, tokens_in,
    tokens_out, cost_micros, output, error, requester, requester_session, instance_id";

impl<'s> Runs<'s> {
    /// Record a run that starts now; returns its `created_at`.
    pub async fn insert(self, r: &NewRun) -> Result<i64, StoreError> {
        let now = self.0.now_ms();
        let chain = crate::list::encode(&r.owner_chain);
        self.0.exec(Stmt::new(
            "INSERT INTO runs (id, kind, parent_id, root_id, owner_chain, depth, agent, session_key, origin_channel,
                               origin_chat, origin_thread, label, task, model, status, heartbeat_at, created_at, started_at, requester,
                               requester_session, instance_id, announce)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'running', $15, $16, $17, $18, $19, $20, $21)",
        )
        .bind(&r.id)
        .bind(r.kind.as_str())
        .bind(&r.parent_id)
        .bind(&r.root_id)
        .bind(chain)
        .bind(r.depth)
        .bind(&r.agent)
        .bind(&r.session_key)
        .bind(&r.origin_channel)
        .bind(&r.origin_chat)
        .bind(&r.origin_thread)
        .bind(&r.label)
        .bind(&r.task)
        .bind(&r.model)
        .bind(now)
        .bind(now)
        .bind(now)
        .bind(&r.requester)
        .bind(&r.requester_session)
        .bind(self.0.instance_id())
        .bind(r.announce.then_some("pending"))).await?;
        self.0.changed(crate::Change::Run(r.id.clone()));
        Ok(now)
    }

    /// Finish a running run. Returns false when it had already ended (a
    /// cancel raced the completion): the first ending wins.
    pub async fn finish(self, id: &str, status: RunStatus, end: &RunEnd<'_>) -> Result<bool, StoreError> {
        let done = self.0.exec(Stmt::new(
            "UPDATE runs SET status = $1, ended_at = $2, output = $3, error = $4, tokens_in = $5, tokens_out = $6,
                             cost_micros = $7, progress = COALESCE($8, progress)
             WHERE id = $9 AND status = 'running'",
        )
        .bind(status.as_str())
        .bind(self.0.now_ms())
        .bind(end.output)
        .bind(end.error)
        .bind(end.tokens_in)
        .bind(end.tokens_out)
        .bind(end.cost_micros)
        .bind(end.progress)
        .bind(id)).await?;
        self.0.changed(crate::Change::Run(id.to_string()));
        Ok(done == 1)
    }

    /// Say run `id` is alive.
    pub async fn heartbeat(self, id: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new("UPDATE runs SET heartbeat_at = $1 WHERE id = $2 AND status = 'running'")
                    .bind(self.0.now_ms())
                    .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Store a run's progress object (JSON) and refresh its heartbeat.
    pub async fn set_progress(self, id: &str, progress_json: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new("UPDATE runs SET progress = $1, heartbeat_at = $2 WHERE id = $3")
                    .bind(progress_json)
                    .bind(self.0.now_ms())
                    .bind(id),
            )
            .await?;
        self.0.changed(crate::Change::Run(id.to_string()));
        Ok(())
    }

    /// Run `id`, if recorded.
    pub async fn get(self, id: &str) -> Result<Option<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(p)
        .await)?)
    }

    /// Runs of `kind` whose owner chain contains `alias`, newest first.
    pub async fn owned_by(self, kind: RunKind, alias: &str, limit: i64) -> Result<Vec<RunRow>, StoreError> {
        // The alias as a JSON string, with LIKE's wildcards taken literally
        // (`a_b` must not match `axb`).
        let needle = serde_json::to_string(alias).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let needle = needle.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
        let mut rows = read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE kind = $1 AND owner_chain LIKE $2 ESCAPE '\\'
             ORDER BY created_at DESC, id LIMIT {limit}",
        )))
        .bind(kind.as_str())
        .bind(format!("%{needle}%"))
        .fetch_all(p)
        .await)?;
        rows.retain(|r| r.owner_chain.iter().any(|o| o == alias));
        Ok(rows)
    }

    /// Child runs asked for in one chat: running ones, and those that ended
    /// after `ended_after` (ms), oldest first.
    pub async fn in_chat(
        self,
        channel: &str,
        chat: &str,
        ended_after: i64,
        limit: i64,
    ) -> Result<Vec<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE origin_channel = $1 AND origin_chat = $2 AND kind <> 'cron'
               AND (status = 'running' OR ended_at >= $3) ORDER BY created_at, id LIMIT {limit}",
        )))
        .bind(channel)
        .bind(chat)
        .bind(ended_after)
        .fetch_all(p)
        .await)?)
    }

    /// Runs a session asked for with `sessions_spawn`, newest first.
    pub async fn of_session(self, session_key: &str, limit: i64) -> Result<Vec<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE requester_session = $1 ORDER BY created_at DESC, id LIMIT {limit}",
        )))
        .bind(session_key)
        .fetch_all(p)
        .await)?)
    }

    /// Ended runs of `kind` whose transcript is not archived yet: (id, agent, owner_chain, ended_at).
    pub async fn to_archive(
        self,
        kind: RunKind,
        limit: i64,
    ) -> Result<Vec<(String, String, Vec<String>, i64)>, StoreError> {
        let rows = read!(self.0, |p| sqlx::query_as::<_, (String, String, String, i64)>(
            AssertSqlSafe(format!(
                "SELECT id, agent, owner_chain, ended_at FROM runs
             WHERE kind = $1 AND status <> 'running' AND archived_at IS NULL AND ended_at IS NOT NULL
             ORDER BY ended_at LIMIT {limit}",
            ))
        )
        .bind(kind.as_str())
        .fetch_all(p)
        .await)?;
        rows.into_iter()
            .map(|(id, agent, owners, ended)| {
                let owners = crate::list::decode(Some(&owners)).map_err(StoreError::Corrupt)?;
                Ok((id, agent, owners, ended))
            })
            .collect()
    }

    /// Run `id`'s transcript was archived.
    pub async fn mark_archived(self, id: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new("UPDATE runs SET archived_at = $1 WHERE id = $2")
                    .bind(self.0.now_ms())
                    .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Runs for the operator console: every running one and every one
    /// created since `since` (Unix ms), newest first, at most `limit`.
    pub async fn recent(self, since: i64, limit: i64) -> Result<Vec<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE status = 'running' OR created_at >= $1
             ORDER BY created_at DESC, id LIMIT {limit}",
        )))
        .bind(since)
        .fetch_all(p)
        .await)?)
    }

    /// Direct children of a run.
    pub async fn children(self, parent_id: &str) -> Result<Vec<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE parent_id = $1 ORDER BY created_at, id"
        )))
        .bind(parent_id)
        .fetch_all(p)
        .await)?)
    }

    /// How many runs of `kind` have `status`.
    pub async fn count(self, kind: RunKind, status: RunStatus) -> Result<i64, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_scalar(
            "SELECT COUNT(*) FROM runs WHERE kind = $1 AND status = $2"
        )
        .bind(kind.as_str())
        .bind(status.as_str())
        .fetch_one(p)
        .await)?)
    }

    /// Ended runs whose announcement was never queued, oldest first: those
    /// of an instance that is gone (a crash came between their end and
    /// it), and those that ended before `ended_before` (Unix ms on the
    /// control plane's clock) wherever they ran. A live instance's run that
    /// ended since is left to it: a child session's announce step runs after
    /// its end is recorded, and may answer `ANNOUNCE_SKIP`.
    pub async fn unannounced(self, ended_before: i64) -> Result<Vec<RunRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, RunRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM runs WHERE announce = 'pending' AND status <> 'running'
               AND ({} OR ended_at < $1) ORDER BY ended_at, id",
            crate::instances::orphan("runs")
        )))
        .bind(ended_before)
        .fetch_all(p)
        .await)?)
    }

    /// A run's announcement was left out on purpose (an announce step
    /// answered `ANNOUNCE_SKIP`, or it went to a parent session instead).
    pub async fn announcement_not_needed(self, run_id: &str) -> Result<(), StoreError> {
        self.0
            .exec(Stmt::new("UPDATE runs SET announce = 'done' WHERE id = $1 AND announce = 'pending'").bind(run_id))
            .await?;
        Ok(())
    }

    /// Runs of this instance cancelled in the control plane since `since`
    /// (Unix ms) — by `/subagents kill` or `/stop` typed to another
    /// gateway; this instance stops their work.
    pub async fn cancelled_since(self, since: i64) -> Result<Vec<String>, StoreError> {
        let Some(me) = self.0.instance_id() else {
            return Ok(Vec::new());
        };
        Ok(read!(self.0, |p| sqlx::query_scalar(
            "SELECT id FROM runs WHERE instance_id = $1 AND status = 'cancelled' AND ended_at >= $2"
        )
        .bind(me)
        .bind(since)
        .fetch_all(p)
        .await)?)
    }
}

/// The run registry (`runs`): every child run, its tree, status and ending.
#[derive(Clone, Copy)]
pub struct Runs<'s>(&'s Store);

impl Store {
    /// The run registry (`runs`): every child run, its tree, status and ending.
    pub fn runs(&self) -> Runs<'_> {
        Runs(self)
    }
}
