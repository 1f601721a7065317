//! Files: attachments people post are read from Discord's CDN (and only
//! from there: the address comes from the message payload), and files the
//! gateway posts go up as multipart attachments.

use std::time::Duration;
use switchboard_core::{FetchError, read_capped};

/// The largest file a bot may post to a server without boosts.
pub(crate) const UPLOAD_LIMIT: u64 = 10 * 1024 * 1024;

/// Hosts Discord serves attachments from.
const CDN_HOSTS: [&str; 2] = ["cdn.discordapp.com", "media.discordapp.net"];

/// Whether `url` is where Discord keeps attachments: its CDN over HTTPS,
/// or the Discord-compatible server configured instead (`api_url`).
pub(crate) fn from_discord(url: &url::Url, api_url: Option<&str>) -> bool {
    let cdn = url.scheme() == "https" && url.host_str().is_some_and(|h| CDN_HOSTS.contains(&h));
    let configured = api_url
        .and_then(|a| url::Url::parse(a).ok())
        .is_some_and(|a| a.origin() == url.origin());
    cdn || configured
}

/// Download `source` (a CDN address), at most `limit` bytes.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    source: &str,
    api_url: Option<&str>,
    limit: u64,
) -> Result<Vec<u8>, FetchError> {
    let url = url::Url::parse(source).map_err(|_| FetchError::Failed("the attachment address is not a URL".into()))?;
    if !from_discord(&url, api_url) {
        return Err(FetchError::Failed(format!(
            "the attachment is not on Discord's CDN ({})",
            url.host_str().unwrap_or("no host")
        )));
    }
    let response = client
        .get(url)
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| FetchError::Failed(format!("Discord's CDN did not give the file: {e}")))?;
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(FetchError::TooLarge { limit });
    }
    read_capped(response.bytes_stream(), limit).await
}

#[cfg(test)]
mod tests {
    use super::from_discord;

    #[test]
    fn attachments_come_only_from_discord() {
        let ok = |u: &str, api: Option<&str>| from_discord(&url::Url::parse(u).unwrap(), api);
        assert!(ok("https://cdn.discordapp.com/attachments/1/2/a.png", None));
        assert!(ok("https://media.discordapp.net/attachments/1/2/a.png", None));
        assert!(!ok("http://cdn.discordapp.com/attachments/1/2/a.png", None));
        assert!(!ok("https://cdn.discordapp.com.evil.example/a.png", None));
        assert!(!ok("http://127.0.0.1:8080/admin", None));
        assert!(ok("http://127.0.0.1:4001/cdn/a.png", Some("http://127.0.0.1:4001")));
        assert!(!ok("http://127.0.0.1:4002/cdn/a.png", Some("http://127.0.0.1:4001")));
    }
}
