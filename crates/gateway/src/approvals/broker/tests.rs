//! The route broker's decisions: who may decide from where, and two
//! decisions of one request at once.

use super::*;
use switchboard_config::Config;

fn broker(peers: &crate::test_peers::TeamChannel) -> RouteBroker {
    broker_with(peers, None)
}

/// The shipped configuration, its default profile routed by `route` when
/// given (decisions are checked against the configured approvers too).
fn broker_with(
    peers: &crate::test_peers::TeamChannel,
    route: Option<switchboard_config::ApprovalRoute>,
) -> RouteBroker {
    broker_of(peers, route, |_| {})
}

/// The same, the configuration changed by `edit` too.
pub(super) fn broker_of(
    peers: &crate::test_peers::TeamChannel,
    route: Option<switchboard_config::ApprovalRoute>,
    edit: impl FnOnce(&mut Config),
) -> RouteBroker {
    let mut config = Config::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/switchboard.toml"
    )))
    .unwrap();
    if let Some(route) = route {
        config.risk_profiles.get_mut("default").unwrap().approval_route = Some(route);
    }
    edit(&mut config);
    RouteBroker::new(Arc::new(config), peers.store.clone(), peers.channels.clone())
}

/// Request `id` of a `shell` call (medium risk) going by `route`.
pub(super) fn request(
    id: &str,
    route: Option<switchboard_config::ApprovalRoute>,
) -> switchboard_runtime::ApprovalRequest {
    switchboard_runtime::ApprovalRequest {
        id: id.into(),
        agent: "main".into(),
        caller_chain: Vec::new(),
        tool: "shell".into(),
        summary: "rm x".into(),
        risk: switchboard_core::Risk::Medium,
        profile_name: "default".into(),
        route,
        origin: None,
        requested_by: Some("cli:ann".into()),
        run_id: None,
        originator_may_decide: false,
        timeout_secs: 60,
    }
}

/// A pending request `id` in the store, answerable by `approvers`.
async fn stored(peers: &crate::test_peers::TeamChannel, id: &str, approvers: &[String]) {
    let req = request(id, None);
    let at = ChatAddress::new("local.team", "ops");
    super::super::record::store_request(&peers.store, &req, &at, approvers, (now_ms() + 60_000, 1))
        .await
        .unwrap();
}

/// The request waits in this process for `approvers` (as one asked of
/// the person who wrote: the shipped configuration names no approvers;
/// tests/approvals.rs shows a reload taking a route's approver off).
fn waiting(broker: &RouteBroker, id: &str, approvers: &[String]) -> oneshot::Receiver<Decision> {
    let (tx, rx) = oneshot::channel();
    broker.pending.lock().insert(
        id.into(),
        Pending {
            approvers: approvers.to_vec(),
            required: 1,
            inherited: true,
            profile: "default".into(),
            tx,
        },
    );
    rx
}

/// The id a decision names must belong to the platform it came through:
/// `tg:7` in a local chat is someone typing a Telegram id, not tg:7.
#[tokio::test]
async fn a_decision_counts_only_from_the_platform_of_the_id() {
    let peers = crate::test_peers::team_channel().await;
    let broker = broker(&peers);
    let approvers = vec!["tg:7".to_string()];
    stored(&peers, "ab12", &approvers).await;
    let mut rx = waiting(&broker, "ab12", &approvers);
    let local = ChatAddress::new("local.team", "c1");
    let answer = broker
        .decide(
            "ab12",
            Ballot::new(&UserId("tg:7".into()), &local, ApprovalChoice::AllowOnce),
        )
        .await;
    assert!(
        answer.contains("cannot decide approval ab12 from local.team"),
        "{answer}"
    );
    assert!(rx.try_recv().is_err(), "nothing was decided");
    let telegram = ChatAddress::new("telegram.main", "-100");
    let answer = broker
        .decide(
            "ab12",
            Ballot::new(&UserId("tg:7".into()), &telegram, ApprovalChoice::AllowOnce),
        )
        .await;
    assert_eq!(answer, "Approval ab12: allowed once.");
    assert_eq!(rx.try_recv().unwrap().by, "tg:7");
    let row = peers.store.approvals().get("ab12").await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.decided_by.as_deref()),
        (ApprovalStatus::Approved, Some("tg:7")),
        "recorded before the tool call was woken"
    );
}

/// Two gateways decide one request at once: the decision written first
/// stands; the one that lost is told who won, and the waiting tool call is
/// not woken by it.
#[tokio::test]
async fn of_two_decisions_at_once_the_recorded_one_stands() {
    let peers = crate::test_peers::team_channel().await;
    let broker = broker(&peers);
    let approvers = vec!["cli:x".to_string(), "cli:y".to_string()];
    stored(&peers, "race1", &approvers).await;
    let mut rx = waiting(&broker, "race1", &approvers);
    // Another gateway's "deny" is written first...
    let denied = ApprovalEnd {
        status: ApprovalStatus::Denied,
        by: Some("cli:x"),
        from: Some("local.team"),
        reason: None,
    };
    assert!(peers.store.approvals().decide("race1", &denied).await.unwrap());
    // ...then this one's "allow" arrives: the deny stands.
    let ops = ChatAddress::new("local.team", "ops");
    let answer = broker
        .decide(
            "race1",
            Ballot::new(&UserId("cli:y".into()), &ops, ApprovalChoice::AllowOnce),
        )
        .await;
    assert_eq!(answer, "Approval race1 is no longer pending: it was denied by cli:x.");
    assert!(rx.try_recv().is_err(), "the losing decision wakes nobody");
    let row = peers.store.approvals().get("race1").await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.decided_by.as_deref()),
        (ApprovalStatus::Denied, Some("cli:x"))
    );
}

