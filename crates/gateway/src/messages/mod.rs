//! The message flow: what happens between a channel handing a message
//! in and the answer going out. `inbox` takes inbound messages durably and
//! admits them, `router` runs each conversation's turns, `reply` and
//! `stream_out` shape what goes back, `outbox` delivers it (retried,
//! exactly once per key), `taken` remembers what this process is working on, `files` saves
//! what people send and posts what agents send, `pairing` lets strangers
//! ask to be let in (docs/routes.md).

pub(crate) mod files;
pub(crate) mod inbox;
pub(crate) mod outbox;
pub(crate) mod pairing;
pub(crate) mod reply;
pub(crate) mod router;
pub(crate) mod status_reactions;
pub(crate) mod storage_down;
pub(crate) mod stream_out;
pub(crate) mod taken;
pub(crate) mod voice;
