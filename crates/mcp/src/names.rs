//! The names of MCP tools: `<server>.<tool>` for people (configuration,
//! approvals, `/tools`), and a name every provider accepts for the model.
//! OpenAI and Anthropic both take only `[A-Za-z0-9_-]`, at most 64
//! characters, so the model sees `<server>__<tool>` with anything else
//! turned into `_`, and a long name shortened with a hash of the whole.

/// The longest function name the providers accept.
const MAX: usize = 64;

/// The name the model calls the tool `tool` of `server` by.
pub fn wire_name(server: &str, tool: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let whole = format!("{}__{}", safe(server), safe(tool));
    if whole.len() <= MAX {
        return whole;
    }
    let hash = fnv1a(format!("{server}.{tool}").as_bytes());
    format!("{}_{hash:08x}", &whole[..MAX - 9])
}

/// The people's name of the tool `tool` of `server`.
pub fn display_name(server: &str, tool: &str) -> String {
    format!("{server}.{tool}")
}

/// A small stable hash (the same name gives the same wire name in every
/// process, so transcripts stay meaningful across restarts).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::wire_name;

    #[test]
    fn wire_names_are_what_providers_accept() {
        assert_eq!(wire_name("tracker", "create_issue"), "tracker__create_issue");
        assert_eq!(wire_name("fs", "read.file/v2"), "fs__read_file_v2");
        let long = wire_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, wire_name("server", &"x".repeat(101)));
        for name in [long, wire_name("é", "ß")] {
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
        }
    }
}
