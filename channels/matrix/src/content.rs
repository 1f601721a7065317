//! Event contents the bot sends: Markdown messages with a plain `body` and
//! an HTML `formatted_body`, thread and reply relations, edits and
//! reactions, and long text split below Matrix's limits.

use matrix_sdk::ruma::events::room::message::FormattedBody;
use serde_json::{Value, json};
use switchboard_core::{ApprovalPrompt, PromptState, split_message};

/// The largest plain `body` of one message we send (32 KiB): with its HTML
/// twin it stays below the event size limit.
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024;
/// Body and HTML together stay well below the 64 KiB event limit.
const MAX_EVENT_TEXT_BYTES: usize = 60 * 1024;
/// The longest part of a streamed answer one event carries (characters:
/// its body and HTML stay well inside the limits above).
pub(crate) const STREAM_PART: usize = 8000;

/// The HTML for a Markdown text, if it has any formatting.
fn html(markdown: &str) -> Option<String> {
    FormattedBody::markdown(markdown).map(|f| f.body)
}

fn fits(chunk: &str) -> bool {
    chunk.len() <= MAX_BODY_BYTES && chunk.len() + html(chunk).map_or(0, |h| h.len()) <= MAX_EVENT_TEXT_BYTES
}

/// Split `text` into messages that each fit, without breaking code blocks.
pub(crate) fn split(text: &str) -> Vec<String> {
    split_within(text, MAX_BODY_BYTES)
}

fn split_within(text: &str, chars: usize) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in split_message(text, chars) {
        if fits(&chunk) || chars <= 256 {
            out.push(chunk);
        } else {
            // Multi-byte text or HTML escaping made it too big: split finer.
            out.extend(split_within(&chunk, chars / 2));
        }
    }
    out
}

/// How a text is sent: Markdown rendered to HTML (the model's answers), or
/// plain (approval prompts, whose tool arguments must never become markup).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Markdown,
    Plain,
}

fn body_of(text: &str, format: Format) -> Value {
    let mut content = json!({ "msgtype": "m.text", "body": text, "m.mentions": {} });
    if format == Format::Markdown
        && let Some(h) = html(text)
    {
        content["format"] = json!("org.matrix.custom.html");
        content["formatted_body"] = json!(h);
    }
    content
}

/// An `m.text` message from Markdown; in a thread when `thread` is set,
/// else a reply to `reply_to` when set.
pub(crate) fn message(text: &str, thread: Option<&str>, reply_to: Option<&str>) -> Value {
    related(body_of(text, Format::Markdown), thread, reply_to)
}

/// A plain `m.text` message (no HTML at all) in `thread`.
pub(crate) fn plain_message(text: &str, thread: Option<&str>) -> Value {
    related(body_of(text, Format::Plain), thread, None)
}

/// `content` (a message of any type) placed in `thread`, when set.
pub(crate) fn in_thread(content: Value, thread: Option<&str>) -> Value {
    related(content, thread, None)
}

fn related(mut content: Value, thread: Option<&str>, reply_to: Option<&str>) -> Value {
    match (thread, reply_to) {
        (Some(root), reply) => {
            content["m.relates_to"] = json!({
                "rel_type": "m.thread",
                "event_id": root,
                "is_falling_back": reply.is_none(),
                "m.in_reply_to": { "event_id": reply.unwrap_or(root) },
            });
        }
        (None, Some(reply)) if reply.starts_with('$') => {
            content["m.relates_to"] = json!({ "m.in_reply_to": { "event_id": reply } });
        }
        _ => {}
    }
    content
}

/// An edit (`m.replace`) of the bot's message `event_id` to show `text`.
pub(crate) fn replacement(event_id: &str, text: &str, format: Format) -> Value {
    let new = body_of(text, format);
    let mut content = new.clone();
    content["body"] = json!(format!("* {text}"));
    if let Some(h) = new.get("formatted_body").and_then(Value::as_str) {
        content["formatted_body"] = json!(format!("* {h}"));
    }
    content["m.new_content"] = new;
    content["m.relates_to"] = json!({ "rel_type": "m.replace", "event_id": event_id });
    content
}

