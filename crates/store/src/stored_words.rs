//! Enums stored as words (run status, run kind, approval status): one
//! definition gives each its word, `Display` and `Serialize` as that word,
//! and decoding from a row, where an unknown word is an error rather than
//! a state nobody handles. A risk (`switchboard_core::Risk`) is stored
//! as its word too, and one no build knows reads as high (fail closed).

/// An approval's `risk` column as stored.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(crate) struct StoredRisk(String);

impl From<StoredRisk> for switchboard_core::Risk {
    fn from(stored: StoredRisk) -> Self {
        Self::from_word(&stored.0)
    }
}

macro_rules! stored_words {
    ($name:ident, $what:literal, { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $name {
            /// The stored word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $word,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                match s.as_str() {
                    $($word => Ok(Self::$variant),)+
                    _ => Err(format!("unknown {} '{s}'", $what)),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::{ApprovalStatus, RunKind, RunStatus};

    #[test]
    fn words_decode_back_and_unknown_words_are_errors() {
        for s in [RunStatus::Running, RunStatus::TimedOut, RunStatus::Lost] {
            assert_eq!(RunStatus::try_from(s.to_string()), Ok(s));
        }
        assert_eq!(
            RunKind::try_from("sessions_spawn".to_string()),
            Ok(RunKind::SessionsSpawn)
        );
        assert_eq!(
            ApprovalStatus::try_from("approved_always".to_string()),
            Ok(ApprovalStatus::ApprovedAlways)
        );
        assert_eq!(
            RunStatus::try_from("runing".to_string()),
            Err("unknown run status 'runing'".to_string())
        );
        assert_eq!(serde_json::to_string(&RunKind::Cron).unwrap(), "\"cron\"");
    }
}
