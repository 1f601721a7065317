//! Argument summaries for approval prompts and logs, with secrets removed:
//! values of secret-looking keys, `env:` references, bearer tokens and
//! well-known key formats never appear.

use serde_json::Value;

const SECRET_KEYS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "authorization",
    "auth",
    "key",
    "credential",
    "cookie",
    "private",
];
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "glpat-",
    "eyJ",
];
const MAX_SUMMARY: usize = 400;

fn is_secret_key(k: &str) -> bool {
    let k = k.to_lowercase();
    SECRET_KEYS
        .iter()
        .any(|s| k == *s || k.contains(s) && *s != "key" || k.ends_with("_key") || k.ends_with("-key"))
}

/// Redact secrets inside free text (a command line, a file's content).
pub fn redact_text(text: &str) -> String {
    const SCHEMES: &[&str] = &["bearer", "basic", "token", "digest"];
    let mut out = Vec::new();
    let mut hide_next = false;
    for word in text.split(' ') {
        let trimmed = word.trim_matches(|c: char| c == '"' || c == '\'');
        let lower = trimmed.to_lowercase();
        if hide_next && !word.is_empty() {
            // "Authorization: Bearer <token>": keep hiding past the scheme word.
            hide_next = SCHEMES.contains(&lower.as_str());
            out.push("[REDACTED]".to_string());
            continue;
        }
        if SCHEMES.contains(&lower.as_str()) || lower.ends_with("authorization:") {
            out.push(word.to_string());
            hide_next = true;
        } else if trimmed.starts_with("env:") || SECRET_PREFIXES.iter().any(|p| trimmed.starts_with(p)) {
            out.push("[REDACTED]".to_string());
        } else if let Some((k, _)) = word
            .split_once('=')
            .filter(|(k, _)| is_secret_key(k.trim_start_matches('-')))
        {
            out.push(format!("{k}=[REDACTED]"));
        } else if looks_random(trimmed) {
            out.push("[REDACTED]".to_string());
        } else {
            out.push(word.to_string());
        }
    }
    out.join(" ")
}

/// Long mixed-alphanumeric runs (≥ 32 chars with digits and letters) look
/// like keys.
fn looks_random(w: &str) -> bool {
    w.len() >= 32
        && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_+/=".contains(c))
        && w.chars().any(|c| c.is_ascii_digit())
        && w.chars().any(|c| c.is_ascii_alphabetic())
}

fn redact_value(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) {
                        Value::String("[REDACTED]".into())
                    } else {
                        redact_value(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        Value::String(s) => Value::String(redact_text(s)),
        other => other.clone(),
    }
}

/// Arguments that say what a call acts on: shown first, never cut before
/// bulkier ones.
const FIRST: &[&str] = &[
    "command",
    "path",
    "key",
    "agent",
    "query",
    "task",
    "task_id",
    "session_key",
    "provider",
];

/// A short, redacted, one-line summary of tool arguments. What the call
/// acts on (the path, the command) comes first and shorter values before
/// longer ones, so a long `content` is what gets cut, never the path.
pub fn summarize_args(args: &Value) -> String {
    let redacted = redact_value(args);
    let Value::Object(map) = &redacted else {
        return cut(redacted.to_string(), MAX_SUMMARY);
    };
    let mut pairs: Vec<(&String, String)> = map.iter().map(|(k, v)| (k, v.to_string())).collect();
    pairs.sort_by_key(|(k, v)| (!FIRST.contains(&k.as_str()), v.len()));
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{}:{v}", Value::String((*k).clone())));
    }
    out.push('}');
    cut(visible(&out), MAX_SUMMARY)
}

/// `text` with the characters that change how text reads without being
/// seen — bidirectional overrides and isolates, zero-width characters, the
/// byte-order mark — written as visible `\u{…}` escapes, so an approver
/// reads the arguments as they are.
fn visible(text: &str) -> String {
    let hidden = |c: char| matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}');
    if !text.chars().any(hidden) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                format!("\\u{{{:04x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` cut to `max` characters, saying how much was left out (an
/// approver must know the arguments go on past what they see).
fn cut(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total > max {
        let kept: String = text.chars().take(max).collect();
        format!("{kept}… [cut: {} more characters not shown]", total - max)
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_hidden() {
        let s = summarize_args(&json!({
            "command": "curl -H 'Authorization: Bearer abc123' https://x",
            "api_key": "sk-live-123",
            "nested": {"password": "hunter2", "note": "use env:OPENAI_API_KEY"},
            "url": "https://x?token=zzz",
        }));
        for secret in ["abc123", "sk-live-123", "hunter2", "OPENAI_API_KEY"] {
            assert!(!s.contains(secret), "{secret} leaked in {s}");
        }
        assert!(s.contains("curl"));
    }

    #[test]
    fn what_a_call_acts_on_comes_first_and_content_is_cut_last() {
        let s = summarize_args(&json!({"content": "x".repeat(450), "path": "deploy/run.sh", "append": false}));
        assert!(
            s.starts_with(r#"{"path":"deploy/run.sh","append":false,"content":"xxx"#),
            "{s}"
        );
        // 502 characters in all: the cut says how many were left out.
        assert!(s.ends_with("… [cut: 102 more characters not shown]"), "{s}");
        assert!(s.chars().take(MAX_SUMMARY).all(|c| c != '…'));
        let short = summarize_args(&json!({"path": "a.txt", "content": "hi"}));
        assert_eq!(short, r#"{"path":"a.txt","content":"hi"}"#);
        assert_eq!(summarize_args(&json!("plain")), r#""plain""#);
    }

    #[test]
    fn characters_that_reorder_or_hide_text_are_shown_as_escapes() {
        let s = summarize_args(&json!({"command": "echo safe\u{202e}fr- mr\u{200b}"}));
        assert!(!s.contains('\u{202e}') && !s.contains('\u{200b}'), "{s}");
        assert!(s.contains("\\u{202e}") && s.contains("\\u{200b}"), "{s}");
    }

    #[test]
    fn long_summaries_are_cut() {
        let s = summarize_args(&json!({"content": "a ".repeat(1000)}));
        assert!(s.chars().count() <= MAX_SUMMARY + 50, "{s}");
        assert!(s.contains("more characters not shown"), "{s}");
    }
}
