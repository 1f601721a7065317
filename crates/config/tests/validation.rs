//! Each broken configuration is refused with a problem naming its TOML path.

use switchboard_config::{Config, DelegateMode};

const BASE: &str = r#"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "m"

[agents.main]
model_provider = "local"
"#;

fn problems(extra: &str) -> Vec<String> {
    // Top-level keys must come before the first table.
    let text = if extra.starts_with('[') {
        format!("{BASE}\n{extra}")
    } else {
        format!("{extra}\n{BASE}")
    };
    match Config::from_toml_str(&text, "test.toml") {
        Ok(_) => panic!("config was accepted:\n{text}"),
        Err(e) => e.problems.iter().map(std::string::ToString::to_string).collect(),
    }
}

fn assert_problem(extra: &str, path: &str, needle: &str) {
    let found = problems(extra);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with(&format!("{path}:")) && p.contains(needle)),
        "expected a problem at `{path}` containing `{needle}`, got {found:#?}"
    );
}

#[test]
fn shipped_configs_are_valid() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config");
    let mut files = vec![format!("{root}/switchboard.toml")];
    for e in std::fs::read_dir(format!("{root}/examples")).unwrap() {
        files.push(e.unwrap().path().display().to_string());
    }
    assert!(files.len() >= 3);
    for f in files {
        Config::load(std::path::Path::new(&f)).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn minimal_config_gets_default_profiles() {
    let c = Config::from_toml_str(BASE, "t").unwrap();
    assert_eq!(c.database_url, "sqlite://data/control_plane.db");
    assert!(c.risk_profiles.contains_key("default"));
    assert_eq!(c.runtime_profile_of("main").max_tool_iterations, 10);
    assert!(c.agents["main"].delegate_same_risk_profile);
}

#[test]
fn unknown_top_level_key() {
    assert_problem("colour = 'blue'", "colour", "unknown field `colour`");
}

#[test]
fn unknown_nested_key_names_its_path() {
    let text = format!("{BASE}\nsystem_promt = 'x'");
    let e = Config::from_toml_str(&text, "t").unwrap_err();
    let p = &e.problems[0];
    assert_eq!(p.path, "agents.main.system_promt");
    assert!(p.message.contains("unknown field `system_promt`"), "{p}");
}

#[test]
fn unknown_provider_reference() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'nope'",
        "agents.ops.model_provider",
        "unknown provider 'nope'",
    );
}

#[test]
fn unknown_risk_profile() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'local'\nrisk_profile = 'strict'",
        "agents.ops.risk_profile",
        "define [risk_profiles.strict]",
    );
}

#[test]
fn unknown_runtime_profile() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'local'\nruntime_profile = 'fast'",
        "agents.ops.runtime_profile",
        "unknown runtime profile 'fast'",
    );
}

#[test]
fn delegate_to_unknown_agent() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'local'\ndelegates = ['ghost']",
        "agents.ops.delegates[0]",
        "unknown agent 'ghost'",
    );
}

#[test]
fn spawn_depth_out_of_range() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'local'\n[agents.ops.subagents]\nmax_spawn_depth = 6",
        "agents.ops.subagents.max_spawn_depth",
        "use 1 to 5",
    );
}

#[test]
fn children_out_of_range() {
    assert_problem(
        "[agents.ops]\nmodel_provider = 'local'\n[agents.ops.subagents]\nmax_children_per_agent = 0",
        "agents.ops.subagents.max_children_per_agent",
        "use 1 to 20",
    );
}

#[test]
fn zero_tree_iterations() {
    assert_problem(
        "[runtime_profiles.default]\nmax_execution_tree_iterations = 0",
        "runtime_profiles.default.max_execution_tree_iterations",
        "0 is invalid",
    );
}

