//! Oware books: the container's parameters and sections for Oware, probing and export.
//!
//! Parameters: rules variant ([`RULES_ABAPA`]), turn limit, maximum seeds, and
//! layers swept during generation. Section `n` holds the boards with `n` seeds
//! (level `n`, 0 included): its layers `1..=last_change`, each one value (`i8`)
//! per board in rank order; its two meta numbers are the board count and
//! `last_change`. A value with more turns left than `last_change` equals the
//! value at `last_change`.

use super::board::Board;
use super::generate::Generated;
use super::index::{BoardIndex, MAX_BOOK_SEEDS};
use super::rules::legal_moves;
use crate::book::{self, BookError, Container, SectionData};
use rayon::prelude::*;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// Game tag of Oware books.
pub const GAME_TAG: [u8; 4] = *b"OWAR";
/// Rules variant: CodinGame's Oware Abapa (grand slam captures nothing,
/// feeding compulsory, a player without a legal move scores own seeds).
pub const RULES_ABAPA: u64 = 1;

/// Why a position could not be looked up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// The board holds more seeds than the book.
    TooManySeeds { seeds: u32, max_seeds: u32 },
    /// Turns left outside `1..=turn_limit`.
    TurnsOutOfRange { turns_left: u32, turn_limit: u32 },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::TooManySeeds { seeds, max_seeds } => write!(
                f,
                "the board holds {seeds} seeds; this book covers boards with at most {max_seeds}"
            ),
            ProbeError::TurnsOutOfRange {
                turns_left,
                turn_limit,
            } => write!(
                f,
                "turns left must be between 1 and the book's turn limit {turn_limit}, got {turns_left}"
            ),
        }
    }
}

impl std::error::Error for ProbeError {}

/// One seed level of a book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelInfo {
    /// Seeds on every board of the level.
    pub seeds: u32,
    /// Number of boards.
    pub states: u64,
    /// Last turn at which a value of the level changed.
    pub last_change: u32,
}

/// A legal move and its value under perfect play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoredMove {
    /// The house sown (0-5).
    pub house: usize,
    /// Seeds it captures at once.
    pub capture: u8,
    /// Net score of the move: capture minus the opponent's value afterwards.
    pub score: i32,
}

/// A position's value and every legal move's score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The net score the player to move gains with perfect play.
    pub value: i32,
    /// The legal moves (empty when the player to move cannot move and scores own seeds).
    pub moves: Vec<ScoredMove>,
}

impl Analysis {
    /// The houses of the moves that reach the value.
    pub fn best_moves(&self) -> impl Iterator<Item = usize> + '_ {
        self.moves
            .iter()
            .filter(|m| m.score == self.value)
            .map(|m| m.house)
    }
}

/// An open, validated Oware book.
///
/// Opening checks the structure and every checksum; from then on values are
/// read as stored. (A file altered and deliberately re-checksummed can hold
/// wrong values, never cause a panic.)
pub struct OwareBook {
    container: Container,
    turn_limit: u32,
    turns_swept: u32,
    levels: Vec<LevelInfo>,
    index: BoardIndex,
}

impl OwareBook {
    /// Opens and validates the book at `path`.
    pub fn open(path: &Path) -> Result<OwareBook, BookError> {
        Self::from_container(Container::open(path, GAME_TAG)?)
    }

