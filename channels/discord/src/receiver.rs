//! The receiving side: events from the gateway, in order, become inbound
//! messages handed to the gateway's intake together with the cursor. After
//! a new gateway session (a restart, or a session Discord would not
//! resume) the channels the bot has seen are read back from their last
//! known message, so what was written meanwhile is answered (once: the
//! intake takes a message id only once).

use crate::handler::Event;
use crate::inbound::{self, Venue};
use crate::state::{Kind, Known, Live};
use crate::{commands, rest};
use serenity::all::{ApplicationId, ChannelType, GuildChannel, GuildId, Message, MessagePagination, UserId};
use serenity::http::Http;
use serenity::model::channel::Channel as DiscordChannelKind;
use serenity::model::id::{ChannelId, MessageId};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Inbound, guarded};
use tokio::sync::mpsc::Receiver as Events;

/// Messages read back per page (Discord's most is 100).
const CATCH_UP: u8 = 50;
/// Pages read back per channel at most (1,000 messages).
const READ_BACK_PAGES: usize = 20;

pub(crate) struct Receiver {
    pub(crate) live: Arc<Live>,
    pub(crate) http: Arc<Http>,
    /// Guilds the bot answers in (empty: all).
    pub(crate) guilds: Vec<u64>,
}

fn sort_key(e: &Event) -> u64 {
    match e {
        Event::Message(m) => m.id.get(),
        _ => 0,
    }
}

impl Receiver {
    pub(crate) async fn run(self, mut rx: Events<Event>) {
        while let Some(first) = rx.recv().await {
            let mut events = vec![first];
            while let Ok(e) = rx.try_recv() {
                events.push(e);
            }
            // Serenity hands events over from tasks of their own: put the
            // messages of a batch back in the order Discord numbered them.
            events.sort_by_key(sort_key);
            let mut batch = Vec::new();
            for e in events {
                self.handle(e, &mut batch).await;
            }
            // Messages dropped while the queue was full, read back from
            // the first one (the intake takes each message id once).
            for (channel, first) in self.live.take_missed() {
                self.read_back(channel, first - 1, &mut batch).await;
            }
            self.take(batch).await;
        }
    }

