//! Telling configuration files apart (`switchboard status` shows each
//! instance's).

/// A short digest of the configuration file's bytes (FNV-1a, 64 bits),
/// for telling instances' files apart in `switchboard status`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    switchboard_core::fnv1a_hex(bytes)
}
