//! Local channels (`local.<alias>`): chats that live on this machine.
//!
//! People, scripts and tests talk to agents through a small HTTP API,
//! served by one [`LocalHub`] for every local instance on the gateway's
//! owner-only UNIX socket and, as an opt-in, on loopback TCP (there only
//! for channels that know their people by token):
//!
//! * `POST /local/{alias}/send` — a person writes into a chat
//!   (`{chat, thread?, user, name?, text, mentioned?, direct?, files?}`,
//!   `files` being `[{name, mime?, data}]` with `data` in base64);
//! * `GET /local/{alias}/events?after=N&wait_ms=M` — what the bot posted
//!   (messages, approval prompts, prompt edits, streamed edits, files),
//!   long-polled by sequence;
//! * `POST /local/{alias}/press` — a person presses an approval button
//!   (`{user, chat, approval_id, choice}`);
//! * `POST /local/{alias}/outage` — `{down: true|false}` simulates the
//!   platform being unreachable.
//!
//! Requests must be addressed to a loopback name (`Host`), may not come
//! from a web page of another site (`Origin`), carry `cli:` people only,
//! and, when the alias has a `token`, `Authorization: Bearer <token>`.
//!
//! The adapter knows nothing of agents: it turns requests into
//! [`Inbound`] messages and records what the gateway sends.

mod access;
mod api;
mod channel;
mod files;
mod serve;

pub use api::LocalHub;
pub use channel::{Event, LocalChannel};
pub use files::LocalFile;
