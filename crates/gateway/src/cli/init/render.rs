//! What `init` writes: a configuration in the shape of the per-platform
//! examples in `config/examples/` (secrets as `env:NAME`), and the secrets
//! file those names are read from.

/// The chat platform chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Platform {
    Telegram,
    Discord,
    Matrix,
    /// The terminal chat and the local API only.
    Local,
}

impl Platform {
    pub(super) fn parse(word: &str) -> Result<Self, String> {
        match word.trim().to_ascii_lowercase().as_str() {
            "telegram" => Ok(Self::Telegram),
            "discord" => Ok(Self::Discord),
            "matrix" => Ok(Self::Matrix),
            "local" | "none" => Ok(Self::Local),
            other => Err(format!(
                "'{other}' is not a platform: answer telegram, discord, matrix or local"
            )),
        }
    }

    /// One platform or several (`telegram,discord`), each once; `local`
    /// only alone (it is the terminal, with no chat platform).
    pub(super) fn parse_list(words: &str) -> Result<Vec<Self>, String> {
        let mut out: Vec<Self> = Vec::new();
        for word in words.split([',', ' ']).filter(|w| !w.trim().is_empty()) {
            let p = Self::parse(word)?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if out.is_empty() {
            return Err("no platform named: answer telegram, discord, matrix or local".into());
        }
        if out.len() > 1 && out.contains(&Self::Local) {
            return Err("'local' is the terminal alone: name only chat platforms, or only local".into());
        }
        Ok(out)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Telegram => "telegram",
            Self::Discord => "discord",
            Self::Matrix => "matrix",
            Self::Local => "local",
        }
    }

    pub(super) fn is_chat(self) -> bool {
        self != Self::Local
    }

    /// The environment variable its secret is kept under.
    pub(super) fn secret_name(self) -> &'static str {
        match self {
            Self::Telegram => "TELEGRAM_BOT_TOKEN",
            Self::Discord => "DISCORD_BOT_TOKEN",
            Self::Matrix => "MATRIX_PASSWORD",
            Self::Local => "",
        }
    }

    pub(super) fn approver_question(self) -> &'static str {
        match self {
            Self::Telegram => "Approvers' Telegram ids, as tg:<number> (message @userinfobot to learn yours)",
            Self::Discord => "Approvers' Discord ids, as discord:<number> (Developer Mode, then Copy User ID)",
            _ => "Approvers' Matrix ids, as @user:server",
        }
    }

    pub(super) fn ops_question(self) -> &'static str {
        match self {
            Self::Telegram => "The ops group's chat id (starts with -100; or rerun with --wait-here)",
            Self::Discord => "The ops channel's id (Developer Mode, then Copy Channel ID)",
            _ => "The ops room's id (!room:server; Room settings, Advanced)",
        }
    }

    /// Whether `id` is a user id on this platform.
    pub(super) fn is_id(self, id: &str) -> bool {
        let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        match self {
            Self::Telegram => id.strip_prefix("tg:").is_some_and(digits),
            Self::Discord => id.strip_prefix("discord:").is_some_and(digits),
            Self::Matrix => id.starts_with('@') && id.contains(':'),
            Self::Local => false,
        }
    }
}

/// The model: an OpenAI-compatible server on this machine or the network,
/// or a hosted API whose key is read from the environment.
#[derive(Debug, Clone, Default)]
pub(super) struct ModelChoice {
    /// `openai` or `anthropic`.
    pub kind: &'static str,
    pub base_url: Option<String>,
    pub model: String,
    /// The key's variable, for a hosted API.
    pub key_env: Option<String>,
    /// The key's value when it was typed in (kept in the secrets file).
    pub key: Option<String>,
}

/// One bot on a chat platform, as `init` was told it.
#[derive(Debug, Clone)]
pub(super) struct Bot {
    pub platform: Platform,
    /// The bot token, or the Matrix password.
    pub secret: Option<String>,
    pub api_url: Option<String>,
    pub homeserver: Option<String>,
    pub user_id: Option<String>,
    pub guild: Option<String>,
    /// Who the platform said the bot is.
    pub signed_in_as: Option<String>,
}

impl Bot {
    pub(super) fn new(platform: Platform) -> Self {
        Self {
            platform,
            secret: None,
            api_url: None,
            homeserver: None,
            user_id: None,
            guild: None,
            signed_in_as: None,
        }
    }

    /// The channel's table name (`telegram.main`).
    pub(super) fn channel(&self) -> String {
        format!("{}.main", self.platform.name())
    }
}

/// Everything `init` was told.
#[derive(Debug, Clone, Default)]
pub(super) struct Answers {
    /// A bot per chat platform; the first one's chat holds the ops room
    /// (approvals and pairing requests from every platform go there).
    /// None: the terminal and the local API only.
    pub bots: Vec<Bot>,
    pub model: ModelChoice,
    /// Approvers, on the ops room's platform.
    pub approvers: Vec<String>,
    pub ops_room: Option<String>,
}

impl Answers {
    /// The bot whose platform holds the ops room.
    pub(super) fn ops(&self) -> Option<&Bot> {
        self.bots.first()
    }
}

