//! `switchboard init`: a first configuration in a few questions (or the
//! same answers as flags, for scripts): which chat platforms, each bot's
//! token (checked with the platform at once), a model server (found on Ollama's
//! and llama.cpp's usual ports, or an API key kept as `env:NAME`), who
//! approves and where the ops room is. It writes a commented configuration
//! that `check` accepts and a `NAME=value` secrets file only its owner can
//! read, runs `doctor`, and prints the command that starts the gateway
//! (docs/getting-started.md).

mod ask;
mod here;
mod probe;
mod render;

use ask::Asker;
use render::{Answers, Bot, ModelChoice, Platform};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `switchboard init`'s flags: any answer not given is asked for, unless
/// `--yes` (then a missing one is an error naming its flag).
#[derive(clap::Args, Debug, Default)]
pub(crate) struct InitArgs {
    /// Where to write the configuration.
    #[arg(long, default_value = "switchboard.toml")]
    pub config: PathBuf,
    /// Replace an existing configuration (and its secrets file).
    #[arg(long)]
    pub force: bool,
    /// Ask nothing: every answer comes from the flags.
    #[arg(long)]
    pub yes: bool,
    /// The chat platforms: telegram, discord, matrix (several with
    /// commas; the first holds the ops room), or local (the terminal and
    /// the local API only).
    #[arg(long, value_delimiter = ',')]
    pub platform: Vec<String>,
    /// The bot token (Telegram, Discord) or the bot account's password
    /// (Matrix); with several platforms, once each as `telegram=…`.
    #[arg(long)]
    pub token: Vec<String>,
    /// The platform's API address, when it is not the public one (a local
    /// Bot API server, a Discord-compatible server); with several
    /// platforms, as `discord=…`.
    #[arg(long)]
    pub api_url: Vec<String>,
    /// Matrix: the homeserver's address.
    #[arg(long)]
    pub homeserver: Option<String>,
    /// Matrix: the bot's user id (`@bot:example.org`).
    #[arg(long)]
    pub user_id: Option<String>,
    /// Discord: the server (guild) id the bot answers in.
    #[arg(long)]
    pub guild: Option<String>,
    /// An OpenAI-compatible model server's address (ending in `/v1`);
    /// without it, Ollama's and llama.cpp's usual ports are tried.
    #[arg(long)]
    pub model_url: Option<String>,
    /// The model to use (default: the first the server lists).
    #[arg(long)]
    pub model: Option<String>,
    /// Use OpenAI's or Anthropic's API: `openai` or `anthropic`.
    #[arg(long)]
    pub hosted: Option<String>,
    /// The environment variable holding the hosted API's key.
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// A person who approves risky tool calls and lets strangers in
    /// (`tg:<id>`, `discord:<id>`, `@user:server`); repeat for more.
    #[arg(long)]
    pub approver: Vec<String>,
    /// The ops room's chat id (Telegram group, Discord channel, Matrix
    /// room; a Telegram group's id starts with `-100`).
    #[arg(long, allow_hyphen_values = true)]
    pub ops_room: Option<String>,
    /// Telegram: wait for `/here` sent in the ops group, and take the
    /// group's id (and the sender as approver) from it.
    #[arg(long)]
    pub wait_here: bool,
    /// Skip `doctor` at the end.
    #[arg(long)]
    pub no_doctor: bool,
}

