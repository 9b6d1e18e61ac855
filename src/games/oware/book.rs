//! Oware books: the container's parameters and sections for Oware, probing and export.
//!
//! Parameters: rules variant ([`RULES_ABAPA`]), turn limit, maximum seeds,
//! layers swept during generation, and the [`Encoding`] of the sections (books
//! written before the encoding existed have four parameters and are
//! [`Encoding::Layers`]). Section `n` holds the boards with `n` seeds (level
//! `n`, 0 included); its two meta numbers are the board count and
//! `last_change`, the last turn at which a value of the level changes (values
//! with more turns left equal those at `last_change`).
//!
//! - [`Encoding::Layers`]: layers `1..=last_change`, each one value (`i8`) per
//!   board in rank order.
//! - [`Encoding::Changes`]: per board, the turns at which its value changes
//!   and by how much, mostly a byte per change ([`compact::Codec::V2`]);
//!   at 12 seeds 22.6 times smaller than the flat export of 200 layers, and
//!   17.9 times than [`Encoding::Layers`].
//! - [`Encoding::ChangesV1`]: the same with [`compact::Codec::V1`], as books
//!   written before version 2 hold them (read, and written on request).

use super::board::Board;
use super::generate::{Generated, MAX_TURN_LIMIT};
use super::index::{BoardIndex, MAX_BOOK_SEEDS};
use super::rules::{legal_moves, play};
use crate::book::{self, compact, Appender, BookError, Container, SectionData, SectionInfo};
use crate::engine::{LevelSolution, PackedChanges, Solution};
use rayon::prelude::*;
use std::fmt;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Parameters of an Oware book (books before [`Encoding`] had 4).
const PARAMS: usize = 5;

/// Game tag of Oware books.
pub const GAME_TAG: [u8; 4] = *b"OWAR";
/// Rules variant: CodinGame's Oware Abapa (grand slam captures nothing,
/// feeding compulsory, a player without a legal move scores own seeds).
pub const RULES_ABAPA: u64 = 1;

/// How a book stores each level's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Every layer up to the level's last change, one byte per board.
    Layers,
    /// The turns at which each board's value changes, [`compact::Codec::V2`].
    Changes,
    /// Each board's value at turn 1 and the turns at which it changes,
    /// [`compact::Codec::V1`]: the compact encoding of earlier books.
    ChangesV1,
}

/// The most turns the per-board change encodings ([`Encoding::Changes`],
/// [`Encoding::ChangesV1`]) cover: a record's turns are bytes.
pub const COMPACT_TURNS: u32 = compact::MAX_TURNS;

impl Encoding {
    /// The compact encoding, unless the book's turn limit is beyond the
    /// [`COMPACT_TURNS`] a change byte can span.
    pub fn for_book(generated: &Generated) -> Encoding {
        Self::for_turn_limit(generated.options.turn_limit)
    }

    /// The encoding books with this turn limit are written in.
    pub fn for_turn_limit(turn_limit: u32) -> Encoding {
        if Encoding::Changes.covers(turn_limit) {
            Encoding::Changes
        } else {
            Encoding::Layers
        }
    }

    /// Whether a book with this turn limit can be stored in this encoding:
    /// the per-board change encodings cover at most [`COMPACT_TURNS`] (a
    /// record's turns are bytes). Writers keep to it and readers hold books
    /// to it.
    pub fn covers(self, turn_limit: u32) -> bool {
        self.codec().is_none() || turn_limit <= COMPACT_TURNS
    }

    /// The encoding a book's parameter `code` names.
    fn from_code(code: u64) -> Option<Encoding> {
        [Encoding::Layers, Encoding::ChangesV1, Encoding::Changes]
            .into_iter()
            .find(|encoding| encoding.code() == code)
    }

    fn code(self) -> u64 {
        match self {
            Encoding::Layers => 0,
            Encoding::ChangesV1 => 1,
            Encoding::Changes => 2,
        }
    }

    /// The codec of a compact encoding.
    fn codec(self) -> Option<compact::Codec> {
        match self {
            Encoding::Layers => None,
            Encoding::ChangesV1 => Some(compact::Codec::V1),
            Encoding::Changes => Some(compact::Codec::V2),
        }
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Layers => "layers",
            Encoding::Changes => "changes",
            Encoding::ChangesV1 => "changes-v1",
        }
    }
}

/// Why a position could not be looked up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// The board holds more seeds than the book.
    TooManySeeds { seeds: u32, max_seeds: u32 },
    /// Turns left outside `1..=turn_limit`.
    TurnsOutOfRange { turns_left: u32, turn_limit: u32 },
    /// A record the lookup read, or the frame of its level (its block
    /// offsets), is malformed or fails its checksum (a book opened with
    /// [`OwareBook::open_for_lookups`]; [`OwareBook::open`] finds it on
    /// opening), or, from [`OwareBook::analyse`] and
    /// [`OwareBook::best_line`] on any book, values that contradict each
    /// other (a board's value not its best move's score).
    Corrupt {
        path: PathBuf,
        seeds: u32,
        reason: String,
    },
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
            ProbeError::Corrupt {
                path,
                seeds,
                reason,
            } => write!(
                f,
                "{} is corrupt: level {seeds}: {reason}",
                path.display()
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

/// What a seed level's values do over the turns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelStats {
    /// The level.
    pub level: LevelInfo,
    /// Value changes over all boards: pairs (board, t >= 2) whose value with
    /// `t` turns left differs from that with `t - 1`.
    pub changes: u64,
    /// `converged[v + seeds]`: boards whose value, once converged, is `v`.
    pub converged: Vec<u64>,
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

/// One ply of a [`Line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePly {
    /// The board before the ply, seen by the player to move (houses 0-5
    /// theirs), as [`OwareBook::value`] and `endbook oware probe` take it.
    pub board: Board,
    /// Turns left before the ply.
    pub turns_left: u32,
    /// The house sown (0-5, the mover's).
    pub house: usize,
    /// Seeds it captures.
    pub capture: u8,
    /// The move's value for its mover: the board's value with these turns
    /// left.
    pub value: i32,
    /// The net score so far, after this ply, of the player to move at the
    /// start: the captures of their plies less those of the other's.
    pub net: i32,
}

/// How a [`Line`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// The turns ran out: no more plies, the seeds on the board score
    /// nothing.
    TurnLimit,
    /// The player to move has no legal move: the game ends and they score
    /// the seeds on their side.
    NoMove {
        /// The board, seen by the player who cannot move.
        board: Board,
        /// The seeds they score.
        seeds: u32,
    },
}

/// A line of perfect play: each ply a best move, the lowest house among
/// equals, until the game or the turns end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The plies, the first by the player to move at the start.
    pub plies: Vec<LinePly>,
    /// How the line ends.
    pub end: LineEnd,
}

impl Line {
    /// The net score of the player to move at the start along the line: each
    /// ply's capture counted for its mover and against the other, and the
    /// seeds scored at the end. Equal to the starting board's value.
    pub fn net(&self) -> i32 {
        let captures = self.plies.last().map_or(0, |ply| ply.net);
        match self.end {
            LineEnd::TurnLimit => captures,
            LineEnd::NoMove { seeds, .. } => {
                captures + first_player_sign(self.plies.len()) * seeds as i32
            }
        }
    }
}

