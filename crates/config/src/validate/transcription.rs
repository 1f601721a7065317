//! `[transcription]` checks.

use crate::{Config, Problem};

pub(super) fn transcription(c: &Config, v: &mut Vec<Problem>) {
    let Some(t) = &c.transcription else {
        return;
    };
    if !(t.base_url.starts_with("http://") || t.base_url.starts_with("https://")) {
        v.push(Problem::new(
            "transcription.base_url",
            format!(
                "'{}' is not an http(s) URL; give the API root, e.g. https://api.openai.com/v1",
                t.base_url
            ),
        ));
    }
    if t.model.trim().is_empty() {
        v.push(Problem::new(
            "transcription.model",
            "must not be empty (e.g. whisper-1)",
        ));
    }
    if t.max_bytes == 0 || t.max_seconds == 0 || t.timeout_secs == 0 {
        v.push(Problem::new(
            "transcription",
            "max_bytes, max_seconds and timeout_secs must be above 0 (remove [transcription] to turn it off)",
        ));
    }
}
