//! Attachments on the fake Discord: people's files are kept on a CDN
//! route beside the API (`/cdn/attachments/<channel>/<id>/<name>`, as
//! `cdn.discordapp.com` serves them) and named on their message; the bot's
//! uploads arrive as `multipart/form-data` (`payload_json` and
//! `files[n]`, as serenity sends them), are refused over 10 MiB with
//! 40005 like Discord, and become the message's attachments.

use super::{FakeDiscord, Shared};
use crate::multipart::Part;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The largest file a bot may upload without boosts.
pub(crate) const UPLOAD_LIMIT: usize = 10 * 1024 * 1024;

impl FakeDiscord {
    /// A person posts `content` with the file `name` (`mime`) in `channel`.
    /// Returns the message id.
    pub fn say_with_file(
        &self,
        channel: u64,
        author: &Value,
        content: &str,
        (name, mime): (&str, &str),
        data: Vec<u8>,
    ) -> u64 {
        let attachment = keep(&self.shared, channel, name, Some(mime), data);
        self.write_with(channel, author, content, None, vec![attachment])
    }

    /// The next `n` messages with files are answered 500.
    pub fn fail_uploads(&self, n: u32) {
        self.shared.lock().failing_uploads = n;
    }

    /// How many attachment downloads the CDN served.
    pub fn cdn_fetches(&self) -> u32 {
        self.shared.lock().cdn_fetches
    }

    /// The bytes of attachment `url` (as a message names it).
    pub fn attachment_bytes(&self, url: &str) -> Option<Vec<u8>> {
        let id: u64 = url.split('/').rev().nth(1)?.parse().ok()?;
        self.shared.lock().cdn.get(&id).cloned()
    }
}

/// Keep `data` on the CDN; the attachment object a message carries.
pub(crate) fn keep(shared: &Shared, channel: u64, name: &str, mime: Option<&str>, data: Vec<u8>) -> Value {
    let id = shared.id();
    let mut s = shared.lock();
    let url = format!("{}/cdn/attachments/{channel}/{id}/{name}", s.cdn_base);
    let attachment = json!({
        "id": id.to_string(), "filename": name, "size": data.len(), "url": url, "proxy_url": url,
        "content_type": mime,
    });
    s.cdn.insert(id, data);
    attachment
}

/// A multipart message as the JSON the handlers read: `payload_json` with
/// the files under `_uploads` (`filename`, `content_type`, `data` as
/// base64); `Err` when a file is over Discord's limit.
pub(crate) fn form(parts: Vec<Part>) -> Result<Value, TooLarge> {
    use base64::Engine;
    let mut body = parts
        .iter()
        .find(|p| p.name == "payload_json")
        .and_then(|p| serde_json::from_slice::<Value>(&p.data).ok())
        .unwrap_or_else(|| json!({}));
    let mut uploads = Vec::new();
    for p in parts.iter().filter(|p| p.name.starts_with("files[")) {
        if p.data.len() > UPLOAD_LIMIT {
            return Err(TooLarge);
        }
        uploads.push(json!({
            "filename": p.filename.clone().unwrap_or_default(),
            "content_type": p.content_type,
            "data": base64::engine::general_purpose::STANDARD.encode(&p.data),
        }));
    }
    body["_uploads"] = json!(uploads);
    Ok(body)
}

/// A file over the upload limit (Discord answers 413, code 40005).
pub(crate) struct TooLarge;

/// The attachments of a posted message: its `_uploads` kept on the CDN.
/// `Err` when uploads are set to fail.
pub(crate) fn attach(shared: &Shared, channel: u64, body: &Value) -> Result<Vec<Value>, ()> {
    use base64::Engine;
    let uploads = body["_uploads"].as_array().cloned().unwrap_or_default();
    if uploads.is_empty() {
        return Ok(Vec::new());
    }
    {
        let mut s = shared.lock();
        if s.failing_uploads > 0 {
            s.failing_uploads -= 1;
            return Err(());
        }
    }
    Ok(uploads
        .iter()
        .map(|u| {
            let data = base64::engine::general_purpose::STANDARD
                .decode(u["data"].as_str().unwrap_or_default())
                .unwrap_or_default();
            keep(
                shared,
                channel,
                u["filename"].as_str().unwrap_or("file"),
                u["content_type"].as_str(),
                data,
            )
        })
        .collect())
}

/// `GET /cdn/attachments/<channel>/<id>/<name>`.
pub(crate) async fn cdn(State(s): State<Shared>, Path((_channel, id, _name)): Path<(u64, u64, String)>) -> Response {
    let mut st = s.lock();
    st.cdn_fetches += 1;
    match st.cdn.get(&id) {
        Some(data) => data.clone().into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}
