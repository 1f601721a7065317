//! What this process has seen of each model provider: when it last
//! answered and its last error, for the operator console's health page.
//! Process-wide, like the providers' own connection pools.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One provider's record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderHealth {
    /// When it last answered (Unix ms).
    pub last_ok_at: Option<i64>,
    /// Its last error and when (Unix ms).
    pub last_error: Option<(i64, String)>,
}

static BOARD: LazyLock<Mutex<BTreeMap<String, ProviderHealth>>> = LazyLock::new(Mutex::default);

pub(crate) fn answered(provider: &str) {
    BOARD.lock().entry(provider.to_string()).or_default().last_ok_at = Some(switchboard_store::now_ms());
}

pub(crate) fn failed(provider: &str, error: &str) {
    BOARD.lock().entry(provider.to_string()).or_default().last_error =
        Some((switchboard_store::now_ms(), error.chars().take(300).collect()));
}

/// Every provider this process has called, by name.
pub fn provider_health() -> BTreeMap<String, ProviderHealth> {
    BOARD.lock().clone()
}
