//! `switchboard check` through the real binary.

mod support;

use support::Sandbox;

#[test]
fn shipped_configs_pass() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/config");
    let sandbox = Sandbox::new("");
    for file in [
        "switchboard.toml",
        "examples/ops-room.toml",
        "examples/openai.toml",
        "examples/local-ops.toml",
        "examples/telegram.toml",
        "examples/discord.toml",
        "examples/matrix.toml",
        "../deploy/switchboard.toml",
    ] {
        let path = format!("{root}/{file}");
        let (code, out, err) = sandbox.run(&["check", "--config", &path]);
        assert_eq!(code, 0, "{file}: {out}{err}");
        assert!(out.contains(": ok ("), "{out}");
    }
}

#[test]
fn broken_config_lists_every_problem_with_its_path() {
    let sandbox = Sandbox::new(
        r#"
[providers.local]
kind = "openai"
model = "m"
temperature = 9

[agents.main]
model_provider = "nope"
delegates = ["ghost"]
[agents.main.subagents]
max_spawn_depth = 9

[runtime_profiles.default]
max_execution_tree_iterations = 0
"#,
    );
    let (code, out, _) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 2, "{out}");
    for path in [
        "providers.local.temperature:",
        "agents.main.model_provider:",
        "agents.main.delegates[0]:",
        "agents.main.subagents.max_spawn_depth:",
        "runtime_profiles.default.max_execution_tree_iterations:",
    ] {
        assert!(out.contains(path), "missing {path} in:\n{out}");
    }
    assert!(out.contains("has 5 problem(s)"), "{out}");
}

#[test]
fn unknown_key_is_named() {
    let sandbox = Sandbox::new("[providers.local]\nkind = \"openai\"\nmodel = \"m\"\nbase_ulr = \"x\"\n");
    let (code, out, _) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 2);
    assert!(
        out.contains("providers.local.base_ulr: unknown field `base_ulr`"),
        "{out}"
    );
}

#[test]
fn missing_file_says_what_to_do() {
    let sandbox = Sandbox::new("");
    let (code, out, _) = sandbox.run(&["check", "--config", "nowhere.toml"]);
    assert_eq!(code, 2);
    assert!(
        out.contains("cannot read the file") && out.contains("--config"),
        "{out}"
    );
}
