//! Checking a bear-off book's values: against the generator, and against the
//! rules.
//!
//! A book's checksums catch a damaged file, but a file altered and
//! checksummed again, or written by a faulty generator, can hold values no
//! play gives. Two checks answer the two cases:
//!
//! - [`BearoffBook::verify`] generates the table again and compares every
//!   stored 16-bit code, padding included: any altered code differs, but a
//!   generator bug would be in both.
//! - [`BearoffBook::verify_rules`] recomputes every pair's values from the
//!   *book's* values one roll ahead, with the rules' move generator
//!   ([`results`]) and plain `f64` arithmetic, none of the generator's
//!   universes, layouts or kernels:
//!
//!   ```text
//!   P(X, O) = sum over rolls r of p(r) * (1 if r bears X off, else 1 - min over X' of P(O, X'))
//!   ```
//!
//!   and the three no-double equities likewise (see [`super::solve`]). Each
//!   value must be within [`tolerance`] of what its rolls give from the
//!   book's values one roll ahead: a stored code is within half a step of
//!   its value and so are the codes it is recomputed from. The check is
//!   local: it bounds each value's distance from its recomputation, not
//!   from the game, since the values it is recomputed from may be off too,
//!   and such errors can add up over the plies (a book rewritten pair by
//!   pair in pip order, each code as far from the generator's as the
//!   tolerance lets it, passes at 4 to 15 units of 1/65535 from the game at
//!   6 checkers). What it catches is a value off from its rolls by more: a
//!   generator fault larger than a few code steps, and a lone altered code
//!   moved by more than twice its tolerance (3 steps of a probability's
//!   code or of the owned equity's, 4 of the other equities'). Exact
//!   agreement is the first check's.
//!
//! The rules check shares the rules' move generator ([`results`]) with the
//! generator's universes; what it does not share is their result groups,
//! the layout of the solve, its fixed point and its kernels. The rules
//! themselves are checked by an independent brute force in the tests.

use super::book::{
    cubeful_codes, cubeless_codes, decode_probability, decode_value, BearoffBook, Codes,
};
use super::dice::{results, ROLLS};
use super::side::Side;
use super::solve::{cubeful, table_index, Progress};
use super::universe::LANES;
use super::{GenerateOptions, Kernel, Table};
use rayon::prelude::*;
use std::fmt;

/// A stored code that differs from the one this build generates
/// ([`BearoffBook::verify`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The pair's slots in the book's layout (mover, opponent).
    pub slots: (usize, usize),
    /// Its sides, where the slots hold sides (not padding).
    pub sides: Option<(Side, Side)>,
    /// Which value: `P(win)`, or the equity with the cube owned by the
    /// player to move, centred, or owned by the opponent.
    pub value: &'static str,
    /// The stored value and the generated one, decoded.
    pub stored: f64,
    pub generated: f64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sides {
            Some((mover, opponent)) => write!(f, "{mover} against {opponent}")?,
            None => write!(f, "padding slots {} and {}", self.slots.0, self.slots.1)?,
        }
        write!(
            f,
            ": the book holds {} {:.6}, the generator gives {:.6}",
            self.value, self.stored, self.generated
        )
    }
}

impl std::error::Error for Mismatch {}

/// A stored value that its pair's rolls do not give from the book's values
/// one roll ahead ([`BearoffBook::verify_rules`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RuleBreak {
    /// The player to move, and the opponent.
    pub mover: Side,
    pub opponent: Side,
    /// Which value (as in [`Mismatch`]).
    pub value: &'static str,
    /// The stored value, decoded.
    pub stored: f64,
    /// The value recomputed from the stored values of the pairs after each roll.
    pub recomputed: f64,
    /// The largest difference the codes' precision allows.
    pub tolerance: f64,
}

impl fmt::Display for RuleBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} against {}: the book holds {} {:.6}, its rolls give {:.6} from the book's values after them (allowed difference {:.1e})",
            self.mover, self.opponent, self.value, self.stored, self.recomputed, self.tolerance
        )
    }
}

impl std::error::Error for RuleBreak {}

/// What [`BearoffBook::verify_rules`] found in a sound book.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RulesChecked {
    /// Pairs checked (padding left out).
    pub pairs: u64,
    /// The largest difference seen between a stored value and its
    /// recomputation, per value (`P(win)`, then the equities with the cube
    /// owned, centred, owned by the opponent; zero where the book has none).
    pub largest: [f64; 4],
}