/// A reaction (`m.annotation`) with `key` on `event_id`.
pub(crate) fn reaction(event_id: &str, key: &str) -> Value {
    json!({ "m.relates_to": { "rel_type": "m.annotation", "event_id": event_id, "key": key } })
}

/// An approval prompt as text: the request, how to answer, and how it ended.
pub(crate) fn prompt_text(prompt: &ApprovalPrompt, state: Option<&PromptState>) -> String {
    let mut text = prompt.render_text();
    match state {
        None if prompt.kind == switchboard_core::PromptKind::Pairing => {
            text.push_str("\nOr react: ✅ allow · ❌ deny.");
        }
        None => text.push_str("\nOr react: ✅ allow once · ♾️ always (this run) · ❌ deny."),
        Some(s) => {
            text.push('\n');
            text.push_str(&s.describe());
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_gets_html_and_a_plain_body() {
        let c = message("**bold** and `code`", None, None);
        assert_eq!(c["body"], "**bold** and `code`");
        assert_eq!(c["format"], "org.matrix.custom.html");
        let h = c["formatted_body"].as_str().unwrap();
        assert!(
            h.contains("<strong>bold</strong>") && h.contains("<code>code</code>"),
            "{h}"
        );
        let plain = message("just words", None, None);
        assert!(plain.get("formatted_body").is_none());
    }

    #[test]
    fn threads_and_replies() {
        let t = message("hi", Some("$root"), None);
        assert_eq!(t["m.relates_to"]["rel_type"], "m.thread");
        assert_eq!(t["m.relates_to"]["event_id"], "$root");
        assert_eq!(t["m.relates_to"]["is_falling_back"], true);
        let r = message("hi", Some("$root"), Some("$q"));
        assert_eq!(r["m.relates_to"]["m.in_reply_to"]["event_id"], "$q");
        assert_eq!(r["m.relates_to"]["is_falling_back"], false);
        let dm = message("hi", None, Some("$q"));
        assert_eq!(dm["m.relates_to"]["m.in_reply_to"]["event_id"], "$q");
        assert!(dm["m.relates_to"].get("rel_type").is_none());
    }

    #[test]
    fn edits_carry_new_content() {
        let e = replacement("$p", "Denied by @a:x.", Format::Markdown);
        assert_eq!(e["m.relates_to"]["rel_type"], "m.replace");
        assert_eq!(e["m.new_content"]["body"], "Denied by @a:x.");
        assert_eq!(e["body"], "* Denied by @a:x.");
    }

    #[test]
    fn prompts_carry_no_markup_from_tool_arguments() {
        let prompt = ApprovalPrompt {
            id: "ab12".into(),
            agent: "main".into(),
            caller_chain: vec![],
            tool: "file_write".into(),
            summary: r#"{"path":"<img src=x onerror=alert(1)>","content":"**<b>hi</b>** [x](javascript:y)"}"#.into(),
            risk: switchboard_core::Risk::Medium,
            deadline_unix: 0,
            kind: Default::default(),
            approvals_required: 1,
        };
        let text = prompt_text(&prompt, None);
        let sent = plain_message(&text, None);
        assert!(
            sent.get("formatted_body").is_none() && sent.get("format").is_none(),
            "{sent}"
        );
        assert!(sent["body"].as_str().unwrap().contains("<img src=x"), "shown as text");
        let edit = replacement("$p", &prompt_text(&prompt, Some(&PromptState::Expired)), Format::Plain);
        assert!(edit.get("formatted_body").is_none() && edit["m.new_content"].get("formatted_body").is_none());
    }

    #[test]
    fn long_text_is_split_below_the_limits_and_keeps_everything() {
        let line = "é <tag> & more words here\n";
        let text = line.repeat(6000); // ~160 KB, HTML-escaping grows it
        let chunks = split(&text);
        assert!(chunks.len() > 4);
        for c in &chunks {
            assert!(fits(c), "chunk of {} bytes does not fit", c.len());
        }
        let joined: String = chunks.concat();
        assert_eq!(joined.matches("<tag>").count(), 6000);
    }
}
