//! Splitting long replies at a platform limit without breaking code blocks.

/// Split `text` into chunks of at most `limit` characters. Splits prefer
/// paragraph, then line, then word boundaries. A chunk that ends inside a
/// fenced code block closes the fence and the next chunk reopens it with the
/// same info string, so every chunk renders on its own.
pub fn split_message(text: &str, limit: usize) -> Vec<String> {
    assert!(limit >= 16, "limit too small to split sensibly");
    if text.chars().count() <= limit {
        return vec![text.to_string()];
    }
    let mut chunks = Vec::new();
    let mut rest: &str = text;
    let mut reopen: Option<String> = None;
    while !rest.is_empty() {
        let prefix = reopen
            .as_ref()
            .map(|f| format!("{}\n", reopening(f)))
            .unwrap_or_default();
        // Room for the reopened fence and a closing "\n```".
        let budget = limit.saturating_sub(prefix.chars().count() + 4).max(8);
        let (head, tail) = if rest.chars().count() + prefix.chars().count() <= limit {
            (rest, "")
        } else {
            cut(rest, budget)
        };
        let mut chunk = format!("{prefix}{head}");
        let open = open_fence(&chunk);
        if let Some(fence) = &open {
            if !tail.is_empty() {
                if !chunk.ends_with('\n') {
                    chunk.push('\n');
                }
                chunk.push_str("```");
            }
            reopen = Some(fence.clone());
        } else {
            reopen = None;
        }
        let trimmed = chunk.trim_end_matches('\n').to_string();
        if !trimmed.is_empty() {
            chunks.push(trimmed);
        }
        rest = tail.trim_start_matches('\n');
    }
    chunks
}

/// Cut at most `budget` characters from the front of `s` at a nice boundary.
fn cut(s: &str, budget: usize) -> (&str, &str) {
    let byte_limit = s.char_indices().nth(budget).map(|(i, _)| i).unwrap_or(s.len());
    let window = &s[..byte_limit];
    let at = window
        .rfind("\n\n")
        .filter(|&i| i > budget / 3)
        .or_else(|| window.rfind('\n').filter(|&i| i > budget / 3))
        .or_else(|| window.rfind(' ').filter(|&i| i > budget / 3))
        .unwrap_or(byte_limit);
    let at = if at == 0 { byte_limit } else { at };
    (&s[..at], &s[at..])
}

/// The longest info string carried over when a fence is reopened; a
/// longer one (a whole line of text after the backticks) would leave no
/// room in the next chunk.
const MAX_INFO: usize = 32;

/// The fence line that reopens `fence` in the next chunk: its backticks and
/// the first word of its info string (the language), kept short.
fn reopening(fence: &str) -> String {
    let ticks = fence.chars().take_while(|c| *c == '`').count().min(8);
    let lang: String = fence[ticks.min(fence.len())..]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take(MAX_INFO)
        .collect();
    format!("{}{lang}", "`".repeat(ticks.max(3)))
}

/// If `text` ends inside a fenced code block, the opening fence line.
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            open = match open {
                Some(_) => None,
                None => Some(t.to_string()),
            };
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_chunk() {
        assert_eq!(split_message("hello", 100), vec!["hello"]);
    }

    #[test]
    fn chunks_respect_limit_and_keep_all_words() {
        let text = (0..500).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ");
        let chunks = split_message(&text, 100);
        assert!(chunks.len() > 1);
        for c in &chunks {
            assert!(c.chars().count() <= 100, "{} chars", c.chars().count());
        }
        let joined = chunks.join(" ");
        let words: Vec<_> = joined.split_whitespace().collect();
        assert_eq!(words.len(), 500);
        assert_eq!(words[499], "word499");
    }

    #[test]
    fn code_blocks_are_closed_and_reopened() {
        let body = (0..60)
            .map(|i| format!("let x{i} = {i};"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = format!("Intro\n```rust\n{body}\n```\nOutro");
        let chunks = split_message(&text, 200);
        assert!(chunks.len() > 2);
        for c in &chunks {
            assert!(c.chars().count() <= 200);
            let fences = c.lines().filter(|l| l.trim_start().starts_with("```")).count();
            assert_eq!(fences % 2, 0, "unbalanced fences in chunk:\n{c}");
        }
        assert!(chunks[1].starts_with("```rust\n"));
        assert!(chunks.last().unwrap().ends_with("Outro"));
    }

    fn bounded(text: &str, limit: usize) {
        let chunks = split_message(text, limit);
        let length = text.chars().count();
        assert!(
            chunks.len() <= length / limit + 2,
            "{} chunks for {length} chars at {limit}",
            chunks.len()
        );
        for c in &chunks {
            assert!(c.chars().count() <= limit, "a chunk of {} chars", c.chars().count());
        }
    }

    #[test]
    fn splitting_never_degenerates() {
        let long_info = format!(
            "```{}
{}
```
after",
            "i".repeat(4000),
            "code line\n".repeat(900)
        );
        bounded(&long_info, 4096);
        bounded(&"w".repeat(10_000), 4096);
        bounded(
            &format!(
                "```rust
{}
```",
                "x".repeat(10_000)
            ),
            4096,
        );
        bounded(&format!("```{}", "y".repeat(10_000)), 4096);
        // The language survives a reopen; a long info line does not.
        let chunks = split_message(
            &format!(
                "```rust {}
{}
```",
                "z".repeat(100),
                "line\n".repeat(100)
            ),
            200,
        );
        assert!(chunks[1].starts_with("```rust\n"), "{}", chunks[1]);
    }

    #[test]
    fn multibyte_text_is_not_cut_inside_a_char() {
        let text = "é".repeat(1000);
        let chunks = split_message(&text, 64);
        assert_eq!(chunks.concat().chars().count(), 1000);
    }
}
