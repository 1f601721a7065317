//! People with accounts on the test homeserver, talking to it over the
//! client-server API as a Matrix client would.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Someone with an account on the test homeserver.
pub struct Person {
    /// The account (`@name:localhost`).
    pub user_id: String,
    /// Its access token.
    pub token: String,
    pub(super) base: String,
    pub(super) http: reqwest::Client,
    pub(super) txn: AtomicU64,
}

impl Person {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self
            .http
            .request(method, format!("{}/_matrix/client/v3{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = resp.status();
        let v: Value = resp.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path} answered {status}: {v}");
        v
    }

    /// Create a room, inviting `invite`; `direct` marks it a DM.
    pub async fn create_room(&self, name: &str, invite: &[&str], direct: bool) -> String {
        let body = json!({
            "name": name, "invite": invite, "is_direct": direct,
            "preset": if direct { "trusted_private_chat" } else { "private_chat" },
        });
        let r = self.call(reqwest::Method::POST, "/createRoom", Some(body)).await;
        r["room_id"].as_str().unwrap().to_string()
    }

    /// Create an end-to-end encrypted group room, inviting `invite`.
    pub async fn create_encrypted_room(&self, name: &str, invite: &[&str]) -> String {
        let body = json!({
            "name": name, "invite": invite, "preset": "private_chat",
            "initial_state": [{ "type": "m.room.encryption", "state_key": "",
                                "content": { "algorithm": "m.megolm.v1.aes-sha2" } }],
        });
        let r = self.call(reqwest::Method::POST, "/createRoom", Some(body)).await;
        r["room_id"].as_str().unwrap().to_string()
    }

    /// Join `room`.
    pub async fn join(&self, room: &str) {
        self.call(
            reqwest::Method::POST,
            &format!("/join/{}", percent(room)),
            Some(json!({})),
        )
        .await;
    }

    /// Invite `user` into `room`.
    pub async fn invite(&self, room: &str, user: &str) {
        let body = json!({ "user_id": user });
        self.call(
            reqwest::Method::POST,
            &format!("/rooms/{}/invite", percent(room)),
            Some(body),
        )
        .await;
    }

    /// Send any event; returns its id.
    pub async fn send_event(&self, room: &str, event_type: &str, content: Value) -> String {
        self.send_event_retrying(room, event_type, content, 1)
            .await
            .unwrap_or_else(|e| panic!("sending {event_type} into {room} failed: {e}"))
    }

    /// Send an event, retrying failures (same transaction id, so at most
    /// once) for up to `attempts` tries; returns the event id or the last error.
    pub async fn send_event_retrying(
        &self,
        room: &str,
        event_type: &str,
        content: Value,
        attempts: u32,
    ) -> Result<String, String> {
        let txn = self.txn.fetch_add(1, Ordering::Relaxed);
        let url = format!(
            "{}/_matrix/client/v3/rooms/{}/send/{event_type}/r{txn}-{}",
            self.base,
            percent(room),
            std::process::id()
        );
        let mut last = String::new();
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
            }
            match self.http.put(&url).bearer_auth(&self.token).json(&content).send().await {
                Ok(r) if r.status().is_success() => {
                    let v: Value = r.json().await.map_err(|e| e.to_string())?;
                    return Ok(v["event_id"].as_str().unwrap_or_default().to_string());
                }
                Ok(r) => last = format!("{}: {}", r.status(), r.text().await.unwrap_or_default()),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }

    /// A plain text message at the top level of a room.
    pub async fn say(&self, room: &str, body: &str) -> String {
        self.send_event(room, "m.room.message", json!({ "msgtype": "m.text", "body": body }))
            .await
    }

    /// A message that mentions `user` the way Element does (`m.mentions`).
    pub async fn mention(&self, room: &str, user: &str, body: &str) -> String {
        let content = json!({ "msgtype": "m.text", "body": body, "m.mentions": { "user_ids": [user] } });
        self.send_event(room, "m.room.message", content).await
    }

    /// A message inside the thread rooted at `root`.
    pub async fn say_in_thread(&self, room: &str, root: &str, body: &str) -> String {
        let content = json!({
            "msgtype": "m.text", "body": body,
            "m.relates_to": { "rel_type": "m.thread", "event_id": root, "is_falling_back": true,
                              "m.in_reply_to": { "event_id": root } }
        });
        self.send_event(room, "m.room.message", content).await
    }

