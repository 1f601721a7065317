//! TOML text written by the commands that write configuration files
//! (`init`, `migrate`).

/// `s` as a TOML basic string on one line (usable as a value or a key):
/// quotes and backslashes escaped, control characters as `\uXXXX`.
pub(crate) fn basic_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
