//! Signing in: a stored session (same device, so the crypto store stays
//! valid) is restored; otherwise the bot logs in with its password, or
//! adopts the configured access token after asking the homeserver which
//! device it belongs to. The session file is private to the owner.

use crate::{Auth, Settings, errors};
use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::{Client, SessionMeta, SessionTokens};
use std::path::Path;
use std::time::Duration;
use switchboard_core::ChannelError;

const SESSION_FILE: &str = "session.json";

fn permanent(what: &str, e: impl std::fmt::Display) -> ChannelError {
    ChannelError::Permanent(format!("{what}: {e}"))
}

/// A client signed in as the configured user.
pub(crate) async fn connect(s: &Settings) -> Result<Client, ChannelError> {
    let session_path = s.store_dir.join(SESSION_FILE);
    let saved = read_session(&session_path).filter(|saved| matches_settings(saved, s));
    if saved.is_none() && s.store_dir.exists() {
        // A new device needs a fresh crypto store.
        std::fs::remove_dir_all(&s.store_dir).map_err(|e| permanent("cannot reset the Matrix store", e))?;
    }
    // The store holds the device's keys: its folder is its owner's only.
    create_private_dir(&s.store_dir).map_err(|e| {
        permanent(
            &format!("cannot create the Matrix store at {}", s.store_dir.display()),
            e,
        )
    })?;
    let client = Client::builder()
        .homeserver_url(&s.homeserver)
        .sqlite_store(&s.store_dir, s.store_passphrase.as_deref())
        .request_config(RequestConfig::new().retry_limit(2).timeout(Duration::from_secs(30)))
        .build()
        .await
        .map_err(|e| permanent("cannot open the Matrix client", e))?;
    if let Some(session) = saved {
        client.restore_session(session).await.map_err(errors::map)?;
        return Ok(client);
    }
    let session = match &s.auth {
        Auth::Password(password) => {
            client
                .matrix_auth()
                .login_username(&s.user_id, password)
                .initial_device_display_name("Switchboard")
                .send()
                .await
                .map_err(|e| match e {
                    matrix_sdk::Error::Http(h) => match errors::map_http(&h) {
                        ChannelError::Permanent(why) => ChannelError::Permanent(format!(
                            "login as {} was refused ({why}); check the password",
                            s.user_id
                        )),
                        other => other,
                    },
                    other => errors::map(other),
                })?;
            client
                .matrix_auth()
                .session()
                .ok_or_else(|| ChannelError::Permanent("login returned no session".into()))?
        }
        Auth::AccessToken(token) => {
            let device = whoami(&s.homeserver, token, &s.user_id).await?;
            let session = MatrixSession {
                meta: SessionMeta {
                    user_id: s.user_id.as_str().try_into().map_err(|e| permanent("user_id", e))?,
                    device_id: device.as_str().into(),
                },
                tokens: SessionTokens {
                    access_token: token.clone(),
                    refresh_token: None,
                },
            };
            client.restore_session(session.clone()).await.map_err(errors::map)?;
            session
        }
    };
    write_session(&session_path, &session)?;
    Ok(client)
}

fn matches_settings(saved: &MatrixSession, s: &Settings) -> bool {
    saved.meta.user_id.as_str() == s.user_id
        && match &s.auth {
            Auth::Password(_) => true,
            Auth::AccessToken(t) => &saved.tokens.access_token == t,
        }
}

fn read_session(path: &Path) -> Option<MatrixSession> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "ignoring an unreadable Matrix session file");
            None
        }
    }
}

fn write_session(path: &Path, session: &MatrixSession) -> Result<(), ChannelError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let json = serde_json::to_vec(session).map_err(|e| permanent("cannot encode the session", e))?;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| permanent("cannot write the Matrix session file", e))?;
    f.write_all(&json)
        .and_then(|_| f.sync_all())
        .map_err(|e| permanent("cannot write the Matrix session file", e))?;
    std::fs::rename(&tmp, path).map_err(|e| permanent("cannot write the Matrix session file", e))
}

/// The device an access token belongs to, checking that it is the bot's.
async fn whoami(homeserver: &str, token: &str, user_id: &str) -> Result<String, ChannelError> {
    let url = format!("{}/_matrix/client/v3/account/whoami", homeserver.trim_end_matches('/'));
    let resp = switchboard_http::client()
        .get(url)
        .bearer_auth(token)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|_| ChannelError::Transient("the homeserver could not be reached".into()))?;
    let status = resp.status();
    let body: serde_json::Value = resp
        .json()
        .await
        .map_err(|_| ChannelError::Transient(format!("whoami answered {status} without JSON")))?;
    if status.is_server_error() || status.as_u16() == 429 {
        return Err(ChannelError::Transient(format!("whoami answered {status}")));
    }
    if !status.is_success() {
        return Err(ChannelError::Permanent(format!(
            "the access token was refused ({status} {}); set a valid access_token",
            body["errcode"].as_str().unwrap_or("")
        )));
    }
    if body["user_id"].as_str() != Some(user_id) {
        return Err(ChannelError::Permanent(format!(
            "the access token belongs to {}, not {user_id}",
            body["user_id"].as_str().unwrap_or("someone else")
        )));
    }
    body["device_id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ChannelError::Permanent("the access token has no device; log in with a password".into()))
}

/// Create `dir` (and missing parents) and make it 0700.
fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(test)]
mod private_dir_tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_store_folder_is_the_owners_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data/matrix/main");
        super::create_private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    }
}
