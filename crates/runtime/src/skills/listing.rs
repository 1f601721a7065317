//! The list of skills a request carries, in the `skill` tool's description
//! (the same for every turn until a skill changes, so it stays in the
//! server's cached prefix). Its size is bounded: each description is cut to
//! an even share of `LIST_BUDGET`, so a hundred skills stay a short list.

use super::Skill;

/// Bytes the skill lines may take together.
pub(crate) const LIST_BUDGET: usize = 3000;

/// Fewer characters than this of a description are not worth showing.
const MIN_DESCRIPTION: usize = 12;

/// The list, when there are skills.
pub fn prompt_section(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let share = (LIST_BUDGET / skills.len()).max(24);
    let mut out = String::from(
        "Your skills (instructions for particular tasks). Before a task one of them covers, call this tool with its name and follow what it says:",
    );
    let mut used = 0;
    for (i, skill) in skills.iter().enumerate() {
        let room = share.saturating_sub(skill.name.len() + 4);
        let line = match room >= MIN_DESCRIPTION {
            true => format!("\n- {}: {}", skill.name, cut(&skill.description, room)),
            false => format!("\n- {}", skill.name),
        };
        if used + line.len() > LIST_BUDGET {
            out.push_str(&format!("\n(and {} more: /skills lists them all)", skills.len() - i));
            break;
        }
        used += line.len();
        out.push_str(&line);
    }
    Some(out)
}

/// `text` in at most `max` bytes, cut at a word with `…` when shortened.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let head = head.rsplit_once(' ').map_or(head, |(h, _)| h);
    format!("{}…", head.trim_end_matches([',', '.', ';', ':']))
}

/// A description as it may be shown to a model: one line of printable
/// text, without what a chat template reads as markup (`<|…|>` tokens,
/// `<tool_call>` tags): angle brackets become ‹ ›, controls and
/// direction marks are dropped.
pub(crate) fn plain(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}'))
        .map(|c| match c {
            '<' => '‹',
            '>' => '›',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}
