//! People using the bot's interactions: button presses and application
//! commands, and what the bot answered to each.

use super::{FakeDiscord, InteractionLog, Kind, payloads};
use serde_json::{Value, json};

impl FakeDiscord {
    /// A person presses the button `custom_id` on the bot's message `message`
    /// in `channel`. Returns the interaction id.
    pub fn press(&self, who: &Value, channel: u64, message: u64, custom_id: &str) -> u64 {
        let msg = self.message(channel, message).unwrap_or(Value::Null);
        let data = json!({"custom_id": custom_id, "component_type": 2});
        self.interact(3, who, channel, data, |i| i["message"] = msg)
    }

    /// A person uses the application command `name` with `options` (Discord's
    /// option objects) in `channel`. Returns the interaction id.
    pub fn slash(&self, who: &Value, channel: u64, name: &str, options: Value) -> u64 {
        let command_id = self
            .commands()
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["id"].as_str().map(str::to_string))
            .unwrap_or_else(|| "1".into());
        let data = json!({"id": command_id, "name": name, "type": 1, "options": options});
        self.interact(2, who, channel, data, |_| {})
    }

    fn interact(&self, kind: u8, who: &Value, channel: u64, data: Value, finish: impl FnOnce(&mut Value)) -> u64 {
        let id = self.shared.id();
        let token = format!("tok-{id}-{}", "x".repeat(40));
        let in_guild = self
            .shared
            .lock()
            .channels
            .get(&channel)
            .is_some_and(|c| c.kind != Kind::Dm);
        let mut i = payloads::interaction(id, kind, &token, channel, who, in_guild, data);
        finish(&mut i);
        self.shared
            .lock()
            .interactions
            .insert(id, (token, InteractionLog::default()));
        self.shared.dispatch("INTERACTION_CREATE", i);
        id
    }

    /// The token Discord gave interaction `id` (a credential of the bot).
    pub fn token_of(&self, id: u64) -> String {
        self.shared
            .lock()
            .interactions
            .get(&id)
            .map(|(t, _)| t.clone())
            .unwrap_or_default()
    }

    /// What the bot answered to interaction `id`.
    pub fn interaction(&self, id: u64) -> InteractionLog {
        self.shared
            .lock()
            .interactions
            .get(&id)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }

    /// Wait until interaction `id` has an answer with text (an edit of the
    /// original, a follow-up, or an immediate message).
    pub async fn wait_interaction_text(&self, id: u64, secs: u64) -> String {
        let text_of = |log: &InteractionLog| {
            log.edits
                .iter()
                .chain(log.followups.iter())
                .filter_map(|m| m["content"].as_str())
                .chain(log.callback.iter().filter_map(|c| c["data"]["content"].as_str()))
                .collect::<Vec<_>>()
                .join("\n")
        };
        self.wait_until(
            secs,
            || Some(text_of(&self.interaction(id))).filter(|t| !t.is_empty()),
            || format!("interaction {id} got no text answer: {:?}", self.interaction(id)),
        )
        .await
    }
}
