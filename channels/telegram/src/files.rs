//! Files: what people attach (photos, documents, voice, audio, video)
//! described for the gateway, fetched with `getFile` and the Bot API's
//! file download, and files the gateway posts with `sendDocument`.

use std::time::Duration;
use switchboard_core::{Attachment, AttachmentKind, FetchError, push_capped};
use teloxide::types::{FileMeta, Message};

/// The largest file a bot may send through the Bot API.
pub(crate) const UPLOAD_LIMIT: u64 = 50 * 1000 * 1000;
/// The longest caption Telegram shows under a file.
pub(crate) const MAX_CAPTION: usize = 1024;

/// The files on `m`: the largest size of a photo, a document, voice,
/// audio or video.
pub(crate) fn attachments(m: &Message) -> Vec<Attachment> {
    let found = |kind, file: &FileMeta, name: Option<&String>, mime: Option<String>, default: &str| Attachment {
        kind,
        name: name
            .cloned()
            .unwrap_or_else(|| format!("{default}-{}", file.unique_id.0)),
        mime,
        size: Some(u64::from(file.size)),
        source: file.id.0.clone(),
    };
    let mut out = Vec::new();
    if let Some(best) = m
        .photo()
        .and_then(|sizes| sizes.iter().max_by_key(|p| p.width * p.height))
    {
        out.push(found(
            AttachmentKind::Image,
            &best.file,
            None,
            Some("image/jpeg".into()),
            "photo",
        ));
        if let Some(a) = out.last_mut() {
            a.name.push_str(".jpg");
        }
    }
    if let Some(d) = m.document() {
        let mime = mime_of(d.mime_type.as_ref());
        let kind = if mime.as_deref().is_some_and(|m| m.starts_with("image/")) {
            AttachmentKind::Image
        } else {
            AttachmentKind::File
        };
        out.push(found(kind, &d.file, d.file_name.as_ref(), mime, "document"));
    }
    if let Some(v) = m.voice() {
        let mime = mime_of(v.mime_type.as_ref()).or_else(|| Some("audio/ogg".into()));
        out.push(found(AttachmentKind::Audio, &v.file, None, mime, "voice"));
        if let Some(a) = out.last_mut() {
            a.name.push_str(".ogg");
        }
    }
    if let Some(a) = m.audio() {
        let mime = mime_of(a.mime_type.as_ref());
        out.push(found(
            AttachmentKind::Audio,
            &a.file,
            a.file_name.as_ref(),
            mime,
            "audio",
        ));
    }
    if let Some(v) = m.video() {
        let mime = mime_of(v.mime_type.as_ref());
        out.push(found(
            AttachmentKind::Video,
            &v.file,
            v.file_name.as_ref(),
            mime,
            "video",
        ));
    }
    out
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
    let mut response = client
        .get(url)
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        // The URL holds the token: only the status is told.
        .map_err(|e| {
            FetchError::Failed(format!(
                "the file download failed ({})",
                e.status().map_or("no answer".into(), |s| s.to_string())
            ))
        })?;
    let mut data = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| FetchError::Failed("the file download broke off".into()))?
    {
        push_capped(&mut data, &chunk, limit)?;
    }
    Ok(data)
}