pub(crate) async fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let config = args.config.clone();
    let secrets = secrets_path(&config);
    if !args.force && (config.exists() || secrets.exists()) {
        let which = if config.exists() { &config } else { &secrets };
        println!(
            "{} exists: pass --force to replace it, or --config PATH to write a new one.",
            which.display()
        );
        return Ok(ExitCode::from(2));
    }
    let mut ask = Asker::new(args.yes);
    let answers = match gather(&args, &mut ask).await {
        Ok(a) => a,
        Err(why) => {
            println!("✗ {why}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let env_name = secrets
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write_files(&config, &secrets, &answers, &env_name)?;
    println!(
        "✓ wrote {} and {} (secrets, mode 0600)",
        config.display(),
        secrets.display()
    );
    match switchboard_config::Config::load(&config) {
        Ok(_) => println!("✓ switchboard check accepts it"),
        Err(e) => {
            print!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    }
    if !args.no_doctor {
        println!();
        super::doctor::run(&config).await?;
    }
    println!(
        "\nStart the gateway:\n\n    switchboard run --config {}\n",
        config.display()
    );
    if !answers.bots.is_empty() {
        println!(
            "Then write to the bot: a stranger gets a pairing code, and an approver lets them in from the ops room."
        );
    } else {
        println!(
            "Or talk to the agent in this terminal:\n\n    switchboard chat --config {}\n",
            config.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Every answer, each checked as it is given.
async fn gather(args: &InitArgs, ask: &mut Asker) -> Result<Answers, String> {
    let given = (!args.platform.is_empty()).then(|| args.platform.join(","));
    let platforms = Platform::parse_list(&ask.value(
        given.as_deref(),
        "--platform",
        "Chat platform (telegram, discord, matrix, local; several with commas)",
    )?)?;
    let several = platforms.len() > 1;
    let mut answers = Answers::default();
    for platform in platforms.into_iter().filter(|p| p.is_chat()) {
        let mut bot = Bot::new(platform);
        probe::credentials(args, ask, &mut bot, several).await?;
        answers.bots.push(bot);
    }
    answers.model = model(args, ask).await?;
    people(args, ask, &mut answers).await?;
    Ok(answers)
}

/// The model server or hosted API.
async fn model(args: &InitArgs, ask: &mut Asker) -> Result<ModelChoice, String> {
    if let Some(hosted) = &args.hosted {
        return probe::hosted(hosted, args.api_key_env.as_deref(), args.model.as_deref(), ask).await;
    }
    probe::local_server(args.model_url.as_deref(), args.model.as_deref(), ask).await
}

/// Approvers and the ops room, on the first chat platform (chat
/// platforms only).
async fn people(args: &InitArgs, ask: &mut Asker, answers: &mut Answers) -> Result<(), String> {
    let Some(ops) = answers.ops().cloned() else {
        return Ok(());
    };
    let platform = ops.platform;
    if args.wait_here && platform == Platform::Telegram {
        let (chat, sender) = here::wait(&ops, ask).await?;
        answers.ops_room = Some(chat);
        if args.approver.is_empty() {
            answers.approvers.push(sender);
        }
    }
    answers.approvers.extend(args.approver.iter().cloned());
    if answers.approvers.is_empty() {
        let who = ask.value(None, "--approver", platform.approver_question())?;
        answers.approvers = who
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
    }
    for a in &answers.approvers {
        if !platform.is_id(a) {
            return Err(format!(
                "'{a}' is not a {} user id (the ops room is on {}): {}",
                platform.name(),
                platform.name(),
                platform.approver_question()
            ));
        }
    }
    if answers.ops_room.is_none() {
        answers.ops_room = Some(ask.value(args.ops_room.as_deref(), "--ops-room", platform.ops_question())?);
    }
    Ok(())
}

/// `switchboard.env` beside `switchboard.toml`.
fn secrets_path(config: &Path) -> PathBuf {
    let stem = config
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "switchboard".into());
    config.with_file_name(format!("{stem}.env"))
}

/// The configuration, and the secrets file created with mode 0600 (never
/// readable by others, not even for a moment).
fn write_files(config: &Path, secrets: &Path, answers: &Answers, env_name: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = config.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    if config == secrets {
        anyhow::bail!("--config must not end in .env (the secrets file is named after it)");
    }
    // `--force` replaces the files themselves: never what a link there
    // points to (create_new refuses an existing name, a link included).
    for (path, text, mode) in [
        (secrets, render::secrets(answers), 0o600),
        (config, render::config(answers, env_name), 0o644),
    ] {
        let _ = std::fs::remove_file(path);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)?;
        file.write_all(text.as_bytes())?;
    }
    Ok(())
}
