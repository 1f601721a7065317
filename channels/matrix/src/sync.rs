//! The sync loop: one `/sync` long poll after another from the token kept
//! in the control plane. The messages of one sync are handed to the
//! gateway's intake together with the next token (one step on the gateway's
//! side); when they cannot be taken, the token stays and the same events
//! come again, so a crash or a store outage replays rather than loses.
//! History from before the bot's first start, and from before it joined a
//! room, is not answered.

use crate::inbound::{self, Bot, Room};
use crate::{Settings, State, errors};
use matrix_sdk::Client;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::filter::{FilterDefinition, RoomEventFilter};
use matrix_sdk::ruma::api::client::sync::sync_events::v3::Filter;
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::ruma::{OwnedRoomOrAliasId, RoomId, UInt};
use matrix_sdk::sync::{JoinedRoomUpdate, SyncResponse};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ChannelError, Inbound, Intake, TaskEnd, UserId, guarded};

/// Events per room one sync may carry before the timeline is cut.
const TIMELINE_LIMIT: u32 = 200;

pub(crate) struct Syncer {
    client: Client,
    settings: Settings,
    intake: Arc<dyn Intake>,
    state: Arc<State>,
    display_name: Option<String>,
    token: Option<String>,
}

fn filter() -> Filter {
    let mut def = FilterDefinition::default();
    // Lazy loading makes the server send room summaries (member counts),
    // which tell direct conversations from group rooms.
    def.room.state = RoomEventFilter::with_lazy_loading();
    def.room.timeline = RoomEventFilter::with_lazy_loading();
    def.room.timeline.limit = Some(UInt::from(TIMELINE_LIMIT));
    Filter::FilterDefinition(def)
}

/// A raw event of any kind, read as plain JSON.
fn json_of<T>(raw: &Raw<T>) -> Option<Value> {
    serde_json::from_str(raw.json().get()).ok()
}

impl Syncer {
    pub(crate) fn new(client: Client, settings: Settings, intake: Arc<dyn Intake>, state: Arc<State>) -> Self {
        Self {
            client,
            settings,
            intake,
            state,
            display_name: None,
            token: None,
        }
    }

    /// Learn the bot's display name, take the stored sync token (or, on the
    /// very first start, sync once to skip everything before now) and join
    /// the configured rooms.
    pub(crate) async fn prepare(&mut self) -> Result<(), ChannelError> {
        self.display_name = self.client.account().get_display_name().await.ok().flatten();
        self.token = self
            .intake
            .cursor(&self.settings.name)
            .await
            .map_err(|e| ChannelError::Transient(e.to_string()))?;
        if self.token.is_none() {
            let first = self
                .client
                .sync_once(SyncSettings::new().filter(filter()).timeout(Duration::ZERO))
                .await
                .map_err(errors::map)?;
            self.accept_invites(&first).await;
            self.intake
                .take(&self.settings.name, Vec::new(), Some(first.next_batch.clone()))
                .await
                .map_err(|e| ChannelError::Transient(e.to_string()))?;
            self.token = Some(first.next_batch);
        }
        for room in &self.settings.auto_join {
            let Ok(id) = OwnedRoomOrAliasId::try_from(room.as_str()) else {
                tracing::warn!(channel = %self.settings.name, %room, "auto_join entry is not a room id or alias");
                continue;
            };
            if let Err(e) = self.client.join_room_by_id_or_alias(&id, &[]).await {
                tracing::warn!(channel = %self.settings.name, %room, error = %errors::map(e), "cannot join a configured room");
            }
        }
        Ok(())
    }

