//! The gateway half of the fake: one websocket session at a time.

use super::payloads::{self, APP_ID, GUILD_ID};
use super::{Control, Shared};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// MESSAGE_CONTENT, a privileged intent.
const MESSAGE_CONTENT: u64 = 1 << 15;

pub(crate) async fn serve(listener: tokio::net::TcpListener, shared: Shared) {
    while let Ok((stream, _)) = listener.accept().await {
        if shared.lock().refuse_connections {
            continue;
        }
        tokio::spawn(connection(stream, shared.clone()));
    }
}

async fn connection(stream: tokio::net::TcpStream, shared: Shared) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let hello = json!({"op": 10, "d": {"heartbeat_interval": 41_250}});
    if ws.send(Message::Text(hello.to_string())).await.is_err() {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Control>();
    loop {
        tokio::select! {
            frame = ws.next() => {
                let Some(Ok(frame)) = frame else { break };
                let Message::Text(text) = frame else {
                    if matches!(frame, Message::Close(_)) { break }
                    continue;
                };
                let Ok(v) = serde_json::from_str::<Value>(&text) else { break };
                let answer = match v["op"].as_u64() {
                    Some(1) => Some(Message::Text(json!({"op": 11}).to_string())),
                    Some(2) if !identify(&shared, &v["d"], &tx) => {
                        let close = CloseFrame { code: CloseCode::Library(4014), reason: "Disallowed intent(s).".into() };
                        let _ = ws.send(Message::Close(Some(close))).await;
                        break;
                    }
                    Some(6) if !resume(&shared, &v["d"], &tx) => Some(Message::Text(json!({"op": 9, "d": false}).to_string())),
                    _ => None,
                };
                if let Some(a) = answer && ws.send(a).await.is_err() {
                    break;
                }
            }
            ctl = rx.recv() => match ctl {
                Some(Control::Dispatch(ev)) => {
                    if ws.send(Message::Text(ev.to_string())).await.is_err() { break }
                }
                Some(Control::InvalidSession) => {
                    let invalid = json!({"op": 9, "d": false});
                    if ws.send(Message::Text(invalid.to_string())).await.is_err() { break }
                }
                // Cut the connection: no close frame.
                Some(Control::Drop) | None => return,
            },
        }
    }
    let mut s = shared.lock();
    if s.live.as_ref().is_some_and(|l| l.same_channel(&tx)) {
        s.live = None;
    }
}

/// A new session: READY. False when the intents are refused.
fn identify(shared: &Shared, d: &Value, tx: &mpsc::UnboundedSender<Control>) -> bool {
    let intents = d["intents"].as_u64().unwrap_or(0);
    let session = format!("session-{}", shared.id());
    {
        let mut s = shared.lock();
        s.identifies += 1;
        s.last_intents = intents;
        if s.deny_message_content && intents & MESSAGE_CONTENT != 0 {
            shared.changed.notify_waiters();
            return false;
        }
        s.session = Some(session.clone());
        s.seq = 0;
        s.log.clear();
        s.live = Some(tx.clone());
    }
    shared.dispatch(
        "READY",
        json!({
            "v": 10, "user": payloads::bot_user(), "guilds": [{"id": GUILD_ID.to_string(), "unavailable": true}],
            "session_id": session, "resume_gateway_url": shared.ws_url, "shard": [0, 1],
            "application": {"id": APP_ID.to_string(), "flags": 0}, "private_channels": [],
            "relationships": [], "presences": [], "guild_join_requests": [], "geo_ordered_rtc_regions": [],
            "session_type": "normal", "auth": {}, "user_settings": {}
        }),
    );
    shared.changed.notify_waiters();
    true
}

/// Replay what the session missed, then RESUMED. False when the session is
/// gone.
fn resume(shared: &Shared, d: &Value, tx: &mpsc::UnboundedSender<Control>) -> bool {
    let mut s = shared.lock();
    let asked = d["session_id"].as_str().unwrap_or("");
    if s.session.as_deref() != Some(asked) {
        return false;
    }
    s.resumes += 1;
    let after = d["seq"].as_u64().unwrap_or(0);
    for (seq, ev) in &s.log {
        if *seq > after {
            let _ = tx.send(Control::Dispatch(ev.clone()));
        }
    }
    s.live = Some(tx.clone());
    drop(s);
    shared.dispatch("RESUMED", json!({"_trace": ["fake-discord"]}));
    shared.changed.notify_waiters();
    true
}
