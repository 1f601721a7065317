//! The gateway's intake (see `switchboard_core::Intake`): each message a
//! channel offers is admitted or not (`admit`), the admitted ones are
//! written to the inbox in the same transaction as the channel's cursor,
//! and only then handed to the router. A message offered again (same chat,
//! same platform id) is not handed on twice. Messages found pending at
//! start (their process died) are handed to the router as `recovered`.

mod admit;
mod rate;
mod strangers;
mod unstored;
pub(crate) mod upkeep;

use crate::channels::ChannelSet;
use admit::{Admission, admit};
use async_trait::async_trait;
use parking_lot::Mutex;
use switchboard_core::{Inbound, Intake, IntakeError, Outbound};
use switchboard_store::{NewInbound, Store, StoreError, Took};
use tokio::sync::mpsc;

/// Tries of a refusal notice before it goes to the outbox.
const TELL_ATTEMPTS: u32 = 3;

pub(crate) use crate::messages::taken::Taken;

pub(crate) struct GatewayIntake {
    store: Store,
    config: crate::live_config::LiveConfig,
    /// For refusal notices.
    channels: ChannelSet,
    rate: Mutex<rate::Window>,
    strangers: Mutex<strangers::Strangers>,
    router: mpsc::Sender<Taken>,
    /// Leased channels are taken only under the lease this instance holds.
    fences: crate::cluster::Fences,
    /// Strangers where people are let in by pairing get a code.
    pairing: std::sync::Arc<crate::messages::pairing::Pairing>,
    /// Chats told that their message waits, while the inbox cannot store.
    unstored: unstored::Unstored,
}

impl GatewayIntake {
    pub(crate) fn new(
        store: Store,
        config: crate::live_config::LiveConfig,
        channels: ChannelSet,
        router: mpsc::Sender<Taken>,
        fences: crate::cluster::Fences,
        pairing: std::sync::Arc<crate::messages::pairing::Pairing>,
    ) -> Self {
        Self {
            store,
            config,
            channels,
            rate: Mutex::new(rate::Window::default()),
            strangers: Mutex::default(),
            router,
            fences,
            pairing,
            unstored: unstored::Unstored::default(),
        }
    }

    /// A stranger where people are let in by pairing: a code, told once
    /// (no retry, nothing queued), or nothing.
    fn pair(&self, m: Inbound) {
        let (pairing, channels) = (self.pairing.clone(), self.channels.clone());
        tokio::spawn(async move {
            if let Some(text) = pairing.stranger(&m).await {
                crate::messages::reply::notice(&channels, &m, &text);
            }
        });
    }

    /// Tell `to`'s sender why the message was not taken, without holding
    /// up the channel.
    fn tell(&self, to: &Inbound, text: String) {
        let mut out = Outbound::new(to.address.clone(), text);
        out.reply_to = to.message_id.clone();
        let (channels, store) = (self.channels.clone(), self.store.clone());
        tokio::spawn(async move { crate::messages::reply::deliver(&channels, &store, &out, TELL_ATTEMPTS).await });
    }

    /// Write `rows` (and the cursor) to the inbox; when the database does
    /// not take them, the channel offers them again, each chat of `kept`
    /// is told once that its message waits, and the log says what to fix.
    async fn store_rows(
        &self,
        channel: &str,
        rows: &[NewInbound],
        cursor: Option<&str>,
        kept: &[Taken],
    ) -> Result<Took, IntakeError> {
        match self
            .store
            .inbox()
            .take(channel, rows, cursor, self.fences.of(channel))
            .await
        {
            Ok(took) => {
                self.unstored.stored(channel);
                Ok(took)
            }
            Err(e) => {
                // Offered again (here or to the new owner) and counted
                // again then: not twice.
                let mut rate = self.rate.lock();
                for t in kept {
                    rate.refund(&t.m.sender);
                }
                drop(rate);
                self.not_stored(channel, kept, e)
            }
        }
    }

