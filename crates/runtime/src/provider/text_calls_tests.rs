//! Every shape of a call written as text, and what stays text.

use super::*;
use serde_json::json;

fn tools() -> Vec<Arc<ToolSpec>> {
    vec![
        Arc::new(ToolSpec::new(
            "file_write",
            "Write a file",
            &json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
        )),
        Arc::new(ToolSpec::new(
            "shell",
            "Run a command",
            &json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"], "additionalProperties": false}),
        )),
    ]
}

/// The calls lifted from `text` as (name, arguments), and the text kept.
fn lifted(text: &str) -> Option<(Vec<(String, Value)>, String)> {
    let l = lift(text, &tools())?;
    for c in &l.calls {
        assert!(c.id.starts_with("call_") && c.id.len() == 29, "{}", c.id);
    }
    let calls = l
        .calls
        .into_iter()
        .map(|c| (c.name, serde_json::from_str(&c.arguments).unwrap()))
        .collect();
    Some((calls, l.text))
}

fn ls() -> Vec<(String, Value)> {
    vec![("shell".to_string(), json!({"command": "ls"}))]
}

#[test]
fn every_known_shape_becomes_a_call() {
    let shapes = [
        r#"<tool_call>
{"name": "shell", "arguments": {"command": "ls"}}
</tool_call>"#,
        r#"<tool_call>{"name": "shell", "arguments": {"command": "ls"}}"#,
        r#"[TOOL_CALLS] [{"name": "shell", "arguments": {"command": "ls"}}]"#,
        r#"[TOOL_CALLS]shell[ARGS]{"command": "ls"}"#,
        r#"<|python_tag|>{"name": "shell", "parameters": {"command": "ls"}}<|eom_id|>"#,
        "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
        "```\n{\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}\n```",
        "```tool_call\n{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}\n```",
        r#"{"name": "shell", "arguments": {"command": "ls"}}"#,
        // The closing fence never written.
        "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
        r#"  [{"name": "shell", "arguments": {"command": "ls"}}]  "#,
        // Braces doubled as a template escapes them (seen from Qwen2.5).
        r#"{{"name": "shell", "arguments": {"command": "ls"}}}"#,
        // A closing fence never opened (seen from Qwen2.5 in the suite).
        "{{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}\n```",
    ];
    for shape in shapes {
        assert_eq!(lifted(shape), Some((ls(), String::new())), "{shape}");
    }
}

#[test]
fn the_text_before_a_call_is_kept_and_several_calls_are_read_in_order() {
    let text =
        "I'll list the files first.\n\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```";
    assert_eq!(lifted(text), Some((ls(), "I'll list the files first.".to_string())));
    let two = "Sure.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"file_write\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"hi\"}}\n</tool_call>";
    let (calls, text) = lifted(two).unwrap();
    assert_eq!(text, "Sure.");
    assert_eq!(
        calls[1],
        ("file_write".to_string(), json!({"path": "a.txt", "content": "hi"}))
    );
    let lines = "{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n{\"name\": \"shell\", \"arguments\": {\"command\": \"date\"}}";
    assert_eq!(lifted(lines).unwrap().0.len(), 2);
    let blocks = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"pwd\"}}\n```";
    assert_eq!(lifted(blocks).unwrap().0.len(), 2);
}

#[test]
fn a_call_after_words_on_its_line_is_taken_with_its_arguments_only() {
    // Seen from Qwen2.5-Coder-1.5B in the suite: the call behind `Error: `.
    let after_words = "Error: {\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}";
    assert_eq!(lifted(after_words), Some((ls(), "Error:".to_string())));
    assert_eq!(before_a_call(after_words, &[]), Some("Error: "));
    // An object quoted at the end of a sentence, without arguments, stays.
    for text in [
        "The record is: {\"name\": \"Ann\", \"age\": 3}",
        "Try: {\"name\": \"shell\"}",
    ] {
        assert_eq!(lifted(text), None, "{text}");
        assert_eq!(before_a_call(text, &[]), None, "{text}");
    }
}

#[test]
fn anything_else_stays_text() {
    let not_calls = [
        // Ordinary answers, code and JSON data.
        "The files are a.txt and b.txt.",
        "```python\nprint('hi')\n```",
        "```json\n{\"name\": \"Ann\", \"age\": 3}\n```",
        r#"{"name": "Ann", "age": 3}"#,
        // Only a name: taken only when it is an offered tool it fits.
        r#"{"name": "Ann"}"#,
        r#"{"name": "shell"}"#,
        // A call in the middle of an answer is talked about, not made.
        "Call it like this: {\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}} and see.",
        // Half a call (cut off).
        "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"comm",
        // One good call beside a bad one: all or nothing.
        "```json\n[{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}, {\"name\": \"nope\"}]\n```",
    ];
    for text in not_calls {
        assert_eq!(lifted(text), None, "{text}");
    }
}

