//! Each shipped platform example runs as written: `switchboard run` on
//! `config/examples/<platform>.toml` against that platform's stand-in, with
//! only the token (from the environment, as the example says) and the
//! addresses of the stand-ins changed. A stranger's direct message gets a
//! pairing code; the configured approver — on no allow list — lets them in
//! from the ops room and approves a tool call there; anyone else's press is
//! answered with a refusal; the person's messages are answered. (Matrix
//! runs against a real Synapse, as in matrix.rs.)

mod matrix_fx;
mod support;

use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port};
use switchboard_test_support::discord::{FakeDiscord, GUILD_ID, Kind};
use switchboard_test_support::telegram::{FakeTelegram, button, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// The example `name` with each `(from, to)` replaced (each must occur), and
/// a local channel for the test harness to know the gateway is up.
fn example(name: &str, changes: &[(&str, String)]) -> String {
    let path = format!("{}/config/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in changes {
        assert!(text.contains(from), "{name} no longer has {from:?}");
        text = text.replacen(from, to, 1);
    }
    text + "\n[channels.local.probe]\nallowed_users = []\n"
}

/// The model server line of every example.
const MODEL_LINE: &str = "base_url = \"http://127.0.0.1:11434/v1\"";

/// A tool call that needs an approver (supervised level), then the answer
/// once its result is in.
fn tool_then_answer(model: &ScriptedModel) {
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "standup", "content": "at ten"}),
    ));
    model.push(Step::text("Noted: stand-up at ten.").when_last_contains("stored memory"));
}

/// The code in a message that gives one (`...code: ABCD2345 ...`).
fn code_in(message: &str) -> String {
    let at = message.find("code: ").expect("a code") + "code: ".len();
    message[at..at + 8].to_string()
}

mod telegram {
    use super::*;

    const OPS: i64 = -1_001_234_567_890;
    const APPROVER: i64 = 12345;

    fn text(m: &Value) -> &str {
        m["text"].as_str().unwrap_or("")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_telegram_example_pairs_a_stranger_and_approves_from_its_ops_group() {
        let model = ScriptedModel::start().await;
        let tg = FakeTelegram::start().await;
        let config = example(
            "telegram.toml",
            &[
                (MODEL_LINE, format!("base_url = \"{}\"", model.url())),
                (
                    "[channels.telegram.main]\n",
                    format!("[channels.telegram.main]\napi_url = \"{}\"\n", tg.url()),
                ),
            ],
        );
        let sandbox = Sandbox::new(&config);
        let _gw = Gateway::start_with_env(&sandbox, free_port(), "probe", &[("TELEGRAM_BOT_TOKEN", "123:TEST")]).await;

        // A stranger writes: a code for them, the request in the ops group.
        tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hello?", None, None);
        let code = code_in(text(&tg.wait_sent_to(555, 1, 30).await[0]));
        let prompt = tg.wait_sent_to(OPS, 1, 30).await[0].clone();
        assert!(text(&prompt).contains(&code), "{}", text(&prompt));
        let allow = button(&prompt, "Allow");

        // Someone in the group who is not an approver presses Allow: the
        // press is answered, nothing else happens.
        tg.press(user(12, "Bob"), prompt.clone(), &allow);
        let answers = tg.wait_calls("answercallbackquery", 1, 20).await;
        assert!(
            text(&answers[0]).starts_with("tg:12 may not decide pairing"),
            "{}",
            answers[0]
        );

        // The approver, on no allow list, presses Allow: Eve is in.
        tg.press(user(APPROVER, "Ops"), prompt.clone(), &allow);
        let answers = tg.wait_calls("answercallbackquery", 2, 20).await;
        assert_eq!(
            text(&answers[1]),
            "tg:555 (Eve) may talk to the bot on telegram.main now."
        );
        tg.wait_sent_to(555, 2, 30).await;

        // Eve's message needs a tool call: asked in the ops group, approved
        // there by the approver, then answered.
        tool_then_answer(&model);
        tg.message(
            private_chat(555, "Eve"),
            user(555, "Eve"),
            "remember the stand-up is at ten",
            None,
            None,
        );
        let prompt = tg.wait_sent_to(OPS, 2, 30).await[1].clone();
        assert!(text(&prompt).contains("memory_store"), "{}", text(&prompt));
        tg.press(user(APPROVER, "Ops"), prompt.clone(), &button(&prompt, "Allow once"));
        let answers = tg.wait_calls("answercallbackquery", 3, 20).await;
        assert!(text(&answers[2]).ends_with(": allowed once."), "{}", answers[2]);
        let eve = tg.wait_sent_to(555, 3, 30).await;
        assert_eq!(text(&eve[2]), "Noted: stand-up at ten.");
    }
}

mod discord {
    use super::*;
    use switchboard_test_support::discord::user;

    const APPROVER: u64 = 998_877_665_544_332_211;

    fn content(m: &Value) -> &str {
        m["content"].as_str().unwrap_or("")
    }

