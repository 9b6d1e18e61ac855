//! Backgammon bear-offs: exact two-sided tables, cubeless and cubeful.
//!
//! Each side has up to 15 checkers on its six home points; a side is written
//! as its counts on points 1 to 6, **point 1 (next to bearing off) first**
//! ([`Side`]). The player to move rolls two dice (21 distinct rolls, doubles
//! played four times); the side that bears off its last checker wins at once.
//! Gammons are out of scope, as in race3 and gnubg's two-sided databases.
//!
//! **Values.** For the player to move with side `X` against `O`:
//! - `P(win)`: the probability of winning with best cubeless play;
//! - cubeful money equities, cube at 1, no gammons, no Jacoby rule, for three
//!   cube states: owned by the player to move, centred, owned by the opponent.
//!   As in gnubg's databases, these are *no-double* equities: the equity if
//!   the player to move does not double now (and everyone plays the cube
//!   perfectly afterwards). Doubling is worth `min(1, 2 * opponent-owns)`:
//!   the opponent takes at twice the stake or passes. [`CubeEquities`] turns
//!   them into cube actions.
//!
//! **How.** Every play lowers the pip count, so one pass over the pairs in
//! order of their total pip count is exact (no value iteration). A
//! [`Universe`] lists the sides in pip order and, per side and roll, the
//! distinct sides the roll can leave; then each pair is a gather-and-min per
//! roll and a weighted sum ([`solve`]), 8 x 8 pairs at a time in parallel.
//! Full tables cover every side with at most `C` checkers (54,264 sides at
//! `C = 15`); the on-demand evaluator ([`eval`]) solves only the sides a given
//! position can reach, with the tables' arithmetic (`f64` with the cube, the
//! cubeless tables' fixed point without).
//!
//! **Precision.** Cubeless tables are computed in 32-bit fixed point (error
//! at most 1.1e-8 at 15 checkers, 2.5e-10 measured at 4 and 6), cubeful ones
//! in `f64`; books store 16-bit
//! codes (within 7.7e-6 for `P(win)`, 1.6e-5 for equities; see [`book`]).
//!
//! ```
//! use endbook::games::bearoff::{generate, GenerateOptions, Lookup, Side};
//!
//! let generated = generate(GenerateOptions::new(2, true), |_| {});
//! let one_on_six: Side = "0 0 0 0 0 1".parse().unwrap();
//! let entry = generated.entry(&one_on_six, &one_on_six).unwrap();
//! // 27 rolls of 36 bear the checker off at once; otherwise the opponent
//! // misses with 9 of 36 and the mover comes off next turn.
//! assert!((entry.win - (27.0 / 36.0 + 9.0 / 36.0 * 9.0 / 36.0)).abs() < 1e-9);
//! ```

pub mod book;
pub mod dice;
pub mod eval;
pub mod side;
pub mod solve;
pub mod universe;
pub mod verify;

pub use crate::book::BookError;
pub use crate::kernels::Kernel;
pub use book::{
    ranked_plays, BearoffBook, CubeAction, CubeEquities, Entry, Lookup, ProbeError, RankedPlay,
};
pub use dice::{plays, results, Play, Roll, Step, ROLLS};
pub use eval::{Evaluation, Plan};
pub use side::{ParseSideError, Side, MAX_CHECKERS, POINTS};
pub use solve::{Progress, ONE};
pub use universe::{Universe, LANES};
pub use verify::{Mismatch, RuleBreak, RulesChecked};

use std::path::Path;
use std::time::{Duration, Instant};

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct GenerateOptions {
    /// Most checkers per side (1..=15).
    pub checkers: usize,
    /// Cubeful equities as well as P(win).
    pub cube: bool,
    /// The kernel (all give identical tables).
    pub kernel: Kernel,
}

impl GenerateOptions {
    /// `checkers` per side, with or without cube values, the best kernel this CPU has.
    pub fn new(checkers: usize, cube: bool) -> GenerateOptions {
        let kernel = Kernel::available().last().unwrap_or_else(Kernel::scalar);
        GenerateOptions {
            checkers,
            cube,
            kernel,
        }
    }

    /// Whether a book can be made of these options: 1 to [`MAX_CHECKERS`]
    /// checkers per side. [`generate`] panics where this fails.
    ///
    /// ```
    /// use endbook::games::bearoff::{GenerateOptions, OptionsError};
    ///
    /// assert_eq!(GenerateOptions::new(6, true).check(), Ok(()));
    /// assert_eq!(GenerateOptions::new(16, false).check(), Err(OptionsError::Checkers(16)));
    /// ```
    pub fn check(&self) -> Result<(), OptionsError> {
        match self.checkers {
            1..=MAX_CHECKERS => Ok(()),
            checkers => Err(OptionsError::Checkers(checkers)),
        }
    }

    /// Pairs in the table, padding included.
    ///
    /// # Panics
    ///
    /// With more than [`MAX_CHECKERS`] checkers.
    pub fn pairs(&self) -> u64 {
        let slots = Universe::full_layout(self.checkers).slots() as u64;
        slots * slots
    }