#[test]
fn approval_route_to_unknown_channel() {
    assert_problem(
        "[risk_profiles.default.approval_route]\napprover_channel = 'telegram.ops'\napprover_recipient = 'x'\napprovers = ['tg:1']",
        "risk_profiles.default.approval_route.approver_channel",
        "unknown channel 'telegram.ops'",
    );
}

#[test]
fn malformed_approver_id() {
    assert_problem(
        "[risk_profiles.default.approval_route]\napprover_channel = 'cli'\napprover_recipient = 'x'\napprovers = ['alice']",
        "risk_profiles.default.approval_route.approvers[0]",
        "is not a user id",
    );
}

#[test]
fn bad_enum_value_names_its_path() {
    let text = format!("{BASE}\n[risk_profiles.default]\nlevel = 'yolo'");
    let e = Config::from_toml_str(&text, "t").unwrap_err();
    assert_eq!(e.problems[0].path, "risk_profiles.default.level");
    assert!(e.problems[0].message.contains("yolo"));
}

#[test]
fn misspelled_tool_name() {
    assert_problem(
        "[risk_profiles.default]\nexcluded_tools = ['shel']",
        "risk_profiles.default.excluded_tools[0]",
        "unknown tool 'shel'",
    );
}

#[test]
fn bad_cron_schedule_and_agent() {
    let found = problems("[[cron]]\nid = 'x'\nschedule = 'every day'\nagent = 'ghost'\nprompt = 'p'");
    assert!(found.iter().any(|p| p.starts_with("cron[0].schedule:")), "{found:#?}");
    assert!(found.iter().any(|p| p.starts_with("cron[0].agent:")), "{found:#?}");
}

#[test]
fn temperature_and_fallback_errors() {
    let found =
        problems("[providers.other]\nkind = 'openai'\nmodel = 'x'\ntemperature = 3.5\nfallbacks = ['other', 'gone']");
    assert!(
        found.iter().any(|p| p.starts_with("providers.other.temperature:")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("providers.other.fallbacks[0]:") && p.contains("itself"))
    );
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("providers.other.fallbacks[1]:") && p.contains("'gone'"))
    );
}

#[test]
fn matrix_without_credentials() {
    assert_problem(
        "[channels.matrix.main]\nhomeserver = 'http://127.0.0.1:8008'\nuser_id = '@bot:localhost'",
        "channels.matrix.main",
        "set password or access_token",
    );
}

#[test]
fn matrix_rooms_and_sync_timeout_are_checked() {
    let base =
        "[channels.matrix.main]\nhomeserver = 'http://127.0.0.1:8008'\nuser_id = '@bot:localhost'\npassword = 'pw'\n";
    assert_problem(
        &format!("{base}auto_join = ['!ok:localhost', 'ops-room']"),
        "channels.matrix.main.auto_join[1]",
        "is not a room id",
    );
    // Room version 12 ids have no server part; both forms are accepted.
    let v12 = format!(
        "{BASE}\n{base}auto_join = ['!Abc123defGhi', '!old:localhost', '#ops:localhost']\nrooms = {{ ops = '!Abc123defGhi' }}"
    );
    Config::from_toml_str(&v12, "test.toml").expect("both room id forms are accepted");
    assert_problem(
        &format!("{base}rooms = {{ ops = '#ops:localhost' }}"),
        "channels.matrix.main.rooms.ops",
        "is not a room id",
    );
    assert_problem(
        &format!("{base}sync_timeout_secs = 0"),
        "channels.matrix.main.sync_timeout_secs",
        "between 1 and 300",
    );
    // An unset secret is a warning (the variable may be set where it runs).
    let text = format!("{BASE}\n{base}store_passphrase = 'env:SWITCHBOARD_TEST_UNSET_PASSPHRASE'");
    let config = Config::from_toml_str(&text, "test.toml").expect("valid");
    let warnings: Vec<String> = config.warnings().iter().map(std::string::ToString::to_string).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("channels.matrix.main.store_passphrase:")),
        "{warnings:#?}"
    );
}

