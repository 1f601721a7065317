//! Pieces of gateway configuration that tests and benchmarks repeat, so
//! each is written (and kept valid) once.

/// The default risk profile's approval route: prompts go to room
/// `ops-room` of `local.ops`, and only `approver` decides. The caller adds
/// the route's other keys (a timeout, `on_no_approver`) after it.
pub fn ops_route(approver: &str) -> String {
    format!(
        "[risk_profiles.default.approval_route]\napprover_channel = \"local.ops\"\napprover_recipient = \"ops-room\"\napprovers = [\"{approver}\"]\n"
    )
}

/// The bot `telegram.main` on the (fake) Bot API at `api_url`, where
/// everyone may write, on the channel's defaults.
pub fn telegram_main(api_url: &str) -> String {
    format!("[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{api_url}\"\nallowed_users = [\"*\"]\n")
}
