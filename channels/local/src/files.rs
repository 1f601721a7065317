//! Files on a local channel: a person's files come with their message
//! (base64 in the API call) and wait in memory until the gateway fetches
//! them; a file the bot posts is an event of kind `file` carrying it.
//! Both stay small: the API takes requests up to 2 MB, and the event log
//! is in memory.

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use switchboard_core::{Attachment, AttachmentKind, FetchError};

/// The largest file the bot may post in a local chat.
pub(crate) const UPLOAD_LIMIT: u64 = 2 * 1024 * 1024;
/// Files waiting to be fetched; older ones are forgotten.
const KEPT: usize = 64;

/// A file in an API call: a person's, or the bot's in a `file` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalFile {
    /// Its name.
    pub name: String,
    /// Its media type.
    #[serde(default)]
    pub mime: Option<String>,
    /// Its bytes, base64.
    pub data: String,
}

impl LocalFile {
    /// `data` named `name`, of type `mime`.
    pub(crate) fn new(name: &str, mime: &str, data: &[u8]) -> Self {
        use base64::Engine;
        Self {
            name: name.to_string(),
            mime: Some(mime.to_string()),
            data: base64::engine::general_purpose::STANDARD.encode(data),
        }
    }
}

/// Files people sent, until fetched.
#[derive(Default)]
pub(crate) struct Uploads {
    kept: Mutex<VecDeque<(String, Vec<u8>)>>,
}

impl Uploads {
    /// Keep the files of message `message_id`; their attachments, or what
    /// to fix in the call.
    pub(crate) fn keep(&self, message_id: &str, files: Vec<LocalFile>) -> Result<Vec<Attachment>, String> {
        use base64::Engine;
        let mut out = Vec::new();
        for (i, f) in files.into_iter().enumerate() {
            let data = base64::engine::general_purpose::STANDARD
                .decode(f.data.as_bytes())
                .map_err(|e| format!("files[{i}].data is not base64: {e}"))?;
            let kind = AttachmentKind::of_mime(f.mime.as_deref());
            let source = format!("{message_id}/{i}");
            out.push(Attachment {
                kind,
                name: f.name,
                mime: f.mime,
                size: Some(data.len() as u64),
                source: source.clone(),
                duration_secs: None,
            });
            let mut kept = self.kept.lock();
            kept.push_back((source, data));
            while kept.len() > KEPT {
                kept.pop_front();
            }
        }
        Ok(out)
    }

    /// The bytes of `source`, at most `limit`.
    pub(crate) fn fetch(&self, source: &str, limit: u64) -> Result<Vec<u8>, FetchError> {
        let kept = self.kept.lock();
        let data = kept
            .iter()
            .find(|(s, _)| s == source)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| FetchError::Failed("the file is no longer held (the gateway restarted since)".into()))?;
        if data.len() as u64 > limit {
            return Err(FetchError::TooLarge { limit });
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_wait_until_fetched_within_the_limit() {
        let uploads = Uploads::default();
        let sent = LocalFile::new("a.png", "image/png", b"picture");
        let got = uploads.keep("in-1", vec![sent]).unwrap();
        assert_eq!((got[0].kind, got[0].size), (AttachmentKind::Image, Some(7)));
        assert_eq!(uploads.fetch(&got[0].source, 100).unwrap(), b"picture");
        assert_eq!(uploads.fetch(&got[0].source, 3), Err(FetchError::TooLarge { limit: 3 }));
        assert!(matches!(uploads.fetch("in-9/0", 100), Err(FetchError::Failed(_))));
        let bad = LocalFile {
            name: "x".into(),
            mime: None,
            data: "not base64!".into(),
        };
        assert!(
            uploads
                .keep("in-2", vec![bad])
                .unwrap_err()
                .contains("files[0].data is not base64")
        );
    }
}
