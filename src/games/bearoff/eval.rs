//! On-demand exact evaluation of one position: race3's mode, without its
//! lossy hash table.
//!
//! The positions a game from (`X` to move, `O`) can visit are pairs of sides
//! reachable from `X` and from `O`. The evaluator builds those two universes
//! and solves them with the table generator ([`solve`]): every pair of a
//! mover from one universe against an opponent from the other, in both
//! directions: cubeful in `f64` (32 bytes a pair), or P(win) alone in the
//! cubeless tables' fixed point (4 bytes a pair). When the two universes are
//! alike (one side's reachable set is at most twice the other's), their union
//! is solved as one square table instead, which costs no more memory and
//! half the bookkeeping. Every value is exact to rounding; nothing is evicted.

use super::book::{Entry, Lookup, ProbeError};
use super::side::Side;
use super::solve::{solve, Cubeful, Cubeless, Progress};
use super::universe::Universe;
use super::Table;
use crate::kernels::Kernel;

/// The universes an evaluation of (`mover`, `opponent`) solves.
pub struct Plan {
    /// Movers of the first table (the union, or the mover's reachable sides).
    pub first: Universe,
    /// Opponents of the first table when they form a universe of their own.
    pub second: Option<Universe>,
}

impl Plan {
    /// Finds the sides reachable from `mover` and from `opponent`.
    pub fn new(mover: &Side, opponent: &Side) -> Plan {
        let from_mover = Universe::reachable(&[*mover]);
        let from_opponent = Universe::reachable(&[*opponent]);
        let (small, large) = if from_mover.slots() <= from_opponent.slots() {
            (&from_mover, &from_opponent)
        } else {
            (&from_opponent, &from_mover)
        };
        if large.slots() <= 2 * small.slots() {
            return Plan {
                first: Universe::reachable(&[*mover, *opponent]),
                second: None,
            };
        }
        Plan {
            first: from_mover,
            second: Some(from_opponent),
        }
    }

    /// Pairs to solve.
    pub fn pairs(&self) -> u64 {
        let first = self.first.slots() as u64;
        match &self.second {
            None => first * first,
            Some(second) => 2 * first * second.slots() as u64,
        }
    }

    /// Bytes the tables take: four `f64` per pair with the cube, one `u32` without.
    pub fn table_bytes(&self, cube: bool) -> u64 {
        self.pairs() * if cube { 32 } else { 4 }
    }
}

/// A solved evaluation: the values of every pair the game can visit.
pub struct Evaluation {
    plan: Plan,
    first: Table,
    second: Option<Table>,
}

impl Evaluation {
    /// Solves `plan`, with cubeful equities or P(win) alone.
    pub fn solve(
        plan: Plan,
        cube: bool,
        kernel: Kernel,
        progress: impl FnMut(Progress),
    ) -> Evaluation {
        let second = plan.second.as_ref();
        let (first, second) = if cube {
            let (first, second) = solve::<Cubeful>(kernel, &plan.first, second, progress);
            (Table::Cubeful(first), second.map(Table::Cubeful))
        } else {
            let (first, second) = solve::<Cubeless>(kernel, &plan.first, second, progress);
            (Table::Cubeless(first), second.map(Table::Cubeless))
        };
        Evaluation {
            plan,
            first,
            second,
        }
    }

    /// Sides in the universes solved.
    pub fn sides(&self) -> usize {
        self.plan.first.positions() + self.plan.second.as_ref().map_or(0, Universe::positions)
    }

    /// Pairs solved.
    pub fn pairs(&self) -> u64 {
        self.plan.pairs()
    }
}

impl Lookup for Evaluation {
    fn entry(&self, mover: &Side, opponent: &Side) -> Result<Entry, ProbeError> {
        let first = &self.plan.first;
        let found = match (&self.plan.second, &self.second) {
            (Some(second), Some(table)) => match (first.slot(mover), second.slot(opponent)) {
                (Some(m), Some(o)) => Some((&self.first, second.slots(), m, o)),
                _ => match (second.slot(mover), first.slot(opponent)) {
                    (Some(m), Some(o)) => Some((table, first.slots(), m, o)),
                    _ => None,
                },
            },
            _ => match (first.slot(mover), first.slot(opponent)) {
                (Some(m), Some(o)) => Some((&self.first, first.slots(), m, o)),
                _ => None,
            },
        };
        let Some((table, opponents, m, o)) = found else {
            return Err(ProbeError::NotReachable {
                mover: *mover,
                opponent: *opponent,
            });
        };
        Ok(table.entry(opponents, m, o))
    }
}
