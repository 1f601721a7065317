//! Streaming while calls written as text are read (see `text_calls`): text
//! that may be the start of such a call is held back until the answer is
//! complete, so no half-written call is drafted into the chat. What turns
//! out not to be a call is handed on at the end; a call is never shown.

use super::stream::{Delta, Deltas};
use super::text_calls::{CALL_FENCES, RESULT_TAG, TAGS};
use parking_lot::Mutex;

/// A sink in front of the caller's that holds back possible calls.
pub(super) struct Holdback<'a> {
    sink: Deltas<'a>,
    held: Mutex<Held>,
}

/// The answer's text so far and how much of it was handed on.
#[derive(Default)]
struct Held {
    text: String,
    sent: usize,
}

impl<'a> Holdback<'a> {
    pub(super) fn new(sink: Deltas<'a>) -> Self {
        Self {
            sink,
            held: Mutex::new(Held::default()),
        }
    }

    /// Take one delta of the stream.
    pub(super) fn on(&self, delta: Delta<'_>) {
        let out = {
            let mut h = self.held.lock();
            match delta {
                Delta::Reset => {
                    *h = Held::default();
                    None
                }
                Delta::Text(t) => {
                    h.text.push_str(t);
                    let end = safe_end(&h.text, h.sent);
                    let out = (end > h.sent).then(|| h.text[h.sent..end].to_string());
                    h.sent = end;
                    out
                }
            }
        };
        match (delta, out) {
            (Delta::Reset, _) => (self.sink.0)(Delta::Reset),
            (_, Some(text)) => (self.sink.0)(Delta::Text(&text)),
            _ => {}
        }
    }

    /// The answer is complete: hand on what was held unless it was a call
    /// (taken, or one the answer must lose: `text_calls::before_a_call`).
    pub(super) fn finish(&self, lifted: bool) {
        let rest = {
            let mut h = self.held.lock();
            let rest = h.text[h.sent..].to_string();
            h.sent = h.text.len();
            rest
        };
        if !lifted && !rest.is_empty() {
            (self.sink.0)(Delta::Text(&rest));
        }
    }
}

/// How far `text` may be handed on, from `from`: up to the first place a
/// call may start.
fn safe_end(text: &str, from: usize) -> usize {
    for (i, c) in text[from..].char_indices() {
        let at = from + i;
        if matches!(c, '<' | '[' | '`' | '{') && may_start(&text[..at], &text[at..]) {
            return at;
        }
    }
    text.len()
}

/// Whether `before` ends inside a code block (an odd number of fence lines),
/// so that a fence next closes it.
fn in_code(before: &str) -> bool {
    before.lines().filter(|l| l.trim_start().starts_with("```")).count() % 2 == 1
}

/// Whether only blanks stand between the end of `before` and the start of
/// its line.
fn line_start(before: &str) -> bool {
    let line = before.rfind('\n').map_or(0, |i| i + 1);
    before[line..].chars().all(|c| c == ' ' || c == '\t')
}

/// Whether a call may start at the beginning of `rest`, after `before`
/// (or whether that is not known yet).
fn may_start(before: &str, rest: &str) -> bool {
    if TAGS
        .iter()
        .chain([&RESULT_TAG])
        .any(|t| rest.starts_with(t) || t.starts_with(rest))
    {
        return true;
    }
    // Inside another language's code block nothing starts a call but a
    // tag (its closing fence included). The fences before are counted
    // only at the start of a line.
    if !line_start(before) || in_code(before) {
        return false;
    }
    if let Some(after) = rest.strip_prefix("```") {
        return match after.split_once('\n') {
            None => true,
            Some((info, _)) => CALL_FENCES.contains(&info.trim().to_ascii_lowercase().as_str()),
        };
    }
    if "```".starts_with(rest) || rest.starts_with('{') {
        return true;
    }
    let after = rest[1..].trim_start();
    rest.starts_with('[') && (after.is_empty() || after.starts_with('{'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the person is shown of `chunks`, streamed, then at the end.
    fn shown(chunks: &[&str], lifted: bool) -> (String, String) {
        let seen = Mutex::new(String::new());
        let sink = |d: Delta<'_>| {
            if let Delta::Text(t) = d {
                seen.lock().push_str(t);
            }
        };
        let hold = Holdback::new(Deltas(&sink));
        for c in chunks {
            hold.on(Delta::Text(c));
        }
        let streamed = seen.lock().clone();
        hold.finish(lifted);
        let all = seen.lock().clone();
        (streamed, all)
    }

    #[test]
    fn a_call_is_never_drafted_and_other_text_flows() {
        let (streamed, all) = shown(
            &["Let me look.\n<to", "ol_call>\n{\"name\": \"sh", "ell\"}</tool_call>"],
            true,
        );
        assert_eq!(streamed, "Let me look.\n");
        assert_eq!(all, streamed, "a lifted call is never shown");
        let (streamed, _) = shown(&["Sure:\n``", "`json\n{\"name\":", " \"shell\"}\n```"], true);
        assert_eq!(streamed, "Sure:\n");
        let (streamed, _) = shown(&["{\"name\": \"shell\", ", "\"arguments\": {}}"], true);
        assert_eq!(streamed, "");
        // Code in another language and links flow on; held text that was
        // no call is shown at the end.
        let (streamed, _) = shown(&["Here:\n```py", "thon\nprint(1)\n```\n[docs](x) and a < b"], false);
        assert_eq!(streamed, "Here:\n```python\nprint(1)\n```\n[docs](x) and a < b");
        let (streamed, all) = shown(&["Data:\n", "{\"a\": 1}"], false);
        assert_eq!((streamed.as_str(), all.as_str()), ("Data:\n", "Data:\n{\"a\": 1}"));
        // A result block imitated from the template is held back too.
        let (streamed, _) = shown(&["Done.\n<tool_res", "ponse>\n{}\n</tool_response>"], true);
        assert_eq!(streamed, "Done.\n");
    }
}
