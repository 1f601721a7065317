//! Operator console sign-in (migration 0008): one-time links and browser
//! sessions. Only SHA-256 digests of the secrets are stored, so reading the
//! database does not give anyone a way in; a link is used at most once
//! (the update that uses it is conditional on it being unused and fresh).

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sha2::{Digest, Sha256};

/// A signed-in browser session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSession {
    /// The person, as their platform proved them (`telegram:7`, `cli:alice`).
    pub user_id: String,
    /// The token state-changing requests must carry.
    pub csrf: String,
    /// When the session ends (Unix ms).
    pub expires_at: i64,
}

/// A fresh unguessable token (244 random bits, hex).
pub fn console_secret() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl<'s> Console<'s> {
    /// Mint a sign-in link token for `user_id`, valid for `ttl_ms`.
    pub async fn create_link(self, user_id: &str, ttl_ms: i64) -> Result<String, StoreError> {
        let token = console_secret();
        let now = self.0.now_ms();
        self.0
            .exec(
                Stmt::new(
                    "INSERT INTO console_links (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(digest(&token))
                .bind(user_id)
                .bind(now)
                .bind(now + ttl_ms),
            )
            .await?;
        Ok(token)
    }

    /// Use link `token` once: the person it was minted for, or `None` when
    /// it is unknown, used or expired. Old links are swept on the way.
    pub async fn use_link(self, token: &str) -> Result<Option<String>, StoreError> {
        let now = self.0.now_ms();
        let hash = digest(token);
        let used = self.0
            .exec(
                Stmt::new(
                    "UPDATE console_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1",
                )
                .bind(now)
                .bind(&hash),
            )
            .await?;
        let user = if used == 1 {
            read!(self.0, |p| sqlx::query_scalar(
                "SELECT user_id FROM console_links WHERE token_hash = $1"
            )
            .bind(&hash)
            .fetch_optional(p)
            .await)?
        } else {
            None
        };
        // Links are short-lived: forget those a day past their end.
        self.0
            .exec(Stmt::new("DELETE FROM console_links WHERE expires_at < $1").bind(now - 86_400_000))
            .await?;
        Ok(user)
    }

    /// Open a browser session for `user_id` lasting `ttl_ms`: (session id, CSRF token).
    pub async fn create_session(self, user_id: &str, ttl_ms: i64) -> Result<(String, String), StoreError> {
        let (id, csrf) = (console_secret(), console_secret());
        let now = self.0.now_ms();
        self.0.exec(
            Stmt::new(
                "INSERT INTO console_sessions (id_hash, user_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(digest(&id))
            .bind(user_id)
            .bind(&csrf)
            .bind(now)
            .bind(now + ttl_ms),
        )
        .await?;
        self.0
            .exec(Stmt::new("DELETE FROM console_sessions WHERE expires_at < $1").bind(now))
            .await?;
        Ok((id, csrf))
    }

    /// End session `id` (signing out, or a person who may no longer sign in).
    pub async fn end_session(self, id: &str) -> Result<(), StoreError> {
        self.0
            .exec(Stmt::new("DELETE FROM console_sessions WHERE id_hash = $1").bind(digest(id)))
            .await?;
        Ok(())
    }

    /// The live session `id`, if any.
    pub async fn session(self, id: &str) -> Result<Option<ConsoleSession>, StoreError> {
        let row: Option<(String, String, i64)> = read!(self.0, |p| sqlx::query_as(
            "SELECT user_id, csrf, expires_at FROM console_sessions WHERE id_hash = $1 AND expires_at > $2"
        )
        .bind(digest(id))
        .bind(self.0.now_ms())
        .fetch_optional(p)
        .await)?;
        Ok(row.map(|(user_id, csrf, expires_at)| ConsoleSession {
            user_id,
            csrf,
            expires_at,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::digest;

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

/// Console sign-in links and sessions.
#[derive(Clone, Copy)]
pub struct Console<'s>(&'s Store);

impl Store {
    /// Console sign-in links and sessions.
    pub fn console(&self) -> Console<'_> {
        Console(self)
    }
}