#[test]
fn bad_database_url() {
    assert_problem("database_url = 'mysql://x'", "database_url", "unsupported database URL");
}

#[test]
fn all_problems_are_reported_at_once() {
    let found = problems(
        "[agents.a]\nmodel_provider = 'x'\nrisk_profile = 'y'\ndelegates = ['z']\n[agents.a.subagents]\nmax_spawn_depth = 0",
    );
    assert!(found.len() >= 4, "{found:#?}");
}

#[test]
fn syntax_errors_give_a_line() {
    let e = Config::from_toml_str("[agents.main\nx=1", "t").unwrap_err();
    assert!(e.problems[0].message.contains("line 1"), "{}", e.problems[0]);
}

#[test]
fn delegate_entries_normalize_to_objects() {
    let text = format!(
        "{BASE}delegates = ['b', {{ agent = 'c', mode = 'independent' }}]\n[agents.b]\nmodel_provider = 'local'\n[agents.c]\nmodel_provider = 'local'"
    );
    let c = Config::from_toml_str(&text, "t").unwrap();
    let d = &c.agents["main"].delegates;
    assert_eq!(d[0].mode(), DelegateMode::Bounded);
    assert_eq!(d[1].mode(), DelegateMode::Independent);
    let saved = toml::to_string(&d[0].normalized()).unwrap();
    assert!(saved.contains("mode = \"bounded\""), "{saved}");
}

#[test]
fn discord_ids_and_urls_are_checked() {
    assert_problem(
        "[channels.discord.main]\nbot_token = 'x'\nguilds = ['my-guild']\n",
        "channels.discord.main.guilds",
        "'my-guild' is not a guild id",
    );
    assert_problem(
        "[channels.discord.main]\nbot_token = 'x'\nrooms = { ops = '#ops' }\n",
        "channels.discord.main.rooms",
        "not a channel id",
    );
    assert_problem(
        "[channels.discord.main]\nbot_token = 'x'\napi_url = 'discord.local'\n",
        "channels.discord.main.api_url",
        "not an http(s) URL",
    );
    let ok = format!("{BASE}\n[channels.discord.main]\nbot_token = 'x'\nguilds = ['123']\nrooms = {{ ops = '456' }}\n");
    Config::from_toml_str(&ok, "test.toml").expect("a Discord bot with ids is fine");
}

#[test]
fn a_proxied_console_needs_its_own_listener() {
    assert_problem(
        "[web]\nconsole = true\npublic_url = \"https://ops.example.com\"\n",
        "web.console_listen",
        "point the proxy there, never at web.listen",
    );
    assert_problem(
        "[web]\nconsole = true\nconsole_listen = \"0.0.0.0:8089\"\n",
        "web.console_listen",
        "loopback address other than web.listen",
    );
    let ok = format!(
        "{BASE}\n[web]\nconsole = true\npublic_url = \"https://ops.example.com\"\nconsole_listen = \"127.0.0.1:8089\"\n"
    );
    assert!(Config::from_toml_str(&ok, "test.toml").is_ok());
}

#[test]
fn sandbox_limits_too_low_to_start_a_command() {
    assert_problem("[sandbox]\nmax_processes = 2\n", "sandbox.max_processes", "at least 8");
}

#[test]
fn console_links_point_at_the_console_listener() {
    let text = format!("{BASE}\n[web]\nconsole = true\nconsole_listen = \"127.0.0.1:8089\"\n");
    let config = Config::from_toml_str(&text, "test.toml").unwrap();
    assert_eq!(config.web.base_url(), "http://127.0.0.1:8089");
}

