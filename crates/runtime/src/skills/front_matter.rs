//! The front matter of a `SKILL.md`: the `key: value` lines between two
//! `---` lines at the top of the file. Only what skills use is read: plain,
//! quoted and block (`>` folded, `|` literal) scalar values at the top
//! level; nested maps (`metadata:` and its indented lines) are passed over.

use std::collections::BTreeMap;

/// The top-level values, and the body after the closing `---`.
pub(super) fn parse(text: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(
            "it must start with front matter: a `---` line, `name:` and `description:`, and another `---` line".into(),
        );
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut head: Vec<&str> = Vec::new();
    let mut closed = false;
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        head.push(line.trim_end_matches(['\n', '\r']));
    }
    if !closed {
        return Err("its front matter is never closed: add a `---` line after `description:`".into());
    }
    Ok((values(&head)?, &text[offset.min(text.len())..]))
}

fn values(head: &[&str]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < head.len() {
        let line = head[i];
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') || line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("front matter line {i} is not `key: value`: {line:?}"));
        };
        let value = value.trim();
        let block: Vec<&str> = head[i..]
            .iter()
            .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
            .copied()
            .collect();
        let text = match value.chars().next() {
            Some('>' | '|') => {
                i += block.len();
                let lines = block.iter().map(|l| l.trim());
                let joined: Vec<&str> = lines.collect();
                let sep = if value.starts_with('>') { " " } else { "\n" };
                joined.join(sep).trim().to_string()
            }
            Some('"') => unquote(value, '"').ok_or_else(|| format!("front matter line {i}: an unclosed \" quote"))?,
            Some('\'') => unquote(value, '\'').ok_or_else(|| format!("front matter line {i}: an unclosed ' quote"))?,
            _ => value.split(" #").next().unwrap_or("").trim().to_string(),
        };
        out.insert(key.trim().to_string(), text);
    }
    Ok(out)
}

/// A quoted scalar: `"…"` with `\"` and `\\` escapes, `'…'` with `''`.
fn unquote(value: &str, quote: char) -> Option<String> {
    let inner = value.strip_prefix(quote)?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', '"') => out.push(chars.next()?),
            ('\'', '\'') if chars.peek() == Some(&'\'') => {
                chars.next();
                out.push('\'');
            }
            (c, q) if c == q => return Some(out),
            (c, _) => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn plain_quoted_and_block_values_are_read_and_maps_passed_over() {
        let text = "---\nname: pdf-tools\ndescription: >\n  Extract text\n  from PDFs.\nlicense: 'MIT'\nmetadata:\n  author: x\nversion: \"1.0 \\\"b\\\"\" # note\n---\n# Body\nSteps.\n";
        let (v, body) = parse(text).unwrap();
        assert_eq!(v["name"], "pdf-tools");
        assert_eq!(v["description"], "Extract text from PDFs.");
        assert_eq!(v["license"], "MIT");
        assert_eq!(v["version"], "1.0 \"b\"");
        assert_eq!(v["metadata"], "", "a nested map is passed over");
        assert_eq!(body, "# Body\nSteps.\n");
    }

    #[test]
    fn a_file_without_front_matter_or_never_closed_says_what_to_add() {
        assert!(
            parse("# Just a body\n")
                .unwrap_err()
                .contains("must start with front matter")
        );
        assert!(parse("---\nname: a\n").unwrap_err().contains("never closed"));
        assert!(parse("---\nname a\n---\n").unwrap_err().contains("not `key: value`"));
    }
}