    /// Bytes of the working table.
    pub fn table_bytes(&self) -> u64 {
        self.pairs() * if self.cube { 32 } else { 4 }
    }

    /// Bytes of the book file: its values (16 bits each) and the
    /// container's header and checksums.
    pub fn book_bytes(&self) -> u64 {
        let values = self.pairs() * if self.cube { 8 } else { 2 };
        crate::book::container_len(book::PARAMS, &[values])
    }
}

/// Why [`GenerateOptions`] ask for a book that cannot be made
/// ([`GenerateOptions::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionsError {
    /// Checkers per side outside `1..=`[`MAX_CHECKERS`].
    Checkers(usize),
}

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsError::Checkers(checkers) => write!(
                f,
                "{checkers} checkers: generate takes 1 to {MAX_CHECKERS} per side"
            ),
        }
    }
}

impl std::error::Error for OptionsError {}

/// A generated table.
#[derive(Clone, PartialEq)]
pub enum Table {
    /// `P(win)` in fixed point ([`ONE`] = 1).
    Cubeless(Vec<u32>),
    /// `P(win)` and the three no-double equities per pair.
    Cubeful(Vec<f64>),
}

impl std::fmt::Debug for Table {
    /// A summary: which values, how many.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Table::Cubeless(values) => write!(f, "Table::Cubeless({} values)", values.len()),
            Table::Cubeful(values) => write!(f, "Table::Cubeful({} values)", values.len()),
        }
    }
}

/// The result of [`generate`].
#[derive(Debug)]
pub struct Generated {
    pub options: GenerateOptions,
    pub universe: Universe,
    pub table: Table,
    /// Time spent listing sides and results.
    pub universe_time: Duration,
    /// Time spent solving.
    pub solve_time: Duration,
}

/// Generates the full table of `options.checkers` checkers per side.
///
/// # Panics
///
/// Where [`GenerateOptions::check`] fails: a checker count outside
/// `1..=`[`MAX_CHECKERS`].
pub fn generate(options: GenerateOptions, progress: impl FnMut(Progress)) -> Generated {
    if let Err(error) = options.check() {
        panic!("{error}");
    }
    let start = Instant::now();
    let universe = Universe::full(options.checkers);
    let universe_time = start.elapsed();
    let table = if options.cube {
        Table::Cubeful(solve::solve::<solve::Cubeful>(options.kernel, &universe, None, progress).0)
    } else {
        Table::Cubeless(
            solve::solve::<solve::Cubeless>(options.kernel, &universe, None, progress).0,
        )
    };
    Generated {
        options,
        universe,
        table,
        universe_time,
        solve_time: start.elapsed() - universe_time,
    }
}

impl Generated {
    /// Writes the book (narrowing the table in place).
    pub fn write(self, path: impl AsRef<Path>) -> Result<(), BookError> {
        let path = path.as_ref();
        let checkers = self.options.checkers;
        match self.table {
            Table::Cubeless(table) => BearoffBook::write_cubeless(path, checkers, table),
            Table::Cubeful(table) => BearoffBook::write_cubeful(path, checkers, table),
        }
    }

    /// The book's bytes (narrowing the table in place).
    pub fn into_book_bytes(self) -> Vec<u8> {
        let checkers = self.options.checkers;
        match self.table {
            Table::Cubeless(table) => BearoffBook::cubeless_bytes(checkers, table),
            Table::Cubeful(table) => BearoffBook::cubeful_bytes(checkers, table),
        }
    }
}

impl Lookup for Generated {
    /// Full-precision values from the generator's table.
    fn entry(&self, mover: &Side, opponent: &Side) -> Result<Entry, ProbeError> {
        let slot = |side: &Side| {
            self.universe.slot(side).ok_or(ProbeError::NotCovered {
                side: *side,
                checkers: side.checkers(),
                max: self.options.checkers,
            })
        };
        let (m, o) = (slot(mover)?, slot(opponent)?);
        Ok(self.table.entry(self.universe.slots(), m, o))
    }
}

impl Table {
    /// The values of slot pair (`m`, `o`) in a table with `slots` opponent slots.
    fn entry(&self, slots: usize, m: usize, o: usize) -> Entry {
        match self {
            Table::Cubeless(table) => Entry {
                win: book::fixed_to_probability(table[solve::table_index(slots, 1, m, o, 0)]),
                cube: None,
            },
            Table::Cubeful(table) => {
                let value = |k| table[solve::table_index(slots, 4, m, o, k)];
                Entry {
                    win: value(solve::cubeful::WIN),
                    cube: Some(CubeEquities {
                        owned: value(solve::cubeful::OWNED),
                        centred: value(solve::cubeful::CENTRED),
                        opponent_owns: value(solve::cubeful::OPPONENT_OWNS),
                    }),
                }
            }
        }
    }
}
