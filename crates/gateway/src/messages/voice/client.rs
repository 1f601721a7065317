//! One request to an OpenAI-compatible `POST <base>/audio/transcriptions`:
//! a `multipart/form-data` body with the audio as `file`, the `model`,
//! `response_format = json`, and the `language` when configured; the
//! answer's `text` is the transcript.

use std::sync::OnceLock;
use std::time::Duration;
use switchboard_config::TranscriptionConfig;

/// The client every transcription uses (connections are kept).
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(switchboard_http::client)
}

/// The transcript of `audio` (named `name`, of media type `mime`), or why
/// there is none, in words for the person.
pub(crate) async fn transcribe(
    config: &TranscriptionConfig,
    name: &str,
    mime: &str,
    audio: Vec<u8>,
) -> Result<String, String> {
    let boundary = format!("switchboard-{}", uuid::Uuid::new_v4().simple());
    let mut fields = vec![("model", config.model.as_str()), ("response_format", "json")];
    if let Some(l) = &config.language {
        fields.push(("language", l.as_str()));
    }
    let body = form(&boundary, &fields, (name, mime, &audio));
    let url = format!("{}/audio/transcriptions", config.base_url.trim_end_matches('/'));
    let mut request = client()
        .post(&url)
        .timeout(Duration::from_secs(config.timeout_secs))
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(body);
    if let Some(key) = &config.api_key {
        let key = key
            .resolve()
            .map_err(|e| format!("the transcription api_key cannot be read: {e}"))?;
        request = request.bearer_auth(key);
    }
    let answer = request.send().await.map_err(|e| {
        if e.is_timeout() {
            format!(
                "the transcription server did not answer within {} s",
                config.timeout_secs
            )
        } else {
            "the transcription server could not be reached".to_string()
        }
    })?;
    let status = answer.status();
    let text = answer.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(format!("the transcription server answered HTTP {}", status.as_u16()));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| "the transcription server's answer was not JSON".to_string())?;
    let transcript = v["text"]
        .as_str()
        .ok_or_else(|| "the transcription server's answer had no text".to_string())?;
    Ok(transcript.trim().to_string())
}

/// A `multipart/form-data` body: text `fields`, then the file.
fn form(boundary: &str, fields: &[(&str, &str)], (name, mime, data): (&str, &str, &[u8])) -> Vec<u8> {
    let mut body = Vec::with_capacity(data.len() + 512);
    for (k, v) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n").as_bytes(),
        );
    }
    // The name is the sender's choice: quotes and line breaks are replaced.
    let name: String = name
        .chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: {mime}\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_form_carries_fields_and_the_file_with_a_clean_name() {
        let body = super::form("B", &[("model", "whisper-1")], ("a\"b\r\n.ogg", "audio/ogg", b"OggS"));
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with("--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"));
        assert!(text.contains("filename=\"a_b__.ogg\"\r\nContent-Type: audio/ogg\r\n\r\nOggS\r\n--B--\r\n"));
    }
}
