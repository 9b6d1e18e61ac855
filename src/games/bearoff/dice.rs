//! Rolls and plays: the 21 distinct rolls of two dice and every way to play one.
//!
//! A roll moves two checkers by its two dice in either order, or four by a
//! double. The rules demand that as many dice as possible be used, and the
//! larger one when only one can be; in a bear-off neither rule ever bites,
//! because a die is always playable while a checker is left (a checker above
//! the die moves down, one on the die's point bears off, and otherwise the
//! highest checker bears off). A play therefore uses every die unless the
//! last checker comes off first, which ends the game at once. This is also
//! what race3 enumerates and what gnubg's bear-off generator plays.

use super::side::{Side, POINTS};
use std::fmt;

/// A roll of two dice, `6 >= high >= low >= 1`: made by [`Roll::new`] or
/// taken from [`ROLLS`], so no other can exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roll {
    high: u8,
    low: u8,
}

impl Roll {
    /// The roll of `a` and `b` (1..=6 each, in any order).
    pub fn new(a: u8, b: u8) -> Option<Roll> {
        let valid = |d: u8| (1..=6).contains(&d);
        (valid(a) && valid(b)).then(|| Roll {
            high: a.max(b),
            low: a.min(b),
        })
    }

    /// The larger die.
    pub fn high(self) -> u8 {
        self.high
    }

    /// The smaller die (equal to [`Roll::high`] for a double).
    pub fn low(self) -> u8 {
        self.low
    }

    /// Whether both dice show the same number (played four times).
    pub fn is_double(self) -> bool {
        self.high == self.low
    }

    /// Ways to throw this roll out of 36: 1 for a double, 2 otherwise.
    pub fn weight(self) -> u32 {
        if self.is_double() {
            1
        } else {
            2
        }
    }
}

impl fmt::Display for Roll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.high, self.low)
    }
}

/// The 21 distinct rolls: doubles 1-1..6-6 first, then 2-1, 3-1, 3-2, ..., 6-5.
pub const ROLLS: [Roll; 21] = {
    let mut rolls = [Roll { high: 1, low: 1 }; 21];
    let mut i = 0;
    let mut d = 1;
    while d <= 6 {
        rolls[i] = Roll { high: d, low: d };
        i += 1;
        d += 1;
    }
    let mut high = 2;
    while high <= 6 {
        let mut low = 1;
        while low < high {
            rolls[i] = Roll { high, low };
            i += 1;
            low += 1;
        }
        high += 1;
    }
    rolls
};

/// One checker moved by one die: from `from` (1..=6) to `to` (0 = borne off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: u8,
    pub to: u8,
}

/// A legal play of a roll: its steps in order and the resulting side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Play {
    pub steps: Vec<Step>,
    pub result: Side,
}

impl Play {
    /// gnubg-style notation, steps sorted from the highest point: `6/4 5/off`.
    pub fn notation(&self) -> String {
        let mut steps = self.steps.clone();
        steps.sort_by_key(|s| std::cmp::Reverse((s.from, s.to)));
        steps
            .iter()
            .map(|s| match s.to {
                0 => format!("{}/off", s.from),
                to => format!("{}/{to}", s.from),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The dice of `roll` in the orders they may be played.
fn die_orders(roll: Roll) -> Vec<Vec<usize>> {
    let (high, low) = (roll.high as usize, roll.low as usize);
    if roll.is_double() {
        vec![vec![high; 4]]
    } else {
        vec![vec![high, low], vec![low, high]]
    }
}

/// Every legal play of `roll` from `side`, one per distinct resulting side
/// (the first found, dice in the order high then low), sorted by result.
/// Empty only when `side` has no checkers.
pub fn plays(side: &Side, roll: Roll) -> Vec<Play> {
    let mut found: Vec<Play> = Vec::new();
    for dice in die_orders(roll) {
        let mut steps = Vec::with_capacity(4);
        extend_plays(*side, &dice, &mut steps, &mut found);
    }
    found.sort_by_key(|p| p.result);
    found.dedup_by_key(|p| p.result);
    found
}

fn extend_plays(side: Side, dice: &[usize], steps: &mut Vec<Step>, found: &mut Vec<Play>) {
    let Some((&die, rest)) = dice.split_first() else {
        found.push(Play {
            steps: steps.clone(),
            result: side,
        });
        return;
    };
    if side.is_empty() {
        // The last checker came off before every die was used: the game is over.
        found.push(Play {
            steps: steps.clone(),
            result: side,
        });
        return;
    }
    for from in 1..=POINTS {
        if let Some(next) = side.play_die(from, die) {
            steps.push(Step {
                from: from as u8,
                to: from.saturating_sub(die) as u8,
            });
            extend_plays(next, rest, steps, found);
            steps.pop();
        }
    }
}

/// The distinct sides `roll` can leave, sorted; contains [`Side::EMPTY`] when
/// the roll can bear off every checker. Empty only when `side` has no checkers.
pub fn results(side: &Side, roll: Roll) -> Vec<Side> {
    let mut layer = vec![*side];
    let mut out = Vec::new();
    for dice in die_orders(roll) {
        layer.clear();
        layer.push(*side);
        for &die in &dice {
            let mut next = Vec::with_capacity(layer.len() * 4);
            for s in &layer {
                if s.is_empty() {
                    next.push(*s);
                    continue;
                }
                next.extend((1..=POINTS).filter_map(|from| s.play_die(from, die)));
            }
            next.sort_unstable();
            next.dedup();
            layer = next;
        }
        out.extend_from_slice(&layer);
    }
    out.sort_unstable();
    out.dedup();
    if side.is_empty() {
        out.clear();
    }
    out
}
