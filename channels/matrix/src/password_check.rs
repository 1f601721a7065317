//! Whether a homeserver accepts the bot's password, asked without leaving
//! anything behind: log in, ask `whoami` with the new token, log that
//! session out (its device goes with it). `switchboard init` asks this
//! when the password is typed in; the channel itself logs in only when it
//! starts, once, and keeps its device.

use std::time::Duration;
use switchboard_core::ChannelError;

/// Who the homeserver says `user_id` is, once `password` is accepted.
pub async fn check_password(homeserver: &str, user_id: &str, password: &str) -> Result<String, ChannelError> {
    let base = homeserver.trim_end_matches('/');
    let http = switchboard_http::client();
    let unreachable = |_| ChannelError::Transient("the homeserver could not be reached".into());
    let body = serde_json::json!({
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": user_id},
        "password": password,
        "initial_device_display_name": "switchboard init (checking the password)",
    });
    let answer = http
        .post(format!("{base}/_matrix/client/v3/login"))
        .json(&body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(unreachable)?;
    let status = answer.status();
    let login: serde_json::Value = answer.json().await.unwrap_or_default();
    if status.as_u16() == 403 || status.as_u16() == 401 {
        return Err(ChannelError::Permanent(format!(
            "the homeserver refused the password ({})",
            login["errcode"].as_str().unwrap_or("M_FORBIDDEN")
        )));
    }
    let Some(token) = login["access_token"].as_str().filter(|_| status.is_success()) else {
        return Err(ChannelError::Transient(format!("the login answered {status}")));
    };
    let who: serde_json::Value = http
        .get(format!("{base}/_matrix/client/v3/account/whoami"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(unreachable)?
        .json()
        .await
        .unwrap_or_default();
    let _ = http
        .post(format!("{base}/_matrix/client/v3/logout"))
        .bearer_auth(token)
        .json(&serde_json::json!({}))
        .timeout(Duration::from_secs(30))
        .send()
        .await;
    who["user_id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ChannelError::Transient("whoami gave no user id".into()))
}