/// +1 where the player to move at the start moves at ply `ply` (from 0), -1
/// where the other does.
fn first_player_sign(ply: usize) -> i32 {
    if ply.is_multiple_of(2) {
        1
    } else {
        -1
    }
}

/// A checksum that failed as a lookup read a level ([`Container::ensure`]),
/// said as a malformed record is, without the file's name.
fn failed_checksum(error: &BookError) -> compact::Malformed {
    compact::Malformed(error.read_failure())
}

/// An open, validated Oware book.
///
/// Opening checks the structure and every checksum, and with
/// [`OwareBook::open`] every record; from then on values are read as
/// stored. (A file altered and deliberately re-checksummed can hold wrong
/// values, never cause a panic; [`verify()`](crate::games::oware::verify()) finds them.)
pub struct OwareBook {
    /// Whether every record was checked on opening; if not, each lookup
    /// checks the records it reads ([`OwareBook::open_for_lookups`]).
    records_checked: bool,
    container: Container,
    encoding: Encoding,
    turn_limit: u32,
    turns_swept: u32,
    levels: Vec<LevelInfo>,
    /// Per level, on a book opened for lookups in a per-board encoding:
    /// whether its frame (the block offsets and their wraps) is sound,
    /// checked when a lookup first reads the level, or the reason it is not.
    frames: Box<[OnceLock<Result<(), String>>]>,
    index: BoardIndex,
}

impl fmt::Debug for OwareBook {
    /// A summary: where the book is, its extent and encoding.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwareBook")
            .field("path", &self.container.path())
            .field("max_seeds", &self.max_seeds())
            .field("turn_limit", &self.turn_limit)
            .field("encoding", &self.encoding)
            .field("records_checked", &self.records_checked)
            .finish_non_exhaustive()
    }
}

impl OwareBook {
    /// Opens and validates the book at `path`, every record of it.
    pub fn open(path: impl AsRef<Path>) -> Result<OwareBook, BookError> {
        Self::from_container(Container::open(path.as_ref(), GAME_TAG)?, true)
    }

    /// Opens the book at `path` for a few lookups: its header and structure
    /// are checked, but its bytes' checksums and its records only as lookups
    /// read them ([`OwareBook::value`] and [`OwareBook::analyse`] check the
    /// chunks of the file and the block of eight records each value comes
    /// from, and report a checksum that fails or a malformed record as
    /// [`ProbeError::Corrupt`]). Checking every byte and record is most of
    /// what opening a large book takes: on the project's 2-core machine, a
    /// probe of the 20-seed book took 7.3 s with every record checked, 0.24-
    /// 0.28 s with every checksum (a book written before chunks), 0.012-
    /// 0.015 s checking the chunks of 64 KiB its lookups read and every
    /// level's frame, and 0.003-0.005 s (0.006-0.011 s with the file out of
    /// the page cache) now that opening reads the header and chunk tables alone
    /// (see [`crate::book`]): a level's frame (its block offsets) is checked
    /// when a lookup first reads the level, and a level under
    /// [`crate::book::CHUNKED_FROM`] bytes, unchunked, is checksummed whole
    /// then.
    ///
    /// The whole-book readers ([`OwareBook::solution`],
    /// [`OwareBook::level_stats`], [`OwareBook::export_flat`]) are for books
    /// opened with [`OwareBook::open`]: on one opened this way they panic.
    pub fn open_for_lookups(path: impl AsRef<Path>) -> Result<OwareBook, BookError> {
        Self::from_container(Container::open_for_lookups(path.as_ref(), GAME_TAG)?, false)
    }

