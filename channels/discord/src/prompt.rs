//! Approval prompts as Discord shows them. Discord renders a message's
//! content as Markdown, and the tool's arguments are whatever the model
//! wrote: bold text, masked links, headings or a fake "risk: low" line in
//! them must not change what an approver sees. So the arguments go into a
//! code block they cannot close, and the rest of the prompt names only what
//! the configuration and the runtime wrote.

use crate::MAX_MESSAGE;
use switchboard_core::{ApprovalChoice, ApprovalPrompt, PromptKind, PromptState};

/// What stands in for a backtick inside the code block (U+02CB, a modifier
/// letter that looks like one): the block's fence cannot be closed early.
const BACKTICK_STANDIN: char = '\u{2cb}';

/// The prompt's text, with how it ended when it did.
pub(crate) fn render(prompt: &ApprovalPrompt, state: Option<&PromptState>) -> String {
    if prompt.kind == PromptKind::Pairing {
        // Who asks (a display name is the stranger's own text): in a code
        // block, like tool arguments.
        let tail = state.map_or_else(
            || format!("Press a button, or reply /pair {} or /deny {}.", prompt.tool, prompt.id),
            PromptState::describe,
        );
        return format!(
            "**Pairing request** [{}]\n```\n{}\n```\ncode: {}\n{tail}",
            literal(&prompt.id),
            prompt.summary.replace('`', &BACKTICK_STANDIN.to_string()),
            literal(&prompt.tool),
        );
    }
    let chain = if prompt.caller_chain.is_empty() {
        String::new()
    } else {
        format!(" (via {})", prompt.caller_chain.join(" → "))
    };
    let args = prompt.summary.replace('`', &BACKTICK_STANDIN.to_string());
    let head = format!(
        "**Approval needed** [{id}]\nagent: {agent}{chain}\ntool: {tool} (risk: {risk}){two}\nargs:\n",
        two = if prompt.approvals_required > 1 {
            format!("\nneeds {} different approvers", prompt.approvals_required)
        } else {
            String::new()
        },
        id = literal(&prompt.id),
        agent = literal(&prompt.agent),
        tool = literal(&prompt.tool),
        risk = literal(prompt.risk.as_str()),
    );
    let tail = match state {
        None => format!(
            "Press a button, or reply /approve {id} [always] or /deny {id} [reason].",
            id = prompt.id
        ),
        Some(s) => s.describe(),
    };
    // The fences and the tail always fit: the arguments give way, and say so.
    let room = MAX_MESSAGE.saturating_sub(head.chars().count() + tail.chars().count() + 12);
    let args = if args.chars().count() > room {
        let kept: String = args.chars().take(room.saturating_sub(40)).collect();
        format!("{kept}… [cut to fit one Discord message]")
    } else {
        args
    };
    format!("{head}```\n{args}\n```\n{tail}")
}

/// A name in inline code, so Markdown in it is shown as written.
fn literal(s: &str) -> String {
    format!("`{}`", s.replace('`', &BACKTICK_STANDIN.to_string()))
}

/// The buttons: label, style and the id a press carries.
pub(crate) fn buttons(prompt: &ApprovalPrompt) -> serde_json::Value {
    // Discord's button styles: success (green), primary (blue), danger (red).
    let style = |c: ApprovalChoice| match c {
        ApprovalChoice::AllowOnce => 3,
        ApprovalChoice::Always => 1,
        ApprovalChoice::Deny => 4,
    };
    let buttons: Vec<serde_json::Value> = prompt
        .choices()
        .iter()
        .map(|&c| serde_json::json!({"type": 2, "style": style(c), "label": prompt.label(c), "custom_id": c.button_data(&prompt.id)}))
        .collect();
    serde_json::json!([{"type": 1, "components": buttons}])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(summary: &str) -> ApprovalPrompt {
        ApprovalPrompt {
            id: "a1b2".into(),
            agent: "main".into(),
            caller_chain: Vec::new(),
            tool: "shell".into(),
            summary: summary.into(),
            risk: switchboard_core::Risk::High,
            deadline_unix: 0,
            kind: Default::default(),
            approvals_required: 1,
        }
    }

    #[test]
    fn pairing_requests_and_two_person_prompts_say_what_they_are() {
        let pairing = ApprovalPrompt {
            id: "pair-1".into(),
            tool: "ABCD2345".into(),
            kind: PromptKind::Pairing,
            ..prompt("tg:5 (**Eve**`) asks to talk to the bot on discord.main.")
        };
        let text = render(&pairing, None);
        assert!(text.starts_with("**Pairing request**"), "{text}");
        assert!(
            text.contains("```\ntg:5 (**Eve**\u{2cb})") && text.contains("/pair ABCD2345"),
            "{text}"
        );
        let labels: Vec<String> = buttons(&pairing)[0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["label"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(labels, ["Allow", "Deny"]);
        let two = ApprovalPrompt {
            approvals_required: 2,
            ..prompt("x")
        };
        assert!(render(&two, None).contains("needs 2 different approvers"));
    }

    #[test]
    fn arguments_cannot_leave_their_code_block() {
        let hostile = "{\"command\":\"ls\"}\n```\n**risk: low** [docs](https://evil.example)\n# Approved";
        let text = render(&prompt(hostile), None);
        assert_eq!(text.matches("```").count(), 2, "{text}");
        let block = text.split("```").nth(1).unwrap();
        assert!(block.contains("**risk: low** [docs](https://evil.example)"), "{text}");
        assert!(text.contains("tool: `shell` (risk: `high`)"), "{text}");
        assert!(text.ends_with("/deny a1b2 [reason]."), "{text}");
    }

    #[test]
    fn a_long_summary_is_cut_to_fit_and_says_so() {
        let text = render(&prompt(&"x".repeat(5000)), Some(&PromptState::Expired));
        assert!(text.chars().count() <= MAX_MESSAGE, "{}", text.chars().count());
        assert!(text.contains("[cut to fit one Discord message]"));
        assert!(text.ends_with("```\nExpired: no decision was made in time."), "{text}");
    }
}
