//! Times as people read them, in chats and in the console: `2026-12-03
//! 07:55:01 UTC` and `3 min ago`.

/// A Unix-ms time as `YYYY-MM-DD HH:MM:SS` (UTC).
pub(crate) fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let day = switchboard_store::utc_day(ms);
    let t = secs.rem_euclid(86_400);
    format!("{day} {:02}:{:02}:{:02}", t / 3600, (t % 3600) / 60, t % 60)
}

/// How long ago `ms` was at `now_ms`: `just now`, `42 s ago`, `3 min ago`,
/// `2 h ago`, `4 days ago`.
pub(crate) fn ago(ms: i64, now_ms: i64) -> String {
    let s = (now_ms - ms).max(0) / 1000;
    match s {
        0 => "just now".into(),
        1..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// `2026-12-03 07:55:01 UTC (3 min ago)`.
pub(crate) fn at(ms: i64, now_ms: i64) -> String {
    format!("{} UTC ({})", utc(ms), ago(ms, now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_people_say_them() {
        let t = 1_796_284_440_000; // 2026-12-03 07:54:00 UTC
        assert_eq!(utc(t), "2026-12-03 07:54:00");
        assert_eq!(ago(t, t + 400), "just now");
        assert_eq!(ago(t, t + 42_000), "42 s ago");
        assert_eq!(ago(t, t + 200_000), "3 min ago");
        assert_eq!(ago(t, t + 7_300_000), "2 h ago");
        assert_eq!(ago(t, t + 4 * 86_400_000), "4 days ago");
        assert_eq!(at(t, t + 200_000), "2026-12-03 07:54:00 UTC (3 min ago)");
    }
}