#[test]
fn a_call_written_out_is_taken_even_when_the_loop_will_refuse_it() {
    // Seen from Qwen2.5-Coder-1.5B: a tool it was not offered. The loop
    // answers "unknown tool" and the model tries again; the person never
    // sees the JSON.
    for text in [
        "```json\n{\n  \"name\": \"file_list\",\n  \"arguments\": {\n    \"path\": \"\"\n  }\n}\n```",
        r#"{"name": "shell", "arguments": {"cmd": "ls"}}"#,
        r#"<tool_call>{"name": "shell", "arguments": {}}</tool_call>"#,
    ] {
        assert_eq!(lifted(text).map(|l| l.0.len()), Some(1), "{text}");
    }
    // Seen from the same model: arguments written as `null`, or not as an
    // object. Taken; the loop answers what is missing.
    let null = "```json\n{\n  \"name\": \"shell\",\n  \"arguments\": null\n}\n```";
    assert_eq!(
        lifted(null),
        Some((vec![("shell".to_string(), json!({}))], String::new()))
    );
    let text = r#"{"name": "shell", "arguments": "ls -l"}"#;
    assert_eq!(
        lifted(text).map(|l| l.0),
        Some(vec![("shell".to_string(), json!("ls -l"))])
    );
    let tools = [Arc::new(ToolSpec::new("file_read", "Read", &json!({"type": "object"})))];
    assert_eq!(lift(r#"{"name": "file_read"}"#, &tools).map(|l| l.calls.len()), Some(1));
}

#[test]
fn a_call_in_words_is_recognised_by_name_whatever_its_arguments() {
    let names = ["shell", "file_write"];
    assert!(names_a_call(
        "```json\n{\"name\": \"shell\", \"arguments\": {\"oops\": 1}}\n```",
        &names
    ));
    assert!(!names_a_call("I ran shell three times.", &names));
    assert!(!names_a_call(r#"{"name": "Ann"}"#, &names));
}

#[test]
fn a_call_echoed_with_its_output_is_not_taken_but_is_recognised() {
    let echo = r#"Here it is: {"name": "file_write", "arguments": {"path": "a"}, "output": "wrote 1 byte"}"#;
    let line = echo.replace("Here it is: ", "Here it is:\n");
    assert_eq!(lifted(&line), None);
    assert_eq!(before_a_call(&line, &["file_write"]), Some("Here it is:\n"));
    assert_eq!(
        before_a_call(&line, &["shell"]),
        Some("Here it is:\n"),
        "arguments written out"
    );
    assert_eq!(before_a_call(r#"{"name": "Ann", "age": 3}"#, &["shell"]), None);
    assert_eq!(before_a_call("All done.", &["file_write"]), None);
    let markup = "Sure.\n<tool_response>\n{\"name\": \"file_write\"}\n</tool_response>";
    assert_eq!(before_a_call(markup, &[]), Some("Sure.\n"));
    let made_up = "<tools>\n{\"name\": \"file_write\", \"arguments\": {\"path\": \"a\"}}\n</tools>";
    assert_eq!(before_a_call(made_up, &[]), Some(""));
    assert_eq!(before_a_call("<b>bold</b>", &["file_write"]), None);
    // A call that is not JSON that reads is still never sent.
    let broken = "I will run it.\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\",}}\n```";
    assert_eq!(before_a_call(broken, &[]), Some("I will run it.\n"));
    let bare = "Running:\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}";
    assert_eq!(before_a_call(bare, &[]), Some("Running:\n"));
    assert_eq!(before_a_call("```json\n{\"name\": \"Ann\", \"age\": 3\n```", &[]), None);
    // JSON the person asked for is kept, even when it holds such keys.
    let asked = "Here it is:\n```json\n{\"tools\": [{\"name\": \"search\", \"parameters\": {}}]}\n```";
    assert_eq!(before_a_call(asked, &[]), None);
    let nested = "Config:\n{\"servers\": {\"name\": \"docs\", \"arguments\": [\"--port\", \"80\"]}}";
    assert_eq!(before_a_call(nested, &[]), None);
}

#[test]
fn braces_left_over_after_a_doubled_call_are_read() {
    let text = "{{\"name\": \"file_read\", \"arguments\": {\"path\": \"notes.txt\"}}}}\n{{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}}";
    let (calls, before) = lifted(text).expect("both calls");
    assert_eq!(
        calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["file_read", "shell"]
    );
    assert_eq!(before, "");
    assert_eq!(lifted(r#"{"name": "shell", "arguments": {}} and more"#), None);
}

#[test]
fn template_markup_copied_into_words_is_taken_out() {
    let text = "Use it like this:\n```\n<tool_response>\n[\"notes.txt\"]\n</tool_response>\n```\nThat is all.";
    assert_eq!(without_markup(text).as_deref(), Some("Use it like this:\nThat is all."));
    let call = "I will <tool_call>{\"name\": \"shell\"}</tool_call> now.";
    assert_eq!(without_markup(call).as_deref(), Some("I will  now."));
    assert_eq!(without_markup("Plain words, a <b>tag</b>."), None);
}
