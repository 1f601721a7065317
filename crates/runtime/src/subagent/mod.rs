//! `spawn_subagent`: an ephemeral child run of the SAME agent (docs/delegation.md).
//!
//! Same alias, same security policy (shared `Arc`, so hourly action and
//! daily cost budgets are shared), same memory allowlist with the parent
//! always included, same provider chain and temperature, a fresh registry
//! filtered by the same policy without `model_switch`. Its history lives
//! under `subagent-<uuid>`; only its final answer returns. It is cancelled
//! with the parent's turn and has no timeout or background mode of its own.

mod spawn;

pub use spawn::SpawnSubagent;
