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
