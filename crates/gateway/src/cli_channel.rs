//! The terminal as a channel (`cli`), so announcements of background work
//! started from `switchboard chat` are printed there — also after a
//! restart, since they wait in the outbox until a terminal of the same user
//! is open.

use async_trait::async_trait;
use std::sync::Arc;
use switchboard_core::{ApprovalPrompt, Channel, ChannelError, ChatAddress, Intake, MessageRef, Outbound, PromptEdit};

pub(crate) struct CliChannel {
    /// The login whose chat this terminal shows.
    pub login: String,
}

impl CliChannel {
    fn mine(&self, chat: &str) -> Result<(), ChannelError> {
        if chat == self.login {
            Ok(())
        } else {
            Err(ChannelError::Transient(format!("the terminal of '{chat}' is not open")))
        }
    }
}

#[async_trait]
impl Channel for CliChannel {
    fn name(&self) -> &str {
        "cli"
    }

    /// Lines are read by `switchboard chat` itself.
    async fn start(&self, _intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
        Ok(())
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        self.mine(&message.address.chat)?;
        println!("[announcement]\n{}", message.text);
        Ok(vec![MessageRef {
            chat: message.address.chat.clone(),
            id: String::new(),
        }])
    }

    async fn send_approval_prompt(&self, _: &ChatAddress, _: &ApprovalPrompt) -> Result<MessageRef, ChannelError> {
        Err(ChannelError::Unsupported(
            "approval prompts are asked by switchboard chat directly",
        ))
    }

    async fn update_approval_prompt(&self, _: &PromptEdit<'_>) -> Result<(), ChannelError> {
        Err(ChannelError::Unsupported(
            "approval prompts are asked by switchboard chat directly",
        ))
    }
}