    /// Validates a book held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<OwareBook, BookError> {
        Self::from_container(Container::from_bytes("<memory>", bytes, GAME_TAG)?)
    }

    fn from_container(container: Container) -> Result<OwareBook, BookError> {
        let &[rules, turn_limit, max_seeds, turns_swept] = container.params() else {
            return Err(container.corrupt(format!(
                "an Oware book has 4 parameters, found {}",
                container.params().len()
            )));
        };
        if rules != RULES_ABAPA {
            return Err(container.corrupt(format!("unknown Oware rules variant {rules}")));
        }
        if !(1..=u64::from(u16::MAX)).contains(&turn_limit)
            || !(1..=turn_limit).contains(&turns_swept)
        {
            return Err(container.corrupt(format!(
                "turn limit {turn_limit} and {turns_swept} layers swept are out of range"
            )));
        }
        if max_seeds > u64::from(MAX_BOOK_SEEDS) {
            return Err(container.corrupt(format!(
                "{max_seeds} seeds is beyond the {MAX_BOOK_SEEDS} this build supports"
            )));
        }
        if container.sections().len() as u64 != max_seeds + 1 {
            return Err(container.corrupt(format!(
                "{} sections for {max_seeds} seeds (one per level 0..={max_seeds})",
                container.sections().len()
            )));
        }
        let mut levels = Vec::new();
        for (seeds, section) in container.sections().iter().enumerate() {
            let [states, last_change] = section.meta;
            let expected = BoardIndex::level_size(seeds as u32) as u64;
            if states != expected {
                return Err(container.corrupt(format!(
                    "level {seeds} has {states} boards, expected {expected}"
                )));
            }
            if !(1..=turns_swept).contains(&last_change) {
                return Err(container.corrupt(format!(
                    "level {seeds} last changes at turn {last_change}, outside 1..={turns_swept}"
                )));
            }
            if section.len != states * last_change {
                return Err(container.corrupt(format!(
                    "level {seeds} holds {} bytes, expected {}",
                    section.len,
                    states * last_change
                )));
            }
            levels.push(LevelInfo {
                seeds: seeds as u32,
                states,
                last_change: last_change as u32,
            });
        }
        Ok(OwareBook {
            turn_limit: turn_limit as u32,
            turns_swept: turns_swept as u32,
            index: BoardIndex::new(max_seeds as u32),
            levels,
            container,
        })
    }

    /// Writes a generated book to `path` (under a temporary name, then renamed).
    pub fn write(path: &Path, generated: &Generated) -> Result<(), BookError> {
        let (params, layers) = Self::layout(generated);
        book::write(path, GAME_TAG, &params, &sections(generated, &layers))
    }

    /// Serialises a generated book into memory.
    pub fn to_bytes(generated: &Generated) -> Vec<u8> {
        let (params, layers) = Self::layout(generated);
        book::to_bytes(GAME_TAG, &params, &sections(generated, &layers))
    }

    /// The parameters and each level's layers, replayed from the changes.
    fn layout(generated: &Generated) -> ([u64; 4], Vec<Vec<i8>>) {
        let options = &generated.options;
        let solution = &generated.solution;
        let params = [
            RULES_ABAPA,
            options.turn_limit.into(),
            options.max_seeds.into(),
            solution.turns_swept.into(),
        ];
        let layers = (0..solution.levels.len())
            .into_par_iter()
            .map(|level| solution.level_layers(level))
            .collect();
        (params, layers)
    }

    /// Largest number of turns left the book covers.
    pub fn turn_limit(&self) -> u32 {
        self.turn_limit
    }

    /// Layers swept when the book was generated: the turn at which every
    /// level had converged, or the turn limit.
    pub fn turns_swept(&self) -> u32 {
        self.turns_swept
    }

    /// Largest seed count covered.
    pub fn max_seeds(&self) -> u32 {
        self.levels.len() as u32 - 1
    }

    /// The seed levels, 0 to `max_seeds`.
    pub fn levels(&self) -> &[LevelInfo] {
        &self.levels
    }

    /// The file size in bytes.
    pub fn file_len(&self) -> u64 {
        self.container.file_len()
    }

    /// Where the book was read from.
    pub fn path(&self) -> &Path {
        self.container.path()
    }

    fn check(&self, board: &Board, turns_left: u32) -> Result<(), ProbeError> {
        if board.seeds() > self.max_seeds() {
            return Err(ProbeError::TooManySeeds {
                seeds: board.seeds(),
                max_seeds: self.max_seeds(),
            });
        }
        if !(1..=self.turn_limit).contains(&turns_left) {
            return Err(ProbeError::TurnsOutOfRange {
                turns_left,
                turn_limit: self.turn_limit,
            });
        }
        Ok(())
    }

    /// The net score the player to move gains with perfect play from `board`
    /// with `turns_left` turns left.
    pub fn value(&self, board: &Board, turns_left: u32) -> Result<i32, ProbeError> {
        self.check(board, turns_left)?;
        Ok(self.stored_value(board, turns_left))
    }

    fn stored_value(&self, board: &Board, turns_left: u32) -> i32 {
        let seeds = board.seeds();
        let level = &self.levels[seeds as usize];
        let layer = turns_left.min(level.last_change) as usize - 1;
        let at = layer * level.states as usize + self.index.rank(board);
        i32::from(self.container.section(seeds as usize)[at] as i8)
    }

    /// The value of `board` and the score of each legal move.
    pub fn analyse(&self, board: &Board, turns_left: u32) -> Result<Analysis, ProbeError> {
        let value = self.value(board, turns_left)?;
        let moves = legal_moves(board)
            .map(|outcome| {
                let future = if turns_left > 1 {
                    self.stored_value(&outcome.child(), turns_left - 1)
                } else {
                    0
                };
                ScoredMove {
                    house: outcome.house,
                    capture: outcome.capture,
                    score: i32::from(outcome.capture) - future,
                }
            })
            .collect::<Vec<_>>();
        Ok(Analysis { value, moves })
    }

    /// Bytes of the flat export with `layers` layers.
    pub fn flat_len(&self, layers: u32) -> u64 {
        let states: u64 = self.levels[1..].iter().map(|l| l.states).sum();
        states * u64::from(layers)
    }

    /// Writes the flat layout of `000-oware-endgame-books.md`'s `endSeeds`
    /// array: for turns left `t` in `1..=layers` and each board with 1 to
    /// `max_seeds` seeds (by seed count, then rank), one `i8` at byte
    /// `(t - 1) * S + s`.
    ///
    /// Panics if `layers` is 0 or beyond the turn limit.
    pub fn export_flat(&self, layers: u32, out: &mut impl Write) -> io::Result<()> {
        assert!((1..=self.turn_limit).contains(&layers));
        for turns_left in 1..=layers {
            for level in &self.levels[1..] {
                let layer = turns_left.min(level.last_change) as usize - 1;
                let size = level.states as usize;
                let section = self.container.section(level.seeds as usize);
                out.write_all(&section[layer * size..(layer + 1) * size])?;
            }
        }
        Ok(())
    }
}

fn sections<'a>(generated: &Generated, layers: &'a [Vec<i8>]) -> Vec<SectionData<'a>> {
    generated
        .solution
        .levels
        .iter()
        .zip(layers)
        .map(|(level, layers)| SectionData {
            meta: [level.states as u64, level.last_change.into()],
            bytes: as_bytes(layers),
        })
        .collect()
}

fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit
    // pattern is valid for both.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
}