#[test]
fn mcp_servers_need_one_transport_and_agents_name_known_ones() {
    assert_problem("[mcp_servers.t]\nargs = [\"x\"]", "mcp_servers.t", "give command");
    assert_problem(
        "[mcp_servers.t]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"",
        "mcp_servers.t.url",
        "not both",
    );
    assert_problem("[mcp_servers.t]\nurl = \"ftp://x\"", "mcp_servers.t.url", "not an http");
    assert_problem(
        "[mcp_servers.t]\nurl = \"http://127.0.0.1:1/mcp\"\nenv = { A = \"b\" }",
        "mcp_servers.t.env",
        "only a stdio server",
    );
    assert_problem(
        "[mcp_servers.\"a.b\"]\ncommand = \"x\"",
        "mcp_servers.a.b",
        "only letters",
    );
    assert_problem("[mcp_servers.t_]\ncommand = \"x\"", "mcp_servers.t_", "or end with '_'");
    // Server `a__b`'s tool `c` and server `a`'s tool `b__c` would both be
    // `a__b__c` to the model.
    assert_problem(
        "[mcp_servers.a__b]\ncommand = \"x\"",
        "mcp_servers.a__b",
        "may not hold \"__\"",
    );
    assert_problem(
        "[mcp_servers.t]\ncommand = \"x\"\nworkspace = \"workspace/main/notes\"",
        "mcp_servers.t.workspace",
        "a folder of its own",
    );
    assert_problem(
        "[mcp_servers.t]\ncommand = \"x\"\nworkspace = \".\"",
        "mcp_servers.t.workspace",
        "a folder of its own",
    );
    assert_problem(
        "[mcp_servers.t]\ncommand = \"x\"\ntimeout_secs = 0",
        "mcp_servers.t.timeout_secs",
        "1 to 3600",
    );
    assert_problem(
        "[mcp_servers.t]\ncommand = \"x\"\nrisk = { x = \"huge\" }",
        "mcp_servers.t.risk.x",
        "'huge' is not a risk; use read, low, medium or high",
    );
    // BASE's agent names a server nobody configured.
    let text = format!("{BASE}mcp_servers = [\"tracker\"]\n");
    let err = Config::from_toml_str(&text, "t.toml").expect_err("unknown server");
    assert!(err.to_string().contains("agents.main.mcp_servers[0]"), "{err}");
    assert!(err.to_string().contains("unknown MCP server 'tracker'"), "{err}");
    // A profile may list one tool or all of a configured server's tools.
    assert_problem(
        "[risk_profiles.r]\nallowed_tools = [\"nope.read\"]",
        "risk_profiles.r.allowed_tools[0]",
        "MCP server 'nope'",
    );
    let ok = format!(
        "{BASE}mcp_servers = [\"tracker\"]\n[mcp_servers.tracker]\ncommand = \"t\"\nrisk = {{ read_issue = \"read\", \"*\" = \"medium\" }}\n[risk_profiles.default]\nallowed_tools = [\"tracker.*\", \"tracker.read_issue\", \"shell\"]\n"
    );
    let c = Config::from_toml_str(&ok, "t.toml").expect("valid");
    let server = &c.mcp_servers["tracker"];
    assert_eq!(
        server.configured_risk("read_issue"),
        Some(switchboard_config::Risk::Read)
    );
    assert_eq!(server.configured_risk("other"), Some(switchboard_config::Risk::Medium));
    assert!(c.risk_profiles["default"].offers_tool("tracker.create_issue"));
    assert!(!c.risk_profiles["default"].offers_tool("other.create_issue"));
}

