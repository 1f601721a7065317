//! A short, stable digest of bytes (FNV-1a, 64 bits, as 16 hex digits):
//! for telling things apart (configuration files, tool-call receipts),
//! never for security.

/// FNV-1a over `bytes`, as 16 lowercase hex digits.
pub fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        // The FNV-1a offset basis for no bytes, and the published value for "a".
        assert_eq!(super::fnv1a_hex(b""), "cbf29ce484222325");
        assert_eq!(super::fnv1a_hex(b"a"), "af63dc4c8601ec8c");
    }
}
