//! matrix-sdk errors as channel errors: 429 `M_LIMIT_EXCEEDED` becomes a
//! rate limit with the server's `retry_after_ms` (another 429, a second),
//! connection failures, 408 and 5xx are transient, the rest permanent.

use matrix_sdk::HttpError;
use matrix_sdk::ruma::api::error::{ErrorKind, RetryAfter};
use std::time::{Duration, SystemTime};
use switchboard_core::ChannelError;

/// How long the homeserver asked us to wait, when it rate-limited us.
pub(crate) fn retry_after_of(kind: Option<&ErrorKind>) -> Option<Duration> {
    match kind? {
        ErrorKind::LimitExceeded(data) => Some(match &data.retry_after {
            Some(RetryAfter::Delay(d)) => *d,
            Some(RetryAfter::DateTime(t)) => t.duration_since(SystemTime::now()).unwrap_or_default(),
            None => Duration::from_secs(1),
        }),
        _ => None,
    }
}

pub(crate) fn map_http(e: &HttpError) -> ChannelError {
    if let Some(wait) = retry_after_of(e.client_api_error_kind()) {
        return ChannelError::RateLimited(wait.as_millis().div_ceil(1000).max(1) as u64);
    }
    match e {
        HttpError::Reqwest(_) => ChannelError::Transient("the homeserver could not be reached".into()),
        HttpError::Cached(inner) => map_http(inner),
        _ => match e.as_client_api_error() {
            // A limit without M_LIMIT_EXCEEDED: a proxy's 429 page.
            Some(api) if api.status_code.as_u16() == 429 => ChannelError::RateLimited(1),
            Some(api) if api.status_code.is_server_error() || api.status_code.as_u16() == 408 => {
                ChannelError::Transient(format!("the homeserver answered {}", api.status_code))
            }
            Some(api) => ChannelError::Permanent(format!(
                "the homeserver refused the request ({}): {}",
                api.status_code,
                api.error_kind().map(|k| k.errcode().to_string()).unwrap_or_default()
            )),
            None => ChannelError::Transient(e.to_string()),
        },
    }
}

pub(crate) fn map(e: matrix_sdk::Error) -> ChannelError {
    match e {
        matrix_sdk::Error::Http(h) => map_http(&h),
        // Another request this one waited on (the room's encryption state,
        // say) failed: as transient as that failure was.
        matrix_sdk::Error::ConcurrentRequestFailed => {
            ChannelError::Transient("a request this one depended on failed".into())
        }
        other => ChannelError::Permanent(other.to_string()),
    }
}
