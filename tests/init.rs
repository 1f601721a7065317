//! `switchboard init` as a new operator runs it: each answer given as a
//! flag or typed in, the bot token checked with the platform's stand-in at
//! once (a wrong one refused, with what to do), the model server found on
//! its port, and what it writes accepted by `check` and run by `switchboard
//! run`: a stranger's DM is paired by the approver from the ops group and
//! answered by the model. The token is in the secrets file (mode 0600),
//! never in the TOML. (docs/getting-started.md)

mod matrix_fx;
mod support;

use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::{Gateway, Sandbox, binary, free_port};
use switchboard_test_support::discord::{self, FakeDiscord};
use switchboard_test_support::telegram::{FakeTelegram, button, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step};

const OPS: i64 = -1_001_234_567_890;
const APPROVER: i64 = 7;

fn text(m: &Value) -> &str {
    m["text"].as_str().unwrap_or("")
}

/// `switchboard init` in `sandbox` with `args`, `input` typed in.
fn init(sandbox: &Sandbox, args: &[&str], input: &str) -> (i32, String) {
    let mut child = Command::new(binary())
        .arg("init")
        .args(args)
        .current_dir(sandbox.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run switchboard init");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), all)
}

/// `switchboard run` on the configuration init wrote (plus the harness's
/// probe channel).
async fn run_as_written(sandbox: &Sandbox, written: String) -> Gateway {
    std::fs::write(
        sandbox.config_path(),
        written + "\n[channels.local.probe]\nallowed_users = []\n",
    )
    .unwrap();
    Gateway::start(sandbox, free_port(), "probe").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_with_flags_checks_the_token_and_what_it_writes_answers_a_dm() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    tg.only_token("123:GOOD");
    let sandbox = Sandbox::new("# an operator's own file\n");
    let (tg_url, model_url) = (tg.url(), model.url());
    let flags = |token: &'static str| {
        vec![
            "--yes",
            "--platform",
            "telegram",
            "--token",
            token,
            "--api-url",
            &tg_url,
            "--model-url",
            &model_url,
            "--approver",
            "tg:7",
            "--ops-room",
            "-1001234567890",
            "--no-doctor",
        ]
    };

    let (code, out) = init(&sandbox, &flags("123:GOOD"), "");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("switchboard.toml exists: pass --force"), "{out}");

    let mut forced = flags("123:BAD");
    forced.push("--force");
    let (code, out) = init(&sandbox, &forced, "");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("telegram refused the token") && out.contains("copy it again"),
        "{out}"
    );
    let untouched = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert_eq!(
        untouched, "# an operator's own file\n",
        "a refused answer writes nothing"
    );

    let mut forced = flags("123:GOOD");
    forced.push("--force");
    let started = std::time::Instant::now();
    let (code, out) = init(&sandbox, &forced, "");
    assert_eq!(code, 0, "{out}");
    let init_secs = started.elapsed().as_secs_f64();
    for line in [
        "✓ signed in as @",
        "✓ serves scripted (using scripted)",
        "✓ switchboard check accepts it",
    ] {
        assert!(out.contains(line), "{line:?} in:\n{out}");
    }
    assert!(out.contains("switchboard run --config switchboard.toml"), "{out}");
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(!written.contains("123:GOOD"), "no token in the TOML:\n{written}");
    assert!(written.contains("bot_token = \"env:TELEGRAM_BOT_TOKEN\""), "{written}");
    let secrets = sandbox.path().join("switchboard.env");
    assert_eq!(std::fs::metadata(&secrets).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(
        std::fs::read_to_string(&secrets)
            .unwrap()
            .contains("TELEGRAM_BOT_TOKEN=123:GOOD")
    );
    let (code, out, err) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");

    // As written (plus the harness's probe channel), with the token only
    // in the secrets file: a stranger is paired from the ops group and
    // answered by the model.
    let _gw = run_as_written(&sandbox, written).await;
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hello?", None, None);
    assert!(text(&tg.wait_sent_to(555, 1, 30).await[0]).contains("code: "));
    let prompt = tg.wait_sent_to(OPS, 1, 30).await[0].clone();
    tg.press(user(APPROVER, "Ops"), prompt.clone(), &button(&prompt, "Allow"));
    tg.wait_sent_to(555, 2, 30).await;
    model.push(Step::text("Hello Eve."));
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hi again", None, None);
    let to_eve = tg.wait_sent_to(555, 3, 30).await;
    assert_eq!(text(&to_eve[2]), "Hello Eve.");
    println!(
        "init took {init_secs:.2} s; from init to the first answered DM (pairing included): {:.2} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_asks_what_the_flags_leave_out_and_takes_the_ops_group_from_here() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    tg.only_token("123:GOOD");
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let mut child = Command::new(binary())
        .args([
            "init",
            "--api-url",
            &tg.url(),
            "--model-url",
            &model.url(),
            "--wait-here",
            "--no-doctor",
        ])
        .current_dir(sandbox.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Typed: the platform, a wrong token, the right one, then yes to /here.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"telegram\n123:BAD\n123:GOOD\nyes\n")
        .unwrap();
    // Read what init prints until it names the code to send.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut shown = String::new();
    let code = loop {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0,
            "init ended:\n{shown}"
        );
        shown.push_str(&line);
        if let Some(at) = line.find("send `/here ") {
            break line[at + 12..at + 18].to_string();
        }
    };
    // A stranger's /here with the code in a direct message, and a bare
    // /here in the group, are passed over; the code in the group counts.
    tg.message(
        private_chat(666, "Mallory"),
        user(666, "Mallory"),
        &format!("/here {code}"),
        None,
        None,
    );
    tg.message(supergroup(OPS, "Ops"), user(667, "Eve"), "/here", None, None);
    tg.message(
        supergroup(OPS, "Ops"),
        user(APPROVER, "Ops"),
        &format!("/here {code}"),
        None,
        None,
    );
    let out = child.wait_with_output().unwrap();
    shown.push_str(&String::from_utf8_lossy(&out.stdout));
    shown.push_str(&String::from_utf8_lossy(&out.stderr));
    std::io::Read::read_to_string(&mut stdout, &mut shown).unwrap();
    assert!(out.status.success(), "{:?}\n{shown}", out.status);
    assert!(
        shown.contains("Chat platform (telegram, discord, matrix, local; several with commas): "),
        "{shown}"
    );
    assert!(
        shown.contains("✗ telegram refused the token"),
        "the wrong token is refused, then asked again:\n{shown}"
    );
    assert!(shown.contains(&format!("/here came from tg:{APPROVER} (")), "{shown}");
    assert!(!shown.contains("tg:666") && !shown.contains("tg:667"), "{shown}");
    assert!(
        shown.contains(&format!("✓ the ops group is {OPS}; tg:{APPROVER} (")),
        "{shown}"
    );
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(
        written.contains(&format!("rooms = {{ \"ops\" = \"{OPS}\" }}")),
        "{written}"
    );
    assert!(written.contains("approvers = [\"tg:7\"]"), "{written}");
}

