//! The two-person rule across crashes and reloads: allows the store
//! counted before the gateway stopped, or before the configuration
//! changed.

use super::tests::{broker_of, request};
use super::*;
use switchboard_config::Config;

/// A pending request of two people's, the broker, and the ops room.
struct TwoPerson {
    peers: crate::test_peers::TeamChannel,
    broker: RouteBroker,
    ops: ChatAddress,
    id: &'static str,
}

/// Request `id`, asked of `asked`, needing two of them, under a
/// configuration whose route names `approvers` now (changed by `edit`).
async fn two_person(id: &'static str, asked: &[&str], approvers: &[&str], edit: impl FnOnce(&mut Config)) -> TwoPerson {
    let peers = crate::test_peers::team_channel().await;
    let route = switchboard_config::ApprovalRoute {
        approver_channel: Some("local.team".into()),
        approver_recipient: Some("ops".into()),
        approvers: approvers.iter().map(ToString::to_string).collect(),
        approvals_required: 2,
        ..Default::default()
    };
    let broker = broker_of(&peers, Some(route.clone()), edit);
    let ops = ChatAddress::new("local.team", "ops");
    let asked: Vec<String> = asked.iter().map(ToString::to_string).collect();
    super::super::record::store_request(
        &peers.store,
        &request(id, Some(route)),
        &ops,
        &asked,
        (now_ms() + 60_000, 2),
    )
    .await
    .unwrap();
    TwoPerson { peers, broker, ops, id }
}

impl TwoPerson {
    /// `user`'s allow, as `person`, counted by the store alone (before a
    /// crash or a reload).
    async fn counted(&self, person: &str, user: &str) {
        let allow = switchboard_store::Allow {
            approval: self.id,
            person,
            user_id: user,
            choice: "once",
            from: "local.team:ops",
        };
        self.peers.store.count_allow(&allow).await.unwrap();
    }

    /// `user` presses allow in the ops room; what they are told.
    async fn press(&self, user: &str) -> String {
        let user = UserId(user.into());
        self.broker
            .decide(self.id, Ballot::new(&user, &self.ops, ApprovalChoice::AllowOnce))
            .await
    }

    /// The request's status and who decided it.
    async fn decided(&self) -> (ApprovalStatus, String) {
        let row = self.peers.store.approvals().get(self.id).await.unwrap().unwrap();
        (row.status, row.decided_by.unwrap_or_default())
    }
}

/// The second of two allows was counted, then the process stopped before
/// deciding the request (it stays pending with both allows): pressed
/// again, the request is decided, by both, rather than answered "a person
/// counts once" for ever.
#[tokio::test]
async fn a_request_with_enough_allows_counted_is_decided_when_pressed_again() {
    let r = two_person("twice1", &["cli:x", "cli:y"], &["cli:x", "cli:y"], |_| {}).await;
    r.counted("cli:x", "cli:x").await;
    r.counted("cli:y", "cli:y").await;
    assert_eq!(r.press("cli:y").await, "Approval twice1: allowed once.");
    assert_eq!(r.decided().await, (ApprovalStatus::Approved, "cli:x and cli:y".into()));
}

/// An allow counted from someone a reload then took off the route counts
/// no more: the request still needs two current approvers (it ran "by"
/// the removed one and the next to press).
#[tokio::test]
async fn an_allow_of_someone_no_longer_an_approver_does_not_count() {
    let r = two_person("stale1", &["cli:x", "cli:y", "cli:z"], &["cli:y", "cli:z"], |_| {}).await;
    r.counted("cli:x", "cli:x").await;
    let answer = r.press("cli:y").await;
    assert!(answer.contains("1 of 2 approvals"), "{answer}");
    assert_eq!(r.press("cli:z").await, "Approval stale1: allowed once.");
    assert_eq!(r.decided().await, (ApprovalStatus::Approved, "cli:y and cli:z".into()));
}

/// A person allowed through an id a reload then took off the route, and
/// presses again through another id of theirs that is still an approver:
/// their allow stands under that id (they were told "a person counts
/// once" for ever, and the request could not pass).
#[tokio::test]
async fn an_allow_given_again_through_a_current_id_of_the_same_person_counts() {
    let pat = |c: &mut Config| {
        let p = switchboard_config::Person {
            ids: vec!["cli:a".into(), "cli:b".into()],
        };
        c.people.insert("pat".into(), p);
    };
    let r = two_person("moved1", &["cli:a", "cli:b", "cli:c"], &["cli:b", "cli:c"], pat).await;
    r.counted("person:pat", "cli:a").await;
    let answer = r.press("cli:b").await;
    assert!(answer.contains("1 of 2 approvals"), "{answer}");
    assert_eq!(r.press("cli:c").await, "Approval moved1: allowed once.");
    let (status, by) = r.decided().await;
    assert_eq!(status, ApprovalStatus::Approved);
    assert!(by == "cli:b and cli:c" || by == "cli:c and cli:b", "{by}");
}
