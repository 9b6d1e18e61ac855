//! One side of a bear-off: checkers on the six home points, point 1 first.
//!
//! `Side::counts()[i]` is the number of checkers on point `i + 1`; point 1 is
//! next to bearing off, point 6 the farthest. The notation is the same order,
//! six counts separated by spaces or commas: `"2 2 2 2 2 5"` has five checkers
//! on the 6-point. (gnubg also numbers from the ace point; the status document
//! 004 notes that some tools write the 6-point first.)

use crate::games::count_fields;
use std::fmt;
use std::str::FromStr;

/// Home points.
pub const POINTS: usize = 6;
/// Most checkers a side has in backgammon.
pub const MAX_CHECKERS: usize = 15;

/// One side's position: the checkers on points 1..=6 (at most 15 in all).
/// Sides are ordered by their counts, point 1's first, as arrays are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Side {
    counts: [u8; POINTS],
}

impl Ord for Side {
    /// The counts' order, compared as one word (a derived comparison of
    /// the arrays calls `memcmp`: half the time of finding the sides a
    /// 15-checker evaluation reaches went to sorting play results with it).
    fn cmp(&self, other: &Side) -> std::cmp::Ordering {
        let word = |side: &Side| {
            let mut bytes = [0u8; 8];
            bytes[8 - POINTS..].copy_from_slice(&side.counts);
            u64::from_be_bytes(bytes)
        };
        word(self).cmp(&word(other))
    }
}

impl PartialOrd for Side {
    fn partial_cmp(&self, other: &Side) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Why a side's notation was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseSideError {
    /// Not six counts.
    WrongLength(usize),
    /// A count that is not a non-negative whole number.
    BadCount(String),
    /// A negative count.
    Negative(String),
    /// More than 15 checkers in all.
    TooManyCheckers(u32),
}

impl fmt::Display for ParseSideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseSideError::WrongLength(n) => {
                write!(f, "a side is 6 checker counts (points 1 to 6), got {n}")
            }
            ParseSideError::BadCount(text) => {
                write!(
                    f,
                    "'{}' is not a checker count",
                    crate::games::excerpt(text)
                )
            }
            ParseSideError::Negative(text) => {
                write!(
                    f,
                    "checker counts cannot be negative, got {}",
                    crate::games::excerpt(text)
                )
            }
            ParseSideError::TooManyCheckers(n) => {
                write!(f, "a side has at most {MAX_CHECKERS} checkers, got {n}")
            }
        }
    }
}

impl std::error::Error for ParseSideError {}

impl Side {
    /// The side with `counts[i]` checkers on point `i + 1`, if it has at most 15.
    pub fn new(counts: [u8; POINTS]) -> Option<Side> {
        let total: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        (total as usize <= MAX_CHECKERS).then_some(Side { counts })
    }

    /// The side with every checker borne off.
    pub const EMPTY: Side = Side {
        counts: [0; POINTS],
    };

    /// Checkers on points 1..=6.
    pub fn counts(&self) -> [u8; POINTS] {
        self.counts
    }

    /// Checkers still on the board.
    pub fn checkers(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }

    /// Pip count: the sum over checkers of their point numbers.
    pub fn pips(&self) -> usize {
        (1..=POINTS)
            .zip(self.counts)
            .map(|(p, c)| p * c as usize)
            .sum()
    }

    /// Whether every checker is off (the side has won).
    pub fn is_empty(&self) -> bool {
        self.counts == [0; POINTS]
    }

    /// The highest occupied point (1..=6), if any.
    pub fn highest_point(&self) -> Option<usize> {
        (1..=POINTS).rev().find(|&p| self.counts[p - 1] > 0)
    }

    /// Four bits per point, point 1 lowest: a compact key.
    pub fn packed(&self) -> u32 {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, &c)| u32::from(c) << (4 * i))
            .sum()
    }

    /// Plays one die from `from` (1..=6), if that is legal: a checker on
    /// `from` moves `die` points toward home, or off when it reaches 0 or
    /// beyond; bearing off with a larger die than needed is only allowed from
    /// the highest occupied point. `None` too for a point outside 1..=6 or a
    /// die outside 1..=6.
    pub fn play_die(&self, from: usize, die: usize) -> Option<Side> {
        if !(1..=POINTS).contains(&from) || !(1..=6).contains(&die) {
            return None;
        }
        if self.counts[from - 1] == 0 {
            return None;
        }
        if die > from && self.highest_point() != Some(from) {
            return None;
        }
        let mut counts = self.counts;
        counts[from - 1] -= 1;
        if die < from {
            counts[from - die - 1] += 1;
        }
        Some(Side { counts })
    }
}

impl FromStr for Side {
    type Err = ParseSideError;

    fn from_str(text: &str) -> Result<Side, ParseSideError> {
        let fields: Vec<&str> = count_fields(text).collect();
        if fields.len() != POINTS {
            return Err(ParseSideError::WrongLength(fields.len()));
        }
        let mut counts = [0u8; POINTS];
        let mut total = 0u32;
        for (slot, field) in counts.iter_mut().zip(&fields) {
            if field.starts_with('-') && field[1..].parse::<u64>().is_ok() {
                return Err(ParseSideError::Negative(field.to_string()));
            }
            let count: u32 = field
                .parse()
                .map_err(|_| ParseSideError::BadCount(field.to_string()))?;
            total = total.saturating_add(count);
            *slot = count.min(u32::from(u8::MAX)) as u8;
        }
        if total as usize > MAX_CHECKERS {
            return Err(ParseSideError::TooManyCheckers(total));
        }
        Ok(Side { counts })
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.counts;
        write!(f, "{a} {b} {c} {d} {e} {g}")
    }
}
