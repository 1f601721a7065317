//! Serenity's event handler: each gateway event is forwarded, in the order
//! serenity hands them over, to the receiver (see `receiver`). Interactions
//! are acknowledged here first, inside Discord's 3-second window; their
//! answer replaces the "thinking" state later.

use crate::{commands, inbound, rest};
use serde_json::json;
use serenity::all::{
    ConnectionStage, Context, EventHandler, GuildChannel, Interaction, Message, Ready, ResumedEvent,
    ShardStageUpdateEvent,
};
use serenity::async_trait;
use tokio::sync::mpsc::UnboundedSender;

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
    pub(crate) tx: UnboundedSender<Event>,
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
        let _ = self.tx.send(Event::Ready {
            bot: ready.user.id.get(),
            app: ready.application.id.get(),
        });
    }

    async fn resume(&self, _ctx: Context, _event: ResumedEvent) {
        tracing::info!(channel = %self.name, "Discord gateway session resumed");
        let _ = self.tx.send(Event::Connection(Ok(())));
    }

    async fn shard_stage_update(&self, _ctx: Context, event: ShardStageUpdateEvent) {
        let state = match event.new {
            ConnectionStage::Connected => Ok(()),
            ConnectionStage::Disconnected | ConnectionStage::Resuming | ConnectionStage::Connecting => {
                Err(format!("gateway connection lost ({:?}); reconnecting", event.new))
            }
            _ => return,
        };
        let _ = self.tx.send(Event::Connection(state));
    }

    async fn message(&self, _ctx: Context, message: Message) {
        let _ = self.tx.send(Event::Message(Box::new(message)));
    }

    async fn thread_create(&self, _ctx: Context, thread: GuildChannel) {
        let _ = self.tx.send(Event::Thread(Box::new(thread)));
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        match interaction {
            Interaction::Component(c) if inbound::press_text(&c.data.custom_id).is_some() => {
                if !acknowledge(&ctx, c.id, &c.token, true).await {
                    tracing::warn!(channel = %self.name, "could not acknowledge a button press in time");
                }
                let _ = self.tx.send(Event::Press(Box::new(c)));
            }
            Interaction::Command(c) if commands::text_of(&c.data).is_some() => {
                if !acknowledge(&ctx, c.id, &c.token, commands::is_ephemeral(&c.data.name)).await {
                    tracing::warn!(channel = %self.name, "could not acknowledge a command in time");
                }
                let _ = self.tx.send(Event::Command(Box::new(c)));
            }
            _ => {}
        }
    }
}
