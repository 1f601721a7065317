//! "Typing…" in a chat while its turn runs: shown only once a turn takes a
//! while (a quick answer needs none, and costs no request for it), and
//! renewed, since platforms let it lapse after a few seconds.

use crate::channels::ChannelSet;
use std::time::Duration;
use switchboard_core::Inbound;

/// How long a turn runs before typing is shown.
const TYPING_AFTER: Duration = Duration::from_millis(800);
/// How often a typing notice is renewed while a turn runs.
const TYPING_RENEWAL: Duration = Duration::from_secs(4);

/// Typing shown in `m`'s chat from `TYPING_AFTER` on, renewed, until the
/// task is aborted.
pub(super) fn show(channels: &ChannelSet, m: &Inbound) -> Option<tokio::task::JoinHandle<()>> {
    channels.get(&m.address.channel).map(|ch| {
        let address = m.address.clone();
        tokio::spawn(async move {
            tokio::time::sleep(TYPING_AFTER).await;
            loop {
                let _ = ch.typing(&address).await;
                tokio::time::sleep(TYPING_RENEWAL).await;
            }
        })
    })
}