    /// Validates a book held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<OwareBook, BookError> {
        Self::from_container(Container::from_bytes("<memory>", bytes, GAME_TAG)?, true)
    }

    /// A book of `container`, its records checked when `check_records`.
    fn from_container(container: Container, check_records: bool) -> Result<OwareBook, BookError> {
        let params = container.params();
        let encoding = match params.len() {
            4 => Encoding::Layers,
            5 => match Encoding::from_code(params[4]) {
                Some(encoding) => encoding,
                None => {
                    let code = params[4];
                    return Err(container.corrupt(format!("unknown value encoding {code}")));
                }
            },
            count => {
                return Err(container.corrupt(format!(
                    "an Oware book has 4 or 5 parameters, found {count}"
                )));
            }
        };
        let [rules, turn_limit, max_seeds, turns_swept]: [u64; 4] = params[..4].try_into().unwrap();
        if rules != RULES_ABAPA {
            return Err(container.corrupt(format!("unknown Oware rules variant {rules}")));
        }
        if !(1..=u64::from(MAX_TURN_LIMIT)).contains(&turn_limit)
            || !(1..=turn_limit).contains(&turns_swept)
        {
            return Err(container.corrupt(format!(
                "turn limit {turn_limit} and {turns_swept} layers swept are out of range"
            )));
        }
        // (The turn limit is within MAX_TURN_LIMIT, a u32, from here on.)
        if !encoding.covers(turn_limit as u32) {
            return Err(container.corrupt(format!(
                "turn limit {turn_limit} in a per-board change encoding, which covers at most \
                 {COMPACT_TURNS} turns"
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
            // A board with n seeds can gain at most n net, and lose at most n.
            let bound = seeds as i8;
            let bytes = container.section(seeds);
            // The latest turn at which a value changes, where every record
            // is read: the last change recorded must be it (or 1, where no
            // value changes).
            let mut latest = None;
            match encoding.codec() {
                None if section.len != states * last_change => {
                    return Err(container.corrupt(format!(
                        "level {seeds} holds {} bytes, expected {}",
                        section.len,
                        states * last_change
                    )));
                }
                // For lookups, each value is checked as it is read
                // (`OwareBook::value_of`), as compact records are.
                None if !check_records => {}
                None => {
                    // Every value is read: every byte checked first.
                    container.ensure(seeds, 0..bytes.len())?;
                    if let Some(&value) = bytes
                        .iter()
                        .find(|&&b| (b as i8).unsigned_abs() > seeds as u8)
                    {
                        return Err(container.corrupt(format!(
                            "level {seeds}: value {} is outside -{bound}..={bound}",
                            value as i8
                        )));
                    }
                    let layer = |turn: u64| {
                        let start = ((turn - 1) * states) as usize;
                        &bytes[start..start + states as usize]
                    };
                    let mut turn = last_change;
                    while turn > 1 && layer(turn) == layer(turn - 1) {
                        turn -= 1;
                    }
                    // At turn 1, whether the layer differs from turn 0's zeros.
                    let changed = turn > 1 || layer(1).iter().any(|&v| v != 0);
                    latest = Some(if changed { turn } else { 0 });
                }
                Some(codec) if check_records => {
                    compact::Level::parse(bytes, codec, states as usize, last_change as u32, bound)
                        .map(|(_, turn)| latest = Some(u64::from(turn)))
                        .map_err(|e| container.corrupt(format!("level {seeds}: {e}")))?;
                }
                // Its frame is checked when a lookup first reads it
                // (`OwareBook::framed`).
                Some(_) => {}
            }
            if let Some(latest) = latest.filter(|&turn| turn.max(1) != last_change) {
                return Err(container.corrupt(format!(
                    "level {seeds} last changes at turn {last_change}, its values at turn {}",
                    latest.max(1)
                )));
            }
            if turns_swept < turn_limit && last_change == turns_swept {
                // A run stops before the turn limit only after a layer in
                // which nothing changes: every level's last change is before it.
                return Err(container.corrupt(format!(
                    "level {seeds} changes at turn {last_change}, the last of {turns_swept} layers \
                     swept, below the turn limit {turn_limit} (a run stops early only after a layer \
                     that changes nothing)"
                )));
            }
            levels.push(LevelInfo {
                seeds: seeds as u32,
                states,
                last_change: last_change as u32,
            });
        }
        Ok(OwareBook {
            records_checked: check_records,
            encoding,
            turn_limit: turn_limit as u32,
            turns_swept: turns_swept as u32,
            index: BoardIndex::new(max_seeds as u32),
            frames: levels.iter().map(|_| OnceLock::new()).collect(),
            levels,
            container,
        })
    }

    /// Writes a generated book to `path` (under a temporary name, then renamed)
    /// in the compact encoding where it applies (see [`Encoding::for_book`]).
    pub fn write(path: impl AsRef<Path>, generated: &Generated) -> Result<(), BookError> {
        Self::write_with(path, generated, Encoding::for_book(generated))
    }

    /// Writes a generated book with the given encoding.
    ///
    /// # Panics
    ///
    /// With a per-board change encoding for a turn limit above
    /// [`COMPACT_TURNS`] (no reader would open the book).
    pub fn write_with(
        path: impl AsRef<Path>,
        generated: &Generated,
        encoding: Encoding,
    ) -> Result<(), BookError> {
        let params = Self::params(generated, encoding);
        let levels = Self::encode(generated, encoding);
        book::write(
            path.as_ref(),
            GAME_TAG,
            &params,
            &sections(generated, &levels),
        )
    }

    /// The book `generated` makes, in memory, for lookups: its bytes as
    /// [`OwareBook::to_bytes`] gives them, opened (and checked) as a file is.
    pub fn from_generated(generated: &Generated) -> OwareBook {
        OwareBook::from_bytes(OwareBook::to_bytes(generated)).expect("a book just encoded opens")
    }

    /// Serialises a generated book into memory, encoded as [`OwareBook::write`] does.
    pub fn to_bytes(generated: &Generated) -> Vec<u8> {
        Self::to_bytes_with(generated, Encoding::for_book(generated))
    }

    /// Serialises a generated book into memory with the given encoding.
    ///
    /// # Panics
    ///
    /// As [`OwareBook::write_with`].
    pub fn to_bytes_with(generated: &Generated, encoding: Encoding) -> Vec<u8> {
        let params = Self::params(generated, encoding);
        let levels = Self::encode(generated, encoding);
        book::to_bytes(GAME_TAG, &params, &sections(generated, &levels))
    }

    /// The header's parameters of `generated` in `encoding`: what every
    /// writer commits a book with.
    ///
    /// # Panics
    ///
    /// As [`OwareBook::write_with`].
    fn params(generated: &Generated, encoding: Encoding) -> [u64; PARAMS] {
        let turn_limit = generated.options.turn_limit;
        assert!(
            encoding.covers(turn_limit),
            "{encoding:?} covers at most {COMPACT_TURNS} turns, not the book's {turn_limit}: \
             write it with Encoding::for_book (or Layers)"
        );
        [
            RULES_ABAPA,
            generated.options.turn_limit.into(),
            generated.options.max_seeds.into(),
            generated.solution.turns_swept.into(),
            encoding.code(),
        ]
    }

    /// Each level's section bytes.
    fn encode(generated: &Generated, encoding: Encoding) -> Vec<Vec<u8>> {
        (0..generated.solution.levels.len())
            .into_par_iter()
            .map(|level| {
                let mut pieces = Vec::new();
                let buffers = compact::Buffers::default();
                let solution = &mut Held::Borrowed(&generated.solution);
                let table = Self::encode_level(solution, level, encoding, &buffers, |piece| {
                    pieces.push(piece)
                });
                if table.is_empty() && pieces.len() == 1 {
                    // The layer encoding: one piece, no table.
                    return pieces.pop().unwrap();
                }
                pieces.insert(0, table);
                pieces.concat()
            })
            .collect()
    }

    /// Encodes level `level` of `solution` in `encoding`, handing the
    /// section's bytes after its table to `pieces` as they are encoded
    /// (compact encodings into buffers from `buffers`, a wave of chunks at a
    /// time, the changes passed freed after each if the solution is lent
    /// for good); returns the table (empty for the layer encoding), which
    /// goes first.
    fn encode_level(
        solution: &mut Held<'_>,
        level: usize,
        encoding: Encoding,
        buffers: &compact::Buffers,
        mut pieces: impl FnMut(Vec<u8>),
    ) -> Vec<u8> {
        match encoding.codec() {
            None => {
                pieces(to_bytes(solution.get().level_layers(level)));
                Vec::new()
            }
            Some(codec) => {
                let boards = solution.get().levels[level].states;
                let streaming = compact::Streaming::new(codec, boards);
                encode_waves(solution, level, streaming, buffers, pieces)
            }
        }
    }

    /// Bytes of the table at the start of level `level`'s section in `encoding`.
    fn table_len(solution: &Solution, level: usize, encoding: Encoding) -> usize {
        match encoding.codec() {
            None => 0,
            Some(_) => compact::table_len(solution.levels[level].states),
        }
    }

    /// The stored bytes of level `seeds`, in [`OwareBook::encoding`].
    ///
    /// # Panics
    ///
    /// Where `seeds` is above [`OwareBook::max_seeds`], and on a book opened
    /// with [`OwareBook::open_for_lookups`] (whose bytes are checked only as
    /// lookups read them).
    pub fn level_bytes(&self, seeds: u32) -> &[u8] {
        self.whole_book_reader();
        self.assert_level(seeds);
        self.container.section(seeds as usize)
    }

    fn assert_level(&self, seeds: u32) {
        assert!(
            seeds <= self.max_seeds(),
            "level {seeds}: the book holds levels 0 to {}",
            self.max_seeds()
        );
    }

    /// Every layer the book stores, as the generator's per-layer changes:
    /// what [`crate::games::oware::extend`] builds on.
    ///
    /// # Panics
    ///
    /// On a book opened with [`OwareBook::open_for_lookups`].
    pub fn solution(&self) -> Solution {
        self.whole_book_reader();
        let last_change = self.levels.iter().map(|l| l.last_change).max().unwrap_or(1);
        let mut changes = vec![PackedChanges::default(); last_change as usize];
        let starts = self.index.level_starts();
        for level in &self.levels {
            let start = starts[level.seeds as usize];
            let mut record = |rank: usize, turn: u32, value: i8| {
                changes[turn as usize - 1].push((start + rank) as u32, value);
            };
            let section = self.container.section(level.seeds as usize);
            let boards = level.states as usize;
            match self.encoding.codec() {
                Some(codec) => {
                    compact::Level::trusted(section, codec, boards).for_each_change(record)
                }
                None => {
                    let value = |layer: usize, board: usize| section[layer * boards + board] as i8;
                    for board in 0..boards {
                        for layer in 0..level.last_change as usize {
                            let before = if layer == 0 {
                                0
                            } else {
                                value(layer - 1, board)
                            };
                            if value(layer, board) != before {
                                record(board, layer as u32 + 1, value(layer, board));
                            }
                        }
                    }
                }
            }
        }
        let mut solution = Solution::empty();
        solution.level_starts = starts.to_vec();
        solution.levels = self
            .levels
            .iter()
            .map(|level| LevelSolution {
                states: level.states as usize,
                last_change: level.last_change,
                closed_after: Duration::ZERO,
                kernel: None,
                threads: 0,
            })
            .collect();
        solution.changes = changes;
        solution.turns_swept = self.turns_swept;
        solution
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

    /// Checks every byte of a book opened for lookups against its
    /// checksums now, in parallel, rather than as lookups read them: for
    /// work whose lookups reach most of the book (a no-op on a book checked
    /// whole on opening).
    pub fn check_checksums(&self) -> Result<(), BookError> {
        self.container.ensure_all()
    }

    /// Checks the frame of every level of a book opened for lookups (each
    /// level's block offsets, and the checksums of the bytes they lie in:
    /// a level under [`crate::book::CHUNKED_FROM`] bytes whole) now rather
    /// than at each level's first lookup; a no-op on a book checked whole
    /// on opening.
    pub fn check_frames(&self) -> Result<(), BookError> {
        let Some(codec) = self.encoding.codec().filter(|_| !self.records_checked) else {
            return Ok(());
        };
        (0..self.levels.len()).try_for_each(|seeds| {
            self.framed(seeds, codec)
                .map_err(|reason| self.container.corrupt(format!("level {seeds}: {reason}")))
        })
    }

    /// The container's table entry of each level (its bytes' offset, length
    /// and checksums: whole, or in chunks), level by level.
    pub fn sections(&self) -> &[SectionInfo] {
        self.container.sections()
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
        self.stored_value(board, turns_left)
    }

    /// The stored value (its records checked first if they were not on
    /// opening).
    fn stored_value(&self, board: &Board, turns_left: u32) -> Result<i32, ProbeError> {
        let seeds = board.seeds() as usize;
        let level = &self.levels[seeds];
        let rank = self.index.rank(board);
        let section = self.container.section(seeds);
        let corrupt = |reason: String| ProbeError::Corrupt {
            path: self.container.path().to_owned(),
            seeds: seeds as u32,
            reason,
        };
        let ensure = |range| {
            self.container
                .ensure(seeds, range)
                .map_err(|e| failed_checksum(&e))
        };
        let value = match self.encoding.codec() {
            None => {
                let layer = turns_left.min(level.last_change) as usize - 1;
                let at = layer * level.states as usize + rank;
                ensure(at..at + 1).map_err(|e| corrupt(e.0))?;
                let value = section[at] as i8;
                if value.unsigned_abs() > seeds as u8 {
                    return Err(corrupt(format!(
                        "value {value} is outside -{seeds}..={seeds}"
                    )));
                }
                value
            }
            Some(codec) if self.records_checked => {
                compact::Level::trusted(section, codec, level.states as usize)
                    .value(rank, turns_left)
            }
            Some(codec) => {
                // The frame first: `trusted` reads it as sound.
                self.framed(seeds, codec).map_err(corrupt)?;
                compact::Level::trusted(section, codec, level.states as usize)
                    .checked_value_ensured(rank, turns_left, level.last_change, seeds as i8, ensure)
                    .map_err(|e| corrupt(e.0))?
            }
        };
        Ok(i32::from(value))
    }

    /// Whether level `seeds`'s frame is sound, on a book opened for lookups
    /// in a per-board encoding: checked on the first call (the bytes it
    /// reads checksummed first), the outcome kept.
    fn framed(&self, seeds: usize, codec: compact::Codec) -> Result<(), String> {
        let frame = &self.frames[seeds];
        if let Some(outcome) = frame.get() {
            return outcome.clone();
        }
        // Checked outside the cell's lock (threads that meet here each check
        // it, alike): a check in parallel could otherwise steal a lookup of
        // the same level, on the same thread, and wait on itself.
        let states = self.levels[seeds].states as usize;
        let section = self.container.section(seeds);
        let outcome = compact::Level::structure_ensured(section, codec, states, |range| {
            self.container
                .ensure(seeds, range)
                .map_err(|e| failed_checksum(&e))
        })
        .map(drop)
        .map_err(|e| e.0);
        frame.get_or_init(|| outcome).clone()
    }

    /// Stops a whole-book reader on a book whose records were not all checked.
    fn whole_book_reader(&self) {
        assert!(
            self.records_checked,
            "a book opened with OwareBook::open_for_lookups is for lookups: open it with OwareBook::open to read it whole"
        );
    }

    /// How the book stores its values.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The value of `board` and the score of each legal move.
    ///
    /// The value must be the best move's score, or without a move the
    /// mover's own seeds: a board where it is not is [`ProbeError::Corrupt`]
    /// (a book whose records are well formed but whose values are not the
    /// game's).
    pub fn analyse(&self, board: &Board, turns_left: u32) -> Result<Analysis, ProbeError> {
        let value = self.value(board, turns_left)?;
        let moves = self.scored_moves(board, turns_left)?;
        let corrupt = |reason: String| ProbeError::Corrupt {
            path: self.container.path().to_owned(),
            seeds: board.seeds(),
            reason: format!("{reason} with {}", super::TurnsLeft(turns_left)),
        };
        match moves.iter().map(|m| m.score).max() {
            None if value != board.own_seeds() as i32 => {
                let seeds = board.own_seeds();
                return Err(corrupt(format!(
                    "{board} has no move, so its value is its {seeds} seeds, not {value},"
                )));
            }
            Some(best) if best < value => {
                return Err(corrupt(format!(
                    "no move from {board} reaches its value {value}"
                )));
            }
            Some(best) if best > value => {
                return Err(corrupt(format!(
                    "a move from {board} scores {best}, more than its value {value},"
                )));
            }
            _ => {}
        }
        Ok(Analysis { value, moves })
    }

    /// Each legal move of `board` (as [`legal_moves`] plays them) with
    /// `turns_left` turns left, scored by the book's value of its child with
    /// one turn less: what the board's value must be the best of, where
    /// [`OwareBook::analyse`] also checks that it is.
    pub fn scored_moves(
        &self,
        board: &Board,
        turns_left: u32,
    ) -> Result<Vec<ScoredMove>, ProbeError> {
        self.check(board, turns_left)?;
        legal_moves(board)
            .map(|outcome| {
                let future = if turns_left > 1 {
                    self.stored_value(&outcome.child(), turns_left - 1)?
                } else {
                    0
                };
                Ok(ScoredMove {
                    house: outcome.house,
                    capture: outcome.capture,
                    score: i32::from(outcome.capture) - future,
                })
            })
            .collect()
    }

    /// A line of perfect play from `board` with `turns_left` turns left: at
    /// each ply a best move (the lowest house where several are), until the
    /// turns run out or the player to move has no legal move. At most
    /// `turns_left` plies; [`Line::net`] equals the board's value.
    ///
    /// A board whose value no move reaches (or, without a move, is not its
    /// own seeds) is [`ProbeError::Corrupt`]: a book whose records are well
    /// formed but whose values are not the game's.
    ///
    /// ```
    /// use endbook::games::oware::{generate, Board, GenerateOptions, LineEnd, OwareBook};
    ///
    /// let book = OwareBook::from_generated(&generate(GenerateOptions::new(4), |_| {}));
    /// let board: Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
    /// let line = book.best_line(&board, 200).unwrap();
    /// // House 5 captures the 2 in house 6; the opponent, left with one
    /// // seed and unable to feed the emptied side, has no move and keeps it.
    /// let first = &line.plies[0];
    /// assert_eq!((first.house, first.capture, line.plies.len()), (5, 2, 1));
    /// assert!(matches!(line.end, LineEnd::NoMove { seeds: 1, .. }));
    /// assert_eq!(line.net(), book.value(&board, 200).unwrap());
    /// ```
    pub fn best_line(&self, board: &Board, turns_left: u32) -> Result<Line, ProbeError> {
        self.check(board, turns_left)?;
        let mut plies = Vec::new();
        let (mut board, mut turns) = (*board, turns_left);
        while turns > 0 {
            // Seeds never grow, so every board of the line is covered.
            // (`analyse` checks the value is the best move's score, or
            // without a move the mover's seeds.)
            let analysis = self.analyse(&board, turns)?;
            let value = analysis.value;
            if analysis.moves.is_empty() {
                let seeds = board.own_seeds();
                return Ok(Line {
                    plies,
                    end: LineEnd::NoMove { board, seeds },
                });
            }
            let best = (analysis.moves.iter())
                .find(|m| m.score == value)
                .expect("analyse checks a move reaches the value");
            let outcome = play(&board, best.house).expect("a scored move is legal");
            let before = plies.last().map_or(0, |ply: &LinePly| ply.net);
            plies.push(LinePly {
                board,
                turns_left: turns,
                house: best.house,
                capture: best.capture,
                value: analysis.value,
                net: before + first_player_sign(plies.len()) * i32::from(best.capture),
            });
            board = outcome.child();
            turns -= 1;
        }
        Ok(Line {
            plies,
            end: LineEnd::TurnLimit,
        })
    }

    /// Statistics of level `seeds`: value changes and converged values.
    ///
    /// # Panics
    ///
    /// On a book opened with [`OwareBook::open_for_lookups`], and where
    /// `seeds` is above [`OwareBook::max_seeds`].
    pub fn level_stats(&self, seeds: u32) -> LevelStats {
        self.level_stats_observed(seeds, |_| {})
    }

    /// [`OwareBook::level_stats`], telling `boards_done` of each stretch of
    /// boards as it is done (from the threads that do them, in no order):
    /// for progress on large levels.
    ///
    /// # Panics
    ///
    /// As [`OwareBook::level_stats`].
    pub fn level_stats_observed(&self, seeds: u32, boards_done: impl Fn(u64) + Sync) -> LevelStats {
        self.whole_book_reader();
        self.assert_level(seeds);
        let level = self.levels[seeds as usize];
        let section = self.container.section(seeds as usize);
        let boards = level.states as usize;
        // Per stretch of boards (whole compact blocks), in parallel: the
        // value changes after turn 1, and the converged values' counts.
        const STRETCH: usize = 1 << 16;
        let stretch = |first: usize| {
            let range = first..(first + STRETCH).min(boards);
            let stretch_boards = range.len() as u64;
            let mut converged = vec![0u64; 2 * seeds as usize + 1];
            let mut changes = 0u64;
            let mut record = |board_changes: u64, value: i8| {
                changes += board_changes;
                converged[(i32::from(value) + seeds as i32) as usize] += 1;
            };
            match self.encoding.codec() {
                Some(codec) => {
                    let level_data = compact::Level::trusted(section, codec, boards);
                    for (board_changes, value) in level_data.summaries_of(range) {
                        record(u64::from(board_changes), value);
                    }
                }
                None => {
                    let layers = level.last_change as usize;
                    for board in range {
                        let value = |layer: usize| section[layer * boards + board] as i8;
                        let board_changes =
                            (1..layers).filter(|&l| value(l) != value(l - 1)).count();
                        record(board_changes as u64, value(layers - 1));
                    }
                }
            }
            boards_done(stretch_boards);
            (changes, converged)
        };
        let (changes, converged) = (0..boards)
            .into_par_iter()
            .step_by(STRETCH)
            .map(stretch)
            .reduce(
                || (0, vec![0u64; 2 * seeds as usize + 1]),
                |(a, mut counts), (b, more)| {
                    counts.iter_mut().zip(more).for_each(|(c, m)| *c += m);
                    (a + b, counts)
                },
            );
        LevelStats {
            level,
            changes,
            converged,
        }
    }

    /// Bytes of the flat export with `layers` layers (for any count: those
    /// [`OwareBook::export_flat`] takes are 1 to the turn limit).
    pub fn flat_len(&self, layers: u32) -> u64 {
        let states: u64 = self.levels[1..].iter().map(|l| l.states).sum();
        states * u64::from(layers)
    }

    /// Writes the flat layout of `000-oware-endgame-books.md`'s `endSeeds`
    /// array: for turns left `t` in `1..=layers` and each board with 1 to
    /// `max_seeds` seeds (by seed count, then rank), one `i8` at byte
    /// `(t - 1) * S + s`.
    ///
    /// Panics if `layers` is 0 or beyond the turn limit, or on a book
    /// opened with [`OwareBook::open_for_lookups`].
    pub fn export_flat(&self, layers: u32, out: &mut impl Write) -> io::Result<()> {
        self.export_flat_in_windows(layers, EXPORT_WINDOW_BYTES, out)
    }

    /// [`OwareBook::export_flat`], replaying at most `window_bytes` of
    /// layers at a time (at least one layer): the same bytes, in more
    /// passes over the records with less memory. `export_flat` takes 1 GiB.
    ///
    /// Panics as [`OwareBook::export_flat`].
    pub fn export_flat_in_windows(
        &self,
        layers: u32,
        window_bytes: u64,
        out: &mut impl Write,
    ) -> io::Result<()> {
        self.whole_book_reader();
        assert!(
            (1..=self.turn_limit).contains(&layers),
            "{layers} layers: a flat export has 1 to the book's turn limit, {}",
            self.turn_limit
        );
        // Compact levels are replayed a window of layers at a time, each
        // board's record read on from where the window before left it.
        let window = (window_bytes / self.flat_len(1).max(1)).clamp(1, u64::from(layers)) as u32;
        let codec = self.encoding.codec();
        let mut levels: Vec<(&LevelInfo, Option<Replay>)> = self.levels[1..]
            .iter()
            .map(|level| {
                let replay = codec.map(|codec| Replay {
                    level: compact::Level::trusted(
                        self.container.section(level.seeds as usize),
                        codec,
                        level.states as usize,
                    ),
                    resume: vec![compact::Resume::default(); level.states as usize],
                    rows: vec![0; level.states as usize * window as usize],
                });
                (level, replay)
            })
            .collect();
        for first in (1..=layers).step_by(window as usize) {
            let rows = window.min(layers + 1 - first) as usize;
            let mut tasks = Vec::new();
            for replay in levels.iter_mut().filter_map(|(_, replay)| replay.as_mut()) {
                replay.tasks(rows, &mut tasks);
            }
            tasks
                .into_par_iter()
                .for_each(|(level, boards, mut rows, resume)| {
                    level.replay(boards, first, &mut rows, resume)
                });
            for row in 0..rows {
                let turns_left = first + row as u32;
                for (level, replay) in &levels {
                    let size = level.states as usize;
                    let values: &[u8] = match replay {
                        Some(replay) => as_bytes(&replay.rows[row * size..(row + 1) * size]),
                        None => {
                            let layer = turns_left.min(level.last_change) as usize - 1;
                            &self.container.section(level.seeds as usize)
                                [layer * size..(layer + 1) * size]
                        }
                    };
                    out.write_all(values)?;
                }
            }
        }
        Ok(())
    }
}

/// Bytes of layers an export replays at a time (at least one layer): the
/// 20-seed book's 225.8 MB layers go four at a time.
const EXPORT_WINDOW_BYTES: u64 = 1 << 30;

/// Boards per parallel task of an export's replay (a multiple of
/// [`compact::BLOCK`]).
const REPLAY_CHUNK: usize = 1 << 14;

/// A compact level being replayed a window at a time for an export.
struct Replay<'a> {
    level: compact::Level<'a>,
    /// Where each board's record was left.
    resume: Vec<compact::Resume>,
    /// The window's layers, layer-major.
    rows: Vec<i8>,
}

/// A replay task: boards of a level, their rows of the window, their resume points.
type ReplayTask<'a, 'b> = (
    compact::Level<'a>,
    Range<usize>,
    Vec<&'b mut [i8]>,
    &'b mut [compact::Resume],
);

impl<'a> Replay<'a> {
    /// Splits the first `rows` layers of the window into tasks over chunks
    /// of boards.
    fn tasks<'b>(&'b mut self, rows: usize, tasks: &mut Vec<ReplayTask<'a, 'b>>) {
        let boards = self.resume.len();
        if boards == 0 {
            return;
        }
        let first = tasks.len();
        for (start, resume) in (0..boards)
            .step_by(REPLAY_CHUNK)
            .zip(self.resume.chunks_mut(REPLAY_CHUNK))
        {
            let range = start..start + resume.len();
            tasks.push((self.level, range, Vec::with_capacity(rows), resume));
        }
        for row in self.rows.chunks_mut(boards).take(rows) {
            for (task, piece) in tasks[first..].iter_mut().zip(row.chunks_mut(REPLAY_CHUNK)) {
                task.2.push(piece);
            }
        }
    }
}

/// An Oware book written level by level as a generation goes (a
/// [`book::Appender`]): after each [`BookWriter::commit`] the file is a
/// complete book of the levels so far, so it doubles as the generation's
/// checkpoint, and [`BookWriter::finish`] renames it into place. The result
/// is byte for byte what [`OwareBook::write_with`] writes.
///
/// The writing happens on a thread of its own, so the encoding (a
/// [`LevelEncoder`]'s, say) goes on while earlier levels go to disk. A
/// failure is reported by the next call, or by `finish`.
pub struct BookWriter {
    path: PathBuf,
    worker: Worker<WriteJob, Result<Appender, BookError>>,
    levels: usize,
    encoding: Encoding,
    /// Record buffers: the writer thread gives each back once written.
    buffers: compact::Buffers,
}

/// A thread working through the jobs of a bounded queue: what a
/// [`BookWriter`] and a [`LevelEncoder`] run on.
struct Worker<J, R> {
    jobs: Option<mpsc::SyncSender<J>>,
    thread: Option<thread::JoinHandle<R>>,
    /// Time senders waited for room in the queue.
    blocked: Duration,
}

impl<J: Send + 'static, R: Send + 'static> Worker<J, R> {
    /// Starts thread `name` running `work` on the queue's receiving end;
    /// senders wait while `queue` jobs are waiting (0: until it takes one).
    fn start(
        name: &str,
        queue: usize,
        work: impl FnOnce(mpsc::Receiver<J>) -> R + Send + 'static,
    ) -> Worker<J, R> {
        let (jobs, inbox) = mpsc::sync_channel(queue);
        let thread = thread::Builder::new()
            .name(name.into())
            .spawn(move || work(inbox))
            .unwrap_or_else(|error| panic!("the {name} thread starts: {error}"));
        Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            blocked: Duration::ZERO,
        }
    }

    /// Queues `job`; false if the thread stopped taking jobs.
    fn send(&mut self, job: J) -> bool {
        let start = Instant::now();
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        self.blocked += start.elapsed();
        sent
    }

    /// Closes the queue and waits for the thread: what it returned (`None`
    /// if joined before). A panic on the thread goes on here.
    fn join(&mut self) -> Option<R> {
        self.jobs = None;
        let thread = self.thread.take()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        )
    }
}

