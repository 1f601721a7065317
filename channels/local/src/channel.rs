//! One local channel instance: its event log and the `Channel` operations.

use async_trait::async_trait;
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::{Arc, OnceLock};
use switchboard_core::{
    ApprovalChoice, ApprovalPrompt, Attachment, Channel, ChannelError, ChatAddress, FetchError, Inbound, Intake,
    MessageRef, Outbound, OutboundFile, PromptEdit, StreamLimits,
};
use tokio::sync::Notify;

/// The longest part of a streamed answer one local message carries (small
/// enough that tests see an answer continue in a second message).
const LOCAL_STREAM_PART: usize = 2000;

/// Something the bot did in a local chat, in order.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Event {
    /// Its place in the channel's log (readers poll `after` it).
    pub seq: u64,
    /// `message`, `approval_prompt`, `edit` (of a prompt),
    /// `message_edit` (a streamed answer growing) or `file`.
    pub kind: String,
    /// The posted message's id (edits name the message they change).
    pub message_id: String,
    /// The chat it is in.
    pub chat: String,
    /// The thread it is in, if any.
    pub thread: Option<String>,
    /// What the bot wrote.
    pub text: String,
    /// For prompts: the request id and the choices offered.
    pub approval_id: Option<String>,
    /// For prompts: `allow_once`, `always`, `deny`.
    pub choices: Vec<String>,
    /// For `file` events: the file (`text` is its caption).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<crate::files::LocalFile>,
}

/// Events a local channel keeps in memory.
pub(crate) const MAX_EVENTS: usize = 10_000;

/// One local chat space (`local.<alias>`), driven over the loopback API.
pub struct LocalChannel {
    name: String,
    /// The newest `MAX_EVENTS` events and the last sequence number given.
    events: Mutex<(std::collections::VecDeque<Event>, u64)>,
    pub(crate) notify: Notify,
    intake: OnceLock<Arc<dyn Intake>>,
    /// When set, sends fail as if the platform were down (for tests of
    /// retries and durable delivery).
    down: std::sync::atomic::AtomicBool,
    /// Files people sent, until the gateway fetches them.
    pub(crate) uploads: crate::files::Uploads,
    /// Who is in which chat, for aliases whose people have tokens.
    members: Mutex<Members>,
}

/// Chats and the people in them (`[channels.local.<alias>.people]`).
#[derive(Default)]
struct Members {
    /// chat → person → the first event sequence they may see there.
    chats: std::collections::HashMap<String, std::collections::HashMap<String, u64>>,
    /// Direct chats and the one person each belongs to.
    direct: std::collections::HashMap<String, String>,
}

impl LocalChannel {
    /// The channel `local.<alias>`, empty.
    pub fn new(alias: &str) -> Self {
        Self {
            name: format!("local.{alias}"),
            events: Mutex::new(Default::default()),
            notify: Notify::new(),
            intake: OnceLock::new(),
            down: Default::default(),
            uploads: Default::default(),
            members: Mutex::default(),
        }
    }

    /// Simulate an outage: sends fail with a transient error until cleared.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
    }

    fn push(&self, mut event: Event) -> Event {
        let mut guard = self.events.lock();
        let (events, last) = &mut *guard;
        *last += 1;
        event.seq = *last;
        if event.message_id.is_empty() {
            event.message_id = format!("m{}", event.seq);
        }
        events.push_back(event.clone());
        // Older events are dropped: readers long-poll from a recent sequence.
        while events.len() > MAX_EVENTS {
            events.pop_front();
        }
        drop(guard);
        self.notify.notify_waiters();
        event
    }

    /// `person` writes into `chat` (a direct chat when `direct`): they are
    /// in it from now on, or why not — a direct chat is its first
    /// person's, and a chat others are in cannot become one's direct chat.
    pub(crate) fn join(&self, chat: &str, person: &str, direct: bool) -> Result<(), String> {
        let now = self.events.lock().1;
        let mut m = self.members.lock();
        if let Some(owner) = m.direct.get(chat)
            && owner != person
        {
            return Err(format!("chat '{chat}' is another person's direct chat"));
        }
        if direct && !m.direct.contains_key(chat) {
            let others = m.chats.get(chat).is_some_and(|p| p.keys().any(|k| k != person));
            if others {
                return Err(format!(
                    "chat '{chat}' has other people in it; it cannot be a direct chat"
                ));
            }
            m.direct.insert(chat.to_string(), person.to_string());
        }
        m.chats
            .entry(chat.to_string())
            .or_default()
            .entry(person.to_string())
            .or_insert(now);
        Ok(())
    }

    /// Whether `person` may see `event`: it is in a chat they are in, and
    /// came after they joined it.
    pub(crate) fn sees(&self, person: &str, event: &Event) -> bool {
        let m = self.members.lock();
        m.chats
            .get(&event.chat)
            .and_then(|p| p.get(person))
            .is_some_and(|since| event.seq > *since)
    }

    /// Events with a sequence number above `after`.
    pub fn events_after(&self, after: u64) -> Vec<Event> {
        let guard = self.events.lock();
        guard.0.iter().filter(|e| e.seq > after).cloned().collect()
    }

    /// Wait until there are events after `after`, then return them.
    pub async fn wait_events_after(&self, after: u64) -> Vec<Event> {
        loop {
            let notified = self.notify.notified();
            let found = self.events_after(after);
            if !found.is_empty() {
                return found;
            }
            notified.await;
        }
    }

    /// Hand a person's message to the gateway; `Ok` once it is taken (it
    /// will be answered, even across a restart).
    pub async fn receive(&self, message: Inbound) -> Result<(), ChannelError> {
        let Some(intake) = self.intake.get() else {
            return Err(ChannelError::Transient("the gateway is not listening yet".into()));
        };
        intake
            .take(&self.name, vec![message], None)
            .await
            .map_err(|e| ChannelError::Transient(e.to_string()))
    }

    fn check_up(&self) -> Result<(), ChannelError> {
        if self.down.load(std::sync::atomic::Ordering::SeqCst) {
            Err(ChannelError::Transient("local channel is down".into()))
        } else {
            Ok(())
        }
    }
}