#[test]
fn routes_people_and_the_two_person_rule_are_checked() {
    let discord = "[channels.discord.main]\nbot_token = \"x\"\nallowed_users = [\"paired\", \"discord:1\"]\n";
    assert_problem(
        &format!("{discord}[[routes]]\nchannel = \"discord.main\"\nchat = \"5\"\nagent = \"nobody\"\n"),
        "routes[0].agent",
        "unknown agent 'nobody'",
    );
    assert_problem(
        &format!("{discord}[[routes]]\nchat = \"5\"\nagent = \"main\"\n"),
        "routes[0].channel",
        "missing",
    );
    assert_problem(
        &format!(
            "{discord}[[routes]]\nchannel = \"discord.main\"\nchat = \"5\"\nagent = \"main\"\n[[routes]]\nchannel = \"discord.main\"\nchat = \"5\"\nagent = \"main\"\nrequire_mention = false\n"
        ),
        "routes[1]",
        "overlaps routes[0]",
    );
    assert_problem(
        "[channels.local.x]\nallowed_users = [\"paired\"]\n",
        "channels.local.x.allowed_users",
        "for chat platforms",
    );
    assert_problem(
        "[people.ann]\nids = [\"tg:1\"]\n[people.bob]\nids = [\"tg:1\"]\n",
        "people.bob.ids",
        "listed for [people.ann] too",
    );
    let route = "[channels.telegram.t]\nbot_token = \"x\"\n[risk_profiles.r.approval_route]\napprover_channel = \"telegram.t\"\napprover_recipient = \"1\"\napprovals_required = 2\n";
    // Two ids of one person are one person.
    assert_problem(
        &format!("{route}approvers = [\"tg:1\", \"@ann:hs\"]\n[people.ann]\nids = [\"tg:1\", \"@ann:hs\"]\n"),
        "risk_profiles.r.approval_route.approvers",
        "at least two different people",
    );
    assert_problem(
        &format!("{route}approvers = [\"tg:1\", \"tg:2\"]\napprovals_required_min_risk = \"severe\"\n"),
        "risk_profiles.r.approval_route.approvals_required_min_risk",
        "not a risk",
    );
}

#[test]
fn an_agents_models_must_be_configured_providers() {
    assert_problem(
        "[agents.main.workspace]\n[agents.x]\nmodel_provider = \"local\"\nmodels = [\"nope\"]\n",
        "agents.x.models[0]",
        "unknown provider 'nope'",
    );
}

#[test]
fn the_local_api_socket_stays_out_of_the_workspace_and_the_console_needs_tcp() {
    assert_problem(
        "[web]\nsocket = \"workspace/main/api.sock\"\n",
        "web.socket",
        "where commands could reach it",
    );
    assert_problem(
        "[web]\nsocket = \"data/../workspace/x.sock\"\n",
        "web.socket",
        "where commands could reach it",
    );
    assert_problem(
        &format!("[web]\nsocket = \"/{}/s.sock\"\n", "d".repeat(120)),
        "web.socket",
        "the limit is 107",
    );
    assert_problem("[web]\nconsole = true\n", "web.console", "needs a TCP address");
    assert_problem("[web]\nlisten = \"0.0.0.0:8088\"\n", "web.listen", "loopback address");
    let ok =
        format!("{BASE}\n[web]\nsocket = \"data/switchboard.sock\"\nlisten = \"127.0.0.1:8088\"\nconsole = true\n");
    assert!(Config::from_toml_str(&ok, "test.toml").is_ok());
}

#[test]
fn empty_tokens_and_webhook_secrets_are_refused() {
    let local = problems("[channels.local.team]\nallowed_users = [\"*\"]\n[channels.local.team.people]\nann = \"\"\n");
    assert!(
        local
            .iter()
            .any(|p| p.starts_with("channels.local.team.people.ann") && p.contains("empty token")),
        "{local:?}"
    );
    let shared = problems("[channels.local.team]\nallowed_users = [\"*\"]\ntoken = \"  \"\n");
    assert!(
        shared.iter().any(|p| p.starts_with("channels.local.team.token")),
        "{shared:?}"
    );
    let webhook = problems(
        "[channels.telegram.main]\nbot_token = \"1:A\"\nallowed_users = [\"*\"]\nwebhook_url = \"https://bot.example.org/tg\"\nwebhook_listen = \"127.0.0.1:8443\"\nwebhook_secret = \"\"\n",
    );
    assert!(
        webhook
            .iter()
            .any(|p| p.starts_with("channels.telegram.main.webhook_secret")),
        "{webhook:?}"
    );
}