impl<J, R> Drop for Worker<J, R> {
    /// Lets the thread finish what it was sent (what it returns, a failure
    /// or a panic, is dropped with it).
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Jobs a [`BookWriter`]'s queue holds before a sender waits: a few waves
/// of encoded chunks, so the encoder goes on while the writer catches up.
const QUEUED_JOBS: usize = 64;

/// Work for a [`BookWriter`]'s thread.
enum WriteJob {
    /// Begin a level's section: its meta numbers and table length.
    Begin([u64; 2], usize),
    /// The next bytes of the section, after its table.
    Piece(Vec<u8>),
    /// End the section with its table.
    End(Vec<u8>),
    /// Commit the header with these parameters.
    Commit([u64; PARAMS]),
    /// Rename the file.
    Rename(PathBuf),
}

impl BookWriter {
    /// Starts an empty book at `path` (emptying any file there).
    pub fn create(path: impl AsRef<Path>, encoding: Encoding) -> Result<BookWriter, BookError> {
        let path = path.as_ref();
        let appender = Appender::create(path, GAME_TAG, PARAMS)?;
        Ok(Self::start(path, appender, 0, encoding))
    }

    /// The turn limit and seed count of the levels a writer committed at
    /// `path`, read without changing the file, where [`BookWriter::reopen`]
    /// would find the book's header laid out for appending and whole (its
    /// levels are checked only as a run opens it).
    pub fn committed(path: &Path) -> Result<(u32, u32), BookError> {
        let params = Appender::committed_params(path, GAME_TAG)?;
        match params[..] {
            [RULES_ABAPA, turn_limit, max_seeds, _, _] => Ok((
                u32::try_from(turn_limit).unwrap_or(u32::MAX),
                u32::try_from(max_seeds).unwrap_or(u32::MAX),
            )),
            _ => Err(BookError::Corrupt {
                path: path.to_owned(),
                reason: "not an Oware book this build can append to".into(),
            }),
        }
    }

