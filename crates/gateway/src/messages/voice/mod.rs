//! Voice messages understood: with `[transcription]` configured, a
//! message's first audio attachment (a Telegram voice note or audio file,
//! a Discord voice message or audio file, a Matrix `m.audio`) is
//! transcribed before its turn and the transcript becomes the message's
//! text, so the agent answers what was said and a spoken command ("slash
//! status") runs as the command. The audio is still saved in the
//! workspace like any file. Too large or too long audio, and a failed
//! transcription, are said to the person and the agent; the file is kept
//! (docs/conversations.md).

mod client;

use crate::channels::ChannelSet;
use crate::commands::{self, Command};
use crate::messages::taken::Taken;
use switchboard_config::{Config, TranscriptionConfig};
use switchboard_core::{Action, Attachment, AttachmentKind, Inbound, Outbound};

/// Transcripts at most this long are shown back to the person.
const SHOWN_CHARS: usize = 300;

/// What hearing a voice message gave.
pub(crate) struct Heard {
    /// A spoken command to run instead of a turn.
    pub command: Option<Command>,
}

/// The audio of `m` to transcribe, when transcription is configured.
pub(crate) fn audio_of<'a>(config: &Config, m: &'a Inbound) -> Option<&'a Attachment> {
    config.transcription.as_ref()?;
    if !matches!(m.action, Action::Text) {
        return None;
    }
    m.attachments.iter().find(|a| a.kind == AttachmentKind::Audio)
}

/// Transcribe the audio of `t`: the transcript becomes its text (after a
/// caption, if any); the person is shown what was understood (when short)
/// or why nothing was.
pub(crate) async fn hear(config: &Config, channels: &ChannelSet, t: &mut Taken) -> Heard {
    let (Some(settings), Some(audio)) = (&config.transcription, audio_of(config, &t.m).cloned()) else {
        return Heard { command: None };
    };
    let heard = match transcribe(settings, channels, &t.m, &audio).await {
        Ok(text) if text.is_empty() => Err("no speech was recognised".to_string()),
        other => other,
    };
    let caption = t.m.text.trim().to_string();
    let (text, notice) = match heard {
        Ok(transcript) => {
            tracing::info!(channel = %t.m.address.channel, chars = transcript.chars().count(), "voice message transcribed");
            let shown = (settings.show_transcript && transcript.chars().count() <= SHOWN_CHARS)
                .then(|| format!("🎤 “{transcript}”"));
            let command = spoken_command(&transcript).filter(|_| caption.is_empty());
            if let Some(command) = command {
                t.m.text = command;
                return Heard {
                    command: commands::parse(&t.m.text),
                }
                .shown(channels, &t.m, shown)
                .await;
            }
            let text = if caption.is_empty() {
                transcript
            } else {
                format!("{caption}\n\n(voice message, transcribed:) {transcript}")
            };
            (text, shown)
        }
        Err(why) => {
            tracing::warn!(channel = %t.m.address.channel, reason = %why, "voice message not transcribed");
            let note = format!("(a voice message that could not be transcribed: {why}; the file is saved)");
            let text = if caption.is_empty() {
                note
            } else {
                format!("{caption}\n\n{note}")
            };
            let notice =
                format!("🎤 I could not transcribe this voice message ({why}); it is saved, and the agent is told.");
            (text, Some(notice))
        }
    };
    t.m.text = text;
    Heard { command: None }.shown(channels, &t.m, notice).await
}

impl Heard {
    /// Show `notice` to the person (best effort: it is not the answer).
    async fn shown(self, channels: &ChannelSet, m: &Inbound, notice: Option<String>) -> Self {
        if let Some(text) = notice
            && let Some(channel) = channels.get(&m.address.channel)
        {
            let mut out = Outbound::new(m.address.clone(), text);
            out.reply_to = m.message_id.clone();
            if let Err(e) = channel.send(&out).await {
                tracing::debug!(error = %e, "a transcript could not be shown");
            }
        }
        self
    }
}

/// The transcript of `audio`, or why there is none (limits first, then
/// the download, then the server).
async fn transcribe(
    settings: &TranscriptionConfig,
    channels: &ChannelSet,
    m: &Inbound,
    audio: &Attachment,
) -> Result<String, String> {
    if audio.size.is_some_and(|s| s > settings.max_bytes) {
        return Err(format!("it is larger than {} bytes", settings.max_bytes));
    }
    if audio.duration_secs.is_some_and(|d| d > settings.max_seconds) {
        return Err(format!("it is longer than {} seconds", settings.max_seconds));
    }
    let channel = channels
        .get(&m.address.channel)
        .ok_or_else(|| "its channel is not running".to_string())?;
    let data = channel
        .fetch_attachment(audio, settings.max_bytes)
        .await
        .map_err(|e| format!("it could not be downloaded: {e}"))?;
    let mime = audio.mime.as_deref().unwrap_or("application/octet-stream");
    client::transcribe(settings, &audio.name, mime, data).await
}

/// A transcript that speaks a command ("/status", "Slash subagents
/// list."), as its typed form; `None` when it is not a known command.
fn spoken_command(transcript: &str) -> Option<String> {
    let t = transcript.trim().trim_end_matches(['.', '!', '?', '。']).trim();
    let rest = match t.strip_prefix('/') {
        Some(r) => r,
        None => {
            let (first, rest) = t.split_once(char::is_whitespace)?;
            if !first.trim_end_matches([',', ':']).eq_ignore_ascii_case("slash") {
                return None;
            }
            rest
        }
    };
    let mut words = rest.split_whitespace().map(|w| w.trim_matches([',', '.']));
    let name = words.next()?.to_lowercase();
    let args: Vec<&str> = words.filter(|w| !w.is_empty()).collect();
    let typed = if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {}", args.join(" "))
    };
    match commands::parse(&typed)? {
        Command::Unknown(_) | Command::Usage(_) | Command::ForAnotherBot => None,
        _ => Some(typed),
    }
}

#[cfg(test)]
mod tests {
    use super::spoken_command;

    #[test]
    fn spoken_commands_are_read_as_typed_ones() {
        assert_eq!(
            spoken_command("Slash subagents list.").as_deref(),
            Some("/subagents list")
        );
        assert_eq!(spoken_command("/status").as_deref(), Some("/status"));
        assert_eq!(spoken_command("slash, status!").as_deref(), Some("/status"));
        assert_eq!(spoken_command("Slash dance"), None, "not a command");
        assert_eq!(spoken_command("please check the slash status"), None);
        assert_eq!(spoken_command("what's up"), None);
    }
}
