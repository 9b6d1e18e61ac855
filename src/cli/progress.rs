//! Progress on stderr for long work: redrawn in place on a terminal, one
//! line every few seconds when stderr goes to a log.

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

/// Progress of a generation solved level by level: an indicatif bar per
/// level on a terminal (turn, changed boards, ETA to the turn limit), and on a
/// log a line every few seconds plus one per finished level.
pub struct LevelProgress {
    bar: Option<indicatif::ProgressBar>,
    lines: Progress,
    terminal: bool,
}

impl LevelProgress {
    pub fn new() -> LevelProgress {
        LevelProgress {
            bar: None,
            lines: Progress::new(),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// A layer of `levels` (e.g. "level 12", "levels 0-12") was swept, in
    /// `mode` (how: "runs", "dense", "frontier").
    pub fn turn(&mut self, levels: &str, turn: u32, turn_limit: u32, changed: u64, mode: &str) {
        if !self.terminal {
            self.lines.update(|| {
                format!("{levels}: turn {turn}/{turn_limit} ({mode}), changed {changed}")
            });
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(turn_limit.into());
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix:>10} [{bar:30}] turn {pos}/{len} {msg} (ETA to turn {len}: {eta})",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(levels.to_string());
            bar
        });
        bar.set_position(turn.into());
        bar.set_message(format!("changed {changed:>10} {mode:>8}"));
    }

    /// `levels` are solved: `summary` says how.
    pub fn level_done(&mut self, levels: &str, summary: &str) {
        match self.bar.take() {
            Some(bar) => {
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{prefix:>10} {msg}")
                        .expect("a valid template"),
                );
                bar.finish_with_message(summary.to_string());
            }
            None => {
                self.lines.finish();
                note!("{levels}: {summary}");
            }
        }
    }
}

/// Progress of one long computation counted in units of work: an indicatif
/// bar with the rate and time left on a terminal, a line every few seconds
/// on a log.
pub struct WorkProgress {
    unit: &'static str,
    bar: Option<indicatif::ProgressBar>,
    lines: Progress,
    terminal: bool,
}

impl WorkProgress {
    /// Progress counted in `unit` (e.g. "pairs").
    pub fn new(unit: &'static str) -> WorkProgress {
        WorkProgress {
            unit,
            bar: None,
            lines: Progress::new(),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// `done` of `total` units are done; `message` says where.
    pub fn update(&mut self, done: u64, total: u64, message: impl FnOnce() -> String) {
        if !self.terminal {
            let unit = self.unit;
            self.lines.update(|| {
                format!(
                    "{}: {}/{} {unit} ({:.1}%)",
                    message(),
                    super::grouped(done),
                    super::grouped(total),
                    100.0 * done as f64 / total.max(1) as f64
                )
            });
            return;
        }
        let unit = self.unit;
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "[{{bar:30}}] {{percent:>3}}% of {{human_len}} {unit} {{msg}} (ETA {{eta}})"
                ))
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        bar.set_position(done);
        bar.set_message(message());
    }

    /// Clears the bar or line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.lines.finish();
    }
}