    /// Reopens a book a writer committed, to append more levels; drops what
    /// was appended after its last commit. Open it as an [`OwareBook`] to
    /// validate its levels before building on them.
    pub fn reopen(path: &Path) -> Result<BookWriter, BookError> {
        let (appender, params) = Appender::reopen(path, GAME_TAG)?;
        let encoding = match params[..] {
            [_, _, _, _, code] => Encoding::from_code(code),
            _ => None,
        };
        let Some(encoding) = encoding else {
            return Err(BookError::Corrupt {
                path: path.to_owned(),
                reason: "not an Oware book this build can append to".into(),
            });
        };
        if !appender.laid_out_as_written() {
            // Levels appended now would be checked otherwise than those
            // before them, and the book would differ from a fresh run's.
            return Err(BookError::Corrupt {
                path: path.to_owned(),
                reason: "its levels are checksummed as an earlier build laid them out".into(),
            });
        }
        let levels = appender.sections();
        Ok(Self::start(path, appender, levels, encoding))
    }

    fn start(path: &Path, mut appender: Appender, levels: usize, encoding: Encoding) -> BookWriter {
        let buffers = compact::Buffers::default();
        let written = buffers.clone();
        let worker = Worker::start("book writer", QUEUED_JOBS, move |inbox| {
            for job in inbox {
                match job {
                    WriteJob::Begin(meta, table_len) => appender.begin_section(meta, table_len)?,
                    WriteJob::Piece(bytes) => {
                        appender.write_section(&bytes)?;
                        written.give_back(bytes);
                    }
                    WriteJob::End(table) => appender.end_section(&table)?,
                    WriteJob::Commit(params) => appender.commit(&params)?,
                    WriteJob::Rename(path) => appender.rename(&path)?,
                }
            }
            Ok(appender)
        });
        BookWriter {
            path: path.to_owned(),
            worker,
            levels,
            encoding,
            buffers,
        }
    }

