//! Webhook mode: Telegram posts updates to a local server (behind the
//! operator's TLS proxy). Every request must carry the configured secret in
//! `X-Telegram-Bot-Api-Secret-Token`; anything else is refused.

use crate::{Poller, inbound};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use std::sync::Arc;
use switchboard_core::Intake;
use teloxide::types::Update;

struct Hook {
    poller: Poller,
    secret: String,
    intake: Arc<dyn Intake>,
}

/// Serve updates posted to `listen` until the task is aborted.
pub(crate) async fn serve(
    poller: Poller,
    secret: String,
    listen: &str,
    intake: Arc<dyn Intake>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let hook = Arc::new(Hook { poller, secret, intake });
    let app = axum::Router::new()
        .route("/", post(receive))
        .route("/{*path}", post(receive))
        .with_state(hook);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "telegram webhook server stopped");
        }
    });
    Ok(())
}

async fn receive(State(hook): State<Arc<Hook>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let secret = headers
        .get("x-telegram-bot-api-secret-token")
        .and_then(|v| v.to_str().ok());
    let right = secret.is_some_and(|s| switchboard_core::constant_time_eq(s.as_bytes(), hook.secret.as_bytes()));
    if !right {
        tracing::warn!(channel = %hook.poller.name, "webhook request without the right secret refused");
        return StatusCode::UNAUTHORIZED;
    }
    let update: Update = match serde_json::from_slice(&body) {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(channel = %hook.poller.name, error = %e, "unreadable webhook update");
            return StatusCode::BAD_REQUEST;
        }
    };
    let what = format!("update {}", update.id.0);
    let Some(message) = switchboard_core::guarded(&hook.poller.name, &what, || {
        inbound::convert(&hook.poller.bot(), &update)
    }) else {
        return StatusCode::OK;
    };
    // Answered 200 only once taken: Telegram retries anything else, and
    // a retried update is taken once (same message id).
    match hook.intake.take(&hook.poller.name, vec![message], None).await {
        Ok(()) => StatusCode::OK,
        Err(e) => {
            tracing::warn!(channel = %hook.poller.name, error = %e, "webhook update not taken; Telegram will retry");
            StatusCode::SERVICE_UNAVAILABLE
        }
    }
}

#[cfg(test)]
mod webhook_tests {
    #[test]
    fn the_secret_is_not_in_debug_output() {
        let w = crate::Webhook {
            url: "https://x".into(),
            listen: "127.0.0.1:1".into(),
            secret: "s3cret-value".into(),
        };
        let shown = format!("{w:?}");
        assert!(!shown.contains("s3cret-value") && shown.contains("***"), "{shown}");
    }
}
