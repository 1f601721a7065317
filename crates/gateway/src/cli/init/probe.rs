//! `init`'s checks, made as each answer is given: the platform accepts
//! the bot's credentials (the same `whoami` as `doctor`), and a model
//! server answers with the models it serves.

use super::InitArgs;
use super::ask::Asker;
use super::render::{Bot, ModelChoice, Platform, channel_table};
use serde_json::Value;
use std::time::Duration;

/// The usual addresses of a model server on this machine.
const LOCAL_SERVERS: [(&str, &str); 2] = [
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
];

/// Ask for the bot's credentials until the platform accepts them (once,
/// with `--yes`). `several`: more than one platform was chosen, so a
/// per-platform flag's value must name its platform (`telegram=…`).
pub(super) async fn credentials(args: &InitArgs, ask: &mut Asker, a: &mut Bot, several: bool) -> Result<(), String> {
    a.api_url = for_platform(&args.api_url, a.platform, several, "--api-url")?;
    match a.platform {
        Platform::Local => return Ok(()),
        Platform::Matrix => {
            a.homeserver = Some(ask.value(
                args.homeserver.as_deref(),
                "--homeserver",
                "The homeserver's address (https://matrix.example.org)",
            )?);
            a.user_id = Some(ask.value(
                args.user_id.as_deref(),
                "--user-id",
                "The bot's Matrix id (@bot:example.org)",
            )?);
        }
        Platform::Discord => {
            a.guild = Some(ask.value(
                args.guild.as_deref(),
                "--guild",
                "Your Discord server's id (Developer Mode, then Copy Server ID)",
            )?);
        }
        Platform::Telegram => {}
    }
    let question = match a.platform {
        Platform::Telegram => "The Telegram bot token from @BotFather",
        Platform::Discord => "The Discord bot token (Developer Portal, Bot, Reset Token)",
        _ => "The Matrix bot account's password",
    };
    let mut given = for_platform(&args.token, a.platform, several, "--token")?;
    loop {
        let secret = ask.value(given.take().as_deref(), "--token", question)?;
        if secret.chars().any(char::is_control) {
            return Err("the token holds a control character: paste it again".into());
        }
        a.secret = Some(secret.clone());
        print!("… asking {} whether it accepts the credentials: ", a.platform.name());
        match signed_in(a, &secret).await {
            Ok(who) => {
                println!("✓ signed in as {who}");
                a.signed_in_as = Some(who);
                return Ok(());
            }
            Err(why) if ask.may_retry() => println!("✗ {why}"),
            Err(why) => {
                println!("✗");
                return Err(why);
            }
        }
    }
}

/// A per-platform flag's value for `platform`: one written
/// `platform=value`, or a plain one when only one platform was chosen.
/// With one platform, a value that seems to name another (a password
/// `discord=…`) is taken whole: it cannot be meant for a platform nobody
/// chose.
fn for_platform(values: &[String], platform: Platform, several: bool, flag: &str) -> Result<Option<String>, String> {
    let mut found = None;
    for v in values {
        let named = v
            .split_once('=')
            .and_then(|(p, rest)| Platform::parse(p).ok().map(|p| (p, rest)));
        match named {
            Some((p, rest)) if p == platform => found = Some(rest.to_string()),
            Some(_) if several => {}
            None if several => {
                return Err(format!(
                    "several platforms were chosen: name the one {flag} is for, as {flag} {}=…",
                    platform.name()
                ));
            }
            Some(_) | None => found = Some(v.clone()),
        }
    }
    Ok(found)
}

/// Who the platform says the bot is, or why it refused.
async fn signed_in(a: &Bot, secret: &str) -> Result<String, String> {
    let draft = format!(
        "[providers.p]\nkind = \"openai\"\nmodel = \"m\"\n[agents.main]\nmodel_provider = \"p\"\n{}",
        channel_table(a, secret, None)
    );
    let config = switchboard_config::Config::from_toml_str(&draft, "init").map_err(|e| e.to_string())?;
    let channel = crate::adapters::build_one(&config, &a.channel()).map_err(|e| format!("{e:#}"))?;
    let what = match a.platform {
        Platform::Matrix => "the password (or the user id)",
        _ => "the token",
    };
    // A channel logs in with a password only when it starts: here the
    // password is tried (and that session logged out again).
    let asked = async {
        match (&a.homeserver, &a.user_id) {
            (Some(hs), Some(user)) if a.platform == Platform::Matrix => {
                switchboard_channel_matrix::check_password(hs, user, secret)
                    .await
                    .map(Some)
            }
            _ => channel.whoami().await,
        }
    };
    match tokio::time::timeout(Duration::from_secs(15), asked).await {
        Ok(Ok(Some(who))) => Ok(who),
        Ok(Ok(None)) => Ok("the bot".into()),
        Ok(Err(switchboard_core::ChannelError::Permanent(why))) => Err(format!(
            "{} refused {what} ({why}): copy it again and retry",
            a.platform.name()
        )),
        Ok(Err(e)) => Err(format!(
            "{} could not be asked ({e}): check the network and the address",
            a.platform.name()
        )),
        Err(_) => Err(format!(
            "{} did not answer in 15 s: check the network and the address",
            a.platform.name()
        )),
    }
}

