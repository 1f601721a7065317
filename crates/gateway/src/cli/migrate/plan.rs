//! What a migration will do, before it does it: each setting of the
//! source mapped (and where to), left out (and why), or a secret (shown
//! redacted); the configuration it adds up to; the files it copies.

use std::fmt::Write as _;
use std::path::PathBuf;

/// How one source setting fares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Mapped,
    Left,
    Secret,
}

/// One line of the plan.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub fate: Fate,
    /// The source setting (`channels.telegram.botToken`).
    pub from: String,
    /// Where it goes, or why it does not.
    pub to: String,
}

/// A TOML table of the new configuration: its header and `key = value`
/// lines (values already TOML).
#[derive(Debug, Clone)]
pub(super) struct Table {
    pub header: String,
    pub keys: Vec<(String, String)>,
}

/// A migration, ready to print or apply.
#[derive(Debug, Default)]
pub(super) struct Plan {
    pub lines: Vec<Line>,
    /// `[providers.*]`, then the agent, its risk profile, channels and MCP servers.
    pub tables: Vec<Table>,
    /// Secrets by variable name, with their values when known.
    pub secrets: Vec<(String, Option<String>)>,
    /// Files to copy: source, and path under the new configuration's folder.
    pub copies: Vec<(PathBuf, PathBuf)>,
}

/// A TOML string.
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it can be, quoted otherwise (a name from the
/// source may hold dots, brackets or quotes).
pub(super) fn key(name: &str) -> String {
    let bare = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        return name.to_string();
    }
    // A basic string on one line (a key may not span lines).
    crate::cli::toml_text::basic_string(name)
}

/// `name` as an environment variable name: letters, digits and `_`,
/// upper case (anything else becomes `_`).
pub(super) fn var_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A TOML list of strings.
pub(super) fn list<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|s| q(s.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

/// `value` with all but its first 4 characters hidden.
pub(super) fn redacted(value: &str) -> String {
    let n = value.chars().count();
    if n < 20 {
        return format!("({n} characters, redacted)");
    }
    let head: String = value.chars().take(4).collect();
    format!("{head}… ({n} characters, redacted)")
}

impl Plan {
    pub(super) fn mapped(&mut self, from: impl Into<String>, to: impl Into<String>) {
        self.lines.push(Line {
            fate: Fate::Mapped,
            from: from.into(),
            to: to.into(),
        });
    }

    pub(super) fn left(&mut self, from: impl Into<String>, why: impl Into<String>) {
        self.lines.push(Line {
            fate: Fate::Left,
            from: from.into(),
            to: why.into(),
        });
    }

    /// A secret read from `from` under the name `name` (its value, when
    /// known, is written only with `--secrets`).
    pub(super) fn secret(&mut self, from: impl Into<String>, name: &str, value: Option<String>) {
        let name = var_name(name);
        let name = name.as_str();
        // A line break would start another line of the secrets file.
        let value = value.filter(|v| !v.contains(['\n', '\r']));
        let shown = match &value {
            Some(v) => redacted(v),
            None => "not found: set it in the environment".into(),
        };
        self.lines.push(Line {
            fate: Fate::Secret,
            from: from.into(),
            to: format!("env:{name} = {shown}"),
        });
        match self.secrets.iter().find(|(n, _)| n == name) {
            None => self.secrets.push((name.to_string(), value)),
            Some((_, known)) if *known != value && value.is_some() => {
                self.lines.push(Line {
                    fate: Fate::Left,
                    from: format!("{name} (again)"),
                    to: "a second, different value under the same name: only the first is kept; check which is right"
                        .into(),
                });
            }
            Some(_) => {}
        }
    }

    /// The table `header`, created empty at the end when missing.
    pub(super) fn table(&mut self, header: &str) -> &mut Table {
        let at = match self.tables.iter().position(|t| t.header == header) {
            Some(at) => at,
            None => {
                self.tables.push(Table {
                    header: header.to_string(),
                    keys: Vec::new(),
                });
                self.tables.len() - 1
            }
        };
        &mut self.tables[at]
    }

    /// Set `key` in table `header` (replacing an earlier value).
    pub(super) fn set(&mut self, header: &str, key: &str, value: String) {
        let t = self.table(header);
        t.keys.retain(|(k, _)| k != key);
        t.keys.push((key.to_string(), value));
    }

    /// The plan as printed.
    pub(super) fn text(&self, source: &str) -> String {
        let mut out = format!("Migration plan from {source}:\n");
        for (fate, title) in [
            (Fate::Mapped, "Mapped"),
            (Fate::Secret, "Secrets"),
            (Fate::Left, "Not mapped"),
        ] {
            let lines: Vec<&Line> = self.lines.iter().filter(|l| l.fate == fate).collect();
            if lines.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{title}:");
            for l in lines {
                let arrow = if fate == Fate::Left { ":" } else { " →" };
                let _ = writeln!(out, "  {}{arrow} {}", l.from, l.to);
            }
        }
        if !self.copies.is_empty() {
            let _ = writeln!(out, "\nFiles copied:");
            for (from, to) in &self.copies {
                let _ = writeln!(out, "  {} → {}", from.display(), to.display());
            }
        }
        out
    }

    /// The new configuration; `env_file` names the secrets file when one
    /// is written.
    pub(super) fn config(&self, source: &str, env_file: Option<&str>) -> String {
        let mut out = format!(
            "# Written by `switchboard migrate` from {source}; every key is explained in docs/configuration.md.\n\n\
             database_url = \"sqlite://data/control_plane.db\"\nworkspace_dir = \"workspace\"\n"
        );
        if let Some(file) = env_file {
            let _ = writeln!(out, "env_file = {}", q(file));
        }
        for t in &self.tables {
            let _ = writeln!(out, "\n[{}]", t.header);
            for (k, v) in &t.keys {
                let _ = writeln!(out, "{} = {v}", key(k));
            }
        }
        out
    }

    /// The secrets file (only secrets whose values are known).
    pub(super) fn secrets_file(&self) -> String {
        let mut out = String::from("# Secrets imported by switchboard migrate; keep this file private.\n");
        for (name, value) in &self.secrets {
            if let Some(v) = value {
                let _ = writeln!(out, "{name}={v}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_a_source_cannot_break_out_of_their_key() {
        let mut plan = Plan::default();
        let header = format!("mcp_servers.{}", key("x]\n[agents.evil"));
        plan.set(&header, "a\"b = 1\nc", q("v\"\n[x]"));
        let text = plan.config("test", None);
        let parsed: toml::Table = toml::from_str(&text).expect(&text);
        let servers = parsed["mcp_servers"].as_table().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["x]\n[agents.evil"]);
        assert!(parsed.get("agents").is_none() && parsed.get("x").is_none());
        assert_eq!(servers["x]\n[agents.evil"]["a\"b = 1\nc"].as_str(), Some("v\"\n[x]"));
    }
}
