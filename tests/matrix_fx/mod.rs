//! What the Matrix suites share: a real Synapse with the bot, Ann, Bob and
//! an operator, their rooms, and `switchboard run` configured for them
//! (each suite uses part of it).
#![allow(dead_code)]

use crate::support::{Gateway, Sandbox, free_port, matrix_config, ops_room_approvals, with_reviewer};
use switchboard_test_support::ScriptedModel;
use switchboard_test_support::synapse::{Person, Synapse};

pub(crate) const BOT: &str = "@bot:localhost";
pub(crate) const OP: &str = "@op:localhost";

pub(crate) struct World {
    pub(crate) synapse: Synapse,
    pub(crate) ann: Person,
    pub(crate) bob: Person,
    pub(crate) op: Person,
    pub(crate) group: String,
    pub(crate) ops: String,
    pub(crate) dm: String,
}

/// A homeserver with the bot, Ann, Bob and an operator; a group room
/// (Ann, Bob, bot), an ops room (operator, Bob, bot) and Ann's DM with the bot.
pub(crate) async fn world() -> World {
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let (ann, bob, op) = (
        synapse.register("ann", "pw-ann").await,
        synapse.register("bob", "pw-bob").await,
        synapse.register("op", "pw-op").await,
    );
    let group = ann.create_room("team", &[BOT, &bob.user_id], false).await;
    bob.join(&group).await;
    let ops = op.create_room("ops", &[BOT, &bob.user_id], false).await;
    bob.join(&ops).await;
    let dm = ann.create_room("", &[BOT], true).await;
    World {
        synapse,
        ann,
        bob,
        op,
        group,
        ops,
        dm,
    }
}

/// The bot in the three rooms (the ops room named `ops`), approvals routed
/// there to the operator.
pub(crate) fn config(model: &str, w: &World, port: u16) -> String {
    let rooms = [w.group.as_str(), w.ops.as_str(), w.dm.as_str()];
    // Answers arrive whole here (streamed answers: matrix_streaming.rs).
    let ops_room = format!("rooms = {{ \"ops\" = \"{}\" }}\nstreaming = \"off\"", w.ops);
    matrix_config(model, &w.synapse.url(), &rooms, port, &ops_room) + ops_room_approvals("matrix.main", OP).as_str()
}

/// `config`, plus an agent `reviewer` on its own model that `main` may
/// delegate to without asking.
pub(crate) fn delegating_config(model: &ScriptedModel, reviewer: &ScriptedModel, w: &World, port: u16) -> String {
    with_reviewer(&config(&model.url(), w, port), &reviewer.url())
}

pub(crate) async fn setup() -> (ScriptedModel, World, Sandbox, Gateway, u16) {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &w, port));
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (model, w, sandbox, gw, port)
}
