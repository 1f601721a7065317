use super::*;

fn line<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(start))
}

#[test]
fn events_and_snapshots_render_as_openmetrics_with_bounded_labels() {
    message_taken("telegram.t1");
    message_taken("telegram.t1");
    message_answered("telegram.t1");
    turn_finished("agent-t1", "ok", 0.02);
    model_request("prov-t1", "ok", 0.3);
    model_usage("prov-t1", 120, 30, 2_500);
    tool_call("shell", "medium", "ok");
    approval_requested();
    approval_decided("approved", 4.0);
    sandbox_refusal("command");
    let text = render(&Snapshot {
        inbox_pending: 3,
        outbox_queued: 1,
        runs: vec![("subagent".into(), "completed".into(), 2)],
        channels: vec![ChannelGauge {
            name: "telegram.t1".into(),
            up: true,
            owned: true,
        }],
        database_up: true,
    });
    assert_eq!(
        line(&text, "switchboard_messages_taken_total{channel=\"telegram.t1\"}"),
        Some("switchboard_messages_taken_total{channel=\"telegram.t1\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("switchboard_turn_duration_seconds_bucket{le=\"0.03125\",agent=\"agent-t1\",outcome=\"ok\"} 1"),
        "{text}"
    );
    assert!(text.contains("switchboard_model_tokens_total{provider=\"prov-t1\",direction=\"input\"} 120"));
    assert!(
        text.contains("switchboard_cost_usd_total{provider=\"prov-t1\"} 0.0025"),
        "{text}"
    );
    assert!(text.contains("switchboard_tool_calls_total{tool=\"shell\",risk=\"medium\",outcome=\"ok\"} 1"));
    assert!(text.contains("switchboard_runs{kind=\"subagent\",status=\"completed\"} 2"));
    assert!(text.contains("switchboard_channel_owned{channel=\"telegram.t1\"} 1"));
    assert!(text.contains("switchboard_inbox_pending 3"));
    assert!(text.contains("switchboard_database_up 1"));
    assert!(text.contains("switchboard_build_info{version="));
    assert!(text.ends_with("# EOF\n"));
    // A later scrape forgets runs and channels that are gone.
    let text = render(&Snapshot::default());
    assert!(!text.contains("switchboard_runs{kind=\"subagent\""), "{text}");
    assert!(!text.contains("switchboard_channel_owned{"), "{text}");
    // Nothing is recorded while disabled (one test: the switch is global).
    set_enabled(false);
    message_taken("telegram.off");
    set_enabled(true);
    let text = render(&Snapshot::default());
    assert!(!text.contains("telegram.off"), "{text}");
    message_taken("telegram.on");
    assert!(render(&Snapshot::default()).contains("telegram.on"));
}
