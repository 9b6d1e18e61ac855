//! Progress lines on stderr for long work: redrawn in place on a terminal,
//! one line every few seconds when stderr goes to a log.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    terminal: bool,
    interval: Duration,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    pub fn new() -> Progress {
        let terminal = std::io::stderr().is_terminal();
        Progress {
            terminal,
            interval: Duration::from_millis(if terminal { 100 } else { 5000 }),
            last: None,
            drawn: false,
        }
    }

    /// Shows `line` unless one was shown too recently; `line` is only built when shown.
    pub fn update(&mut self, line: impl FnOnce() -> String) {
        let now = Instant::now();
        if self.last.is_some_and(|last| now - last < self.interval) {
            return;
        }
        self.last = Some(now);
        let mut stderr = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(stderr, "\r\x1b[2K{}", line());
            self.drawn = true;
        } else {
            let _ = writeln!(stderr, "{}", line());
        }
        let _ = stderr.flush();
    }

    /// Clears the in-place line, if any.
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}
