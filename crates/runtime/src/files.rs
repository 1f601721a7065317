//! Files an agent posts in its chat (`send_file`). The runtime names no
//! platform: the gateway installs a [`FilePoster`] that knows each
//! channel's upload API and limit.

use async_trait::async_trait;
use switchboard_core::{ChatAddress, OutboundFile};

/// Posts files into chats for the runtime (see the module doc).
#[async_trait]
pub trait FilePoster: Send + Sync {
    /// The largest file `to`'s channel takes, or why it takes none.
    async fn limit(&self, to: &ChatAddress) -> Result<u64, PostError>;
    /// Post `file`, or say why it was not posted.
    async fn post(&self, file: OutboundFile) -> Result<(), PostError>;
}

/// Why a file was not posted; its text is told to the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostError {
    /// The chat's channel is not running in this gateway.
    #[error("the channel {0} is not configured here")]
    NoChannel(String),
    /// The channel's platform takes no files.
    #[error("{0} cannot post files; say where the file is instead")]
    NoFiles(String),
    /// The platform refused the upload.
    #[error("the chat platform did not take it ({0})")]
    Refused(switchboard_core::ChannelError),
    /// The platform asks to wait longer than a tool call should.
    #[error("the chat platform asks to wait {} s before the next upload", .0.as_secs())]
    WaitTooLong(std::time::Duration),
}

/// The media type of a file, from its extension (what chat clients use
/// to show it; unknown types are sent as plain bytes).
pub fn media_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "txt" | "log" | "md" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "zip" => "application/zip",
        "gz" | "tgz" => "application/gzip",
        "mp3" => "audio/mpeg",
        "ogg" | "oga" => "audio/ogg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        _ => "application/octet-stream",
    }
}

/// A size for people: `512 B`, `1.5 KiB`, `30.0 MiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_types() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(30 * 1024 * 1024), "30.0 MiB");
        assert_eq!(media_type("Report.PDF"), "application/pdf");
        assert_eq!(media_type("noext"), "application/octet-stream");
    }
}