/// An approver channel whose prompt takes until `release` to post (as
/// Matrix does while it adds its reaction buttons), keeping the edits it
/// is asked for.
#[derive(Default)]
struct SlowPrompts {
    posting: tokio::sync::Notify,
    release: tokio::sync::Notify,
    edits: Mutex<Vec<PromptState>>,
    /// Tries answered with a passing failure (a 502) before the slow post.
    failing: std::sync::atomic::AtomicU32,
}

#[async_trait]
impl switchboard_core::Channel for SlowPrompts {
    fn name(&self) -> &str {
        "local.slow"
    }
    async fn start(&self, _: Arc<dyn switchboard_core::Intake>) -> Result<(), switchboard_core::ChannelError> {
        Ok(())
    }
    async fn send(&self, _: &switchboard_core::Outbound) -> Result<Vec<MessageRef>, switchboard_core::ChannelError> {
        Ok(Vec::new())
    }
    async fn send_approval_prompt(
        &self,
        at: &ChatAddress,
        _: &ApprovalPrompt,
    ) -> Result<MessageRef, switchboard_core::ChannelError> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.failing.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(switchboard_core::ChannelError::Transient("502 Bad Gateway".into()));
        }
        self.posting.notify_one();
        self.release.notified().await;
        Ok(MessageRef {
            chat: at.chat.clone(),
            id: "prompt-1".into(),
        })
    }
    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), switchboard_core::ChannelError> {
        self.edits.lock().push(edit.state.clone());
        Ok(())
    }
}

/// Request `id` asked in the background through `slow` (now one of
/// `peers`' channels) of cli:x (and cli:y when `required` is 2): the
/// broker, and the task waiting for the outcome.
fn ask_through(
    peers: &mut crate::test_peers::TeamChannel,
    slow: &Arc<SlowPrompts>,
    id: &str,
    required: u32,
) -> (Arc<RouteBroker>, tokio::task::JoinHandle<ApprovalOutcome>) {
    peers
        .channels
        .insert(slow.clone() as Arc<dyn switchboard_core::Channel>);
    let approvers = ["cli:x", "cli:y"][..required as usize]
        .iter()
        .map(|a| (*a).to_string())
        .collect();
    let route = switchboard_config::ApprovalRoute {
        approver_channel: Some("local.slow".into()),
        approver_recipient: Some("ops".into()),
        approvers,
        approvals_required: required,
        ..Default::default()
    };
    let broker = Arc::new(broker_with(peers, Some(route.clone())));
    let req = request(id, Some(route));
    let asking = tokio::spawn({
        let broker = broker.clone();
        async move { broker.request(req).await }
    });
    (broker, asking)
}

/// A quick approver allows a two-person request while its prompt is still
/// being posted (no message id stored yet): once posted, the prompt is
/// edited to say who allowed, and the request still waits for a second.
#[tokio::test]
async fn an_allow_given_while_the_prompt_is_posted_shows_on_it() {
    let mut peers = crate::test_peers::team_channel().await;
    let slow = Arc::new(SlowPrompts::default());
    let (broker, asking) = ask_through(&mut peers, &slow, "early1", 2);
    slow.posting.notified().await;
    let ops = ChatAddress::new("local.slow", "ops");
    let answer = broker
        .decide(
            "early1",
            Ballot::new(&UserId("cli:x".into()), &ops, ApprovalChoice::AllowOnce),
        )
        .await;
    assert!(answer.contains("1 of 2 approvals"), "{answer}");
    assert!(slow.edits.lock().is_empty(), "no message to edit yet");
    slow.release.notify_one();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while slow.edits.lock().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the prompt was never edited");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let expected = PromptState::Partial {
        allowed_by: vec!["cli:x".into()],
        need: 2,
    };
    assert_eq!(slow.edits.lock().first(), Some(&expected));
    assert!(!asking.is_finished(), "it waits for a second person");
    let answer = broker
        .decide(
            "early1",
            Ballot::new(&UserId("cli:y".into()), &ops, ApprovalChoice::AllowOnce),
        )
        .await;
    assert_eq!(answer, "Approval early1: allowed once.");
    let outcome = asking.await.unwrap();
    assert!(
        matches!(&outcome, ApprovalOutcome::Approved { by, .. } if by == "cli:x and cli:y"),
        "{outcome:?}"
    );
}

/// A prompt the approver channel fails to take once (a 502) is posted on
/// the next try, and the request is decided as usual (it was closed as
/// unavailable at once, and the tool refused).
#[tokio::test]
async fn a_prompt_the_channel_fails_once_is_posted_again() {
    let mut peers = crate::test_peers::team_channel().await;
    let slow = Arc::new(SlowPrompts::default());
    slow.failing.store(1, std::sync::atomic::Ordering::SeqCst);
    let (broker, asking) = ask_through(&mut peers, &slow, "flaky1", 1);
    tokio::time::timeout(Duration::from_secs(10), slow.posting.notified())
        .await
        .expect("the prompt was tried again");
    slow.release.notify_one();
    let ops = ChatAddress::new("local.slow", "ops");
    let x = UserId("cli:x".into());
    let mut answer = String::new();
    for _ in 0..100 {
        answer = broker
            .decide("flaky1", Ballot::new(&x, &ops, ApprovalChoice::AllowOnce))
            .await;
        if !answer.contains("could not") && !answer.starts_with("No approval") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(answer, "Approval flaky1: allowed once.");
    let outcome = asking.await.unwrap();
    assert!(matches!(outcome, ApprovalOutcome::Approved { .. }), "{outcome:?}");
}
