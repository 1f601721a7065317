//! Files in rooms: `m.image`, `m.file`, `m.audio` and `m.video` messages
//! described for the gateway and downloaded (decrypted in encrypted rooms)
//! through the SDK's media API; files the gateway posts uploaded (encrypted
//! where the room is) and sent as the matching message type.

use matrix_sdk::Client;
use matrix_sdk::media::{MediaFormat, MediaRequestParameters};
use matrix_sdk::ruma::events::room::MediaSource;
use serde_json::{Value, json};
use switchboard_core::{Attachment, AttachmentKind, ChannelError, FetchError, OutboundFile};

/// Used when the homeserver does not say how large an upload may be.
const DEFAULT_UPLOAD_LIMIT: u64 = 50 * 1024 * 1024;

/// The file of a media message and its caption (the text sent with it),
/// or `None` when `content` is not a media message.
pub(crate) fn attachment(content: &Value) -> Option<(Attachment, String)> {
    let kind = match content["msgtype"].as_str()? {
        "m.image" => AttachmentKind::Image,
        "m.audio" => AttachmentKind::Audio,
        "m.video" => AttachmentKind::Video,
        "m.file" => AttachmentKind::File,
        _ => return None,
    };
    let source = match (content.get("file"), content["url"].as_str()) {
        (Some(file), _) if file.is_object() => json!({ "file": file }),
        (_, Some(url)) => json!({ "url": url }),
        _ => return None,
    };
    let body = content["body"].as_str().unwrap_or_default();
    // With a `filename` that differs from it, `body` is a caption.
    let (name, caption) = match content["filename"].as_str() {
        Some(f) if !f.is_empty() && f != body => (f.to_string(), body.to_string()),
        _ => (body.to_string(), String::new()),
    };
    let info = &content["info"];
    Some((
        Attachment {
            kind,
            name: if name.is_empty() {
                kind.as_str().to_string()
            } else {
                name
            },
            mime: info["mimetype"].as_str().map(str::to_string),
            size: info["size"].as_u64(),
            source: source.to_string(),
            // Milliseconds in Matrix.
            duration_secs: info["duration"].as_u64().map(|ms| ms.div_ceil(1000)),
        },
        caption,
    ))
}

/// Download (and decrypt) `attachment`, refusing more than `limit` bytes.
/// The SDK reads a file whole, so a file larger than announced is bounded
/// by the homeserver's own upload limit before this one is checked.
pub(crate) async fn fetch(client: &Client, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
    if attachment.size.is_some_and(|s| s > limit) {
        return Err(FetchError::TooLarge { limit });
    }
    let source: MediaSource = serde_json::from_str(&attachment.source)
        .map_err(|e| FetchError::Failed(format!("the file's media source is not readable: {e}")))?;
    let request = MediaRequestParameters {
        source,
        format: MediaFormat::File,
    };
    let data = client
        .media()
        .get_media_content(&request, false)
        .await
        .map_err(|e| FetchError::Failed(format!("the homeserver did not give the file: {e}")))?;
    if data.len() as u64 > limit {
        return Err(FetchError::TooLarge { limit });
    }
    Ok(data)
}

/// The largest upload the homeserver takes.
pub(crate) async fn upload_limit(client: &Client) -> u64 {
    match client.load_or_fetch_max_upload_size().await {
        Ok(n) => u64::from(n),
        Err(e) => {
            tracing::debug!(error = %e, "the homeserver's upload limit is unknown; assuming 50 MiB");
            DEFAULT_UPLOAD_LIMIT
        }
    }
}

/// Upload `file` (encrypted when `encrypted`) and return the content of
/// the message that shows it (without its thread relation).
pub(crate) async fn upload(client: &Client, file: &OutboundFile, encrypted: bool) -> Result<Value, ChannelError> {
    let mime: mime::Mime = file.mime.parse().unwrap_or(mime::APPLICATION_OCTET_STREAM);
    let msgtype = match mime.type_() {
        mime::IMAGE => "m.image",
        mime::AUDIO => "m.audio",
        mime::VIDEO => "m.video",
        _ => "m.file",
    };
    let caption = file.caption.as_deref().filter(|c| !c.trim().is_empty());
    let mut content = json!({
        "msgtype": msgtype,
        "body": caption.unwrap_or(&file.name),
        "filename": file.name,
        "info": { "mimetype": mime.essence_str(), "size": file.data.len() },
        "m.mentions": {},
    });
    if encrypted {
        let mut reader = std::io::Cursor::new(&file.data);
        let uploaded = client
            .upload_encrypted_file(&mut reader)
            .await
            .map_err(crate::errors::map)?;
        content["file"] = serde_json::to_value(&uploaded).map_err(|e| ChannelError::Permanent(e.to_string()))?;
    } else {
        let uploaded = client
            .media()
            .upload(&mime, file.data.clone(), None)
            .await
            .map_err(crate::errors::map)?;
        content["url"] = json!(uploaded.content_uri.to_string());
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_messages_name_their_file_and_caption() {
        let (a, caption) = attachment(&json!({
            "msgtype": "m.image", "body": "what is this?", "filename": "cat.png",
            "url": "mxc://hs/abc", "info": {"mimetype": "image/png", "size": 1234}
        }))
        .unwrap();
        assert_eq!(
            (a.kind, a.name.as_str(), caption.as_str()),
            (AttachmentKind::Image, "cat.png", "what is this?")
        );
        assert_eq!((a.mime.as_deref(), a.size), (Some("image/png"), Some(1234)));
        let source: MediaSource = serde_json::from_str(&a.source).unwrap();
        assert!(matches!(source, MediaSource::Plain(u) if u.as_str() == "mxc://hs/abc"));

        // Without a filename the body is the name; an encrypted file keeps its keys.
        let (a, caption) = attachment(&json!({
            "msgtype": "m.file", "body": "report.pdf",
            "file": {"url": "mxc://hs/enc", "key": {"kty": "oct", "key_ops": ["encrypt", "decrypt"], "alg": "A256CTR", "k": "qcHVMSgYg-71CauWBezXI5qkaRb0LuIy-Wx5kIaHMIA", "ext": true},
                     "iv": "X85+XgHN+HEAAAAAAAAAAA", "hashes": {"sha256": "5qG4fFnbbVdlAB1Q72JDKwCagV6Dbkx9uds4rSak37c"}, "v": "v2"}
        }))
        .unwrap();
        assert_eq!(
            (a.kind, a.name.as_str(), caption.as_str()),
            (AttachmentKind::File, "report.pdf", "")
        );
        let source: MediaSource = serde_json::from_str(&a.source).unwrap();
        assert!(matches!(source, MediaSource::Encrypted(_)));

        assert!(attachment(&json!({"msgtype": "m.text", "body": "hi"})).is_none());
        assert!(attachment(&json!({"msgtype": "m.image", "body": "no url"})).is_none());
    }
}
