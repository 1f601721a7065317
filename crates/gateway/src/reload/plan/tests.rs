use super::*;

fn config(extra: &str) -> Config {
    let base = r#"
[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "m"
[agents.main]
model_provider = "p"
channels = ["telegram.main"]
[channels.telegram.main]
bot_token = "123:A"
api_url = "http://127.0.0.1:2"
allowed_users = ["tg:1"]
"#;
    Config::from_toml_str(&format!("{base}{extra}"), "test").unwrap()
}

#[test]
fn allow_lists_and_agents_change_live_and_connections_restart_only_their_channel() {
    let old = config("");
    // A new person allowed: nothing restarts.
    let new = config("").tap(|c| {
        c.channels
            .telegram
            .get_mut("main")
            .unwrap()
            .allowed_users
            .push("tg:2".into());
    });
    let (changes, merged) = plan(&old, &new);
    assert!(changes.start.is_empty() && changes.stop.is_empty() && changes.restart.is_empty());
    assert!(changes.fixed.is_empty() && !changes.cron);
    assert_eq!(changes.changed, ["channels.telegram.main"], "the change is on record");
    assert_eq!(merged.channels.telegram["main"].allowed_users, ["tg:1", "tg:2"]);
    // A new token restarts that channel; a new table starts one.
    let new = config("[channels.telegram.second]\nbot_token = \"9:B\"\napi_url = \"http://127.0.0.1:2\"\n").tap(|c| {
        c.channels.telegram.get_mut("main").unwrap().bot_token = switchboard_config::Secret::parse("123:C");
    });
    let (changes, _) = plan(&old, &new);
    assert_eq!(changes.restart, ["telegram.main"]);
    assert_eq!(changes.start, ["telegram.second"]);
    assert!(changes.stop.is_empty() && changes.fixed.is_empty() && !changes.cron);
    // Disabling stops it.
    let new = config("").tap(|c| c.channels.telegram.get_mut("main").unwrap().enabled = false);
    assert_eq!(plan(&old, &new).0.stop, ["telegram.main"]);
}

#[test]
fn settings_only_a_restart_applies_are_kept_and_named() {
    let old = config("");
    let new = config("[web]\nlisten = \"127.0.0.1:9999\"\n[channels.local.x]\nallowed_users = [\"*\"]\n");
    let (changes, merged) = plan(&old, &new);
    assert_eq!(changes.fixed, ["web", "channels.local"]);
    assert_eq!(merged.web.listen, old.web.listen);
    assert!(merged.channels.local.is_empty());
}

#[test]
fn routes_and_people_change_live() {
    let old = config("");
    let new = config(
        "[[routes]]\nchannel = \"telegram.main\"\nchat = \"-100\"\nagent = \"main\"\n[people.ann]\nids = [\"tg:1\"]\n",
    );
    let (changes, merged) = plan(&old, &new);
    assert!(changes.fixed.is_empty() && changes.restart.is_empty() && changes.start.is_empty());
    assert_eq!(changes.changed, ["people", "routes"]);
    assert_eq!((merged.routes.len(), merged.people.len()), (1, 1));
}

trait Tap: Sized {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for Config {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
