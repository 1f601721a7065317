//! Text from models, tools and chats shown in the operator's terminal
//! (`switchboard chat`): control characters are made visible instead of
//! reaching the terminal, so a model or a file cannot send escape
//! sequences (retitle the window, forge a hyperlink, rewrite what is on
//! screen, or worse on some terminals).

use std::borrow::Cow;

/// `text` with every control character but newline and tab — C0, DEL and
/// C1, ESC included — shown as `\u{..}`.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if bad(c) {
                    format!("\\u{{{:x}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        assert_eq!(clean("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(clean("\u{1b}]0;pwned\u{7}title"), "\\u{1b}]0;pwned\\u{7}title");
        assert_eq!(clean("a\u{9b}31mb\rc\u{7f}"), "a\\u{9b}31mb\\u{d}c\\u{7f}");
    }
}
