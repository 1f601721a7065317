//! OpenClaw's `openclaw.json` is JSON5: comments, trailing commas, keys
//! without quotes, strings in single quotes. This turns such text into
//! JSON (what JSON5 adds beyond that — hexadecimal numbers, `Infinity`,
//! strings over several lines — is refused with the line it is on).

/// `text` as JSON, or what stopped the reading and where.
pub(super) fn to_json(text: &str) -> Result<serde_json::Value, String> {
    let plain = strip(text)?;
    serde_json::from_str(&plain).map_err(|e| format!("not JSON5 that this reader knows: {e}"))
}

fn strip(text: &str) -> Result<String, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let line = |i: usize| chars[..i].iter().filter(|c| **c == '\n').count() + 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let start = i;
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                if i + 1 >= chars.len() {
                    return Err(format!("line {}: a comment is never closed", line(start)));
                }
                i += 2;
            }
            '"' | '\'' => {
                let (s, next) =
                    string(&chars, i).ok_or_else(|| format!("line {}: a string is never closed", line(i)))?;
                out.push_str(&serde_json::Value::String(s).to_string());
                i = next;
            }
            ',' => {
                // A comma before a closing bracket is dropped.
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if !matches!(chars.get(j), Some('}' | ']')) {
                    out.push(',');
                }
                i += 1;
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                match (word.as_str(), chars.get(j)) {
                    (_, Some(':')) => out.push_str(&serde_json::Value::String(word).to_string()),
                    ("true" | "false" | "null", _) => out.push_str(&word),
                    _ => {
                        return Err(format!(
                            "line {}: '{word}' is not a value this reader knows",
                            line(start)
                        ));
                    }
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// The string opening at `chars[at]` and the index after it.
fn string(chars: &[char], at: usize) -> Option<(String, usize)> {
    let quote = chars[at];
    let mut s = String::new();
    let mut i = at + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let next = *chars.get(i + 1)?;
                match next {
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'u' => {
                        let hex: String = chars.get(i + 2..i + 6)?.iter().collect();
                        s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                        i += 4;
                    }
                    '\n' => {}
                    other => s.push(other),
                }
                i += 2;
            }
            c if c == quote => return Some((s, i + 1)),
            '\n' => return None,
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::to_json;
    use serde_json::json;

    #[test]
    fn comments_trailing_commas_bare_keys_and_single_quotes_are_read() {
        let text = "// OpenClaw\n{\n  agents: { defaults: { model: 'anthropic/x', }, },\n  /* off */ list: [1, 2,],\n  \"q\": \"a // not a comment\",\n  $include: null,\n}\n";
        let v = to_json(text).unwrap();
        assert_eq!(
            v,
            json!({"agents": {"defaults": {"model": "anthropic/x"}}, "list": [1, 2], "q": "a // not a comment", "$include": null})
        );
        assert!(to_json("{ a: Infinity }").unwrap_err().contains("line 1: 'Infinity'"));
        assert!(to_json("{ a: 'open\n}").unwrap_err().contains("never closed"));
    }
}