/// The names of a pair's values, in the table's order.
const VALUE_NAMES: [&str; 4] = [
    "P(win)",
    "the equity with the cube owned",
    "the equity with the cube centred",
    "the equity with the cube owned by the opponent",
];

/// The largest difference [`BearoffBook::verify_rules`] allows between a
/// stored value and its recomputation, for value `k` (`cubeful::WIN` ..
/// `cubeful::OPPONENT_OWNS`).
///
/// A probability's code is within 0.5/65535 of its value, an equity's within
/// 1/65535 (its step is 2/65535). The recomputation mixes values after the
/// rolls through minima and a weighted average of weights summing to at most
/// 1, which add no error, except the doubling point `min(1, 2 * opp)` read
/// by the centred and opponent-owned equities, which doubles it. So the
/// allowance is the stored code's error plus its children's: 1/65535 for
/// `P(win)`, 2/65535 with the cube owned, 3/65535 for the other two, and
/// 1e-7 for the generator's own rounding over one roll (half a unit of its
/// fixed point, 1.2e-10, see [`super::solve`]) and the check's arithmetic.
pub fn tolerance(k: usize) -> f64 {
    let steps = match k {
        cubeful::WIN => 1.0,
        cubeful::OWNED => 2.0,
        _ => 3.0,
    };
    steps / 65535.0 + 1e-7
}

impl BearoffBook {
    /// Generates the book's table again with `kernel` and compares every
    /// stored code, padding included, with the one this build writes: a
    /// book altered with its checksums recomputed (any 16-bit code decodes
    /// to a value) differs. Returns the pairs compared, or the first
    /// differing value in the table's layout. Takes what generating the
    /// book takes; `progress` sees the generation's.
    ///
    /// # Panics
    ///
    /// On a book opened with [`BearoffBook::open_for_lookups`].
    pub fn verify(&self, kernel: Kernel, progress: impl FnMut(Progress)) -> Result<u64, Mismatch> {
        // Before the generation, not after it (minutes at 15 checkers).
        let _ = self.codes();
        let options = GenerateOptions {
            checkers: self.checkers(),
            cube: self.has_cube(),
            kernel,
        };
        let generated = super::generate(options, progress);
        let compare = |codes: &[u8]| self.compare(codes);
        match generated.table {
            Table::Cubeless(table) => compare(&cubeless_codes(self.checkers(), table).1),
            Table::Cubeful(table) => compare(&cubeful_codes(self.checkers(), table).1),
        }
    }

    /// [`BearoffBook::verify`]'s comparison with the generated `codes`.
    fn compare(&self, codes: &[u8]) -> Result<u64, Mismatch> {
        let table = self.codes();
        let stored = table.bytes;
        assert_eq!(stored.len(), codes.len(), "the same layout");
        let (layout, slots) = (self.layout(), table.slots);
        let Some(at) = stored
            .chunks_exact(2)
            .zip(codes.chunks_exact(2))
            .position(|(a, b)| a != b)
        else {
            return Ok((slots * slots) as u64);
        };
        // `table_index` undone.
        let values = table.values;
        let (lane, rest) = (at % LANES, at / LANES);
        let (k, rest) = (rest % values, rest / values);
        let (opponent, mover) = (rest % slots, rest / slots * LANES + lane);
        debug_assert_eq!(table_index(slots, values, mover, opponent, k), at);
        let code = |bytes: &[u8]| u16::from_le_bytes([bytes[2 * at], bytes[2 * at + 1]]);
        Err(Mismatch {
            slots: (mover, opponent),
            sides: layout.side(mover).zip(layout.side(opponent)),
            value: VALUE_NAMES[k],
            stored: decode_value(k, code(stored)),
            generated: decode_value(k, code(codes)),
        })
    }

    /// Bytes [`BearoffBook::verify_rules`] holds beside the book: each
    /// slot's side, and each side's rolls and the slots they leave (at most
    /// 200 a side: 9,207,793 for the 54,264 sides of 15 checkers, 170 a
    /// side, 61 MB in all by this count).
    pub fn verify_rules_bytes(&self) -> u64 {
        let slots = self.layout().slots() as u64;
        let positions = self.positions() as u64;
        let per_side = ROLLS.len() * std::mem::size_of::<RollResults>() + 4 + 200 * 4;
        slots * std::mem::size_of::<Option<Side>>() as u64 + positions * per_side as u64
    }

