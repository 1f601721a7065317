//! `env_file`: secrets kept beside the configuration in a `NAME=value`
//! file that only its owner may read (what `switchboard init` writes), so
//! the TOML names `env:NAME` and never holds a token. Values set in the
//! process's environment win over the file's.

use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLock;

/// The values of the file last loaded (a reload loads it again).
static VALUES: RwLock<Option<HashMap<String, String>>> = RwLock::new(None);

/// The file's value of `name`, when a file was loaded and sets it.
pub(crate) fn get(name: &str) -> Option<String> {
    VALUES
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()?
        .get(name)
        .cloned()
}

/// Read `path` and make its values the ones `env:NAME` secrets fall back
/// to; what is wrong with it otherwise, saying what to change. The file
/// must be a regular file (no link followed), owned by this user and
/// readable by nobody else.
pub(crate) fn load(path: &Path) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read {shown}: {e} (it must be a file, not a link)"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} must be a regular file"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{shown} holds secrets and others may read it: run `chmod 600 {shown}`"
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(format!(
            "{shown} belongs to another user: it must be this user's own file"
        ));
    }
    let mut text = String::new();
    file.take(MAX_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let values = parse(&text).map_err(|e| format!("{shown}: {e}"))?;
    *VALUES.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(values);
    Ok(())
}

/// A configuration without `env_file`: no file's values count any more.
pub(crate) fn clear() {
    *VALUES.write().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// The largest secrets file read.
const MAX_BYTES: u64 = 64 * 1024;

/// A line of a secrets file that is not `NAME=value`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvLineError {
    /// No `=` on the line (its number, from 1).
    #[error("line {0} is not NAME=value")]
    NotAssignment(usize),
    /// The name is not letters, digits and `_`.
    #[error("line {line}: '{name}' is not a variable name")]
    BadName {
        /// The line's number, from 1.
        line: usize,
        /// The name as written.
        name: String,
    },
}

/// `NAME=value` lines; blank lines and `#` comments are passed over, an
/// `export ` prefix and quotes around the value are allowed.
pub fn parse(text: &str) -> Result<HashMap<String, String>, EnvLineError> {
    let mut values = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            return Err(EnvLineError::NotAssignment(i + 1));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(EnvLineError::BadName {
                line: i + 1,
                name: name.to_string(),
            });
        }
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        values.insert(name.to_string(), unquoted.to_string());
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn values_are_read_and_a_file_others_can_read_is_refused() {
        let parsed = parse("# tokens\nexport A_B=\"x=1\"\nC='y'\n\nD=z\n").unwrap();
        assert_eq!(
            (parsed["A_B"].as_str(), parsed["C"].as_str(), parsed["D"].as_str()),
            ("x=1", "y", "z")
        );
        assert!(matches!(parse("nonsense\n"), Err(EnvLineError::NotAssignment(1))));
        assert_eq!(
            parse("A=1\nB C=2\n").unwrap_err().to_string(),
            "line 2: 'B C' is not a variable name"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.env");
        std::fs::write(&file, "SWITCHBOARD_ENV_FILE_TEST=secret\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load(&file).unwrap_err().contains("chmod 600"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        load(&file).unwrap();
        assert_eq!(get("SWITCHBOARD_ENV_FILE_TEST").as_deref(), Some("secret"));
        let link = dir.path().join("link.env");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(load(&link).unwrap_err().contains("not a link"));
        clear();
        assert_eq!(get("SWITCHBOARD_ENV_FILE_TEST"), None);
    }
}