    /// The encoding of its levels.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Levels appended so far.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// Appends the next level of `solution` as stored already: `section`,
    /// its bytes in the book's encoding (copied from another book, say).
    pub fn append(
        &mut self,
        solution: &Solution,
        level: usize,
        section: Vec<u8>,
    ) -> Result<(), BookError> {
        self.begin_level(solution, level, 0)?;
        self.send(WriteJob::Piece(section))?;
        self.send(WriteJob::End(Vec::new()))
    }

    /// Encodes level `level` of `solution` in the book's encoding and
    /// appends it, each stretch of records handed to the writer thread as
    /// soon as it is encoded (written while the next are encoded).
    pub fn append_level(&mut self, solution: &Solution, level: usize) -> Result<(), BookError> {
        self.encode_and_append(Held::Borrowed(solution), level)
    }

    /// [`BookWriter::append_level`], freeing the changes of `solution` as
    /// the encoder passes them (a wave of stretches at a time,
    /// [`Solution::release_changes_below`]) instead of all at the end, so
    /// that the levels being solved meanwhile reuse their memory. `solution`
    /// holds no complete level up to `level` afterwards.
    pub fn append_level_releasing(
        &mut self,
        solution: &mut Solution,
        level: usize,
    ) -> Result<(), BookError> {
        self.encode_and_append(Held::Releasing(solution), level)
    }

