//! The agent runtime: providers, the tool loop, built-in tools, security
//! policy and the approval seam. It addresses chats only through
//! `switchboard_core::ChatAddress` and never names a platform.

pub mod agent;
pub mod approval;
mod artifacts;
mod builtin;
pub mod children;
mod compact_now;
pub mod compaction;
pub mod confinement;
pub mod core;
pub mod cost;
pub mod cron;
pub mod delegation;
pub mod fence;
pub mod files;
mod kill;
pub mod live;
pub mod message;
pub mod policy;
pub mod process;
pub mod progress;
pub mod prompt_size;
pub mod provider;
pub mod recover;
pub mod redact;
mod rules;
mod runtime;
pub mod scope;
pub mod sessions;
pub mod skills;
pub mod subagent;
pub mod tools;

pub use agent::{Join, Joins, TurnError, TurnEvent, TurnReply};
pub use approval::{ApprovalBroker, ApprovalOutcome, ApprovalRequest, NoApprover};
pub use runtime::{Runtime, TurnRequest};
