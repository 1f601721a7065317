//! Files in `switchboard chat`: `/attach PATH [caption]` sends a file of
//! this machine with the next message, and a file the agent sends is
//! saved under `downloads/` in the current folder.

use std::path::{Path, PathBuf};
use switchboard_core::{Attachment, AttachmentKind};
use switchboard_runtime::files::media_type;

/// Where files the agent sends are saved.
pub(crate) const DOWNLOADS: &str = "downloads";

/// `/attach PATH [caption]` (a path with spaces in double quotes): the
/// file and the caption; `None` for any other line.
pub(crate) fn attach(line: &str) -> Option<Result<(Attachment, String), String>> {
    let rest = line.strip_prefix("/attach")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim_start();
    let (path, caption) = match rest.strip_prefix('"') {
        Some(quoted) => match quoted.split_once('"') {
            Some((p, c)) => (p, c),
            None => {
                return Some(Err(
                    "the path's closing quote is missing: /attach \"my file.pdf\" caption".into(),
                ));
            }
        },
        None => rest.split_once(char::is_whitespace).unwrap_or((rest, "")),
    };
    if path.is_empty() {
        return Some(Err("usage: /attach PATH [caption]".into()));
    }
    Some(describe(Path::new(path)).map(|a| (a, caption.trim().to_string())))
}

/// `path` as an attachment the terminal channel fetches again.
fn describe(path: &Path) -> Result<Attachment, String> {
    let full = path
        .canonicalize()
        .map_err(|e| format!("cannot attach {}: {e}", path.display()))?;
    let meta = std::fs::metadata(&full).map_err(|e| format!("cannot attach {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("cannot attach {}: not a file", path.display()));
    }
    let name = full
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mime = media_type(&name);
    Ok(Attachment {
        kind: AttachmentKind::of_mime(Some(mime)),
        name,
        mime: Some(mime.to_string()),
        size: Some(meta.len()),
        source: full.to_string_lossy().into_owned(),
        duration_secs: None,
    })
}

/// Save `data` as `name` under `dir`, never over an existing file
/// (`report.csv`, `report-1.csv`, ...); the path written.
pub(crate) fn save_download(dir: &Path, name: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.to_string(), String::new()),
    };
    for n in 0..1000 {
        let candidate = if n == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{stem}-{n}{ext}"))
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut f) => {
                std::io::Write::write_all(&mut f, data)?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "too many files named like {name} in {}",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attach_lines_name_a_file_and_a_caption() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("my notes.md");
        std::fs::write(&file, "hi").unwrap();
        let line = format!("/attach \"{}\" what is this?", file.display());
        let (a, caption) = attach(&line).unwrap().unwrap();
        assert_eq!(
            (a.name.as_str(), a.size, caption.as_str()),
            ("my notes.md", Some(2), "what is this?")
        );
        assert_eq!(a.mime.as_deref(), Some("text/plain"));
        assert!(attach("/attachments please").is_none());
        assert!(attach("hello").is_none());
        assert!(attach("/attach").unwrap().is_err());
        assert!(
            attach("/attach /no/such/file")
                .unwrap()
                .unwrap_err()
                .contains("cannot attach")
        );
        assert!(
            attach(&format!("/attach {}", dir.path().display()))
                .unwrap()
                .unwrap_err()
                .contains("not a file")
        );
    }

    #[test]
    fn downloads_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let a = save_download(dir.path(), "r.csv", b"1").unwrap();
        let b = save_download(dir.path(), "r.csv", b"2").unwrap();
        assert_eq!(a.file_name().unwrap(), "r.csv");
        assert_eq!(b.file_name().unwrap(), "r-1.csv");
        assert_eq!(std::fs::read(a).unwrap(), b"1");
    }
}
