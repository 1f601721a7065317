//! Files in and out of chats (docs/files.md): what people attach is saved
//! to the agent's workspace under `received/` and described to the model
//! (`inbound`); the `send_file` tool posts through the channel that the
//! run answers (`poster`).

pub(crate) mod inbound;
mod poster;
pub(crate) mod terminal;

pub(crate) use poster::ChannelFiles;
