//! The small vocabulary shared by every channel adapter and the runtime.
//!
//! Channel crates depend on this crate and nothing else of Switchboard; the
//! runtime addresses chats only through [`ChatAddress`], so it never has to
//! know which platform a message came from.

mod address;
mod approval;
mod attachment;
mod bounded;
pub mod catalog;
mod channel;
mod channel_name;
mod command_line;
mod ct_eq;
mod digest;
mod intake;
mod message;
mod risk;
mod session_key;
mod split;
mod status;
mod supervise;

pub use address::{ChatAddress, UserId};
pub use approval::{ApprovalChoice, ApprovalPrompt, PromptKind, PromptState};
pub use attachment::{Attachment, AttachmentKind, FetchError, OutboundFile, push_capped, read_capped};
pub use bounded::BoundedMap;
pub use catalog::{ArgKind, ArgSpec, CATALOG, CommandId, CommandSpec};
pub use channel::{Channel, ChannelError, MessageRef, PromptEdit, SetupError, StreamLimits};
pub use channel_name::{ChannelKind, ChannelName};
pub use command_line::{CommandLine, Invocation};
pub use ct_eq::constant_time_eq;
pub use digest::fnv1a_hex;
pub use intake::{Intake, IntakeError};
pub use message::{Action, Inbound, Outbound};
pub use risk::{NotARisk, Risk};
pub use session_key::SessionKey;
pub use split::split_message;
pub use status::{MessageStatus, StatusMark};
pub use supervise::{Receiving, TaskEnd, guarded, supervise};
