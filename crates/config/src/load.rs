//! Reading a configuration file into a validated [`Config`].

use crate::{Config, Problem};
use std::fmt;
use std::path::Path;

/// Why a configuration was refused: every problem found.
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    /// The file (or name) the configuration came from.
    pub source_name: String,
    /// Every problem found.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} has {} problem(s):", self.source_name, self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

impl Config {
    /// Read and validate a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source_name: name.clone(),
            problems: vec![Problem::new(
                "",
                format!("cannot read the file: {e}; pass an existing file with --config"),
            )],
        })?;
        let config = Self::from_toml_str(&text, &name)?;
        if config.env_file.is_none() {
            crate::env_file::clear();
        }
        if let Some(file) = &config.env_file {
            let at = path.parent().unwrap_or(Path::new(".")).join(file);
            crate::env_file::load(&at).map_err(|why| ConfigError {
                source_name: name.clone(),
                problems: vec![Problem::new("env_file", why)],
            })?;
        }
        Ok(config)
    }

    /// Parse and validate configuration text. `source_name` labels errors.
    pub fn from_toml_str(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        let fail = |problems| ConfigError {
            source_name: source_name.to_string(),
            problems,
        };
        let mut config = parse(text).map_err(|p| fail(vec![p]))?;
        config.fill_default_profiles();
        let problems = crate::validate::validate(&config);
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(fail(problems))
        }
    }

    /// Agents name `default` profiles unless told otherwise; when the file
    /// does not define them, the built-in defaults apply.
    fn fill_default_profiles(&mut self) {
        self.risk_profiles.entry("default".into()).or_default();
        self.runtime_profiles.entry("default".into()).or_default();
    }

    /// Non-fatal findings, such as `env:` secrets whose variable is unset.
    pub fn warnings(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut check = |path: String, secret: Option<&crate::Secret>| {
            if let Some(s) = secret
                && let Err(e) = s.resolve()
            {
                out.push(Problem::new(path, e.to_string()));
            }
        };
        for (name, p) in &self.providers {
            check(format!("providers.{name}.api_key"), p.api_key.as_ref());
        }
        for (name, c) in self.channels.telegram.iter().filter(|(_, c)| c.enabled) {
            check(format!("channels.telegram.{name}.bot_token"), Some(&c.bot_token));
        }
        for (name, c) in self.channels.discord.iter().filter(|(_, c)| c.enabled) {
            check(format!("channels.discord.{name}.bot_token"), Some(&c.bot_token));
        }
        for (name, c) in self.channels.local.iter().filter(|(_, c)| c.enabled) {
            check(format!("channels.local.{name}.token"), c.token.as_ref());
        }
        for (name, c) in self.channels.matrix.iter().filter(|(_, c)| c.enabled) {
            check(format!("channels.matrix.{name}.password"), c.password.as_ref());
            check(format!("channels.matrix.{name}.access_token"), c.access_token.as_ref());
            check(
                format!("channels.matrix.{name}.store_passphrase"),
                c.store_passphrase.as_ref(),
            );
        }
        out
    }
}

fn parse(text: &str) -> Result<Config, Problem> {
    let de = toml::Deserializer::parse(text).map_err(|e| Problem::new("", syntax_message(text, &e)))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let path = if path == "." { String::new() } else { path };
        Problem::new(path, located_message(text, inner.message(), inner.span()))
    })
}

fn syntax_message(text: &str, e: &toml::de::Error) -> String {
    located_message(text, &format!("TOML syntax error: {}", e.message()), e.span())
}

fn located_message(text: &str, message: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("{} (line {line})", message.trim_end())
        }
        None => message.trim_end().to_string(),
    }
}
