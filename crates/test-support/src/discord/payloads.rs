//! JSON objects as Discord's API v10 sends them, with every field serenity
//! 0.12's models require (a missing one is a deserialisation error there,
//! as it would be against the real service).

use serde_json::{Value, json};

/// The bot's user id.
pub const BOT_ID: u64 = 1_100_000_000_000_000_001;
/// The bot's application id.
pub const APP_ID: u64 = 1_100_000_000_000_000_002;
/// The one guild of the fake.
pub const GUILD_ID: u64 = 1_100_000_000_000_000_003;
/// The bot's username.
pub const BOT_NAME: &str = "switchboard";

/// ISO 8601 with microseconds, as Discord writes timestamps.
pub(crate) fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000000+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A person (or the bot) as a User object.
pub fn user(id: u64, name: &str) -> Value {
    json!({
        "id": id.to_string(), "username": name, "discriminator": "0", "global_name": name,
        "avatar": null, "bot": false, "system": false, "mfa_enabled": false, "banner": null,
        "accent_color": null, "public_flags": 0, "flags": 0
    })
}

/// The bot's own User object.
pub fn bot_user() -> Value {
    let mut u = user(BOT_ID, BOT_NAME);
    u["bot"] = json!(true);
    u["verified"] = json!(true);
    u
}

/// A guild member wrapping `user` (interactions in guilds carry this).
pub(crate) fn member(user: &Value) -> Value {
    json!({
        "user": user, "nick": null, "avatar": null, "roles": [], "joined_at": timestamp(),
        "premium_since": null, "deaf": false, "mute": false, "flags": 0, "pending": false,
        "permissions": "2248473465835073", "communication_disabled_until": null
    })
}

/// A message; `guild` adds `guild_id` and `member` as the gateway does in
/// guild channels.
pub(crate) fn message(id: u64, channel: u64, author: &Value, content: &str, guild: bool) -> Value {
    let mut m = json!({
        "id": id.to_string(), "channel_id": channel.to_string(), "author": author,
        "content": content, "timestamp": timestamp(), "edited_timestamp": null, "tts": false,
        "mention_everyone": false, "mentions": [], "mention_roles": [], "attachments": [],
        "embeds": [], "pinned": false, "type": 0, "flags": 0, "components": []
    });
    if guild {
        m["guild_id"] = json!(GUILD_ID.to_string());
        m["member"] = json!({"roles": [], "joined_at": timestamp(), "deaf": false, "mute": false, "flags": 0});
    }
    m
}

/// The kinds of channel the fake knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A guild text channel (type 0).
    Text,
    /// A direct message channel (type 1).
    Dm,
    /// A public thread (type 11).
    Thread,
    /// A forum channel (type 15): its posts are threads.
    Forum,
}

impl Kind {
    pub(crate) fn code(self) -> u8 {
        match self {
            Self::Text => 0,
            Self::Dm => 1,
            Self::Thread => 11,
            Self::Forum => 15,
        }
    }
}

/// A channel object (guild channel, thread or DM).
pub(crate) fn channel(
    id: u64,
    kind: Kind,
    name: &str,
    parent: Option<u64>,
    owner: Option<u64>,
    recipient: Option<&Value>,
) -> Value {
    if kind == Kind::Dm {
        return json!({
            "id": id.to_string(), "type": 1, "last_message_id": null,
            "recipients": [recipient.cloned().unwrap_or_else(|| user(1, "someone"))], "flags": 0
        });
    }
    let mut c = json!({
        "id": id.to_string(), "type": kind.code(), "guild_id": GUILD_ID.to_string(), "name": name,
        "position": 0, "permission_overwrites": [], "nsfw": false, "parent_id": parent.map(|p| p.to_string()),
        "last_message_id": null, "rate_limit_per_user": 0, "topic": null, "flags": 0
    });
    if kind == Kind::Thread {
        c["owner_id"] = json!(owner.map(|o| o.to_string()));
        c["message_count"] = json!(0);
        c["member_count"] = json!(1);
        c["total_message_sent"] = json!(0);
        c["thread_metadata"] = json!({
            "archived": false, "auto_archive_duration": 1440, "archive_timestamp": timestamp(),
            "locked": false, "create_timestamp": timestamp()
        });
    }
    c
}

/// An interaction's common fields; `in_guild` sends `member` (else `user`),
/// as Discord does.
pub(crate) fn interaction(
    id: u64,
    kind: u8,
    token: &str,
    channel: u64,
    who: &Value,
    in_guild: bool,
    data: Value,
) -> Value {
    let mut i = json!({
        "id": id.to_string(), "application_id": APP_ID.to_string(), "type": kind, "data": data,
        "channel_id": channel.to_string(), "token": token, "version": 1, "locale": "en-US",
        "app_permissions": "2248473465835073", "entitlements": [], "attachment_size_limit": 10_485_760,
        "authorizing_integration_owners": {}, "context": if in_guild { 0 } else { 1 }
    });
    if in_guild {
        i["guild_id"] = json!(GUILD_ID.to_string());
        i["guild_locale"] = json!("en-US");
        i["member"] = member(who);
    } else {
        i["user"] = who.clone();
    }
    i
}

/// The registered form of an application command the bot sent.
pub(crate) fn registered_command(id: u64, sent: &Value) -> Value {
    json!({
        "id": id.to_string(), "type": sent.get("type").cloned().unwrap_or(json!(1)),
        "application_id": APP_ID.to_string(), "name": sent["name"], "description": sent["description"],
        "options": sent.get("options").cloned().unwrap_or(json!([])),
        "default_member_permissions": null, "dm_permission": true, "nsfw": false,
        "version": id.to_string()
    })
}