    /// Checks every pair's stored values against its rolls, one roll ahead
    /// from the book's own values (the module's documentation says how, and
    /// [`tolerance`] how closely). Returns the pairs checked and the largest
    /// differences, or the first pair (in the table's order of opponent
    /// blocks) whose value is off by more. `progress` sees the pairs done
    /// and the pairs in all, from the calling thread.
    ///
    /// Each block of 8 opponents reads its own rows of the table (every
    /// value of those opponents to move) as children, and the stored values
    /// of every mover against it: the book is read about twice in all.
    ///
    /// # Panics
    ///
    /// On a book opened with [`BearoffBook::open_for_lookups`].
    pub fn verify_rules(
        &self,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<RulesChecked, RuleBreak> {
        let layout = self.layout();
        let slots = layout.slots();
        let sides: Vec<Option<Side>> = (0..slots).map(|slot| layout.side(slot)).collect();
        let rolls = Rolls::new(&sides, |side| {
            layout
                .slot(side)
                .expect("the book holds every side a roll leaves") as u32
        });
        let positions = sides.iter().flatten().count() as u64;
        let checker = Checker {
            codes: self.codes(),
            sides: &sides,
            rolls: &rolls,
        };
        let blocks = slots / LANES;
        // Waves of blocks, each reported (and its first break returned) in
        // the table's order.
        let wave = (4 * rayon::current_num_threads()).max(1);
        let mut checked = RulesChecked {
            pairs: 0,
            largest: [0.0; 4],
        };
        for first in (0..blocks).step_by(wave) {
            let found: Vec<Result<Block, RuleBreak>> = (first..(first + wave).min(blocks))
                .into_par_iter()
                .map(|block| checker.block(block))
                .collect();
            for block in found {
                let block = block?;
                checked.pairs += block.pairs;
                for (largest, seen) in checked.largest.iter_mut().zip(block.largest) {
                    *largest = largest.max(seen);
                }
            }
            progress(checked.pairs, positions * positions);
        }
        Ok(checked)
    }
}

/// Each side's rolls by the rules: per slot and roll, whether the roll bears
/// the side off, or the slots it can leave.
struct Rolls {
    /// Per slot, its range of `rolls`.
    start: Vec<u32>,
    /// Per (slot, roll): the roll's weight out of 36, whether it bears the
    /// side off, and its range of `children`.
    rolls: Vec<RollResults>,
    children: Vec<u32>,
}

#[derive(Clone, Copy)]
struct RollResults {
    weight: u32,
    off: bool,
    start: u32,
    end: u32,
}

impl Rolls {
    fn new(sides: &[Option<Side>], slot: impl Fn(&Side) -> u32) -> Rolls {
        let mut rolls = Rolls {
            start: vec![0],
            rolls: Vec::new(),
            children: Vec::new(),
        };
        for side in sides {
            if let Some(side) = side.filter(|side| !side.is_empty()) {
                for roll in ROLLS {
                    let left = results(&side, roll);
                    let off = left.contains(&Side::EMPTY);
                    let start = rolls.children.len() as u32;
                    if !off {
                        rolls.children.extend(left.iter().map(&slot));
                    }
                    rolls.rolls.push(RollResults {
                        weight: roll.weight(),
                        off,
                        start,
                        end: rolls.children.len() as u32,
                    });
                }
            }
            rolls.start.push(rolls.rolls.len() as u32);
        }
        rolls.rolls.shrink_to_fit();
        rolls.children.shrink_to_fit();
        rolls
    }

    fn of(&self, slot: usize) -> &[RollResults] {
        &self.rolls[self.start[slot] as usize..self.start[slot + 1] as usize]
    }

    fn children(&self, roll: &RollResults) -> &[u32] {
        &self.children[roll.start as usize..roll.end as usize]
    }
}

/// What one block of opponents found.
struct Block {
    pairs: u64,
    largest: [f64; 4],
}

/// The book's codes and each side's rolls, shared by the workers.
struct Checker<'a> {
    codes: Codes<'a>,
    sides: &'a [Option<Side>],
    rolls: &'a Rolls,
}

