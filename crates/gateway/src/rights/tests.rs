//! Every action against every role, once: chat commands, buttons and the
//! console all ask these functions, so this table is what each of them
//! allows.

use super::*;

const CONFIG: &str = r#"
[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"

[agents.main]
model_provider = "p"
risk_profile = "ops"

[agents.reviewer]
model_provider = "p"
risk_profile = "review"

[agents.open]
model_provider = "p"
risk_profile = "open"

[risk_profiles.ops.approval_route]
approver_channel = "local.ops"
approver_recipient = "ops"
approvers = ["cli:olga"]

[risk_profiles.review.approval_route]
approver_channel = "local.ops"
approver_recipient = "ops"
approvers = ["cli:olga", "cli:rita"]

[risk_profiles.open]

[channels.local.ops]
allowed_users = ["*"]
"#;

#[derive(Debug, Clone, Copy)]
enum Action {
    /// A request routed to main's approvers.
    Decide,
    /// Kill (or steer) a run of main's tree that ann asked for.
    KillAnns,
    /// Stop ann's turn with main.
    StopAnns,
    PauseMain,
    PauseOpen,
    PauseAll,
}

fn allowed(config: &Config, who: &str, action: Action) -> bool {
    let user = UserId(who.to_string());
    let ann = UserId("cli:ann".into());
    match action {
        Action::Decide => may_decide(&user, &["cli:olga".to_string()]),
        Action::KillAnns => may_kill(
            config,
            &user,
            &RunOwner {
                requester: Some(ann.to_string()),
                root_agent: "main".into(),
            },
        ),
        Action::StopAnns => may_stop(config, &user, &ann, "main"),
        Action::PauseMain => may_pause(config, &user, PauseScope::Agent("main")),
        Action::PauseOpen => may_pause(config, &user, PauseScope::Agent("open")),
        Action::PauseAll => may_pause(config, &user, PauseScope::All),
    }
}

#[test]
fn every_action_for_every_role() {
    let config = Config::from_toml_str(CONFIG, "rights.toml").unwrap();
    use Action::*;
    // olga approves main and reviewer; rita only reviewer; ann asked for
    // the run and the turn; eve is anyone else. Nobody approves `open`
    // (a profile without a route): there anyone admitted operates.
    let table: &[(&str, [bool; 6])] = &[
        //            Decide KillAnns StopAnns PauseMain PauseOpen PauseAll
        ("cli:olga", [true, true, true, true, true, true]),
        ("cli:rita", [false, false, false, false, true, false]),
        ("cli:ann", [false, true, true, false, true, false]),
        ("cli:eve", [false, false, false, false, true, false]),
    ];
    let actions = [Decide, KillAnns, StopAnns, PauseMain, PauseOpen, PauseAll];
    for (who, expected) in table {
        for (action, want) in actions.iter().zip(expected) {
            assert_eq!(allowed(&config, who, *action), *want, "{who} {action:?}");
        }
    }
}

#[test]
fn a_run_belongs_to_its_root_agent() {
    let config = Config::from_toml_str(CONFIG, "rights.toml").unwrap();
    // A reviewer child in main's tree: rita (reviewer's approver only)
    // may not kill it, olga (main's) may.
    let run = RunOwner {
        requester: Some("cli:ann".into()),
        root_agent: "main".into(),
    };
    assert!(!may_kill(&config, &UserId("cli:rita".into()), &run));
    assert!(may_kill(&config, &UserId("cli:olga".into()), &run));
}

#[test]
fn only_exactly_named_people_may_sign_in() {
    let config = Config::from_toml_str(
        r#"[providers.p]
kind = "openai"
model = "m"
[agents.main]
model_provider = "p"
[risk_profiles.default.approval_route]
approver_channel = "local.ops"
approver_recipient = "ops"
approvers = ["cli:alice"]
[web]
console_users = ["tg:7"]
[channels.local.ops]
allowed_users = ["*"]
"#,
        "t",
    )
    .unwrap();
    assert!(may_sign_in(&config, &UserId("cli:alice".into())));
    assert!(may_sign_in(&config, &UserId("tg:7".into())));
    assert!(!may_sign_in(&config, &UserId("cli:bob".into())));
}

#[test]
fn only_approvers_answers_skip_the_rate_limit() {
    let config = Config::from_toml_str(CONFIG, "t").unwrap();
    assert!(decides_unlimited(&config, &UserId("cli:olga".into())));
    assert!(decides_unlimited(&config, &UserId("cli:rita".into())));
    assert!(
        !decides_unlimited(&config, &UserId("cli:ann".into())),
        "a member's /approve counts"
    );
    let inherit = CONFIG.replace(
        "[risk_profiles.open]\n",
        "[risk_profiles.open.approval_route]\non_no_approver = \"inherit-originator\"\n",
    );
    assert_ne!(inherit, CONFIG);
    let config = Config::from_toml_str(&inherit, "t").unwrap();
    assert!(
        decides_unlimited(&config, &UserId("cli:ann".into())),
        "the person who wrote may decide"
    );
}
