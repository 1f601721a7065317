//! `multipart/form-data` bodies as the fakes receive them from client
//! libraries (teloxide's uploads, serenity's attachments): each part's
//! name, file name and bytes, read at the byte level (files are binary).

/// One part of a form.
#[derive(Debug, Clone)]
pub struct Part {
    /// The form field (`document`, `files[0]`, `payload_json`, `caption`).
    pub name: String,
    /// The file name, for file parts.
    pub filename: Option<String>,
    /// The part's `Content-Type`, when given.
    pub content_type: Option<String>,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// The parts of `body`, when `content_type` is a multipart type with a
/// boundary; `None` otherwise.
pub fn parse(content_type: &str, body: &[u8]) -> Option<Vec<Part>> {
    if !content_type.starts_with("multipart/") {
        return None;
    }
    let boundary = content_type.split("boundary=").nth(1)?.trim_matches('"');
    let delimiter = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(at) = find(rest, &delimiter) {
        rest = &rest[at + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let end = find(rest, &delimiter).unwrap_or(rest.len());
        let part = rest[..end].strip_prefix(b"\r\n").unwrap_or(&rest[..end]);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        if let Some(head_end) = find(part, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&part[..head_end]).into_owned();
            let quoted = |key: &str| {
                head.split(&format!("{key}=\""))
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                    .map(str::to_string)
            };
            let content_type = head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("Content-Type:")
                        .or_else(|| l.strip_prefix("content-type:"))
                })
                .map(|v| v.trim().to_string());
            parts.push(Part {
                name: quoted(" name").or_else(|| quoted(";name")).unwrap_or_default(),
                filename: quoted("filename"),
                content_type,
                data: part[head_end + 4..].to_vec(),
            });
        }
        rest = &rest[end..];
    }
    Some(parts)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    #[test]
    fn binary_parts_keep_their_bytes() {
        let mut body = Vec::new();
        body.extend_from_slice(b"--XyZ\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n");
        body.extend_from_slice(b"--XyZ\r\nContent-Disposition: form-data; name=\"document\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n");
        body.extend_from_slice(&[0, 255, 13, 10, 45, 45, 1]);
        body.extend_from_slice(b"\r\n--XyZ--\r\n");
        let parts = super::parse("multipart/form-data; boundary=XyZ", &body).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].name.as_str(), parts[0].data.as_slice()),
            ("caption", &b"hello"[..])
        );
        assert_eq!(parts[1].name, "document");
        assert_eq!(parts[1].filename.as_deref(), Some("a.bin"));
        assert_eq!(parts[1].data, vec![0, 255, 13, 10, 45, 45, 1]);
        assert!(super::parse("application/json", b"{}").is_none());
    }
}