    /// Upload `data` to the homeserver's media repository; its `mxc://` URI.
    pub async fn upload(&self, data: Vec<u8>, content_type: &str, filename: &str) -> String {
        let resp = self
            .http
            .post(format!(
                "{}/_matrix/media/v3/upload?filename={}",
                self.base,
                percent(filename)
            ))
            .bearer_auth(&self.token)
            .header("content-type", content_type)
            .body(data)
            .send()
            .await
            .expect("upload");
        let status = resp.status();
        let v: Value = resp.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "upload answered {status}: {v}");
        v["content_uri"].as_str().expect("a content URI").to_string()
    }

    /// Download `mxc` (authenticated media, as current clients do).
    pub async fn download(&self, mxc: &str) -> Vec<u8> {
        let path = mxc.strip_prefix("mxc://").expect("an mxc:// URI");
        let resp = self
            .http
            .get(format!("{}/_matrix/client/v1/media/download/{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("download");
        assert!(
            resp.status().is_success(),
            "download of {mxc} answered {}",
            resp.status()
        );
        resp.bytes().await.expect("the file").to_vec()
    }

    /// React to `event_id` with `key`; returns the reaction's event id.
    pub async fn react(&self, room: &str, event_id: &str, key: &str) -> String {
        let content = json!({ "m.relates_to": { "rel_type": "m.annotation", "event_id": event_id, "key": key } });
        self.send_event(room, "m.reaction", content).await
    }

    /// Every event in the room, oldest first (up to the last 1000).
    pub async fn events(&self, room: &str) -> Vec<Value> {
        let r = self
            .call(
                reqwest::Method::GET,
                &format!("/rooms/{}/messages?dir=b&limit=1000", percent(room)),
                None,
            )
            .await;
        let mut events = r["chunk"].as_array().cloned().unwrap_or_default();
        events.reverse();
        events
    }

    /// Messages `sender` posted in the room, oldest first.
    pub async fn messages_from(&self, room: &str, sender: &str) -> Vec<Value> {
        self.events(room)
            .await
            .into_iter()
            .filter(|e| e["type"] == "m.room.message" && e["sender"] == sender)
            .collect()
    }

    /// Wait until `sender` has posted a message matching `pred`.
    pub async fn wait_for(&self, room: &str, sender: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let messages = self.messages_from(room, sender).await;
            if let Some(m) = messages.iter().find(|m| pred(m)) {
                return m.clone();
            }
            if Instant::now() > deadline {
                let bodies: Vec<&str> = messages.iter().map(body).collect();
                panic!("no matching message from {sender} in {room} within {secs} s; it posted: {bodies:#?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The first event a watcher yields: from here on, nothing is missed.
pub const WATCH_READY: &str = "switchboard.watch.ready";

impl Person {
    /// Follow this account's `/sync` as a client would: every timeline event
    /// that arrives after now, with its `room_id`, as soon as it arrives.
    pub fn watch(&self) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (http, url, token) = (
            self.http.clone(),
            format!("{}/_matrix/client/v3/sync", self.base),
            self.token.clone(),
        );
        tokio::spawn(async move {
            let filter = r#"{"room":{"timeline":{"limit":1000}},"presence":{"types":[]}}"#;
            let mut since: Option<String> = None;
            loop {
                let mut full = format!("{url}?timeout=30000&filter={}", percent(filter));
                if let Some(s) = &since {
                    full.push_str(&format!("&since={}", percent(s)));
                }
                let response = http.get(&full).bearer_auth(&token).send().await;
                // A failed or refused sync is retried from the same place:
                // only a real answer moves the position on.
                let v = match response {
                    Ok(r) if r.status().is_success() => r.json::<Value>().await.ok(),
                    _ => None,
                };
                let Some(v) = v.filter(|v| v["next_batch"].is_string()) else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                if since.is_some()
                    && let Some(rooms) = v["rooms"]["join"].as_object()
                {
                    for (room, r) in rooms {
                        for ev in r["timeline"]["events"].as_array().into_iter().flatten() {
                            let mut ev = ev.clone();
                            ev["room_id"] = json!(room);
                            if tx.send(ev).is_err() {
                                return;
                            }
                        }
                    }
                }
                if since.is_none() && tx.send(json!({ "type": WATCH_READY })).is_err() {
                    return;
                }
                since = v["next_batch"].as_str().map(str::to_string);
            }
        });
        rx
    }
}

/// The plain body of a message event.
pub fn body(event: &Value) -> &str {
    event["content"]["body"].as_str().unwrap_or("")
}

/// The thread root a message belongs to, if any.
pub fn thread_of(event: &Value) -> Option<&str> {
    let r = &event["content"]["m.relates_to"];
    (r["rel_type"] == "m.thread").then(|| r["event_id"].as_str()).flatten()
}

/// Percent-encode everything but unreserved characters.
fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
