//! A loopback speech-to-text server in the shape of OpenAI's
//! `POST /v1/audio/transcriptions` (as Groq, whisper.cpp's server and
//! faster-whisper servers also answer it): a `multipart/form-data` request
//! with `file` and `model` (both required, as OpenAI requires them),
//! answered `{"text": ...}`. What each audio "says" is set by the test:
//! audio whose bytes contain a marker is heard as its transcript.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// One request the server took.
#[derive(Debug, Clone)]
pub struct Heard {
    /// The `model` field.
    pub model: String,
    /// The file's name as sent.
    pub filename: String,
    /// The file's media type as sent.
    pub content_type: String,
    /// The file's size.
    pub bytes: usize,
    /// The `language` field, when sent.
    pub language: Option<String>,
    /// The bearer token, when sent.
    pub token: Option<String>,
}

#[derive(Default)]
struct Shared {
    /// (marker in the audio, transcript).
    phrases: Vec<(Vec<u8>, String)>,
    /// Answer the next requests with this HTTP status.
    failing: Option<u16>,
    heard: Vec<Heard>,
}

/// The server; stops when dropped.
pub struct Transcriber {
    addr: std::net::SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Transcriber {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Transcriber {
    /// Listen on a free loopback port.
    pub async fn start() -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let app = Router::new()
            .route("/v1/audio/transcriptions", post(transcribe))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared, task }
    }

    /// For `[transcription].base_url`, ending in `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Audio containing `marker` is heard as `transcript`.
    pub fn hears(&self, marker: &[u8], transcript: &str) {
        self.shared
            .lock()
            .unwrap()
            .phrases
            .push((marker.to_vec(), transcript.to_string()));
    }

    /// From now on answer every request with HTTP `status` (`None`: work again).
    pub fn failing(&self, status: Option<u16>) {
        self.shared.lock().unwrap().failing = status;
    }

    /// Every request taken, in order.
    pub fn heard(&self) -> Vec<Heard> {
        self.shared.lock().unwrap().heard.clone()
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

async fn transcribe(State(shared): State<Arc<Mutex<Shared>>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    let Some(parts) = crate::multipart::parse(content_type, &body) else {
        return refuse(StatusCode::BAD_REQUEST, "expected multipart/form-data");
    };
    let field = |name: &str| parts.iter().find(|p| p.name == name);
    let Some(file) = field("file").filter(|f| f.filename.is_some() && !f.data.is_empty()) else {
        return refuse(StatusCode::BAD_REQUEST, "you must provide a file");
    };
    let Some(model) = field("model").map(|m| String::from_utf8_lossy(&m.data).to_string()) else {
        return refuse(StatusCode::BAD_REQUEST, "you must provide a model parameter");
    };
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let mut s = shared.lock().unwrap();
    s.heard.push(Heard {
        model,
        filename: file.filename.clone().unwrap_or_default(),
        content_type: file.content_type.clone().unwrap_or_default(),
        bytes: file.data.len(),
        language: field("language").map(|l| String::from_utf8_lossy(&l.data).to_string()),
        token,
    });
    if let Some(code) = s.failing {
        return refuse(
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "the server failed",
        );
    }
    let text = s
        .phrases
        .iter()
        .find(|(marker, _)| file.data.windows(marker.len()).any(|w| w == marker.as_slice()))
        .map_or_else(String::new, |(_, t)| t.clone());
    Json(json!({ "text": text })).into_response()
}
