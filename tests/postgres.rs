//! The same gateway on a PostgreSQL control plane (CI starts a server and
//! sets SWITCHBOARD_TEST_POSTGRES_URL): memory, a background delegation and
//! a restart, through the real `switchboard chat`.

mod support;

use serde_json::json;
use support::{Sandbox, fresh_database, provider};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_runs_on_postgres() {
    let Some(url) = fresh_database("chat") else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; PostgreSQL end-to-end test not run here");
        return;
    };
    let (main, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let config = format!(
        "database_url = \"{url}\"\n{}{}[agents.main]\nmodel_provider = \"pmain\"\n[agents.reviewer]\nmodel_provider = \"prev\"\n[risk_profiles.default]\nlevel = \"full\"\ndelegation_policy = {{ mode = \"allow\" }}\n",
        provider("pmain", &main.url(), ""),
        provider("prev", &reviewer.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    main.push(Step::tool_call(
        "memory_store",
        json!({"key": "db", "content": "postgres works"}),
    ));
    main.push(
        Step::tool_call(
            "delegate",
            json!({"agent": "reviewer", "prompt": "bg", "background": true}),
        )
        .when_last_contains("stored memory"),
    );
    reviewer.push(Step::text("reviewed"));
    main.push(Step::text("Both done.").when_last_contains("Background task started"));
    let mut first = sandbox.chat(&[]);
    first.send("remember and delegate");
    first.expect("main> Both done.", 30);
    // The background result may be announced before or after the reply.
    first.expect_anywhere("Result: [Agent 'reviewer' (openai/prev-model)]", 30);
    first.finish();

    main.push(Step::tool_call("memory_recall", json!({"query": "db"})));
    main.push(Step::text("recalled").when_last_contains("postgres works"));
    let mut second = sandbox.chat(&[]);
    second.send("what do you remember?");
    second.expect("main> recalled", 30);
    second.finish();
    let reqs = main.requests();
    let resumed = reqs[reqs.len() - 2]["messages"].to_string();
    assert!(
        resumed.contains("remember and delegate"),
        "the first conversation came back from PostgreSQL"
    );
}

/// A risk profile that gives commands the whole network, on a PostgreSQL
/// control plane that lets anyone in without a password (CI's server
/// trusts local connections), is refused at start: a command could
/// connect and approve its own requests. The same with `loopback` runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_with_the_network_and_a_database_without_a_password_are_refused() {
    let Some(url) = fresh_database("open_door") else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; PostgreSQL end-to-end test not run here");
        return;
    };
    if switchboard_store::open_without_password(&url).await.is_empty() {
        eprintln!("this PostgreSQL asks for passwords; the refusal cannot be shown here");
        return;
    }
    let model = ScriptedModel::start().await;
    let config = |network: &str| {
        format!(
            "database_url = \"{url}\"\n{}[agents.main]\nmodel_provider = \"p\"\n[risk_profiles.default]\nlevel = \"full\"\nnetwork = \"{network}\"\n",
            provider("p", &model.url(), "")
        )
    };
    let open = Sandbox::new(&config("any"));
    let (code, out, err) = open.run(&["chat", "--config", "switchboard.toml"]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("in without a password") && err.contains("[risk_profiles.default] may reach the whole network"),
        "{err}"
    );
    let closed = Sandbox::new(&config("loopback"));
    let (code, out, err) = closed.run(&["chat", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
}
