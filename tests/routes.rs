//! `[[routes]]` through `switchboard run`: on Discord two channels of one
//! guild reach two different agents, a thread follows its parent's route,
//! a route may drop the mention rule, the guild's route takes its other
//! channels, direct messages fall back to `agents.<a>.channels`, and
//! `/status` says which route answered; on a real Synapse, a route by room.

mod matrix_fx;
mod support;

use serde_json::Value;
use support::{Gateway, Sandbox, free_port, main_agent_on, provider};
use switchboard_test_support::discord::{BOT_ID, FakeDiscord, GUILD_ID, Kind, user};
use switchboard_test_support::synapse::body;
use switchboard_test_support::{ScriptedModel, Step};

/// `main` on model `p` answers on the channel; agent `ops` on model `q`.
fn two_agents(main_model: &str, ops_model: &str, port: u16, channel: &str) -> String {
    format!(
        "{}{}[agents.ops]\nmodel_provider = \"q\"\n",
        main_agent_on(main_model, port, channel),
        provider("q", ops_model, "")
    )
}

fn content(m: &Value) -> &str {
    m["content"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_channels_of_one_guild_reach_different_agents_and_threads_follow() {
    let (main, ops) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let dc = FakeDiscord::start().await;
    let infra = dc.add_channel(Kind::Text, "infra");
    let support = dc.add_channel(Kind::Text, "support");
    let port = free_port();
    let config = format!(
        r#"{}[channels.discord.main]
bot_token = "TEST.TOKEN"
api_url = "{}"
allowed_users = ["*"]
streaming = "off"
rooms = {{ "infra" = "{infra}" }}
[channels.local.probe]
allowed_users = []
[[routes]]
channel = "discord.main"
chat = "infra"
agent = "ops"
[[routes]]
channel = "discord.main"
chat = "{support}"
agent = "main"
require_mention = false
[[routes]]
channel = "discord.main"
guild = "{GUILD_ID}"
agent = "ops"
"#,
        two_agents(&main.url(), &ops.url(), port, "discord.main"),
        dc.url()
    );
    let sandbox = Sandbox::new(&config);
    let (code, out, err) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    dc.wait_sessions(1, 0, 20).await;
    let ann = user(11, "ann");

    ops.push(Step::text("Ops here: all green.").when_last_contains("deploy status"));
    ops.push(Step::text("Ops again: db fine.").when_last_contains("and the db"));
    main.push(Step::text("Support here.").when_last_contains("need help"));
    let asked = dc.say(infra, &ann, &format!("<@{BOT_ID}> deploy status?"));
    let in_thread = dc.wait_bot_messages(asked, 1, 20).await;
    assert_eq!(content(&in_thread[0]), "Ops here: all green.");
    // The thread under the question follows its parent channel's route
    // (and, being the bot's thread, needs no mention).
    dc.say(asked, &ann, "and the db?");
    let in_thread = dc.wait_bot_messages(asked, 2, 20).await;
    assert_eq!(content(&in_thread[1]), "Ops again: db fine.");
    dc.say(asked, &ann, "/status");
    let status = dc.wait_bot_messages(asked, 3, 20).await;
    let status = content(&status[2]);
    assert!(
        status.contains("agent: ops") && status.contains("route: [[routes]] #1 matched by chat: chat infra"),
        "{status}"
    );
    // #support: another agent, and no mention needed there.
    let helped = dc.say(support, &ann, "need help with my account");
    let answered = dc.wait_bot_messages(helped, 1, 20).await;
    assert_eq!(content(&answered[0]), "Support here.");
    assert_eq!(main.requests().len(), 1, "main answered #support");
    assert_eq!(ops.requests().len(), 2, "ops answered #infra and its thread");
    // Any other channel of the guild: the guild route (ops), which keeps
    // the channel's mention rule, so chatter there reaches nobody.
    dc.say(FakeDiscord::GENERAL, &ann, "just chatting");
    ops.push(Step::text("Ops via the guild.").when_last_contains("in general"));
    let general = dc.say(FakeDiscord::GENERAL, &ann, &format!("<@{BOT_ID}> in general"));
    assert_eq!(
        content(&dc.wait_bot_messages(general, 1, 20).await[0]),
        "Ops via the guild."
    );
    // A direct message has no guild: the agent whose channels list the
    // channel (main) answers.
    main.push(Step::text("Main in private.").when_last_contains("privately"));
    let dm = dc.dm_with(&ann);
    dc.say(dm, &ann, "privately");
    assert_eq!(content(&dc.wait_bot_messages(dm, 1, 20).await[0]), "Main in private.");
    assert_eq!((main.requests().len(), ops.requests().len()), (2, 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_room_has_its_own_agent() {
    let (main, ops) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let w = matrix_fx::world().await;
    let port = free_port();
    let config = matrix_fx::config(&main.url(), &w, port).replacen(
        "[agents.main]",
        &format!(
            "{}[agents.ops]\nmodel_provider = \"q\"\n[agents.main]",
            provider("q", &ops.url(), "")
        ),
        1,
    ) + "[[routes]]\nchannel = \"matrix.main\"\nchat = \"ops\"\nagent = \"ops\"\nrequire_mention = false\n";
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    ops.push(Step::text("Queue is empty.").when_last_contains("the queue"));
    main.push(Step::text("Team answer.").when_last_contains("team question"));
    // In the ops room, unmentioned: the ops agent answers.
    w.op.say(&w.ops, "how long is the queue?").await;
    w.op.wait_for(&w.ops, matrix_fx::BOT, 30, |m| body(m) == "Queue is empty.")
        .await;
    // In the team room, mentioned: main answers.
    w.ann.mention(&w.group, matrix_fx::BOT, "bot: team question").await;
    w.ann
        .wait_for(&w.group, matrix_fx::BOT, 30, |m| body(m) == "Team answer.")
        .await;
    assert_eq!((main.requests().len(), ops.requests().len()), (1, 1));
}
