//! Markdown as Telegram HTML: escaped text, fenced code as `<pre>`, inline
//! code, bold. Chunks that grow past the limit once escaped are split again.

/// Escape the three characters Telegram's HTML parse mode reserves.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Render one Markdown chunk.
pub fn render(markdown: &str) -> String {
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
            } else if lang.trim().is_empty() {
                out.push_str("<pre><code>");
            } else {
                out.push_str(&format!("<pre><code class=\"language-{}\">", escape(lang.trim())));
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
pub fn render_within(markdown: &str, limit: usize) -> Vec<String> {
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
    fn growth_from_escaping_is_split_again() {
        let text = "<&>".repeat(2000);
        let parts = render_within(&text, 4096);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.chars().count() <= 4096));
        assert_eq!(parts.concat().matches("&lt;").count(), 2000);
    }
}
