//! A streamed answer on Matrix, through the real `switchboard run` and a
//! real Synapse: one event posted while the answer is written, then
//! replaced (`m.replace`, full text in `m.new_content`) within the edit
//! interval, ending exactly as the answer, never posted twice.

mod support;

use std::time::Duration;
use support::{Gateway, Sandbox, free_port, matrix_config};
use switchboard_test_support::synapse::{Synapse, body};
use switchboard_test_support::{ScriptedModel, Step};

const BOT: &str = "@bot:localhost";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_answer_is_one_event_replaced_until_it_is_whole() {
    let model = ScriptedModel::start().await;
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let dm = ann.create_room("", &[BOT], true).await;
    let port = free_port();
    let sandbox = Sandbox::new(
        &(matrix_config(&model.url(), &synapse.url(), &[dm.as_str()], port, "")
            + "[risk_profiles.default]\nlevel = \"full\"\n"),
    );
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let answer: String = switchboard_test_support::words("bit", 40);
    model.push(Step::text(answer.clone()).streamed(Duration::from_millis(60)));
    ann.say(&dm, "stream it").await;
    let last = ann
        .wait_for(&dm, BOT, 40, |m| {
            m["content"]["m.new_content"]["body"] == answer.as_str()
        })
        .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let from_bot = ann.messages_from(&dm, BOT).await;
    let (originals, edits): (Vec<_>, Vec<_>) = from_bot
        .iter()
        .partition(|m| m["content"]["m.relates_to"]["rel_type"] != "m.replace");
    assert_eq!(originals.len(), 1, "one message, never a second copy: {from_bot:#?}");
    assert!(
        body(originals[0]).len() < answer.len(),
        "posted while still being written"
    );
    let original_id = originals[0]["event_id"].as_str().unwrap();
    assert!(
        edits
            .iter()
            .all(|e| e["content"]["m.relates_to"]["event_id"] == original_id)
    );
    assert_eq!(
        edits.last().unwrap()["event_id"],
        last["event_id"],
        "nothing after the final edit"
    );
    // About 2.4 s of writing at one edit a second at most (and the final one).
    assert!(edits.len() <= 5, "{} edits", edits.len());
}
