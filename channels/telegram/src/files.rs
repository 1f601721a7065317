//! Files: what people attach (photos, documents, voice, audio, video)
//! described for the gateway, fetched with `getFile` and the Bot API's
//! file download, and files the gateway posts with `sendDocument`.

use std::time::Duration;
use switchboard_core::{Attachment, AttachmentKind, FetchError, read_capped};
use teloxide::types::{FileMeta, Message};

/// The largest file a bot may send through the Bot API.
pub(crate) const UPLOAD_LIMIT: u64 = 50 * 1000 * 1000;
/// The longest caption Telegram shows under a file.
pub(crate) const MAX_CAPTION: usize = 1024;

/// The files on `m`: the largest size of a photo, a document, voice,
/// audio or video.
pub(crate) fn attachments(m: &Message) -> Vec<Attachment> {
    // (kind, file, its name if sent, media type, name prefix and extension
    // when not, seconds it plays)
    type Found<'a> = (
        AttachmentKind,
        &'a FileMeta,
        Option<&'a String>,
        Option<String>,
        (&'a str, &'a str),
        Option<u64>,
    );
    let mut found: Vec<Found<'_>> = Vec::new();
    if let Some(best) = m
        .photo()
        .and_then(|sizes| sizes.iter().max_by_key(|p| p.width * p.height))
    {
        found.push((
            AttachmentKind::Image,
            &best.file,
            None,
            Some("image/jpeg".into()),
            ("photo", ".jpg"),
            None,
        ));
    }
    if let Some(d) = m.document() {
        let mime = mime_of(d.mime_type.as_ref());
        let kind = if mime.as_deref().is_some_and(|m| m.starts_with("image/")) {
            AttachmentKind::Image
        } else {
            AttachmentKind::File
        };
        found.push((kind, &d.file, d.file_name.as_ref(), mime, ("document", ""), None));
    }
    if let Some(v) = m.voice() {
        let mime = mime_of(v.mime_type.as_ref()).or_else(|| Some("audio/ogg".into()));
        let seconds = Some(u64::from(v.duration.seconds()));
        found.push((AttachmentKind::Audio, &v.file, None, mime, ("voice", ".ogg"), seconds));
    }
    if let Some(a) = m.audio() {
        found.push((
            AttachmentKind::Audio,
            &a.file,
            a.file_name.as_ref(),
            mime_of(a.mime_type.as_ref()),
            ("audio", ""),
            Some(u64::from(a.duration.seconds())),
        ));
    }
    if let Some(v) = m.video() {
        found.push((
            AttachmentKind::Video,
            &v.file,
            v.file_name.as_ref(),
            mime_of(v.mime_type.as_ref()),
            ("video", ""),
            Some(u64::from(v.duration.seconds())),
        ));
    }
    found
        .into_iter()
        .map(|(kind, file, name, mime, (prefix, ext), duration_secs)| Attachment {
            kind,
            name: name
                .cloned()
                .unwrap_or_else(|| format!("{prefix}-{}{ext}", file.unique_id.0)),
            mime,
            size: Some(u64::from(file.size)),
            source: file.id.0.clone(),
            duration_secs,
        })
        .collect()
}

fn mime_of<T: ToString>(m: Option<&T>) -> Option<String> {
    m.map(ToString::to_string)
}

/// Download the file `file_id`, at most `limit` bytes: `getFile` names
/// its path, then `<api>/file/bot<token>/<path>` serves it.
pub(crate) async fn fetch(
    bot: &teloxide::Bot,
    client: &reqwest::Client,
    file_id: &str,
    limit: u64,
) -> Result<Vec<u8>, FetchError> {
    use teloxide::prelude::Requester;
    let file = bot
        .get_file(teloxide::types::FileId(file_id.to_string()))
        .await
        .map_err(|e| FetchError::Failed(format!("Telegram would not give the file: {e}")))?;
    if u64::from(file.meta.size) > limit {
        return Err(FetchError::TooLarge { limit });
    }
    let base = bot.api_url();
    let url = format!(
        "{}/file/bot{}/{}",
        base.as_str().trim_end_matches('/'),
        bot.token(),
        file.path.trim_start_matches('/')
    );
    let response = client
        .get(url)
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        // The URL holds the token: only the status is told.
        .map_err(|e| {
            let status = e.status().map_or("no answer".into(), |s| s.to_string());
            FetchError::Failed(format!("the file download failed ({status})"))
        })?;
    read_capped(response.bytes_stream(), limit).await
}

#[cfg(test)]
mod tests {
    use super::attachments;
    use serde_json::json;
    use switchboard_core::AttachmentKind;

    fn message(extra: serde_json::Value) -> teloxide::types::Message {
        let mut m = json!({
            "message_id": 3, "date": 0, "chat": {"id": 5, "type": "private", "first_name": "Ann"},
            "from": {"id": 5, "is_bot": false, "first_name": "Ann"},
        });
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        serde_json::from_value(m).expect("a well-formed message")
    }

    #[test]
    fn voice_audio_and_video_are_described_with_names_and_types() {
        let voice = message(
            json!({"voice": {"file_id": "V", "file_unique_id": "uv", "file_size": 9, "duration": 2,
                                             "mime_type": "audio/ogg"}}),
        );
        let got = attachments(&voice);
        assert_eq!(got.len(), 1, "{:?}", voice.kind);
        // Telegram always sends a voice note's type (teloxide requires it).
        assert_eq!(
            (got[0].kind, got[0].name.as_str()),
            (AttachmentKind::Audio, "voice-uv.ogg")
        );
        assert_eq!(
            (got[0].mime.as_deref(), got[0].size, got[0].source.as_str()),
            (Some("audio/ogg"), Some(9), "V")
        );

        let audio = message(
            json!({"audio": {"file_id": "A", "file_unique_id": "ua", "file_size": 7, "duration": 60,
                                             "file_name": "song.mp3", "mime_type": "audio/mpeg"}, "caption": "listen"}),
        );
        let got = attachments(&audio);
        assert_eq!((got[0].kind, got[0].name.as_str()), (AttachmentKind::Audio, "song.mp3"));

        let video = message(
            json!({"video": {"file_id": "W", "file_unique_id": "uw", "file_size": 70, "duration": 3,
                                             "width": 640, "height": 480, "mime_type": "video/mp4"}}),
        );
        let got = attachments(&video);
        assert_eq!((got[0].kind, got[0].name.as_str()), (AttachmentKind::Video, "video-uw"));
        assert_eq!(got[0].mime.as_deref(), Some("video/mp4"));

        let text = message(json!({"text": "hi"}));
        assert!(attachments(&text).is_empty());
    }
}
