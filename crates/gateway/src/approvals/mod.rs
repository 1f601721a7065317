//! Approvals routed to approver channels (docs/approvals.md): prompts go to the ops
//! room named by the risk profile's `approval_route`, only listed approvers
//! decide, and every request and decision is stored.

mod broker;
mod expire;
mod notice;
mod record;

pub use broker::{Ballot, RouteBroker};
pub(crate) use broker::{Via, refusal, removed_approver};
pub(crate) use expire::update_expired_prompts;
pub(crate) use record::{edit_prompt, prompt_of, prompt_of_row, store_request};
