//! A source configuration being read: its settings as a JSON tree, what
//! has been read of it (so what was not can be listed, never dropped
//! silently), and the environment its `${VAR}` references name.

use super::plan::{Plan, q};
use serde_json::Value;
use std::collections::HashMap;

pub(super) struct Source {
    root: Value,
    used: Vec<Vec<String>>,
    /// Its `.env` file, then the process environment.
    env: HashMap<String, String>,
}

impl Source {
    pub(super) fn new(root: Value, env: HashMap<String, String>) -> Self {
        Self {
            root,
            used: Vec::new(),
            env,
        }
    }

    /// The setting at `path` (marked read, with everything under it).
    pub(super) fn get(&mut self, path: &[&str]) -> Option<Value> {
        let mut at = &self.root;
        for key in path {
            at = at.get(key)?;
        }
        self.used.push(path.iter().map(ToString::to_string).collect());
        Some(at.clone())
    }

    pub(super) fn str(&mut self, path: &[&str]) -> Option<String> {
        self.get(path)?.as_str().map(str::to_string)
    }

    /// The keys of the object at `path`, without marking them read.
    pub(super) fn keys(&self, path: &[&str]) -> Vec<String> {
        let mut at = &self.root;
        for key in path {
            match at.get(key) {
                Some(v) => at = v,
                None => return Vec::new(),
            }
        }
        at.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
    }

    /// A variable of the source's environment.
    pub(super) fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned().filter(|v| !v.is_empty())
    }

    /// `text` with each `${VAR}` replaced, when every one is known.
    fn expand(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find('}')? + at;
            out.push_str(&self.env(&rest[at + 2..end])?);
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// Every setting not read, as dotted paths.
    pub(super) fn unread(&self) -> Vec<String> {
        let mut out = Vec::new();
        leaves(&self.root, &mut Vec::new(), &mut out);
        out.into_iter()
            .filter(|p| !self.used.iter().any(|u| p.starts_with(u)))
            .map(|p| p.join("."))
            .collect()
    }

    /// A secret written as `${VAR}`, an `env` secret reference, or the
    /// value itself: recorded in `plan` as `env:NAME` (`fallback` names a
    /// value written inline), returned as the TOML to write.
    pub(super) fn secret(&self, plan: &mut Plan, from: &str, raw: &Value, fallback: &str) -> Option<String> {
        let name_value = match raw {
            Value::String(s) => match s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
                Some(var) => {
                    let name = var.split(":-").next().unwrap_or(var).to_string();
                    let value = self
                        .env(&name)
                        .or_else(|| var.split_once(":-").map(|(_, d)| d.to_string()));
                    (name, value)
                }
                None if s.starts_with("env:") => (s[4..].to_string(), self.env(&s[4..])),
                None if s.contains("${") => (fallback.to_string(), self.expand(s)),
                None => (fallback.to_string(), Some(s.clone())),
            },
            Value::Object(o) if o.get("source").and_then(Value::as_str) == Some("env") => {
                let id = o.get("id").and_then(Value::as_str).unwrap_or(fallback).to_string();
                let value = self.env(&id);
                (id, value)
            }
            Value::Object(o) => {
                let kind = o.get("source").and_then(Value::as_str).unwrap_or("unknown");
                plan.left(
                    from,
                    format!("a '{kind}' secret reference cannot be read here; set env:{fallback} by hand"),
                );
                return None;
            }
            _ => {
                plan.left(from, "not a secret this migration reads");
                return None;
            }
        };
        let name = super::plan::var_name(&name_value.0);
        plan.secret(from, &name, name_value.1);
        Some(q(&format!("env:{name}")))
    }
}

fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, child) in o {
                path.push(k.clone());
                leaves(child, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// `KEY=value` lines of a `.env` file (missing file: none).
pub(super) fn dotenv(path: &std::path::Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    switchboard_config::parse_env_file(&text).unwrap_or_default()
}

/// `file`'s values, and the process environment's for what it does not
/// set (the source's own `.env` says what it used).
pub(super) fn with_process_env(file: HashMap<String, String>) -> HashMap<String, String> {
    let mut all: HashMap<String, String> = std::env::vars().collect();
    all.extend(file);
    all
}