/// The local API's word for a choice (`allow_once` is its documented
/// spelling of `once`; presses accept both, see `ApprovalChoice::from_word`).
fn choice_name(c: ApprovalChoice) -> &'static str {
    match c {
        ApprovalChoice::AllowOnce => "allow_once",
        ApprovalChoice::Always => "always",
        ApprovalChoice::Deny => "deny",
    }
}

#[async_trait]
impl Channel for LocalChannel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn start(&self, intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
        self.intake
            .set(intake)
            .map_err(|_| ChannelError::Permanent("already started".into()))
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        self.check_up()?;
        let e = self.push(Event {
            seq: 0,
            kind: "message".into(),
            message_id: String::new(),
            chat: message.address.chat.clone(),
            thread: message.address.thread.clone(),
            text: message.text.clone(),
            approval_id: None,
            file: None,
            choices: Vec::new(),
        });
        Ok(vec![MessageRef {
            chat: e.chat,
            id: e.message_id,
        }])
    }

    async fn send_approval_prompt(
        &self,
        address: &ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError> {
        self.check_up()?;
        let e = self.push(Event {
            seq: 0,
            kind: "approval_prompt".into(),
            message_id: String::new(),
            chat: address.chat.clone(),
            thread: address.thread.clone(),
            text: prompt.render_text(),
            approval_id: Some(prompt.id.clone()),
            file: None,
            choices: prompt.choices().iter().map(|&c| choice_name(c).to_string()).collect(),
        });
        Ok(MessageRef {
            chat: e.chat,
            id: e.message_id,
        })
    }

    fn streaming(&self) -> Option<StreamLimits> {
        Some(StreamLimits {
            max_len: LOCAL_STREAM_PART,
            min_interval: std::time::Duration::from_millis(250),
            drafts: false,
        })
    }

    async fn edit_message(&self, message: &MessageRef, text: &str) -> Result<(), ChannelError> {
        self.check_up()?;
        self.push(Event {
            seq: 0,
            kind: "message_edit".into(),
            message_id: message.id.clone(),
            chat: message.chat.clone(),
            thread: None,
            text: text.to_string(),
            approval_id: None,
            file: None,
            choices: Vec::new(),
        });
        Ok(())
    }

    async fn fetch_attachment(&self, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
        self.uploads.fetch(&attachment.source, limit)
    }

    async fn upload_limit(&self) -> Option<u64> {
        Some(crate::files::UPLOAD_LIMIT)
    }

    async fn send_file(&self, file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        self.check_up()?;
        let e = self.push(Event {
            seq: 0,
            kind: "file".into(),
            message_id: String::new(),
            chat: file.address.chat.clone(),
            thread: file.address.thread.clone(),
            text: file.caption.clone().unwrap_or_default(),
            approval_id: None,
            choices: Vec::new(),
            file: Some(crate::files::LocalFile::new(&file.name, &file.mime, &file.data)),
        });
        Ok(MessageRef {
            chat: e.chat,
            id: e.message_id,
        })
    }

    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), ChannelError> {
        self.check_up()?;
        self.push(Event {
            seq: 0,
            kind: "edit".into(),
            message_id: edit.message.id.clone(),
            chat: edit.message.chat.clone(),
            thread: None,
            text: edit.text(),
            approval_id: Some(edit.prompt.id.clone()),
            file: None,
            choices: Vec::new(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_event_log_is_bounded_and_sequences_keep_counting() {
        let ch = LocalChannel::new("team");
        for i in 0..MAX_EVENTS + 5 {
            let out = Outbound::new(ChatAddress::new("local.team", "c"), format!("m{i}"));
            ch.send(&out).await.unwrap();
        }
        let all = ch.events_after(0);
        assert_eq!(all.len(), MAX_EVENTS);
        assert_eq!((all[0].seq, all[0].text.as_str()), (6, "m5"));
        let last = all.last().unwrap();
        assert_eq!(last.seq, (MAX_EVENTS + 5) as u64);
        assert_eq!(ch.events_after(last.seq - 1).len(), 1);
    }
}
