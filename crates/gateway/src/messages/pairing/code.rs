//! Pairing codes: 8 characters people can read aloud and type (no 0/O,
//! 1/I), 40 random bits from the operating system's generator, compared
//! in constant time.

use switchboard_core::constant_time_eq;

/// The letters a code is made of (32 of them: one per 5 random bits).
const ALPHABET: &[u8; 32] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";

/// How long a code is.
#[cfg(test)]
const LEN: usize = 8;

/// A fresh code.
pub(crate) fn fresh() -> String {
    // A v4 UUID is 122 bits from the OS generator; 8 of its bytes that
    // carry no version or variant bits, each reduced mod 32 (256 is a
    // multiple of 32, so no letter is likelier).
    let bytes = uuid::Uuid::new_v4().into_bytes();
    [0, 1, 2, 3, 4, 5, 10, 11]
        .iter()
        .map(|&i| char::from(ALPHABET[usize::from(bytes[i] % 32)]))
        .collect()
}

/// A typed code as stored: upper case, spaces and dashes dropped.
pub(crate) fn normalize(typed: &str) -> String {
    typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_uppercase)
        .collect()
}

/// Whether `typed` is `code`, in time that does not depend on how much of
/// it matched.
pub(crate) fn matches(typed: &str, code: &str) -> bool {
    constant_time_eq(normalize(typed).as_bytes(), code.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_readable_and_match_as_typed() {
        let a = fresh();
        assert_eq!(a.len(), LEN);
        assert!(a.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()), "{a}");
        assert!(!a.contains(['0', 'O', '1', 'I']), "{a}");
        assert_ne!(a, fresh());
        assert!(matches(&format!(" {}-{} ", a[..4].to_lowercase(), &a[4..]), &a));
        assert!(!matches("ABCD2345", "ABCD2346"));
    }
}