    fn encode_and_append(&mut self, mut solution: Held<'_>, level: usize) -> Result<(), BookError> {
        let encoding = self.encoding;
        let table_len = OwareBook::table_len(solution.get(), level, encoding);
        self.begin_level(solution.get(), level, table_len)?;
        let mut failed = Ok(());
        let buffers = self.buffers.clone();
        let send = |piece| {
            if failed.is_ok() {
                failed = self.send(WriteJob::Piece(piece));
            }
        };
        let table = OwareBook::encode_level(&mut solution, level, encoding, &buffers, send);
        failed?;
        self.send(WriteJob::End(table))
    }

    /// Begins the section of the next level, `level` of `solution`, whose
    /// first `table_len` bytes come last.
    fn begin_level(
        &mut self,
        solution: &Solution,
        level: usize,
        table_len: usize,
    ) -> Result<(), BookError> {
        assert_eq!(level, self.levels, "levels are appended in order");
        let info = &solution.levels[level];
        self.levels += 1;
        self.send(WriteJob::Begin(
            [info.states as u64, info.last_change.into()],
            table_len,
        ))
    }

    /// Time the callers so far waited for the writer thread to take work
    /// (it writes a level's first stretches while the rest are encoded).
    pub fn blocked(&self) -> Duration {
        self.worker.blocked
    }

    /// Makes the levels appended so far, which must be all of `generated`'s,
    /// the book on disk (once the writer gets to it).
    ///
    /// # Panics
    ///
    /// As [`OwareBook::write_with`], for the writer's encoding.
    pub fn commit(&mut self, generated: &Generated) -> Result<(), BookError> {
        let params = OwareBook::params(generated, self.encoding);
        self.commit_params(generated.solution.levels.len(), params)
    }

    /// [`BookWriter::commit`] of a generation of `levels` levels whose
    /// parameters are `params`.
    fn commit_params(&mut self, levels: usize, params: [u64; PARAMS]) -> Result<(), BookError> {
        assert_eq!(self.levels, levels, "every level committed is appended");
        self.send(WriteJob::Commit(params))
    }

    /// Renames the book to `path` (as [`book::Appender::rename`] does) once
    /// what was sent before is written: after a [`BookWriter::commit`], a
    /// complete book replaces the file at `path` at once.
    pub fn rename(&mut self, path: impl AsRef<Path>) -> Result<(), BookError> {
        let path = path.as_ref();
        self.path = path.to_owned();
        self.send(WriteJob::Rename(path.to_owned()))
    }

    /// Waits for everything sent, commits `generated` and renames the book
    /// to `path` (as [`book::Appender::rename`] does).
    ///
    /// # Panics
    ///
    /// As [`BookWriter::commit`].
    pub fn finish(
        mut self,
        generated: &Generated,
        path: impl AsRef<Path>,
    ) -> Result<(), BookError> {
        assert_eq!(self.levels, generated.solution.levels.len());
        let params = OwareBook::params(generated, self.encoding);
        let appender = self.wait()?;
        appender.finish(&params, path.as_ref())
    }

    fn send(&mut self, job: WriteJob) -> Result<(), BookError> {
        match self.worker.send(job) {
            true => Ok(()),
            // The thread stopped: it failed.
            false => self.wait().map(drop),
        }
    }

