//! Files crossing the boundary: what a person attached to a message (the
//! channel describes it; the gateway fetches it through the same channel
//! when the message's turn runs), and a file the gateway posts.

use crate::ChatAddress;
use serde::{Deserialize, Serialize};

/// What kind of file a person sent, as the platform labelled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    /// A picture (Telegram photo, Matrix `m.image`, an image attachment).
    Image,
    /// Voice or music.
    Audio,
    /// A video.
    Video,
    /// Any other document.
    File,
}

impl AttachmentKind {
    /// The kind a media type names (`image/png` → image; none or an
    /// unknown family → file).
    pub fn of_mime(mime: Option<&str>) -> Self {
        match mime.and_then(|m| m.split('/').next()) {
            Some("image") => Self::Image,
            Some("audio") => Self::Audio,
            Some("video") => Self::Video,
            _ => Self::File,
        }
    }

    /// The word used when describing it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Video => "video",
            Self::File => "file",
        }
    }
}

/// A file attached to an inbound message. Everything here came from the
/// platform's payload: the name is the sender's choice and is cleaned
/// before it names anything on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// What it is.
    pub kind: AttachmentKind,
    /// Its file name as sent (a made-up one when the platform has none).
    pub name: String,
    /// Its media type, when the platform says.
    #[serde(default)]
    pub mime: Option<String>,
    /// Its size in bytes, when the platform says.
    #[serde(default)]
    pub size: Option<u64>,
    /// How the channel finds it again (a Telegram file id, a Discord CDN
    /// URL, a Matrix media source); opaque to everyone else.
    pub source: String,
    /// How long it plays (audio and video), when the platform says.
    #[serde(default)]
    pub duration_secs: Option<u64>,
}

/// Why an attachment was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// It is bigger than the gateway takes.
    #[error("it is larger than {limit} bytes")]
    TooLarge {
        /// The limit it went over.
        limit: u64,
    },
    /// The platform would not give it (gone, refused, unreachable).
    #[error("{0}")]
    Failed(String),
}

/// Append `chunk` to `buf` unless that makes it longer than `limit`: a
/// download stops as soon as it is too large, whatever size was announced.
pub fn push_capped(buf: &mut Vec<u8>, chunk: &[u8], limit: u64) -> Result<(), FetchError> {
    if (buf.len() + chunk.len()) as u64 > limit {
        return Err(FetchError::TooLarge { limit });
    }
    buf.extend_from_slice(chunk);
    Ok(())
}

/// Read a download to its end, stopping as soon as it passes `limit`.
/// Why a chunk failed is not told: a download address may hold a secret
/// (Telegram's carries the bot token).
pub async fn read_capped<S, C, E>(stream: S, limit: u64) -> Result<Vec<u8>, FetchError>
where
    S: futures_core::Stream<Item = Result<C, E>>,
    C: AsRef<[u8]>,
{
    let mut stream = std::pin::pin!(stream);
    let mut data = Vec::new();
    while let Some(chunk) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        let chunk = chunk.map_err(|_| FetchError::Failed("the download broke off".into()))?;
        push_capped(&mut data, chunk.as_ref(), limit)?;
    }
    Ok(data)
}

/// A file to post in a chat.
#[derive(Debug, Clone)]
pub struct OutboundFile {
    /// Where to post it (its thread included).
    pub address: ChatAddress,
    /// The file name shown.
    pub name: String,
    /// Its media type.
    pub mime: String,
    /// Its content.
    pub data: Vec<u8>,
    /// Text shown with it.
    pub caption: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_name_their_kind() {
        assert_eq!(AttachmentKind::of_mime(Some("image/png")), AttachmentKind::Image);
        assert_eq!(AttachmentKind::of_mime(Some("audio/ogg")), AttachmentKind::Audio);
        assert_eq!(AttachmentKind::of_mime(Some("video/mp4")), AttachmentKind::Video);
        assert_eq!(AttachmentKind::of_mime(Some("application/pdf")), AttachmentKind::File);
        assert_eq!(AttachmentKind::of_mime(None), AttachmentKind::File);
    }

    #[test]
    fn a_download_stops_at_the_limit() {
        let mut buf = Vec::new();
        assert_eq!(push_capped(&mut buf, b"abcd", 6), Ok(()));
        assert_eq!(push_capped(&mut buf, b"ef", 6), Ok(()));
        assert_eq!(push_capped(&mut buf, b"g", 6), Err(FetchError::TooLarge { limit: 6 }));
        assert_eq!(buf, b"abcdef");
    }

    /// Chunks handed out one by one.
    struct Chunks(std::collections::VecDeque<Result<Vec<u8>, ()>>);

    impl futures_core::Stream for Chunks {
        type Item = Result<Vec<u8>, ()>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.pop_front())
        }
    }

    #[tokio::test]
    async fn a_stream_is_read_whole_within_the_limit_and_no_further() {
        let chunks = |c: Vec<Result<Vec<u8>, ()>>| Chunks(c.into());
        let ok = read_capped(chunks(vec![Ok(b"ab".to_vec()), Ok(b"cd".to_vec())]), 4).await;
        assert_eq!(ok, Ok(b"abcd".to_vec()));
        let big = read_capped(chunks(vec![Ok(b"ab".to_vec()), Ok(b"cde".to_vec())]), 4).await;
        assert_eq!(big, Err(FetchError::TooLarge { limit: 4 }));
        let broken = read_capped(chunks(vec![Ok(b"ab".to_vec()), Err(())]), 4).await;
        assert_eq!(broken, Err(FetchError::Failed("the download broke off".into())));
    }

    #[test]
    fn old_inbox_rows_without_attachments_still_read() {
        let json = r#"{"address":{"channel":"cli","chat":"c","thread":null},"sender":"cli:a","sender_name":"a","text":"hi","message_id":null,"mentioned":false,"direct":true,"reply_to":null}"#;
        let m: crate::Inbound = serde_json::from_str(json).expect("an inbox row written before attachments");
        assert!(m.attachments.is_empty());
    }
}
