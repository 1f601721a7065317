//! What a Bot API failure means for the gateway: a rate limit, a failure
//! that passes (the network, Telegram's own server errors, the error page
//! of the server in front of it), or a refusal that sending again will not
//! change.

use switchboard_core::ChannelError;
use teloxide::RequestError;

pub(crate) fn map_err(e: RequestError) -> ChannelError {
    match e {
        RequestError::RetryAfter(s) => ChannelError::RateLimited(u64::from(s.seconds())),
        RequestError::Network(_) => ChannelError::Transient("the Bot API could not be reached".into()),
        RequestError::Io(e) => ChannelError::Transient(e.to_string()),
        // Not the Bot API's JSON: the error page of the server in front of
        // it (502 or 504 in an outage). Unless it says `ok` (the call went
        // through and only its answer could not be read: sent again, the
        // message would show twice).
        RequestError::InvalidJson { raw, .. } if !said_ok(&raw) => ChannelError::Transient(format!(
            "the Bot API answered with a page that is not its JSON (it is down?): {}",
            raw.chars().take(120).collect::<String>()
        )),
        RequestError::Api(teloxide::ApiError::Unknown(text)) if is_server_error(&text) => {
            ChannelError::Transient(format!("the Bot API failed: {text}"))
        }
        other => ChannelError::Permanent(other.to_string()),
    }
}

/// Whether an answer the client could not read says the call succeeded.
fn said_ok(raw: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(raw).is_ok_and(|v| v["ok"] == true)
}

/// Whether the Bot API's description of a failure is one of its own
/// server errors (HTTP 5xx), which pass, rather than a refusal.
fn is_server_error(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "internal server error",
        "bad gateway",
        "service unavailable",
        "gateway timeout",
    ]
    .iter()
    .any(|e| text.starts_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use teloxide::ApiError;

    fn unreadable(raw: &str) -> RequestError {
        let source = Arc::new(serde_json::from_str::<serde_json::Value>("<").unwrap_err());
        RequestError::InvalidJson {
            source,
            raw: raw.into(),
        }
    }

    #[test]
    fn server_errors_pass_and_refusals_do_not() {
        let transient = |e| matches!(map_err(e), ChannelError::Transient(_));
        assert!(transient(unreadable("<html><body>502 Bad Gateway</body></html>")));
        assert!(transient(RequestError::Api(ApiError::Unknown(
            "Internal Server Error".into()
        ))));
        assert!(transient(RequestError::Api(ApiError::Unknown("Bad Gateway".into()))));
        // The call went through; its answer only could not be read.
        assert!(!transient(unreadable(r#"{"ok":true,"result":{"strange":1}}"#)));
        assert!(!transient(RequestError::Api(ApiError::BotBlocked)));
        assert!(!transient(RequestError::Api(ApiError::Unknown(
            "Bad Request: chat not found".into()
        ))));
    }
}