    /// Closes the queue and waits for the thread: its appender, or its error
    /// (once; after that, that it stopped).
    fn wait(&mut self) -> Result<Appender, BookError> {
        self.worker.join().unwrap_or_else(|| {
            Err(BookError::Io {
                path: self.path.clone(),
                source: io::Error::other("the book writer stopped at an earlier error"),
            })
        })
    }
}

/// Encodes a generation's levels as they are solved, on threads of its own,
/// and hands them to a [`BookWriter`].
///
/// A generation hands each level's changes over ([`Solution::take_changes`])
/// and goes on with the next level at once: the encoding takes the CPU time
/// the generation's threads leave idle between their parallel steps, and
/// shares the cores with them otherwise; only the last hand-over is left to
/// encode once the generation is done. (At idle priority, Linux's
/// `SCHED_IDLE`, the sweeps lost more than the encoding gained: 16 seeds
/// took longer than encoding after each level.) A hand-over waits while the
/// encoder is busy with the one before: a generation a whole level ahead of
/// it waits, and at most two hand-overs' changes are held for it.
pub struct LevelEncoder {
    worker: Worker<EncodeJob, Encoded>,
    encoding: Encoding,
}

/// Levels to encode and append, then to commit with these parameters.
struct EncodeJob {
    changes: Solution,
    levels: Range<usize>,
    commit: Option<[u64; PARAMS]>,
}

/// What a [`LevelEncoder`] did.
pub struct Encoded {
    /// The writer, every level handed over appended (unless `result` failed).
    pub writer: BookWriter,
    /// The first failure (the levels after it were dropped).
    pub result: Result<(), BookError>,
    /// Time spent encoding, not counting waits for the writer.
    pub encode_time: Duration,
}

impl LevelEncoder {
    /// Starts an encoder of `threads` threads (and one more handing their
    /// work out) for `writer`.
    pub fn start(mut writer: BookWriter, threads: usize) -> LevelEncoder {
        let encoding = writer.encoding;
        let worker = Worker::start("book encoder", 0, move |inbox| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("book encoder {i}"))
                .build()
                .expect("the encoder's threads start");
            let (mut result, mut encode_time) = (Ok(()), Duration::ZERO);
            for job in inbox {
                let EncodeJob {
                    mut changes,
                    levels,
                    commit,
                } = job;
                if result.is_err() {
                    // A failed book takes no more levels.
                    continue;
                }
                let (start, blocked) = (Instant::now(), writer.blocked());
                let end = levels.end;
                result = pool
                    .install(|| {
                        levels.into_iter().try_for_each(|level| {
                            writer.append_level_releasing(&mut changes, level)
                        })
                    })
                    .and_then(|()| match commit {
                        Some(params) => writer.commit_params(end, params),
                        None => Ok(()),
                    });
                encode_time += start.elapsed() - (writer.blocked() - blocked);
            }
            Encoded {
                writer,
                result,
                encode_time,
            }
        });
        LevelEncoder { worker, encoding }
    }

    /// Hands over levels `levels` of `changes` (a solution holding their
    /// changes), to be encoded and appended in order after those handed over
    /// before; with `commit` (the generation so far, those levels its last),
    /// the book of the levels so far is committed once they are written.
    /// Waits while the encoder is busy with the hand-over before.
    pub fn append(&mut self, changes: Solution, levels: Range<usize>, commit: Option<&Generated>) {
        let commit = commit.map(|generated| {
            assert_eq!(generated.solution.levels.len(), levels.end);
            OwareBook::params(generated, self.encoding)
        });
        let job = EncodeJob {
            changes,
            levels,
            commit,
        };
        if !self.worker.send(job) {
            // The thread takes jobs until the queue closes: it panicked,
            // and `join` goes on with that panic here.
            self.worker.join();
        }
    }

    /// Time [`LevelEncoder::append`] waited for the encoder to take a job.
    pub fn waited(&self) -> Duration {
        self.worker.blocked
    }

    /// Waits until every level handed over is encoded and given to the
    /// writer (not necessarily written: [`BookWriter::finish`] waits for that).
    pub fn finish(mut self) -> Encoded {
        self.worker.join().expect("an encoder finishes once")
    }
}

/// A solution a [`BookWriter`] encodes levels of: borrowed, or lent for
/// good, its changes freed as the encoder passes them.
enum Held<'a> {
    Borrowed(&'a Solution),
    Releasing(&'a mut Solution),
}

impl Held<'_> {
    fn get(&self) -> &Solution {
        match self {
            Held::Borrowed(solution) => solution,
            Held::Releasing(solution) => solution,
        }
    }

    /// Frees the changes of states below `state`, if lent for good.
    fn release_below(&mut self, state: usize) {
        if let Held::Releasing(solution) = self {
            solution.release_changes_below(state);
        }
    }
}

/// Encodes level `level` of `solution` by `streaming` a wave at a time,
/// its records to `pieces`, freeing the changes passed after each wave if
/// the solution is lent for good; returns the level's block table.
fn encode_waves(
    solution: &mut Held<'_>,
    level: usize,
    mut streaming: compact::Streaming,
    buffers: &compact::Buffers,
    mut pieces: impl FnMut(Vec<u8>),
) -> Vec<u8> {
    let start = solution.get().level_starts[level];
    loop {
        let changes = compact::level_changes(solution.get(), level);
        let more = streaming.next_wave(changes, buffers, &mut pieces);
        solution.release_below(start + streaming.encoded());
        if !more {
            return streaming.table();
        }
    }
}

fn sections<'a>(generated: &Generated, levels: &'a [Vec<u8>]) -> Vec<SectionData<'a>> {
    generated
        .solution
        .levels
        .iter()
        .zip(levels)
        .map(|(level, bytes)| SectionData {
            meta: [level.states as u64, level.last_change.into()],
            bytes,
        })
        .collect()
}

fn to_bytes(values: Vec<i8>) -> Vec<u8> {
    values.into_iter().map(|v| v as u8).collect()
}

fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit
    // pattern is valid for both.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::oware::{generate, GenerateOptions};

    /// Encoding a level a wave at a time while its changes are freed behind
    /// the encoder (what a [`LevelEncoder`] does; chunks of 512 boards here,
    /// so that the 9-seed level takes many waves) gives the bytes of an
    /// encoding that frees nothing, and frees most of the lists.
    #[test]
    fn freeing_changes_between_waves_encodes_the_same_level() {
        let generated = generate(GenerateOptions::new(9), |_| {});
        let level = 9;
        let buffers = compact::Buffers::default();
        let mut expected = Vec::new();
        let table = OwareBook::encode_level(
            &mut Held::Borrowed(&generated.solution),
            level,
            Encoding::Changes,
            &buffers,
            |piece| expected.extend_from_slice(&piece),
        );
        expected.splice(0..0, table);

        let mut solution = generated.solution.clone();
        let held_before: usize = solution.changes.iter().map(PackedChanges::len).sum();
        let boards = solution.levels[level].states;
        // Two threads: waves of 8 chunks, 4,096 boards, 42 of them.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut bytes = Vec::new();
        let table = pool.install(|| {
            let streaming = compact::Streaming::with_chunk(compact::Codec::V2, boards, 512);
            let mut held = Held::Releasing(&mut solution);
            encode_waves(&mut held, level, streaming, &buffers, |piece| {
                bytes.extend_from_slice(&piece)
            })
        });
        bytes.splice(0..0, table);
        assert!(bytes == expected, "the same section");
        let held_after: usize = solution.changes.iter().map(PackedChanges::len).sum();
        assert!(
            held_after < held_before / 4,
            "most changes freed: {held_after} of {held_before} left"
        );
    }
}
