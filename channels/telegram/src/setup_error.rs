//! Why a Telegram channel could not be set up from its configuration.

/// A Telegram channel's configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// `api_url` or `webhook_url` is not a URL (never the token: the URL
    /// shown is the configured one).
    #[error("{setting} '{url}': {source}")]
    BadUrl {
        /// The setting (`api_url`, `webhook_url`).
        setting: &'static str,
        /// Its value.
        url: String,
        /// Why it does not parse.
        #[source]
        source: url::ParseError,
    },
    /// The HTTP client could not be built (TLS roots, for one).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] Box<dyn std::error::Error + Send + Sync>),
}
