//! docs/configuration.md names every configuration key. The keys of each
//! table are learned from the schema itself: a table with an unknown key is
//! refused with the list of the keys it accepts.

use switchboard_config::Config;

/// Every table of the schema: the TOML header that opens it (with made-up
/// names), and the heading of its section in docs/configuration.md.
const TABLES: &[(&str, &str)] = &[
    ("", "## Top level"),
    ("[providers.p]", "## [providers.&lt;name&gt;]"),
    ("[agents.a]", "## [agents.&lt;name&gt;]"),
    ("[agents.a.workspace]", "### [agents.&lt;name&gt;.workspace]"),
    ("[agents.a.subagents]", "### [agents.&lt;name&gt;.subagents]"),
    (
        "[agents.a.subagents.tools]",
        "### [agents.&lt;name&gt;.subagents.tools]",
    ),
    ("[risk_profiles.r]", "## [risk_profiles.&lt;name&gt;]"),
    (
        "[risk_profiles.r.delegation_policy]",
        "### [risk_profiles.&lt;name&gt;.delegation_policy]",
    ),
    (
        "[risk_profiles.r.approval_route]",
        "### [risk_profiles.&lt;name&gt;.approval_route]",
    ),
    ("[runtime_profiles.x]", "## [runtime_profiles.&lt;name&gt;]"),
    ("[cost]", "## [cost]"),
    ("[cost.prices.x]", "### [cost.prices.&lt;provider or model&gt;]"),
    ("[channels]", "## [channels]"),
    ("[channels.telegram.t]", "### [channels.telegram.&lt;alias&gt;]"),
    ("[channels.discord.d]", "### [channels.discord.&lt;alias&gt;]"),
    ("[channels.matrix.m]", "### [channels.matrix.&lt;alias&gt;]"),
    ("[channels.local.l]", "### [channels.local.&lt;alias&gt;]"),
    ("[[cron]]", "## [[cron]]"),
    ("[web]", "## [web]"),
    ("[lanes]", "## [lanes]"),
    ("[lanes.subagent]", "### [lanes.subagent]"),
    ("[limits]", "## [limits]"),
    ("[storage]", "## [storage]"),
    ("[attachments]", "## [attachments]"),
    ("[cluster]", "## [cluster]"),
    ("[sandbox]", "## [sandbox]"),
    ("[mcp_servers.s]", "## [mcp_servers.&lt;name&gt;]"),
    ("[telemetry]", "## [telemetry]"),
    ("[[routes]]\nagent = \"a\"", "## [[routes]]"),
    ("[people.p]", "## [people.&lt;name&gt;]"),
];

/// The keys `table` accepts, from the refusal of an unknown one.
fn keys_of(table: &str) -> Vec<String> {
    let text = format!("{table}\nnot_a_key_of_anything = 1\n");
    let err = Config::from_toml_str(&text, "probe").expect_err("an unknown key is refused");
    let message = err.to_string();
    let Some((_, expected)) = message
        .split_once("expected one of ")
        .or_else(|| message.split_once("expected "))
    else {
        panic!("{table}: no list of keys in {message}");
    };
    // "`a`, `b`, `c`" or "`a` or `b`": every other piece between backticks.
    expected.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The lines of the section under `heading`, up to the next heading.
fn section(doc: &str, heading: &str) -> String {
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    assert!(
        lines.next().is_some(),
        "docs/configuration.md has no section `{heading}`"
    );
    lines.take_while(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_key_is_documented_in_its_section() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let doc = std::fs::read_to_string(path).expect("docs/configuration.md");
    let mut missing = Vec::new();
    for (table, heading) in TABLES {
        let keys = keys_of(table);
        assert!(!keys.is_empty(), "{table}: no keys learned");
        let text = section(&doc, heading);
        for key in keys {
            if !text.contains(&format!("| `{key}` |")) {
                missing.push(format!("{heading}: `{key}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys missing from docs/configuration.md:\n{}",
        missing.join("\n")
    );
}
