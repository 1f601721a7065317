//! The keys of sessions (conversations with their transcripts), made in
//! one place. Transcripts, session queues and run rows find a conversation
//! by its key, and keys are stored, so their formats never change.

use std::fmt;

/// A session's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey(String);

impl SessionKey {
    /// The conversation `agent` holds in `chat` of `channel` (and
    /// `thread`): one per agent, channel, chat and thread
    /// (`agent:main:telegram.main:42[:7]`; see `ChatAddress::session_key`).
    pub fn chat(agent: &str, channel: &str, chat: &str, thread: Option<&str>) -> Self {
        Self(match thread {
            Some(t) => format!("agent:{agent}:{channel}:{chat}:{t}"),
            None => format!("agent:{agent}:{channel}:{chat}"),
        })
    }

    /// A child session `sessions_spawn` started as `agent`, named after its
    /// run (`agent:main:subagent:<run id>`; the tool returns it).
    pub fn child_session(agent: &str, run_id: &str) -> Self {
        Self(format!("agent:{agent}:subagent:{run_id}"))
    }

    /// The session of a `delegate` child running as `agent`.
    pub fn delegate(agent: &str, id: &str) -> Self {
        Self(format!("agent:{agent}:delegate:{id}"))
    }

    /// The session of a `spawn_subagent` helper run.
    pub fn helper(run_id: &str) -> Self {
        Self(format!("subagent-{run_id}"))
    }

    /// The session of one cron run.
    pub fn cron(run_id: &str) -> Self {
        Self(format!("cron-{run_id}"))
    }

    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<SessionKey> for String {
    fn from(k: SessionKey) -> String {
        k.0
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChatAddress;

    /// Stored keys must keep finding their sessions: the formats are pinned.
    #[test]
    fn the_formats_do_not_change() {
        let topic = ChatAddress::new("telegram.main", "-100").with_thread(Some("7".into()));
        assert_eq!(
            SessionKey::chat("main", &topic.channel, &topic.chat, topic.thread.as_deref()).as_str(),
            "agent:main:telegram.main:-100:7"
        );
        let dm = ChatAddress::new("local.team", "ann");
        assert_eq!(
            SessionKey::chat("main", &dm.channel, &dm.chat, None).as_str(),
            "agent:main:local.team:ann"
        );
        assert_eq!(SessionKey::child_session("ops", "r1").as_str(), "agent:ops:subagent:r1");
        assert_eq!(SessionKey::delegate("ops", "u1").as_str(), "agent:ops:delegate:u1");
        assert_eq!(SessionKey::helper("u2").as_str(), "subagent-u2");
        assert_eq!(String::from(SessionKey::cron("r3")), "cron-r3");
    }
}
