//! Serenity's event handler: each gateway event is forwarded, in the order
//! serenity hands them over, to the receiver (see `receiver`). Interactions
//! are acknowledged here first, inside Discord's 3-second window; their
//! answer replaces the "thinking" state later.
//!
//! The way to the receiver holds [`QUEUE`] events. When the receiver falls
//! behind (the gateway's database is slow or down) and it is full, a
//! message is dropped rather than held, and its channel is read back from
//! that message once the receiver catches up; other events wait.

use crate::state::Live;
use crate::{commands, inbound, rest};
use serde_json::json;
use serenity::all::{
    ConnectionStage, Context, EventHandler, GuildChannel, Interaction, Message, Ready, ResumedEvent,
    ShardStageUpdateEvent,
};
use serenity::async_trait;
use std::sync::Arc;
use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;

/// Events waiting for the receiver, at most.
pub(crate) const QUEUE: usize = 1024;

/// What the receiver gets.
pub(crate) enum Event {
    /// A new gateway session (not a resume): the bot's ids.
    Ready { bot: u64, app: u64 },
    /// The gateway connection came back (`Ok`) or was lost (`Err`).
    Connection(Result<(), String>),
    /// A message anywhere the bot can read.
    Message(Box<Message>),
    /// A thread appeared.
    Thread(Box<GuildChannel>),
    /// An approval button was pressed (already acknowledged).
    Press(Box<serenity::all::ComponentInteraction>),
    /// An application command was used (already acknowledged).
    Command(Box<serenity::all::CommandInteraction>),
}

pub(crate) struct Handler {
    pub(crate) name: String,
    pub(crate) tx: Sender<Event>,
    pub(crate) live: Arc<Live>,
}

impl Handler {
    /// Hand `event` to the receiver, waiting for room.
    async fn forward(&self, event: Event) {
        let _ = self.tx.send(event).await;
    }
}

/// A deferred answer ("thinking"), ephemeral when only the person should
/// see it.
async fn acknowledge(ctx: &Context, id: serenity::all::InteractionId, token: &str, ephemeral: bool) -> bool {
    let body = if ephemeral {
        json!({"type": 5, "data": {"flags": 64}})
    } else {
        json!({"type": 5})
    };
    rest::retrying(|| ctx.http.create_interaction_response(id, token, &body, Vec::new()))
        .await
        .is_ok()
}

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        ctx.http.set_application_id(ready.application.id);
        tracing::info!(channel = %self.name, bot = %ready.user.name, "connected to the Discord gateway");
        self.forward(Event::Ready {
            bot: ready.user.id.get(),
            app: ready.application.id.get(),
        })
        .await;
    }

    async fn resume(&self, _ctx: Context, _event: ResumedEvent) {
        tracing::info!(channel = %self.name, "Discord gateway session resumed");
        self.forward(Event::Connection(Ok(()))).await;
    }

    async fn shard_stage_update(&self, _ctx: Context, event: ShardStageUpdateEvent) {
        let state = match event.new {
            ConnectionStage::Connected => Ok(()),
            ConnectionStage::Disconnected | ConnectionStage::Resuming | ConnectionStage::Connecting => {
                Err(format!("gateway connection lost ({:?}); reconnecting", event.new))
            }
            _ => return,
        };
        self.forward(Event::Connection(state)).await;
    }

    async fn message(&self, _ctx: Context, message: Message) {
        let (channel, id) = (message.channel_id.get(), message.id.get());
        if let Err(TrySendError::Full(_)) = self.tx.try_send(Event::Message(Box::new(message)))
            && self.live.missed(channel, id)
        {
            tracing::warn!(channel = %self.name, "messages arrive faster than the gateway takes them; they are read back once it catches up");
        }
    }

    async fn thread_create(&self, _ctx: Context, thread: GuildChannel) {
        self.forward(Event::Thread(Box::new(thread))).await;
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        match interaction {
            Interaction::Component(c) if inbound::press_choice(&c.data.custom_id).is_some() => {
                if !acknowledge(&ctx, c.id, &c.token, true).await {
                    tracing::warn!(channel = %self.name, "could not acknowledge a button press in time");
                }
                self.forward(Event::Press(Box::new(c))).await;
            }
            Interaction::Command(c) if commands::invocation(&c.data).is_some() => {
                if !acknowledge(&ctx, c.id, &c.token, commands::is_ephemeral(&c.data.name)).await {
                    tracing::warn!(channel = %self.name, "could not acknowledge a command in time");
                }
                self.forward(Event::Command(Box::new(c))).await;
            }
            _ => {}
        }
    }
}
