use super::*;
use crate::Config;

fn config(extra: &str) -> Config {
    let text = format!(
        r#"
[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "m"
[agents.main]
model_provider = "p"
channels = ["discord.main"]
[agents.ops]
model_provider = "p"
[agents.support]
model_provider = "p"
[channels.discord.main]
bot_token = "x"
allowed_users = ["*"]
rooms = {{ "infra" = "200" }}
{extra}"#
    );
    toml::from_str(&text).unwrap()
}

fn place<'a>(chat: &'a str, thread: Option<&'a str>, person: &'a str) -> Place<'a> {
    Place {
        channel: "discord.main",
        guild: Some("9"),
        chat,
        thread,
        person,
    }
}

#[test]
fn the_most_specific_route_answers() {
    let c = config(
        r#"
[[routes]]
channel = "discord.main"
chat = "infra"
agent = "ops"
[[routes]]
channel = "discord.main"
chat = "300"
agent = "support"
allowed_users = ["discord:5"]
require_mention = false
[[routes]]
person = "discord:77"
agent = "support"
[[routes]]
channel = "discord.main"
chat = "300"
thread = "301"
agent = "ops"
"#,
    );
    let p = c.route_for(&place("200", None, "discord:1")).unwrap();
    assert_eq!((p.agent, p.level, p.route), ("ops", RouteLevel::Chat, Some(0)));
    assert_eq!(
        p.why(&c.routes),
        "[[routes]] #1 matched by chat: chat infra, channel discord.main"
    );
    // A thread follows its chat's route.
    assert_eq!(
        c.route_for(&place("200", Some("201"), "discord:1")).unwrap().agent,
        "ops"
    );
    let s = c.route_for(&place("300", None, "discord:1")).unwrap();
    assert_eq!(
        (s.agent, s.allowed_users, s.require_mention),
        ("support", &["discord:5".to_string()][..], false)
    );
    // Another chat: the agent whose channels list the channel.
    let d = c.route_for(&place("400", None, "discord:1")).unwrap();
    assert_eq!((d.agent, d.route), ("main", None));
    assert_eq!(d.why(&c.routes), "agents.main.channels");
    assert!(d.require_mention, "the channel's default");
    // A thread route inside a chat keeps the chat's allow list and mention rule.
    let t = c.route_for(&place("300", Some("301"), "discord:1")).unwrap();
    assert_eq!(
        (t.agent, t.allowed_users, t.require_mention),
        ("ops", &["discord:5".to_string()][..], false)
    );
    // A person route beats the chat route, and inherits its list too.
    let by_person = c.route_for(&place("300", None, "discord:77")).unwrap();
    assert_eq!(
        (by_person.agent, by_person.allowed_users),
        ("support", &["discord:5".to_string()][..])
    );
    assert_eq!(c.route_for(&place("200", None, "discord:77")).unwrap().agent, "support");
}

#[test]
fn a_default_route_answers_where_nothing_else_does() {
    let c = config("[[routes]]\nagent = \"support\"\n");
    assert_eq!(c.route_for(&place("1", None, "discord:1")).unwrap().agent, "main");
    let p = Place {
        channel: "telegram.x",
        ..place("1", None, "tg:1")
    };
    let picked = c.route_for(&p).unwrap();
    assert_eq!((picked.agent, picked.level), ("support", RouteLevel::Default));
    let none = config("");
    assert!(none.route_for(&p).is_none());
}

#[test]
fn overlap_needs_every_shared_key_equal() {
    let r = |chat: Option<&str>, person: Option<&str>| Route {
        channel: Some("discord.main".into()),
        chat: chat.map(Into::into),
        person: person.map(Into::into),
        agent: "a".into(),
        ..Route::default()
    };
    assert!(r(Some("1"), None).overlaps(&r(Some("1"), None)));
    assert!(!r(Some("1"), None).overlaps(&r(Some("2"), None)));
    assert!(r(Some("1"), Some("discord:1")).overlaps(&r(None, Some("discord:1"))));
}