    /// Sync until the task is aborted; failures back off and retry.
    pub(crate) async fn run(mut self) -> TaskEnd {
        let mut backoff = Duration::from_millis(500);
        loop {
            let mut settings = SyncSettings::new().filter(filter()).timeout(self.settings.sync_timeout);
            if let Some(t) = &self.token {
                settings = settings.token(t.clone());
            }
            match self.client.sync_once(settings).await {
                Ok(response) => {
                    self.intake.connection(&self.settings.name, Ok(()));
                    self.accept_invites(&response).await;
                    let mut messages = Vec::new();
                    for (room_id, update) in &response.rooms.joined {
                        self.collect(room_id, update, &mut messages).await;
                    }
                    let token = response.next_batch;
                    let moved = self.token.as_deref() != Some(token.as_str());
                    if moved || !messages.is_empty() {
                        let taken = self
                            .intake
                            .take(&self.settings.name, messages, Some(token.clone()))
                            .await;
                        if let Err(e) = taken {
                            // The token stays: the same events come again.
                            tracing::warn!(channel = %self.settings.name, error = %e, ?backoff, "messages not taken; syncing them again");
                            tokio::time::sleep(backoff).await;
                            backoff = (backoff * 2).min(Duration::from_secs(8));
                            continue;
                        }
                    }
                    self.token = Some(token);
                    backoff = Duration::from_millis(500);
                }
                Err(e) => match errors::map(e) {
                    ChannelError::RateLimited(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
                    other => {
                        self.intake
                            .connection(&self.settings.name, Err(format!("sync failed: {other}")));
                        tracing::warn!(channel = %self.settings.name, error = %other, ?backoff, "sync failed; retrying");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(8));
                    }
                },
            }
        }
    }

    /// One room's new messages, added to `out`.
    async fn collect(&self, room_id: &RoomId, update: &JoinedRoomUpdate, out: &mut Vec<Inbound>) {
        let events: Vec<Value> = update.timeline.events.iter().filter_map(|e| json_of(e.raw())).collect();
        // A room joined in this batch: what came before the join is history.
        let start = events
            .iter()
            .rposition(|e| {
                e["type"] == "m.room.member"
                    && e["state_key"] == self.settings.user_id.as_str()
                    && e["content"]["membership"] == "join"
                    && e["unsigned"]["prev_content"]["membership"] != "join"
            })
            .map_or(0, |i| i + 1);
        if update.timeline.limited && start == 0 {
            tracing::warn!(channel = %self.settings.name, room = %room_id, "more events than one sync carries; the oldest were skipped");
        }
        let direct = self.is_direct(room_id).await;
        tracing::debug!(channel = %self.settings.name, room = %room_id, direct, events = events.len() - start, "room events");
        let room = Room {
            id: room_id.as_str(),
            direct,
        };
        let bot = Bot {
            channel: &self.settings.name,
            user_id: &self.settings.user_id,
            display_name: self.display_name.as_deref(),
        };
        for event in &events[start..] {
            if event["type"] == "m.room.encrypted" {
                tracing::warn!(channel = %self.settings.name, room = %room_id, "an encrypted message could not be decrypted");
                continue;
            }
            // An event that cannot be converted is logged and skipped, so
            // the token still moves past it.
            let what = event["event_id"].as_str().unwrap_or("an event");
            if let Some(message) = guarded(&self.settings.name, what, || {
                inbound::convert(event, &room, &bot, &self.state)
            }) {
                out.push(message);
            }
        }
    }

    /// A room is a direct conversation when the bot and one person are its
    /// only members (joined or invited). The `is_direct` mark is not asked:
    /// whoever invites the bot sets it, to a room of any size.
    async fn is_direct(&self, room_id: &RoomId) -> bool {
        self.client
            .get_room(room_id)
            .is_some_and(|room| room.active_members_count() == 2)
    }

    /// Join rooms people in `invites_from` invited the bot to.
    async fn accept_invites(&self, response: &SyncResponse) {
        for (room_id, invited) in &response.rooms.invited {
            let inviter = invited
                .invite_state
                .events
                .iter()
                .filter_map(json_of)
                .find(|e| {
                    e["type"] == "m.room.member"
                        && e["state_key"] == self.settings.user_id.as_str()
                        && e["content"]["membership"] == "invite"
                })
                .and_then(|e| e["sender"].as_str().map(str::to_string));
            let Some(inviter) = inviter else { continue };
            if !UserId(inviter.clone()).is_listed_in(&self.settings.invites_from) {
                tracing::info!(channel = %self.settings.name, room = %room_id, %inviter, "invitation ignored: the inviter is not allowed");
                continue;
            }
            match self.client.join_room_by_id(room_id).await {
                Ok(_) => {
                    tracing::info!(channel = %self.settings.name, room = %room_id, %inviter, "joined on invitation");
                }
                Err(e) => {
                    tracing::warn!(channel = %self.settings.name, room = %room_id, error = %errors::map(e), "cannot accept an invitation");
                }
            }
        }
    }
}
