//! Builds side by side on one control plane (docs/operations.md,
//! "Upgrades"): `switchboard status` names each instance's build and
//! schema, and `switchboard run` refuses, in one line naming the version to
//! run, a database migrated by a newer build that took away what this one
//! uses (a database a newer build only added to is worked with; see
//! crates/store/tests/schema.rs).

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, binary, free_port, provider};
use switchboard_test_support::ScriptedModel;

/// `switchboard run` in `sandbox`, stopped after `secs` if it is still
/// running: its exit code (None: it ran) and all it printed.
fn run_briefly(sandbox: &Sandbox, secs: u64) -> (Option<i32>, String) {
    let mut child = Command::new(binary())
        .args(["run", "--config", "switchboard.toml"])
        .current_dir(sandbox.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (code, all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_names_each_build_and_run_refuses_a_schema_it_cannot_work_with() {
    let model = ScriptedModel::start().await;
    let config = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\nchannels = [\"local.team\"]\n[channels.local.team]\nallowed_users = [\"*\"]\n",
        provider("p", &model.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, free_port(), "team").await;
    let (code, out, err) = sandbox.run(&["status", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    let ours = switchboard_store::NEEDS_SCHEMA;
    assert!(
        out.contains(&format!("build {} (schema {ours})", switchboard_store::BUILD_VERSION)),
        "{out}"
    );
    drop(gw);

    // The database as a newer build leaves it when it took something away.
    let db = sandbox.path().join("data/control_plane.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    for sql in [
        format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             SELECT {}, 'a newer build', success, checksum, execution_time FROM _sqlx_migrations WHERE version = {ours}",
            ours + 1
        ),
        format!(
            "INSERT INTO schema_compat (schema_version, needs_schema, written_by) VALUES ({0}, {0}, '9.2.0')",
            ours + 1
        ),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let (code, all) = run_briefly(&sandbox, 30);
    assert!(
        matches!(code, Some(c) if c != 0),
        "it must refuse to start: {code:?}\n{all}"
    );
    let said: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("run switchboard 9.2.0 or newer"))
        .collect();
    assert_eq!(said.len(), 1, "one line names the version to run:\n{all}");
    println!("{}", said[0]);
}
