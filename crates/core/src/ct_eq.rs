//! Comparing secrets (webhook secrets, API tokens) without leaking through
//! timing how much of a guess was right.

/// Whether `a == b`, in time that depends only on the lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // Keep the optimizer from turning the fold into an early exit.
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn equal_only_when_equal() {
        assert!(super::constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!super::constant_time_eq(b"s3cret", b"s3creT"));
        assert!(!super::constant_time_eq(b"s3cret", b"s3cre"));
        assert!(super::constant_time_eq(b"", b""));
    }
}
