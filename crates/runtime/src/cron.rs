//! The scheduler spawn site: `[[cron]]` jobs run agent turns at top level
//! (`is_subagent = false`, session `cron-<uuid>`), recorded in the run
//! registry as kind `cron`, inside a `subagent` span with
//! `category="cron"` and `spawn_site="cron"`. Being top level, a cron turn
//! may call `spawn_subagent` (one level).

use crate::agent::{TurnError, TurnReply};
use crate::children::{ChildSpec, Verdict};
use crate::runtime::Runtime;
use chrono::Utc;
use croner::Cron;
use std::str::FromStr;
use switchboard_config::CronJob;
use switchboard_core::ChatAddress;
use switchboard_store::NewRun;
use switchboard_store::RunKind;

/// One finished cron run.
#[derive(Debug)]
pub struct CronRun {
    /// The run's id.
    pub run_id: String,
    /// Its session.
    pub session_key: String,
    /// How it ended.
    pub result: Result<TurnReply, TurnError>,
}

impl Runtime {
    /// Run `job` now.
    pub async fn run_cron_job(&self, job: &CronJob) -> CronRun {
        let run_id = uuid::Uuid::new_v4().to_string();
        let session_key: String = switchboard_core::SessionKey::cron(&run_id).into();
        let result = self.cron_turn(job, &run_id, &session_key).await;
        CronRun {
            run_id,
            session_key,
            result,
        }
    }

    async fn cron_turn(&self, job: &CronJob, run_id: &str, session_key: &str) -> Result<TurnReply, TurnError> {
        let core = self.core();
        let origin = job.delivery().map(|(ch, chat)| ChatAddress::new(ch, chat));
        core.store
            .sessions()
            .ensure(
                session_key,
                &job.agent,
                origin.as_ref().map(|o| o.channel.as_str()),
                origin.as_ref().map(|o| o.chat.as_str()),
                None,
            )
            .await?;
        let mut parts = self.top_level_parts(&job.agent, session_key, origin.clone()).await?;
        let row = NewRun {
            id: run_id.to_string(),
            kind: RunKind::Cron,
            root_id: run_id.to_string(),
            owner_chain: vec![job.agent.clone()],
            agent: job.agent.clone(),
            session_key: session_key.to_string(),
            origin_channel: origin.as_ref().map(|o| o.channel.clone()),
            origin_chat: origin.as_ref().map(|o| o.chat.clone()),
            label: Some(job.id.clone()),
            task: Some(job.prompt.chars().take(crate::scope::TASK_IN_ROW).collect()),
            model: Some(parts.chain.primary().model().to_string()),
            ..NewRun::default()
        };
        parts.scope.root_id = Some(run_id.to_string());
        // Nobody is at a keyboard: approvals go along the agent's route, if any.
        parts.broker = core.route_broker_for(&parts.approval_profile.1);
        let spec = ChildSpec {
            row,
            parts,
            task: job.prompt.clone(),
            timeout: None,
            verdict: Verdict::Plain,
        };
        crate::children::wait_for_turn(core, spec).await?.1
    }

    /// Run every configured job at its schedule (UTC) until the task is
    /// aborted. Results are recorded in the run registry.
    pub fn spawn_scheduler(&self) -> tokio::task::JoinHandle<()> {
        let runtime = self.clone();
        tokio::spawn(async move {
            let jobs: Vec<(CronJob, Cron)> = runtime
                .config()
                .cron
                .iter()
                .filter_map(|j| Cron::from_str(&j.schedule).ok().map(|c| (j.clone(), c)))
                .collect();
            if jobs.is_empty() {
                return;
            }
            loop {
                // Slots are on the control plane's clock: gateways on hosts
                // whose clocks differ still agree on which slot is due.
                let now = chrono::DateTime::from_timestamp_millis(runtime.store().now_ms()).unwrap_or_else(Utc::now);
                let Some((at, due)) = next_due(&jobs, &now) else { return };
                let wait = (at - now).to_std().unwrap_or_default();
                tokio::time::sleep(wait).await;
                for job in due {
                    let (rt, job) = (runtime.clone(), job.clone());
                    tokio::spawn(async move {
                        // Several gateways on one database: the first to claim
                        // the slot fires it.
                        // The slot is the scheduled second (croner keeps the
                        // sub-second part of "now" in its answer).
                        match rt.store().leases().claim_cron_slot(&job.id, at.timestamp()).await {
                            Ok(true) => {}
                            Ok(false) => {
                                tracing::debug!(cron_job_id = %job.id, "another instance fired this slot");
                                return;
                            }
                            Err(e) => {
                                tracing::error!(cron_job_id = %job.id, error = %e, "cannot claim the cron slot; not fired");
                                return;
                            }
                        }
                        let run = rt.run_cron_job(&job).await;
                        match &run.result {
                            Ok(_) => tracing::info!(cron_job_id = %job.id, run_id = %run.run_id, "cron run finished"),
                            Err(e) => {
                                tracing::warn!(cron_job_id = %job.id, run_id = %run.run_id, error = %e, "cron run failed");
                            }
                        }
                    });
                }
                // Step past this second so the same occurrence is not fired twice.
                tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
            }
        })
    }
}

/// The next scheduled second after `now` and every job due then (jobs on
/// the same schedule fire together, not only the first of them).
fn next_due<'a>(
    jobs: &'a [(CronJob, Cron)],
    now: &chrono::DateTime<Utc>,
) -> Option<(chrono::DateTime<Utc>, Vec<&'a CronJob>)> {
    let times: Vec<(i64, chrono::DateTime<Utc>, &CronJob)> = jobs
        .iter()
        .filter_map(|(job, cron)| {
            cron.find_next_occurrence(now, false)
                .ok()
                .map(|t| (t.timestamp(), t, job))
        })
        .collect();
    let (first, at) = times.iter().map(|(s, t, _)| (*s, *t)).min_by_key(|(s, _)| *s)?;
    let due = times
        .iter()
        .filter(|(s, _, _)| *s == first)
        .map(|(_, _, j)| *j)
        .collect();
    Some((at, due))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, schedule: &str) -> (CronJob, Cron) {
        let job = CronJob {
            id: id.into(),
            schedule: schedule.into(),
            agent: "main".into(),
            prompt: "p".into(),
            deliver_to: None,
        };
        let cron = Cron::from_str(schedule).unwrap();
        (job, cron)
    }

    #[test]
    fn jobs_on_the_same_second_are_due_together() {
        let jobs = [job("a", "0 6 * * *"), job("b", "0 6 * * *"), job("c", "30 6 * * *")];
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-01T05:59:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let (at, due) = next_due(&jobs, &now).unwrap();
        assert_eq!(at.to_rfc3339(), "2026-12-01T06:00:00+00:00");
        let ids: Vec<&str> = due.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
    }
}