impl Checker<'_> {
    /// Checks every mover against the opponents of block `block`.
    fn block(&self, block: usize) -> Result<Block, RuleBreak> {
        let mut found = Block {
            pairs: 0,
            largest: [0.0; 4],
        };
        let opponents: [Option<Side>; LANES] =
            std::array::from_fn(|lane| self.sides[block * LANES + lane]);
        for (mover, side) in self.sides.iter().enumerate() {
            let Some(side) = side else { continue };
            let recomputed = if side.is_empty() {
                [[1.0; LANES]; 4]
            } else if self.codes.values == 1 {
                [
                    self.cubeless(block, mover),
                    [0.0; LANES],
                    [0.0; LANES],
                    [0.0; LANES],
                ]
            } else {
                self.cubeful(block, mover)
            };
            for (lane, opponent) in opponents.iter().enumerate() {
                let Some(opponent) = opponent else { continue };
                found.pairs += 1;
                for k in 0..self.codes.values {
                    // A finished game where the opponent is off (the mover
                    // is not): lost.
                    let expected = if opponent.is_empty() && !side.is_empty() {
                        if k == cubeful::WIN {
                            0.0
                        } else {
                            -1.0
                        }
                    } else {
                        recomputed[k][lane]
                    };
                    let stored = decode_value(k, self.codes.code(mover, block * LANES + lane, k));
                    let difference = (stored - expected).abs();
                    found.largest[k] = found.largest[k].max(difference);
                    if difference > tolerance(k) {
                        return Err(RuleBreak {
                            mover: *side,
                            opponent: *opponent,
                            value: VALUE_NAMES[k],
                            stored,
                            recomputed: expected,
                            tolerance: tolerance(k),
                        });
                    }
                }
            }
        }
        Ok(found)
    }

    /// `P(win)` of `mover` (not empty) against each opponent of `block`.
    fn cubeless(&self, block: usize, mover: usize) -> [f64; LANES] {
        let mut sum = [0.0; LANES];
        for roll in self.rolls.of(mover) {
            let weight = f64::from(roll.weight);
            if roll.off {
                sum = sum.map(|s| s + weight);
                continue;
            }
            // Codes are monotone in the probability: the least code is the
            // least value.
            let mut least = [u16::MAX; LANES];
            for &child in self.rolls.children(roll) {
                let row = self.codes.lanes(block, child as usize, cubeful::WIN);
                for (least, code) in least.iter_mut().zip(row) {
                    *least = (*least).min(code);
                }
            }
            for (sum, least) in sum.iter_mut().zip(least) {
                *sum += weight * (1.0 - decode_probability(least));
            }
        }
        sum.map(|s| s / 36.0)
    }

    /// `P(win)` and the three no-double equities of `mover` (not empty)
    /// against each opponent of `block`.
    fn cubeful(&self, block: usize, mover: usize) -> [[f64; LANES]; 4] {
        let mut sum = [[0.0; LANES]; 4];
        for roll in self.rolls.of(mover) {
            let weight = f64::from(roll.weight);
            if roll.off {
                sum = sum.map(|value| value.map(|s| s + weight));
                continue;
            }
            let mut least = [[f64::INFINITY; LANES]; 4];
            for &child in self.rolls.children(roll) {
                let child = child as usize;
                let [win, owned, centred, opponent_owns] = [
                    cubeful::WIN,
                    cubeful::OWNED,
                    cubeful::CENTRED,
                    cubeful::OPPONENT_OWNS,
                ]
                .map(|k| {
                    self.codes
                        .lanes(block, child, k)
                        .map(|code| decode_value(k, code))
                });
                for lane in 0..LANES {
                    // The opponent, to move after the roll, may double
                    // where the mover does not own the cube.
                    let double = (2.0 * opponent_owns[lane]).min(1.0);
                    let after = [
                        win[lane],
                        opponent_owns[lane],
                        centred[lane].max(double),
                        owned[lane].max(double),
                    ];
                    for (least, after) in least.iter_mut().zip(after) {
                        least[lane] = least[lane].min(after);
                    }
                }
            }
            for lane in 0..LANES {
                sum[cubeful::WIN][lane] += weight * (1.0 - least[cubeful::WIN][lane]);
                for k in [cubeful::OWNED, cubeful::CENTRED, cubeful::OPPONENT_OWNS] {
                    sum[k][lane] -= weight * least[k][lane];
                }
            }
        }
        sum.map(|value| value.map(|s| s / 36.0))
    }
}
