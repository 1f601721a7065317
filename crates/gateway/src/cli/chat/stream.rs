//! The terminal shows an answer as the model writes it: text is printed as
//! it arrives; when the turn ends, only what the finished answer adds to
//! the streamed text is printed (nothing twice), or the whole answer again
//! on its own line when it differs (a note was added, a fallback answered).

use std::io::Write;

/// The streamed text on screen for the current answer.
#[derive(Default)]
pub(crate) struct Shown {
    text: String,
    /// A line is open (no newline printed after the streamed text yet).
    open: bool,
}

impl Shown {
    /// Print a piece of the answer.
    pub(crate) fn text(&mut self, agent: &str, piece: &str) {
        if self.text.is_empty() && !self.open {
            print!("{agent}> ");
        }
        print!("{}", crate::cli::chat::text::clean(piece));
        let _ = std::io::stdout().flush();
        self.text.push_str(piece);
        self.open = true;
    }

    /// End the open line, if any.
    pub(crate) fn end_line(&mut self) {
        if self.open {
            println!();
            self.open = false;
        }
    }

    /// The streamed text is not the answer (tools come next, or another
    /// provider starts again).
    pub(crate) fn reset(&mut self) {
        self.end_line();
        self.text.clear();
    }

    /// The turn's answer is `answer`.
    pub(crate) fn finish(&mut self, agent: &str, answer: &str) {
        let rest = answer
            .strip_prefix(self.text.as_str())
            .or_else(|| answer.strip_prefix(self.text.trim_end()));
        match rest {
            Some(rest) if !self.text.is_empty() => {
                println!("{}", crate::cli::chat::text::clean(rest));
            }
            _ => {
                self.end_line();
                println!("{agent}> {}", crate::cli::chat::text::clean(answer));
            }
        }
        self.open = false;
        self.text.clear();
    }
}
