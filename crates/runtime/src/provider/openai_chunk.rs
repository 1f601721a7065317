//! One OpenAI-compatible `chat.completion.chunk`, the parts a streamed
//! answer is folded from.
//!
//! A chunk is read straight into these types, its strings borrowed from
//! the event where they carry no escapes (a JSON tree per chunk was most
//! of what reading a streamed answer cost, docs/performance.md). Servers
//! differ in what they put in the fields we do not need and sometimes in
//! the ones we do (a number where a string belongs, a duplicated key): a
//! chunk the types refuse is read as a JSON tree instead and taken field
//! by field, a field of the wrong type counting as absent, as before.

use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// The fields of a chunk the fold uses.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(default, borrow)]
    pub(super) choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    pub(super) usage: Option<ChunkUsage>,
}

/// One choice (the fold reads the first).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(default, borrow)]
    pub(super) finish_reason: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(super) delta: Option<ChunkDelta<'a>>,
}

/// What a choice adds to the answer.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ChunkDelta<'a> {
    #[serde(default, borrow)]
    pub(super) content: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(super) tool_calls: Option<Vec<CallDelta<'a>>>,
}

/// A piece of a tool call.
#[derive(Debug, Default, Deserialize)]
pub(super) struct CallDelta<'a> {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default, borrow)]
    pub(super) id: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(super) function: Option<FunctionDelta<'a>>,
}

/// A piece of a tool call's name and arguments.
#[derive(Debug, Default, Deserialize)]
pub(super) struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    pub(super) name: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(super) arguments: Option<Text<'a>>,
}

/// Token counts (usually in the last chunk).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ChunkUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
    /// `cached_tokens` in it: prompt tokens served from the cache.
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

/// Run `on` with the chunk in `data`; `false` when `data` is not JSON.
pub(super) fn with_chunk(data: &str, on: impl FnOnce(Chunk<'_>)) -> bool {
    if let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(data) {
        on(chunk);
        return true;
    }
    match serde_json::from_str::<Value>(data) {
        Ok(v) => {
            on(lenient(&v));
            true
        }
        Err(_) => false,
    }
}

/// The string at `key` of `v`, if it is one.
fn text<'v>(v: &'v Value, key: &str) -> Option<Text<'v>> {
    v.get(key)?.as_str().map(|t| Text(Cow::Borrowed(t)))
}

/// A string of a chunk: borrowed from the event unless it had escapes
/// (serde's own `Option<Cow<str>>` always copies).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Text<'a>(pub(super) Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// The chunk in `v`, every field of an unexpected type left out.
fn lenient(v: &Value) -> Chunk<'_> {
    let usage = v.get("usage").filter(|u| u.is_object()).map(|u| ChunkUsage {
        prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
        completion_tokens: u.get("completion_tokens").and_then(Value::as_u64),
        prompt_tokens_details: u
            .get("prompt_tokens_details")
            .filter(|d| d.is_object())
            .map(|d| PromptDetails {
                cached_tokens: d.get("cached_tokens").and_then(Value::as_u64),
            }),
    });
    let choice = v.get("choices").and_then(|c| c.get(0)).map(|c| Choice {
        finish_reason: text(c, "finish_reason"),
        delta: c.get("delta").map(|d| ChunkDelta {
            content: text(d, "content"),
            tool_calls: d.get("tool_calls").and_then(Value::as_array).map(|calls| {
                calls
                    .iter()
                    .map(|c| CallDelta {
                        index: c.get("index").and_then(Value::as_u64),
                        id: text(c, "id"),
                        function: c.get("function").map(|f| FunctionDelta {
                            name: text(f, "name"),
                            arguments: text(f, "arguments"),
                        }),
                    })
                    .collect()
            }),
        }),
    });
    Chunk {
        choices: choice.map(|c| vec![c]),
        usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &str) -> String {
        let mut out = String::new();
        assert!(with_chunk(data, |c| out = format!("{c:?}")));
        out
    }

    #[test]
    fn typed_and_lenient_reads_agree_on_a_well_formed_chunk() {
        let data = r#"{"id":"x","choices":[{"index":0,"delta":{"content":"a\"b","tool_calls":[{"index":1,"id":"c","function":{"name":"n","arguments":"{}"}}]},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let direct = serde_json::from_str::<Chunk<'_>>(data).expect("a well-formed chunk reads without the tree");
        let call = &direct.choices.as_ref().unwrap()[0]
            .delta
            .as_ref()
            .unwrap()
            .tool_calls
            .as_ref()
            .unwrap()[0];
        assert!(
            matches!(call.id, Some(Text(Cow::Borrowed("c")))),
            "strings without escapes are borrowed"
        );
        let content = &direct.choices.as_ref().unwrap()[0].delta.as_ref().unwrap().content;
        assert_eq!(content.as_deref(), Some("a\"b"), "escapes are read");
        let typed = read(data);
        let lenient = format!("{:?}", lenient(&serde_json::from_str::<Value>(data).unwrap()));
        assert_eq!(typed, lenient);
    }

    #[test]
    fn a_field_of_the_wrong_type_counts_as_absent_and_keeps_the_rest() {
        let data = r#"{"choices":[{"delta":{"content":"kept","tool_calls":[{"index":"0","id":7}]},"finish_reason":5}],"usage":{"prompt_tokens":-1,"completion_tokens":2}}"#;
        let mut seen = None;
        assert!(with_chunk(data, |c| seen = Some(c.into_parts())));
        let (content, finish, calls, usage) = seen.unwrap();
        assert_eq!(content.as_deref(), Some("kept"));
        assert_eq!(finish, None);
        assert_eq!(calls, [(None, None)]);
        assert_eq!(usage, Some((None, Some(2))));
    }

    #[test]
    fn null_fields_are_absent_and_not_json_is_refused() {
        let mut seen = None;
        let data = r#"{"choices":null,"usage":null}"#;
        assert!(with_chunk(data, |c| seen = Some(c.into_parts())));
        assert_eq!(seen.unwrap(), (None, None, vec![], None));
        assert!(!with_chunk("{not json", |_| panic!("no chunk in garbage")));
    }

    type Parts = (
        Option<String>,
        Option<String>,
        Vec<(Option<u64>, Option<String>)>,
        Option<(Option<u64>, Option<u64>)>,
    );

    impl Chunk<'_> {
        /// The first choice's content, finish reason and calls (index,
        /// id), and the usage, owned (for comparing).
        fn into_parts(self) -> Parts {
            let choice = self.choices.and_then(|c| c.into_iter().next()).unwrap_or_default();
            let delta = choice.delta.unwrap_or_default();
            let calls = delta
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.index, c.id.map(|t| t.0.into_owned())))
                .collect();
            (
                delta.content.map(|t| t.0.into_owned()),
                choice.finish_reason.map(|t| t.0.into_owned()),
                calls,
                self.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
            )
        }
    }
}