    /// Until the gateway has it: Discord does not send a message twice.
    async fn take(&self, batch: Vec<Inbound>) {
        let mut pause = Duration::from_millis(200);
        while let Err(e) = self.live.take(batch.clone()).await {
            tracing::error!(channel = %self.live.name, error = %e, ?pause, "cannot hand messages to the gateway; trying again");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(30));
        }
    }

    async fn handle(&self, e: Event, batch: &mut Vec<Inbound>) {
        let name = self.live.name.clone();
        match e {
            Event::Connection(state) => self.live.connection(state),
            Event::Ready { bot, app } => {
                self.live.connection(Ok(()));
                self.live.set_bot(bot);
                // The REST client answers interactions and registers
                // commands in the application's name.
                self.http.set_application_id(ApplicationId::new(app));
                self.register_commands().await;
                self.catch_up(batch).await;
            }
            Event::Thread(t) => self.learn_thread(&t),
            Event::Message(m) => {
                let guild = Some(m.guild_id.map(GuildId::get));
                self.message(&m, guild, batch).await;
            }
            Event::Press(c) => {
                if let Some(place) = self
                    .place_of(c.channel_id.get(), Some(c.guild_id.map(GuildId::get)))
                    .await
                {
                    // Held only for interactions in places the bot serves.
                    self.live.hold_token(c.id.get(), &c.token);
                    let guild = self.guild_of(c.channel_id.get());
                    let pressed = guarded(&name, "a button press", || inbound::press(&name, &c, &place));
                    batch.extend(pressed.map(|m| Inbound { guild, ..m }));
                }
            }
            Event::Command(c) => {
                if let Some(place) = self
                    .place_of(c.channel_id.get(), Some(c.guild_id.map(GuildId::get)))
                    .await
                {
                    self.live.hold_token(c.id.get(), &c.token);
                    let guild = self.guild_of(c.channel_id.get());
                    let picked = guarded(&name, "a command", || inbound::command(&name, &c, &place));
                    batch.extend(picked.map(|m| Inbound { guild, ..m }));
                }
            }
        }
    }

    fn learn_thread(&self, t: &GuildChannel) {
        if let Some(parent) = t.parent_id {
            self.live.learn(
                t.id.get(),
                Known {
                    kind: Kind::Thread {
                        parent: parent.get(),
                        owner: t.owner_id.map(UserId::get),
                    },
                    guild: Some(t.guild_id.get()),
                },
            );
        }
    }

    /// `guild`: `Some(..)` when the gateway said (its messages carry the
    /// guild, or none in DMs), `None` for messages read over REST.
    async fn message(&self, m: &Message, guild: Option<Option<u64>>, batch: &mut Vec<Inbound>) {
        let channel = m.channel_id.get();
        self.live.cursor.lock().saw(channel, m.id.get());
        if m.author.bot {
            return;
        }
        let Some(place) = self.place_of(channel, guild).await else {
            return;
        };
        let bot = self.live.bot();
        let name = self.live.name.clone();
        let Some(mut inbound) = guarded(&name, "a message", || inbound::message(&name, m, bot, &place)) else {
            return;
        };
        inbound.guild = self.guild_of(channel);
        if place == Venue::Channel {
            self.live.name_thread(m.id.get(), rest::thread_name(&inbound.text));
        }
        batch.push(inbound);
    }

    /// The guild of a channel already placed (none in direct messages).
    fn guild_of(&self, channel: u64) -> Option<String> {
        self.live.known(channel).and_then(|k| k.guild).map(|g| g.to_string())
    }

    /// Where messages of `channel` belong, asking Discord the first time;
    /// `None` for channels of guilds the bot does not serve (or that cannot
    /// be read).
    async fn place_of(&self, channel: u64, guild: Option<Option<u64>>) -> Option<Venue> {
        let known = match (self.live.known(channel), guild) {
            (Some(k), _) => k,
            (None, Some(None)) => Known {
                kind: Kind::Dm,
                guild: None,
            },
            (None, _) => {
                let asked = rest::retrying(|| self.http.get_channel(ChannelId::new(channel))).await;
                let k = match asked {
                    Ok(DiscordChannelKind::Guild(g)) => {
                        let kind = match (g.kind, g.parent_id) {
                            (
                                ChannelType::PublicThread | ChannelType::PrivateThread | ChannelType::NewsThread,
                                Some(p),
                            ) => Kind::Thread {
                                parent: p.get(),
                                owner: g.owner_id.map(UserId::get),
                            },
                            _ => Kind::Channel,
                        };
                        Known {
                            kind,
                            guild: Some(g.guild_id.get()),
                        }
                    }
                    Ok(_) => Known {
                        kind: Kind::Dm,
                        guild: None,
                    },
                    Err(e) => {
                        tracing::warn!(channel = %self.live.name, discord_channel = channel, error = %e, "cannot tell what this channel is; its message is skipped");
                        return None;
                    }
                };
                self.live.learn(channel, k);
                k
            }
        };
        if let Some(g) = known.guild
            && !self.guilds.is_empty()
            && !self.guilds.contains(&g)
        {
            return None;
        }
        Some(self.live.place(channel, known.kind))
    }

    /// Register the application commands unless the registered set is the
    /// same (its fingerprint is in the cursor).
    async fn register_commands(&self) {
        let fingerprint = commands::fingerprint();
        if self.live.cursor.lock().commands.as_deref() == Some(fingerprint.as_str()) {
            return;
        }
        let set = commands::registration();
        match rest::retrying(|| self.http.create_global_commands(&set)).await {
            Ok(_) => {
                self.live.cursor.lock().commands = Some(fingerprint);
                tracing::info!(channel = %self.live.name, "application commands registered");
            }
            Err(e) => {
                tracing::warn!(channel = %self.live.name, error = %e, "cannot register the application commands; the text commands still work");
            }
        }
    }

    /// Read back what was written in known channels after their last seen
    /// message (a bounded page each).
    async fn catch_up(&self, batch: &mut Vec<Inbound>) {
        let last: Vec<(u64, u64)> = self.live.cursor.lock().last.iter().map(|(c, m)| (*c, *m)).collect();
        for (channel, after) in last {
            self.read_back(channel, after, batch).await;
        }
    }

    /// Read back what was written in `channel` after message `after` (a
    /// bounded page).
    async fn read_back(&self, channel: u64, after: u64, batch: &mut Vec<Inbound>) {
        let mut after = after;
        for _ in 0..READ_BACK_PAGES {
            let page = rest::retrying(|| {
                self.http.get_messages(
                    ChannelId::new(channel),
                    Some(MessagePagination::After(MessageId::new(after.max(1)))),
                    Some(CATCH_UP),
                )
            })
            .await;
            let mut messages = match page {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(channel = %self.live.name, discord_channel = channel, error = %e, "cannot read back a channel");
                    return;
                }
            };
            if !messages.is_empty() {
                tracing::info!(channel = %self.live.name, discord_channel = channel, count = messages.len(), "read back messages not received live");
            }
            messages.sort_by_key(|m| m.id);
            for m in &messages {
                self.message(m, None, batch).await;
            }
            // A short page is the end; a full one may have more after it.
            match messages.last() {
                Some(last) if messages.len() >= usize::from(CATCH_UP) => after = last.id.get(),
                _ => return,
            }
        }
        tracing::warn!(channel = %self.live.name, discord_channel = channel, pages = READ_BACK_PAGES, "more messages than one read-back takes; the oldest of them were read, the rest are skipped");
    }
}