/// A TOML string.
fn q(s: &str) -> String {
    crate::cli::toml_text::basic_string(s)
}

/// The channel table, with the secret as `secret` (`env:NAME` for the
/// file, the value itself only for the check `init` makes first); a
/// Matrix bot joins `ops_room` when it is given.
pub(super) fn channel_table(b: &Bot, secret: &str, ops_room: Option<&str>) -> String {
    let mut t = format!("[channels.{}]\n", b.channel());
    match b.platform {
        Platform::Telegram | Platform::Discord => {
            t.push_str(&format!("bot_token = {}\n", q(secret)));
            if let Some(url) = &b.api_url {
                t.push_str(&format!("api_url = {}\n", q(url)));
            }
            if let Some(g) = &b.guild {
                t.push_str(&format!("guilds = [{}]                # your server\n", q(g)));
            }
        }
        Platform::Matrix => {
            t.push_str(&format!(
                "homeserver = {}\n",
                q(b.homeserver.as_deref().unwrap_or_default())
            ));
            t.push_str(&format!("user_id = {}\n", q(b.user_id.as_deref().unwrap_or_default())));
            t.push_str(&format!("password = {}\n", q(secret)));
            if let Some(room) = ops_room {
                t.push_str(&format!("auto_join = [{}]\n", q(room)));
            }
        }
        Platform::Local => {}
    }
    t
}

pub(super) fn config(a: &Answers, env_file: &str) -> String {
    let m = &a.model;
    let mut out = String::from(
        "# Written by `switchboard init`; every key is explained in docs/configuration.md.\n\
         # Secrets are in the env_file (mode 0600), never here.\n\n\
         database_url = \"sqlite://data/control_plane.db\"\n\
         workspace_dir = \"workspace\"\n",
    );
    out.push_str(&format!("env_file = {}\n\n", q(env_file)));
    out.push_str(&format!("[providers.main]\nkind = {}\n", q(m.kind)));
    if let Some(url) = &m.base_url {
        out.push_str(&format!("base_url = {}\n", q(url)));
    }
    out.push_str(&format!("model = {}\n", q(&m.model)));
    if let Some(env) = &m.key_env {
        out.push_str(&format!("api_key = {}\n", q(&format!("env:{env}"))));
    }
    let Some(ops) = a.ops() else {
        out.push_str(&agent_and_profile(
            "[\"local.team\"]",
            "in the terminal, with switchboard chat",
        ));
        out.push_str(
            "\n# The local API on data/switchboard.sock; `switchboard chat` talks in this terminal.\n\
             [web]\n[channels.local.team]\nallowed_users = [\"*\"]\n",
        );
        return out;
    };
    let channels: Vec<String> = a.bots.iter().map(|b| q(&b.channel())).collect();
    out.push_str(&agent_and_profile(
        &format!("[{}]", channels.join(", ")),
        "in the ops room",
    ));
    let approvers: Vec<String> = a.approvers.iter().map(|p| q(p)).collect();
    out.push_str(&format!(
        "[risk_profiles.team.approval_route]\napprover_channel = {}\napprover_recipient = \"ops\"\n\
         approvers = [{}]\non_no_approver = \"deny\"\ntimeout_secs = 300\n",
        q(&ops.channel()),
        approvers.join(", ")
    ));
    for (i, bot) in a.bots.iter().enumerate() {
        let ops_room = a.ops_room.as_deref().filter(|_| i == 0);
        out.push('\n');
        out.push_str(&channel_table(
            bot,
            &format!("env:{}", bot.platform.secret_name()),
            ops_room,
        ));
        out.push_str("allowed_users = [\"paired\"]   # strangers get a code; an approver lets them in\n");
        if let Some(room) = ops_room {
            out.push_str(&format!("rooms = {{ \"ops\" = {} }}   # the ops room\n", q(room)));
        }
    }
    out
}

/// The agent, answering on `channels`, and its risk profile.
fn agent_and_profile(channels: &str, asked: &str) -> String {
    format!(
        "\n[agents.main]\nmodel_provider = \"main\"\nrisk_profile = \"team\"\n\
         system_prompt = \"You are the team's assistant. Answer briefly.\"\nchannels = {channels}\n\n\
         # Reading is free; commands outside this list are refused; anything\n\
         # else is asked of an approver ({asked}).\n\
         [risk_profiles.team]\nlevel = \"supervised\"\n\
         auto_approve = [\"file_read\", \"memory_recall\", \"skill\"]\n\
         allowed_commands = [\"ls\", \"cat\", \"grep\", \"date\"]\n"
    )
}

/// The secrets file: `NAME=value` lines.
pub(super) fn secrets(a: &Answers) -> String {
    let mut out = String::from("# Secrets for switchboard (read through env_file); keep this file private.\n");
    for bot in &a.bots {
        if let Some(secret) = &bot.secret {
            out.push_str(&format!("{}={secret}\n", bot.platform.secret_name()));
        }
    }
    if let (Some(env), Some(key)) = (&a.model.key_env, &a.model.key) {
        out.push_str(&format!("{env}={key}\n"));
    }
    out
}
