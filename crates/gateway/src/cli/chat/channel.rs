//! The terminal as a channel (`cli`), so announcements of background work
//! started from `switchboard chat` are printed there — also after a
//! restart, since they wait in the outbox until a terminal of the same user
//! is open.

use async_trait::async_trait;
use std::sync::Arc;
use switchboard_core::{
    ApprovalPrompt, Attachment, Channel, ChannelError, ChatAddress, FetchError, Intake, MessageRef, Outbound,
    OutboundFile, PromptEdit,
};

/// The largest file the agent may hand to the terminal.
const UPLOAD_LIMIT: u64 = 512 * 1024 * 1024;

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
        println!("[announcement]\n{}", crate::cli::chat::text::clean(&message.text));
        Ok(vec![MessageRef {
            chat: message.address.chat.clone(),
            id: String::new(),
        }])
    }

    /// A file named with `/attach` (its full path), read up to `limit`.
    async fn fetch_attachment(&self, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
        use tokio::io::AsyncReadExt;
        let file = tokio::fs::File::open(&attachment.source)
            .await
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        let mut data = Vec::new();
        file.take(limit + 1)
            .read_to_end(&mut data)
            .await
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        if data.len() as u64 > limit {
            return Err(FetchError::TooLarge { limit });
        }
        Ok(data)
    }

    async fn upload_limit(&self) -> Option<u64> {
        Some(UPLOAD_LIMIT)
    }

    /// Saved under `downloads/` in the current folder, and said.
    async fn send_file(&self, file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        self.mine(&file.address.chat)?;
        let dir = std::path::Path::new(crate::messages::files::terminal::DOWNLOADS);
        let saved = crate::messages::files::terminal::save_download(dir, &file.name, &file.data)
            .map_err(|e| ChannelError::Permanent(format!("cannot save the file in {}: {e}", dir.display())))?;
        let size = switchboard_runtime::files::human_size(file.data.len() as u64);
        println!(
            "  [file] {} ({size}) saved to {}",
            crate::cli::chat::text::clean(&file.name),
            crate::cli::chat::text::clean(&saved.display().to_string())
        );
        if let Some(caption) = &file.caption {
            println!("  {}", crate::cli::chat::text::clean(caption));
        }
        Ok(MessageRef {
            chat: file.address.chat.clone(),
            id: String::new(),
        })
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