/// Interactive, as on a terminal: `script` (util-linux) gives init a
/// pseudo-terminal for its questions and the typed answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_on_a_terminal_asks_and_writes_what_was_typed() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let command = format!(
        "{} init --api-url {} --model-url {} --no-doctor",
        binary().display(),
        tg.url(),
        model.url()
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(sandbox.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdin = child.stdin.take().unwrap();
    for answer in ["telegram\n", "123:TOKEN\n", "tg:7\n", "-1001234567890\n"] {
        std::thread::sleep(Duration::from_millis(300));
        stdin.write_all(answer.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    for question in [
        "Chat platform",
        "The Telegram bot token from @BotFather",
        "Approvers' Telegram ids",
        "The ops group's chat id",
    ] {
        assert!(shown.contains(question), "{question:?} was asked:\n{shown}");
    }
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(
        written.contains("approvers = [\"tg:7\"]") && written.contains("\"-1001234567890\""),
        "{written}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_for_discord_asks_discord_who_the_bot_is() {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let args = [
        "--yes",
        "--platform",
        "discord",
        "--token",
        "TEST.TOKEN",
        "--api-url",
        &dc.url(),
        "--guild",
        "112233",
        "--model-url",
        &model.url(),
        "--approver",
        "discord:42",
        "--ops-room",
        "223344",
        "--no-doctor",
    ];
    let (code, out) = init(&sandbox, &args, "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("✓ signed in as"), "{out}");
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(
        written.contains("bot_token = \"env:DISCORD_BOT_TOKEN\"") && written.contains("guilds = [\"112233\"]"),
        "{written}"
    );
    assert!(!written.contains("TEST.TOKEN"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_for_matrix_logs_in_on_a_real_synapse() {
    let model = ScriptedModel::start().await;
    let w = matrix_fx::world().await;
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let (hs, model_url) = (w.synapse.url(), model.url());
    let args = |password: &'static str| {
        vec![
            "--platform",
            "matrix",
            "--homeserver",
            &hs,
            "--user-id",
            matrix_fx::BOT,
            "--token",
            password,
            "--model-url",
            &model_url,
            "--approver",
            matrix_fx::OP,
            "--ops-room",
            &w.ops,
            "--no-doctor",
        ]
    };
    let mut quiet = args("not-the-password");
    quiet.push("--yes");
    let (code, out) = init(&sandbox, &quiet, "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("matrix refused the password"), "{out}");
    let (code, out) = init(&sandbox, &args("bot-password"), "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("✓ signed in as {}", matrix_fx::BOT)), "{out}");
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(written.contains("password = \"env:MATRIX_PASSWORD\""), "{written}");
    assert!(written.contains(&format!("auto_join = [\"{}\"]", w.ops)), "{written}");
    assert!(!written.contains("bot-password"));
    let (code, out, err) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_sets_up_several_platforms_with_one_ops_room() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    tg.only_token("123:GOOD");
    let dc = FakeDiscord::start().await;
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let (tg_api, dc_api) = (format!("telegram={}", tg.url()), format!("discord={}", dc.url()));
    let mut args = vec![
        "--yes",
        "--platform",
        "telegram,discord",
        "--token",
        "telegram=123:GOOD",
        "--api-url",
        &tg_api,
        "--api-url",
        &dc_api,
        "--guild",
        "112233",
        "--approver",
        "tg:7",
        "--ops-room",
        "-1001234567890",
        "--no-doctor",
    ];
    let model_url = model.url();
    args.extend(["--model-url", &model_url]);
    // A token not naming its platform is refused: which bot is it for?
    let mut unnamed = args.clone();
    unnamed.extend(["--token", "TEST.TOKEN"]);
    let (code, out) = init(&sandbox, &unnamed, "");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("several platforms were chosen: name the one --token is for"),
        "{out}"
    );
    assert!(!sandbox.config_path().exists(), "nothing written");

    args.extend(["--token", "discord=TEST.TOKEN"]);
    let (code, out) = init(&sandbox, &args, "");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("✓ signed in as").count(), 2, "both bots checked:\n{out}");
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(
        written.contains("channels = [\"telegram.main\", \"discord.main\"]")
            && written.contains("approver_channel = \"telegram.main\""),
        "{written}"
    );
    let secrets = std::fs::read_to_string(sandbox.path().join("switchboard.env")).unwrap();
    assert!(
        secrets.contains("TELEGRAM_BOT_TOKEN=123:GOOD\nDISCORD_BOT_TOKEN=TEST.TOKEN"),
        "{secrets}"
    );
    let (code, out, err) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");

    // A stranger on Discord is let in from the Telegram ops group.
    let _gw = run_as_written(&sandbox, written).await;
    let eve = discord::user(55, "eve");
    let dm = dc.dm_with(&eve);
    dc.say(dm, &eve, "hello from discord");
    let code_msg = dc.wait_bot_messages(dm, 1, 30).await;
    assert!(
        code_msg[0]["content"].as_str().unwrap_or("").contains("code: "),
        "{code_msg:?}"
    );
    let prompt = tg.wait_sent_to(OPS, 1, 30).await[0].clone();
    assert!(text(&prompt).contains("discord"), "the request says where: {prompt}");
    tg.press(user(APPROVER, "Ops"), prompt.clone(), &button(&prompt, "Allow"));
    dc.wait_bot_messages(dm, 2, 30).await;
    model.push(Step::text("Hello Eve, on Discord."));
    dc.say(dm, &eve, "hello again");
    let answers = dc.wait_bot_messages(dm, 3, 30).await;
    assert_eq!(answers[2]["content"], "Hello Eve, on Discord.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_finds_a_model_server_on_its_usual_port() {
    // Ollama's port, else llama.cpp's: whichever is free here holds the
    // stand-in, and init is given no address at all.
    let mut found = None;
    for (addr, name) in [("127.0.0.1:11434", "Ollama"), ("127.0.0.1:8080", "llama.cpp")] {
        if let Some(m) = ScriptedModel::start_at(addr).await {
            found = Some((m, name));
            break;
        }
    }
    let (model, name) = found.expect("ports 11434 and 8080 are both taken on this machine: stop what holds one");
    let sandbox = Sandbox::new("");
    std::fs::remove_file(sandbox.config_path()).unwrap();
    let (code, out) = init(&sandbox, &["--yes", "--platform", "local", "--no-doctor"], "");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("… looking for {name} at {}: ✓ serves scripted", model.url())),
        "{out}"
    );
    let written = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert!(
        written.contains(&format!("base_url = \"{}\"", model.url())),
        "{written}"
    );
}
