//! Files on the fake Bot API, as Telegram serves them to bots: a person's
//! photo arrives as several sizes and a document with its name and type,
//! each with a `file_id`; `getFile` gives a `file_path` (and refuses files
//! over 20 MB: "file is too big"), and `GET /file/bot<token>/<path>`
//! serves the bytes. `sendDocument` takes a multipart upload (the file in
//! the `document` part or in the part it names as `attach://<name>`).

use super::{FakeTelegram, Shared, bot_user, chat_for, fail, now, ok};
use crate::multipart;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The largest file the Bot API lets a bot download.
const DOWNLOAD_LIMIT: usize = 20 * 1000 * 1000;

/// A file the bot uploaded.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The chat it was sent to.
    pub chat_id: Value,
    /// Its forum topic, if any.
    pub thread: Option<Value>,
    /// The caption under it.
    pub caption: Option<String>,
    /// Its file name.
    pub filename: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl FakeTelegram {
    /// Keep `data` as a file a person sent; its `file_id`,
    /// `file_unique_id` and `file_size`.
    fn keep(&self, data: Vec<u8>) -> Value {
        let mut s = self.shared.state.lock().unwrap();
        let n = s.files.len() + 1;
        let meta = json!({"file_id": format!("FILE{n}"), "file_unique_id": format!("U{n}"), "file_size": data.len()});
        s.files.insert(format!("FILE{n}"), data);
        meta
    }

    /// A person sends a photo (`data`, a JPEG) with `caption` in `chat`.
    /// Telegram offers it in several sizes; the thumbnail here is a
    /// different, smaller file. Returns the message id.
    pub fn photo(&self, chat: Value, from: Value, caption: &str, data: Vec<u8>, thread: Option<i64>) -> i64 {
        let thumb = self.keep(data.iter().take(16).copied().collect());
        let full = self.keep(data);
        let sizes = [(thumb, 90, 60), (full, 1280, 853)].map(|(mut meta, w, h)| {
            meta["width"] = json!(w);
            meta["height"] = json!(h);
            meta
        });
        let (id, mut m) = self.compose(chat, from, "caption", caption, thread);
        m["photo"] = json!(sizes);
        self.push_update("message", m);
        id
    }

    /// A person sends a document named `name` of type `mime`.
    pub fn document(&self, chat: Value, from: Value, caption: &str, (name, mime): (&str, &str), data: Vec<u8>) -> i64 {
        let mut meta = self.keep(data);
        meta["file_name"] = json!(name);
        meta["mime_type"] = json!(mime);
        let (id, mut m) = self.compose(chat, from, "caption", caption, None);
        m["document"] = meta;
        self.push_update("message", m);
        id
    }

    /// A person sends a voice note (`data`, OGG/Opus) of `duration` seconds,
    /// without a caption, as Telegram delivers it (`voice`: file id, unique
    /// id, duration, media type, size). Returns the message id.
    pub fn voice(&self, chat: Value, from: Value, data: Vec<u8>, duration: u32) -> i64 {
        let mut meta = self.keep(data);
        meta["duration"] = json!(duration);
        meta["mime_type"] = json!("audio/ogg");
        let (id, mut m) = self.compose(chat, from, "caption", "", None);
        if let Some(o) = m.as_object_mut() {
            o.remove("caption");
        }
        m["voice"] = meta;
        self.push_update("message", m);
        id
    }

    /// The next `n` uploads are answered 500 Internal Server Error.
    pub fn fail_uploads(&self, n: u32) {
        self.shared.state.lock().unwrap().failing_uploads = n;
    }

    /// Files the bot uploaded, in order.
    pub fn uploads(&self) -> Vec<Upload> {
        self.shared.state.lock().unwrap().uploads.clone()
    }
}

/// `getFile`: where a file can be downloaded.
pub(super) fn get_file(shared: &Shared, args: &Value) -> Response {
    let id = args["file_id"].as_str().unwrap_or_default();
    let mut s = shared.state.lock().unwrap();
    s.calls.push(("getfile".into(), args.clone()));
    let Some(data) = s.files.get(id) else {
        return fail(400, "Bad Request: invalid file_id", None);
    };
    if data.len() > DOWNLOAD_LIMIT {
        return fail(400, "Bad Request: file is too big", None);
    }
    ok(
        json!({"file_id": id, "file_unique_id": format!("U-{id}"), "file_size": data.len(), "file_path": format!("documents/{id}.bin")}),
    )
}

/// `GET /file/bot<token>/documents/<file id>.bin`.
pub(super) async fn download(State(shared): State<Shared>, Path((bot, path)): Path<(String, String)>) -> Response {
    let id = path
        .strip_prefix("documents/")
        .and_then(|p| p.strip_suffix(".bin"))
        .unwrap_or_default();
    let s = shared.state.lock().unwrap();
    match s.files.get(id) {
        Some(data) if bot.starts_with("bot") => data.clone().into_response(),
        _ => (axum::http::StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}

/// `sendDocument` with the file in a multipart form.
pub(super) fn send_document(shared: &Shared, headers: &axum::http::HeaderMap, body: &[u8]) -> Response {
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    let Some(parts) = multipart::parse(content_type, body) else {
        return fail(400, "Bad Request: there is no document in the request", None);
    };
    let text = |name: &str| {
        parts
            .iter()
            .find(|p| p.name == name)
            .map(|p| String::from_utf8_lossy(&p.data).into_owned())
    };
    // The file is the `document` part itself, or the part it names as
    // `attach://<name>` (what teloxide sends; the Bot API takes both).
    let named = text("document").and_then(|d| d.strip_prefix("attach://").map(str::to_string));
    let found = match named {
        Some(name) => parts.iter().find(|p| p.name == name),
        None => parts.iter().find(|p| p.name == "document"),
    };
    let Some(file) = found.filter(|p| p.filename.is_some()) else {
        return fail(400, "Bad Request: there is no document in the request", None);
    };
    let mut s = shared.state.lock().unwrap();
    if s.failing_uploads > 0 {
        s.failing_uploads -= 1;
        return fail(500, "Internal Server Error", None);
    }
    let chat_id: Value = text("chat_id")
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(json!(0));
    let thread = text("message_thread_id").and_then(|t| serde_json::from_str(&t).ok());
    let upload = Upload {
        chat_id: chat_id.clone(),
        thread: thread.clone(),
        caption: text("caption"),
        filename: file.filename.clone().unwrap_or_default(),
        data: file.data.clone(),
    };
    s.next_message += 1;
    let mut m = json!({
        "message_id": s.next_message, "date": now(), "chat": chat_for(&chat_id), "from": bot_user(),
        "document": {"file_id": format!("SENT{}", s.next_message), "file_unique_id": format!("S{}", s.next_message),
                     "file_name": upload.filename, "file_size": upload.data.len()},
    });
    if let Some(c) = &upload.caption {
        m["caption"] = json!(c);
    }
    if let Some(t) = thread {
        m["message_thread_id"] = t;
        m["is_topic_message"] = json!(true);
    }
    s.uploads.push(upload);
    ok(m)
}
