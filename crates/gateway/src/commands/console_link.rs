//! `/console`: a one-use sign-in link to the operator console, given only
//! in a direct chat and only to people who may sign in (`rights`).

use switchboard_core::UserId;

/// How long a sign-in link stays valid.
const LINK_TTL_MS: i64 = 10 * 60 * 1000;

/// The answer to `/console`: a link, or why there is none.
pub(crate) struct SignIn;

impl SignIn {
    /// What to tell `user`, who typed `/console` in a chat that is direct
    /// (`direct`) or not.
    pub(crate) async fn answer(runtime: &switchboard_runtime::Runtime, user: &UserId, direct: bool) -> String {
        let config = &runtime.config();
        if !config.web.console {
            return "The operator console is off; an operator can turn it on with [web] console = true.".into();
        }
        if !crate::rights::may_sign_in(config, user) {
            return format!(
                "{user} may not use the operator console: only approvers and people in [web] console_users may."
            );
        }
        if !direct {
            return "Sign-in links are sent only in a direct chat: send /console to me in a direct message.".into();
        }
        match runtime.store().console().create_link(user.as_str(), LINK_TTL_MS).await {
            Ok(token) => format!(
                "Your operator console sign-in link (one use, valid 10 minutes; do not share it):\n{}/console/signin#{token}",
                config.web.base_url()
            ),
            Err(e) => {
                tracing::error!(error = %e, "cannot store a console sign-in link");
                "The console sign-in link could not be made right now; try again.".into()
            }
        }
    }
}
