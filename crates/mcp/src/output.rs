//! What a tool call returned, from the `tools/call` result read as plain
//! JSON: its text (capped like a command's output), its pictures, and
//! whether the server says the call failed.

use base64::Engine;
use serde_json::Value;

/// Bytes of text kept from one result (the rest is counted, not kept).
pub const MAX_TEXT: usize = 16 * 1024;

/// Pictures kept from one result, and the largest one.
const MAX_IMAGES: usize = 4;
/// (3 MiB: under 5 MB once in base64, the most Anthropic takes per picture.)
const MAX_IMAGE_BYTES: usize = 3 * 1024 * 1024;

/// One picture a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// Its media type, as the server gave it.
    pub mime_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The result of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOutput {
    /// The server said the call failed (`isError`).
    pub is_error: bool,
    /// Text of every content block, one per line, capped at [`MAX_TEXT`].
    pub text: String,
    /// Pictures, in order.
    pub images: Vec<ImagePart>,
}

/// Read a `tools/call` result.
pub(crate) fn from_result(result: &Value) -> CallOutput {
    let mut out = CallOutput {
        is_error: result.get("isError").and_then(Value::as_bool).unwrap_or(false),
        ..CallOutput::default()
    };
    let mut lines: Vec<String> = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let field = |k: &str| block.get(k).and_then(Value::as_str);
        match field("type") {
            Some("text") => lines.push(field("text").unwrap_or_default().to_string()),
            Some("image") => lines.push(image(&mut out, field("mimeType"), field("data"))),
            Some("resource") => {
                let r = block.get("resource").cloned().unwrap_or_default();
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("?");
                match r.get("text").and_then(Value::as_str) {
                    Some(t) => lines.push(format!("[resource {uri}]\n{t}")),
                    None => lines.push(format!("[resource {uri}: binary content not shown]")),
                }
            }
            Some("resource_link") => lines.push(format!(
                "[resource link {} ({})]",
                field("uri").unwrap_or("?"),
                field("name").unwrap_or("")
            )),
            Some(other) => lines.push(format!("[{other} content not shown]")),
            None => {}
        }
    }
    if lines.is_empty()
        && let Some(s) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        lines.push(s.to_string());
    }
    out.text = cap(lines.join("\n"));
    out
}

/// Keep a picture (within the limits) and say what became of it.
fn image(out: &mut CallOutput, mime: Option<&str>, data: Option<&str>) -> String {
    let mime = mime.unwrap_or("application/octet-stream").to_string();
    let Some(bytes) = data.and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok()) else {
        return format!("[{mime} image: its data is not valid base64]");
    };
    if out.images.len() >= MAX_IMAGES || bytes.len() > MAX_IMAGE_BYTES {
        return format!("[{mime} image of {} bytes: dropped, over the limits]", bytes.len());
    }
    let line = format!("[{mime} image of {} bytes]", bytes.len());
    out.images.push(ImagePart { mime_type: mime, bytes });
    line
}

/// `text` cut at [`MAX_TEXT`] bytes, saying how much was dropped.
pub(crate) fn cap(mut text: String) -> String {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut cut = MAX_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let dropped = text.len() - cut;
    text.truncate(cut);
    text.push_str(&format!("\n[truncated: {dropped} more bytes]"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_images_and_errors_are_read() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG....");
        let r = from_result(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "mimeType": "image/png", "data": png},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
                {"type": "audio", "data": "x"}
            ],
            "isError": true
        }));
        assert!(r.is_error);
        assert_eq!(r.images.len(), 1);
        assert_eq!(r.images[0].bytes, b"\x89PNG....");
        assert_eq!(
            r.text,
            "hello\n[image/png image of 8 bytes]\n[resource file:///a]\ninside\n[audio content not shown]"
        );
    }

    #[test]
    fn long_text_is_capped() {
        let r = from_result(&json!({"content": [{"type": "text", "text": "é".repeat(MAX_TEXT)}]}));
        assert!(r.text.len() < MAX_TEXT + 100);
        assert!(r.text.ends_with(&format!("[truncated: {MAX_TEXT} more bytes]")));
    }
}