    /// The inbox did not take `kept`'s rows: why, in the log, and each of
    /// their chats told once when the database is away.
    fn not_stored(&self, channel: &str, kept: &[Taken], e: StoreError) -> Result<Took, IntakeError> {
        if !e.is_unavailable() {
            // The lease moved meanwhile, or the others took this process
            // for dead: the new owner takes them.
            tracing::warn!(%channel, error = %e, "messages not taken: this instance no longer runs the channel (its lease moved, or it was taken for dead)");
            return Err(IntakeError(e.to_string()));
        }
        let remedy = crate::messages::storage_down::remedy(&e);
        // Once per failure (the channel tries again every 2 s).
        if self.unstored.first_failure(channel) {
            tracing::error!(%channel, error = %e, remedy, "cannot write to the inbox; the channel will offer the messages again");
        } else {
            tracing::debug!(%channel, error = %e, "the inbox still does not take messages");
        }
        for m in self.unstored.first_in_chat(channel, kept.iter().map(|t| &t.m)) {
            crate::messages::reply::notice(&self.channels, m, crate::messages::storage_down::WAITS);
        }
        Err(IntakeError(e.to_string()))
    }
}

#[async_trait]
impl Intake for GatewayIntake {
    async fn cursor(&self, channel: &str) -> Result<Option<String>, IntakeError> {
        self.store
            .cursors()
            .get(channel)
            .await
            .map_err(|e| IntakeError(e.to_string()))
    }

    fn connection(&self, channel: &str, state: Result<(), String>) {
        match state {
            Ok(()) => self.channels.health().ok(channel),
            Err(e) => self.channels.health().failed(channel, &e),
        }
    }

    async fn take(&self, channel: &str, messages: Vec<Inbound>, cursor: Option<String>) -> Result<(), IntakeError> {
        if !self.fences.runs(channel) {
            // A channel this instance gave up: whatever it still hears is
            // the new owner's to take (fail closed).
            return Err(IntakeError(format!(
                "this instance does not run {channel} (its lease moved)"
            )));
        }
        // On the control plane's clock, like the runs it is compared with.
        let received_at = self.store.now_ms();
        let config = self.config.get();
        let mut rows = Vec::new();
        let mut kept = Vec::new();
        let mut tells = Vec::new();
        let mut dropped = 0;
        for m in messages {
            let route = crate::routing::pick(&config, &m);
            let command = crate::commands::of(&m);
            let paired =
                crate::messages::pairing::paired_here(&self.store, route.as_ref(), (&m, command.as_ref())).await;
            match admit(
                &config,
                (&self.rate, &self.strangers),
                (&m, command.as_ref()),
                route.as_ref(),
                paired,
            ) {
                Admission::Keep => {
                    let key = uuid::Uuid::new_v4().simple().to_string();
                    rows.push(NewInbound {
                        key: key.clone(),
                        channel: channel.to_string(),
                        chat: m.address.chat.clone(),
                        platform_id: m
                            .event_id
                            .clone()
                            .or_else(|| m.message_id.clone())
                            .unwrap_or_else(|| format!("unnumbered:{key}")),
                        sender: m.sender.to_string(),
                        body: serde_json::to_string(&m).map_err(|e| IntakeError(e.to_string()))?,
                    });
                    kept.push(Taken {
                        key,
                        m,
                        received_at,
                        recovered: false,
                        merged: Vec::new(),
                        route: route.as_ref().map(|p| crate::routing::Routed::of(&config, p)),
                        command,
                        held_up: 0,
                        // The life the rows are written in (below).
                        life: 0,
                    });
                }
                Admission::Tell(text) => tells.push((m, text, true)),
                Admission::Notice(text) => tells.push((m, text, false)),
                Admission::Pair => {
                    dropped += 1;
                    self.pair(m);
                }
                Admission::Drop => dropped += 1,
            }
        }
        let took = self.store_rows(channel, &rows, cursor.as_deref(), &kept).await?;
        for _ in 0..dropped {
            switchboard_telemetry::metrics::message_refused(channel, "not_admitted");
        }
        for (m, text, durable) in tells {
            switchboard_telemetry::metrics::message_refused(channel, "not_admitted");
            if durable {
                self.tell(&m, text);
            } else {
                crate::messages::reply::notice(&self.channels, &m, &text);
            }
        }
        for (mut taken, new) in kept.into_iter().zip(took.fresh) {
            taken.life = took.life;
            if !new {
                tracing::info!(%channel, message = ?taken.m.message_id, "a message taken before was offered again; ignored");
                continue;
            }
            switchboard_telemetry::metrics::message_taken(channel);
            if self.router.send(taken).await.is_err() {
                tracing::warn!(%channel, "the router has stopped; the message stays pending until the next start");
            }
        }
        Ok(())
    }
}