/// A model server at `url`, or on the usual local ports.
pub(super) async fn local_server(
    url: Option<&str>,
    model: Option<&str>,
    ask: &mut Asker,
) -> Result<ModelChoice, String> {
    let candidates: Vec<(&str, String)> = match url {
        Some(u) => vec![("the model server", u.trim_end_matches('/').to_string())],
        None => LOCAL_SERVERS.iter().map(|(n, u)| (*n, u.to_string())).collect(),
    };
    for (name, base) in candidates {
        print!("… looking for {name} at {base}: ");
        match models_at(&base).await {
            Ok(models) if models.is_empty() => println!("it answers but serves no model"),
            Ok(models) => {
                let chosen = match model {
                    Some(m) if models.iter().any(|x| x == m) => m.to_string(),
                    Some(m) => return Err(format!("{base} does not serve '{m}'; it serves {}", models.join(", "))),
                    None => models[0].clone(),
                };
                println!("✓ serves {} (using {chosen})", models.join(", "));
                return Ok(ModelChoice {
                    kind: "openai",
                    base_url: Some(base),
                    model: chosen,
                    ..ModelChoice::default()
                });
            }
            Err(why) => println!("✗ {why}"),
        }
    }
    let hint = "start Ollama (ollama serve) or llama.cpp's llama-server, or pass --model-url URL, or --hosted openai|anthropic with --api-key-env NAME";
    if !ask.may_retry() {
        return Err(format!("no model server found: {hint}"));
    }
    let url = ask.value(
        None,
        "--model-url",
        "A model server's address ending in /v1 (OpenAI-compatible)",
    )?;
    Box::pin(local_server(Some(&url), model, ask)).await
}

/// The model names an OpenAI-compatible server lists.
async fn models_at(base: &str) -> Result<Vec<String>, String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .map_err(|e| e.to_string())?;
    let answer = client
        .get(format!("{base}/models"))
        .send()
        .await
        .map_err(|_| "nothing answers there".to_string())?;
    if !answer.status().is_success() {
        return Err(format!("it answers {} to /models", answer.status().as_u16()));
    }
    let body: Value = answer.json().await.map_err(|_| "its /models is not JSON".to_string())?;
    Ok(body["data"]
        .as_array()
        .map(|d| d.iter().filter_map(|m| m["id"].as_str().map(str::to_string)).collect())
        .unwrap_or_default())
}

/// OpenAI's or Anthropic's API, its key in the environment (or typed in,
/// then kept in the secrets file).
pub(super) async fn hosted(
    which: &str,
    key_env: Option<&str>,
    model: Option<&str>,
    ask: &mut Asker,
) -> Result<ModelChoice, String> {
    let (kind, default_env, default_model) = match which {
        "openai" => ("openai", "OPENAI_API_KEY", "gpt-4o-mini"),
        "anthropic" => ("anthropic", "ANTHROPIC_API_KEY", "claude-3-5-haiku-latest"),
        other => return Err(format!("--hosted '{other}': answer openai or anthropic")),
    };
    let env = key_env.unwrap_or(default_env).to_string();
    let valid = env.chars().next().is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && env
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(format!(
            "--api-key-env '{env}' is not a variable name: use capitals, digits and _"
        ));
    }
    let key = match std::env::var(&env) {
        Ok(v) if !v.is_empty() => {
            println!("✓ the API key is read from ${env}");
            None
        }
        _ => Some(ask.value(
            None,
            "--api-key-env",
            &format!("The {kind} API key (kept in the secrets file as {env})"),
        )?),
    };
    Ok(ModelChoice {
        kind,
        base_url: None,
        model: model.unwrap_or(default_model).to_string(),
        key_env: Some(env),
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_matched_to_its_platform() {
        let given = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        let one = |v: &[&str]| for_platform(&given(v), Platform::Matrix, false, "--token").unwrap();
        assert_eq!(one(&["hunter2"]).as_deref(), Some("hunter2"));
        assert_eq!(one(&["matrix=hunter2"]).as_deref(), Some("hunter2"));
        assert_eq!(
            one(&["discord=hunter2"]).as_deref(),
            Some("discord=hunter2"),
            "a password that looks like another platform's value is kept whole"
        );
        let several = |v: &[&str]| for_platform(&given(v), Platform::Matrix, true, "--token");
        assert_eq!(several(&["discord=a", "matrix=b"]).unwrap().as_deref(), Some("b"));
        assert_eq!(several(&["discord=a"]).unwrap(), None);
        assert!(several(&["b"]).unwrap_err().contains("--token matrix=…"));
    }
}
