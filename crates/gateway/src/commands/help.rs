//! `/help`: what can be typed here.

pub(super) fn apply() -> String {
    [
        "Commands:",
        "/help — this list",
        "/new — start a fresh conversation (the old one stays stored)",
        "/status — agent, model, session and today's costs",
        "/agents — the configured agents",
        "/stop — abort the current turn and every child it started",
        "/subagents list | info <id|#> | log <id|#> [limit] [tools] | send <id|#> <message> | kill <id|#|all> | pause [all] | resume [all]",
        "/approve <id> [always], /deny <id> [reason] — answer an approval prompt",
        "/console — a sign-in link to the operator console (approvers; in a direct chat)",
        "/attach <path> [caption] — send a file with a message (switchboard chat; in chats, attach it as usual)",
        "Anything else goes to the agent.",
    ]
    .join("\n")
}