    fn button(prompt: &Value, label: &str) -> String {
        prompt["components"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["label"] == label)
            .unwrap_or_else(|| panic!("no {label} button: {prompt}"))["custom_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn id_of(m: &Value) -> u64 {
        m["id"].as_str().unwrap().parse().unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_discord_example_pairs_a_stranger_and_approves_from_its_ops_channel() {
        let model = ScriptedModel::start().await;
        let dc = FakeDiscord::start().await;
        let ops = dc.add_channel(Kind::Text, "ops");
        let config = example(
            "discord.toml",
            &[
                (MODEL_LINE, format!("base_url = \"{}\"", model.url())),
                (
                    "[channels.discord.main]\n",
                    format!("[channels.discord.main]\napi_url = \"{}\"\n", dc.url()),
                ),
                ("\"112233445566778899\"", format!("\"{GUILD_ID}\"")),
                ("\"223344556677889900\"", format!("\"{ops}\"")),
            ],
        );
        let sandbox = Sandbox::new(&config);
        let _gw = Gateway::start_with_env(&sandbox, free_port(), "probe", &[("DISCORD_BOT_TOKEN", "TEST.TOKEN")]).await;
        dc.wait_sessions(1, 0, 20).await;

        // A stranger writes: a code for them, the request in the ops channel.
        let eve = user(555, "eve");
        let dm = dc.dm_with(&eve);
        dc.say(dm, &eve, "hello?");
        let code = code_in(content(&dc.wait_bot_messages(dm, 1, 20).await[0]));
        let prompt = dc.wait_bot_messages(ops, 1, 20).await[0].clone();
        assert!(content(&prompt).contains(&code), "{}", content(&prompt));
        let allow = button(&prompt, "Allow");

        // Someone who is not an approver presses Allow: answered, refused.
        let bob = dc.press(&user(8, "bob"), ops, id_of(&prompt), &allow);
        let refusal = dc.wait_interaction_text(bob, 20).await;
        assert!(refusal.starts_with("discord:8 may not decide pairing"), "{refusal}");

        // The approver, on no allow list, presses Allow: Eve is in.
        let approver = user(APPROVER, "ops");
        let press = dc.press(&approver, ops, id_of(&prompt), &allow);
        let answer = dc.wait_interaction_text(press, 20).await;
        assert_eq!(answer, "discord:555 (eve) may talk to the bot on discord.main now.");
        dc.wait_bot_messages(dm, 2, 20).await;

        // Eve's message needs a tool call, approved from the ops channel.
        tool_then_answer(&model);
        dc.say(dm, &eve, "remember the stand-up is at ten");
        let prompt = dc.wait_bot_messages(ops, 2, 20).await[1].clone();
        assert!(content(&prompt).contains("memory_store"), "{}", content(&prompt));
        let press = dc.press(&approver, ops, id_of(&prompt), &button(&prompt, "Allow once"));
        let answer = dc.wait_interaction_text(press, 20).await;
        assert!(answer.ends_with(": allowed once."), "{answer}");
        let answers = dc.wait_bot_messages(dm, 3, 20).await;
        assert_eq!(content(&answers[2]), "Noted: stand-up at ten.");
    }
}

mod matrix {
    use super::*;
    use crate::matrix_fx::{BOT, OP, world};
    use switchboard_test_support::synapse::body;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_matrix_example_pairs_a_stranger_and_approves_from_its_ops_room() {
        let model = ScriptedModel::start().await;
        let w = world().await;
        let config = example(
            "matrix.toml",
            &[
                (MODEL_LINE, format!("base_url = \"{}\"", model.url())),
                ("https://matrix.example.org", w.synapse.url()),
                ("@bot:example.org", BOT.to_string()),
                ("@alice:example.org", OP.to_string()),
                (
                    "[\"!team:example.org\", \"!ops:example.org\"]",
                    format!("[\"{}\", \"{}\", \"{}\"]", w.group, w.ops, w.dm),
                ),
                (
                    "{ \"ops\" = \"!ops:example.org\" }",
                    format!("{{ \"ops\" = \"{}\" }}", w.ops),
                ),
            ],
        );
        let sandbox = Sandbox::new(&config);
        let _gw = Gateway::start_with_env(&sandbox, free_port(), "probe", &[("MATRIX_PASSWORD", "bot-password")]).await;

        // A stranger writes: a code for them, the request in the ops room.
        w.ann.say(&w.dm, "hello, may I?").await;
        let told = w.ann.wait_for(&w.dm, BOT, 60, |m| body(m).contains("code: ")).await;
        let code = code_in(body(&told));
        let request =
            w.op.wait_for(&w.ops, BOT, 30, |m| body(m).starts_with("Pairing request"))
                .await;
        assert!(body(&request).contains(&code), "{}", body(&request));
        let id = request["event_id"].as_str().unwrap().to_string();

        // Bob, in the ops room but no approver, reacts ✅: refused there.
        w.bob.react(&w.ops, &id, "✅").await;
        w.op.wait_for(&w.ops, BOT, 30, |m| {
            body(m).starts_with("@bob:localhost may not decide pairing")
        })
        .await;

        // The approver, on no allow list, reacts ✅: Ann is in.
        w.op.react(&w.ops, &id, "✅").await;
        w.ann
            .wait_for(&w.dm, BOT, 30, |m| {
                body(m) == "An operator let you in: you can talk to me now."
            })
            .await;

        // Ann's message needs a tool call, approved from the ops room.
        tool_then_answer(&model);
        w.ann.say(&w.dm, "remember the stand-up is at ten").await;
        let prompt =
            w.op.wait_for(&w.ops, BOT, 30, |m| body(m).starts_with("Approval needed"))
                .await;
        assert!(body(&prompt).contains("memory_store"), "{}", body(&prompt));
        w.op.react(&w.ops, prompt["event_id"].as_str().unwrap(), "✅").await;
        w.ann
            .wait_for(&w.dm, BOT, 30, |m| body(m) == "Noted: stand-up at ten.")
            .await;
    }
}
