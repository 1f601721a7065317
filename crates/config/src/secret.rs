//! Secrets given inline or as `env:NAME`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A secret value. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// Written in the file.
    Inline(String),
    /// `env:NAME`: read from the environment variable `NAME`.
    Env(String),
}

/// A secret that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SecretError {
    #[error(
        "environment variable {0} is not set (the configuration reads it with env:{0}; set it, or add it to the env_file)"
    )]
    /// The variable is not set.
    MissingEnv(String),
}

impl Secret {
    /// `env:NAME` or an inline value.
    pub fn parse(raw: &str) -> Self {
        match raw.strip_prefix("env:") {
            Some(name) => Secret::Env(name.trim().to_string()),
            None => Secret::Inline(raw.to_string()),
        }
    }

    /// The value, read from the environment when given as `env:NAME`.
    pub fn resolve(&self) -> Result<String, SecretError> {
        match self {
            Secret::Inline(v) => Ok(v.clone()),
            Secret::Env(name) => match std::env::var(name).ok().or_else(|| crate::env_file::get(name)) {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(SecretError::MissingEnv(name.clone())),
            },
        }
    }

    /// The environment variable name, for `env:` secrets.
    pub fn env_name(&self) -> Option<&str> {
        match self {
            Secret::Env(n) => Some(n),
            Secret::Inline(_) => None,
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Secret::Inline(_) => f.write_str("Secret(<inline, redacted>)"),
            Secret::Env(n) => write!(f, "Secret(env:{n})"),
        }
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Ok(Secret::parse(&raw))
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Secret::Inline(v) => s.serialize_str(v),
            Secret::Env(n) => s.serialize_str(&format!("env:{n}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_secrets_resolve_and_never_debug_print() {
        let s = Secret::parse("hunter2");
        assert_eq!(s.resolve().unwrap(), "hunter2");
        assert!(!format!("{s:?}").contains("hunter2"));
        let e = Secret::parse("env:SWITCHBOARD_TEST_SURELY_UNSET_VAR");
        assert_eq!(
            e.resolve(),
            Err(SecretError::MissingEnv("SWITCHBOARD_TEST_SURELY_UNSET_VAR".into()))
        );
    }
}
