//! Answers for `init`: a flag's value when given, else a line read from
//! standard input after the question (a terminal or a pipe), else, with
//! `--yes`, an error naming the flag to pass.

use std::io::{BufRead, Write};

pub(super) struct Asker {
    quiet: bool,
    lines: std::io::Lines<std::io::StdinLock<'static>>,
}

impl Asker {
    pub(super) fn new(yes: bool) -> Self {
        Self {
            quiet: yes,
            lines: std::io::stdin().lock().lines(),
        }
    }

    /// `given`, or the answer to `question`.
    pub(super) fn value(&mut self, given: Option<&str>, flag: &str, question: &str) -> Result<String, String> {
        if let Some(v) = given.map(str::trim).filter(|v| !v.is_empty()) {
            return Ok(v.to_string());
        }
        if self.quiet {
            return Err(format!("{question}: pass {flag}"));
        }
        loop {
            print!("{question}: ");
            let _ = std::io::stdout().flush();
            match self.lines.next() {
                Some(Ok(line)) if !line.trim().is_empty() => return Ok(line.trim().to_string()),
                Some(Ok(_)) => continue,
                _ => return Err(format!("no answer to \"{question}\" (pass {flag})")),
            }
        }
    }

    /// Whether another try may be asked for (not with `--yes`).
    pub(super) fn may_retry(&self) -> bool {
        !self.quiet
    }
}
