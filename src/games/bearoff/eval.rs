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
use super::universe::{reachable_sides, Universe};
use super::Table;
use crate::kernels::Kernel;

/// The sides an evaluation of (`mover`, `opponent`) solves, found but not
/// yet laid out as universes: enough to size its tables
/// ([`Plan::table_bytes`]) before [`Evaluation::solve`] builds them, which
/// takes longer than finding the sides and more memory.
pub struct Plan {
    /// Movers of the first table (the union, or the mover's reachable sides).
    first: Vec<Side>,
    /// Opponents of the first table when they form a universe of their own.
    second: Option<Vec<Side>>,
    /// Pairs to solve, counted from the universes' slots once.
    pairs: u64,
}

impl std::fmt::Debug for Plan {
    /// A summary: how many sides each table's movers have, and the pairs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("first", &self.first.len())
            .field("second", &self.second.as_ref().map(Vec::len))
            .field("pairs", &self.pairs())
            .finish()
    }
}

impl Plan {
    /// Finds the sides reachable from `mover` and from `opponent`.
    pub fn new(mover: &Side, opponent: &Side) -> Plan {
        let from_mover = reachable_sides(&[*mover]);
        let from_opponent = reachable_sides(&[*opponent]);
        let (mover_slots, opponent_slots) = (
            Universe::slots_of(&from_mover),
            Universe::slots_of(&from_opponent),
        );
        let (small, large) = (
            mover_slots.min(opponent_slots),
            mover_slots.max(opponent_slots),
        );
        if large <= 2 * small {
            // What is reachable from either: the union of the two.
            let mut union = from_mover;
            union.extend(from_opponent);
            union.sort_unstable();
            union.dedup();
            return Plan {
                pairs: pairs(Universe::slots_of(&union), None),
                first: union,
                second: None,
            };
        }
        Plan {
            first: from_mover,
            second: Some(from_opponent),
            pairs: pairs(mover_slots, Some(opponent_slots)),
        }
    }

    /// The sides of the first table's movers, and of its opponents where
    /// they form a universe of their own (`None`: the first's, the union of
    /// the sides reachable from either start).
    pub fn sides(&self) -> (&[Side], Option<&[Side]>) {
        (&self.first, self.second.as_deref())
    }

    /// Pairs to solve.
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// Bytes the tables take: four `f64` per pair with the cube, one `u32` without.
    pub fn table_bytes(&self, cube: bool) -> u64 {
        self.pairs() * if cube { 32 } else { 4 }
    }
}

/// Pairs of a first table of `first` slots, and of a second of `second`
/// (each of their movers against each of the other's), or of the first's
/// square.
fn pairs(first: usize, second: Option<usize>) -> u64 {
    let first = first as u64;
    match second {
        None => first * first,
        Some(second) => 2 * first * second as u64,
    }
}

/// The universes of a [`Plan`], built.
#[derive(Debug)]
struct Universes {
    first: Universe,
    second: Option<Universe>,
}

/// A solved evaluation: the values of every pair the game can visit.
#[derive(Debug)]
pub struct Evaluation {
    plan: Universes,
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
        let plan = Universes {
            first: Universe::of(plan.first),
            second: plan.second.map(Universe::of),
        };
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
        pairs(
            self.plan.first.slots(),
            self.plan.second.as_ref().map(Universe::slots),
        )
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
