//! Markdown as Telegram HTML: escaped text, fenced code as `<pre>`, inline
//! code, bold. Chunks that grow past the limit once escaped are split again.

/// Escape the three characters Telegram's HTML parse mode reserves.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A code block's language for its `class`: the info string's first word
/// when it looks like a language name (letters, digits, `+#._-`, at most
/// 32), else none. Anything else could break out of the attribute, and
/// Telegram refuses a message whose HTML it cannot parse.
fn language(info: &str) -> Option<&str> {
    let word = info.split_whitespace().next()?;
    let ok = word.len() <= 32 && word.chars().all(|c| c.is_ascii_alphanumeric() || "+#._-".contains(c));
    ok.then_some(word)
}

/// Render one Markdown chunk.
pub(crate) fn render(markdown: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_end_matches('\n');
        if let Some(lang) = trimmed.trim_start().strip_prefix("```") {
            if in_code {
                out.push_str("</code></pre>");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                match language(lang) {
                    Some(l) => out.push_str(&format!("<pre><code class=\"language-{l}\">")),
                    None => out.push_str("<pre><code>"),
                }
            }
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str(&escape(line));
        } else {
            out.push_str(&inline(line));
        }
    }
    if in_code {
        out.push_str("</code></pre>");
    }
    out
}

/// Inline code and bold on one line.
fn inline(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{}</code>", escape(part)));
        } else {
            for (j, seg) in part.split("**").enumerate() {
                if j % 2 == 1 {
                    out.push_str(&format!("<b>{}</b>", escape(seg)));
                } else {
                    out.push_str(&escape(seg));
                }
            }
        }
    }
    out
}

/// Render `markdown`, splitting it further while its HTML exceeds `limit`.
pub(crate) fn render_within(markdown: &str, limit: usize) -> Vec<String> {
    let html = render(markdown);
    if html.chars().count() <= limit || markdown.chars().count() < 64 {
        return vec![html];
    }
    switchboard_core::split_message(markdown, markdown.chars().count() / 2)
        .iter()
        .flat_map(|c| render_within(c, limit))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_escaped_html() {
        assert_eq!(
            render("a < b & **bold** `x<y>`"),
            "a &lt; b &amp; <b>bold</b> <code>x&lt;y&gt;</code>"
        );
        assert_eq!(
            render("```rust\nfn f() {}\n```\n"),
            "<pre><code class=\"language-rust\">fn f() {}\n</code></pre>\n"
        );
    }

    #[test]
    fn code_block_languages_cannot_become_markup() {
        assert_eq!(
            render("```rust\" onclick=\"x\nfn f() {}\n```\n"),
            "<pre><code>fn f() {}\n</code></pre>\n"
        );
        assert_eq!(render("```<b>\nx\n```"), "<pre><code>x\n</code></pre>");
        assert_eq!(
            render("```c++ extra words\nx\n```"),
            "<pre><code class=\"language-c++\">x\n</code></pre>"
        );
    }

    #[test]
    fn growth_from_escaping_is_split_again() {
        let text = "<&>".repeat(2000);
        let parts = render_within(&text, 4096);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.chars().count() <= 4096));
        assert_eq!(parts.concat().matches("&lt;").count(), 2000);
    }
}
