//! Telling configuration files apart (`switchboard status` shows each
//! instance's).

/// A short digest of the configuration file's bytes (FNV-1a, 64 bits),
/// for telling instances' files apart in `switchboard status`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
