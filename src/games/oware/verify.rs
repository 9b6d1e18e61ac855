//! Checking a book's values against the rules, layer by layer.
//!
//! A book's checksums catch a damaged file, and opening it checks every
//! record's structure, but a file altered and checksummed again, or written
//! by a faulty generator, can hold values no play gives. [`verify`] proves
//! every value instead: with 0 turns left every board is worth 0, and the
//! value with `t` turns left is the best over the board's moves of what it
//! captures less the child's value with `t - 1` left (its own seeds without
//! a move). So each level's layer `t` is recomputed from the *book's*
//! layer `t - 1` and compared with the book's layer `t`; by induction on `t`
//! every stored value is then the game's. Past the last change of a level
//! and of every level below it (those its children lie in), the book
//! repeats their layer: recomputing the layer after it from it gives it
//! back (a fixed point), so every later layer is the game's too. (A level
//! may stop changing before one below it does, level 10 at turn 119 while
//! level 9 changes up to turn 145: its layers are checked up to the
//! latter.)
//!
//! The recomputation takes the plain paths, none of the generator's: the
//! scalar move generator into a child cache (one seed level at a time, to
//! bound the memory) and the scalar kernel.
//!
//! [`verify_sample`] checks values drawn at random instead, each against
//! its board's moves as the rules module plays them, through lookups in the
//! book: no proof (a single wrong value is found only if drawn), but it
//! takes seconds and a mapped book, where [`verify`] takes about 3.4 times
//! the book's size in memory (at 20 seeds) and half an hour on two cores.

use super::book::{LevelInfo, OwareBook, ProbeError};
use super::generate::build_cache;
use super::index::BoardIndex;
use super::movegen::MoveGen;
use super::rules::no_move_score;
use super::Board;
use crate::engine::{zeroed_layer, LANES};
use crate::kernels::{Kernel, LAYER_PADDING};
use rayon::prelude::*;
use std::fmt;

/// States per parallel work item of a recomputed layer.
const CHUNK_STATES: usize = 1 << 14;

/// A stored value that does not follow from its board's moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The board.
    pub board: Board,
    /// Turns left.
    pub turns_left: u32,
    /// The value the book holds.
    pub stored: i8,
    /// The value the board's moves give from the book's values with one
    /// turn less.
    pub recomputed: i8,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "board {} with {}: the book holds {:+}, its moves give {:+}",
            self.board,
            super::TurnsLeft(self.turns_left),
            self.stored,
            self.recomputed
        )
    }
}

impl std::error::Error for Mismatch {}

/// Each level of `book` with the last layer [`verify`] checks of it: the
/// layer after the last change of the level and those below (no later than
/// the turn limit).
fn last_turns(book: &OwareBook) -> impl Iterator<Item = (&LevelInfo, u32)> + '_ {
    let mut settled = 0;
    book.levels().iter().map(move |level| {
        settled = settled.max(level.last_change);
        (level, (settled + 1).min(book.turn_limit()))
    })
}

/// What [`verify`] checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Boards of every level.
    pub boards: u64,
    /// Board values recomputed and compared (each level's boards times the
    /// layers up to the one after the last change of it and the levels
    /// below, or the turn limit).
    pub values: u64,
}

/// Progress of [`verify`].
#[derive(Clone, Copy, Debug)]
pub struct VerifyProgress {
    /// The seed level being checked.
    pub seeds: u32,
    /// Its layer just checked.
    pub turn: u32,
    /// The last layer it checks.
    pub last_turn: u32,
}

/// Checks every value of `book` against the rules (see the module docs);
/// `observer` sees each layer checked. Returns the first value that does
/// not follow from its moves, by seed level, then turns left, then board.
///
/// Memory: the book, read whole, and its changes as the generator packs
/// them (together about 2.6 times the file at 15 and 16 seeds, less for
/// fewer), a child cache of the largest level (31 bytes a board) and three
/// layers of every board.
///
/// # Panics
///
/// On a book opened with [`OwareBook::open_for_lookups`].
pub fn verify(
    book: &OwareBook,
    mut observer: impl FnMut(VerifyProgress),
) -> Result<Verified, Mismatch> {
    let solution = book.solution();
    let index = BoardIndex::new(book.max_seeds());
    let starts = index.level_starts();
    let kernel = Kernel::scalar();
    let mut verified = Verified {
        boards: index.states() as u64,
        values: 0,
    };
    for (level, last_turn) in last_turns(book) {
        let seeds = level.seeds;
        let (start, end) = (starts[seeds as usize], starts[seeds as usize + 1]);
        // The boards up to this level alone: the children of this level's.
        let level_index = BoardIndex::new(seeds);
        let cache = build_cache(&level_index, seeds, MoveGen::scalar());
        let first = cache.first_block() * LANES;
        let buffer = cache.blocks() * LANES + LAYER_PADDING;
        // The book's layers `turn - 1` and `turn` of the boards up to this level.
        let (mut before, mut stored) = (zeroed_layer(buffer), zeroed_layer(buffer));
        let mut recomputed = vec![0i8; cache.blocks() * LANES - first];
        for turn in 1..=last_turn {
            if let Some(changes) = solution.changes.get(turn as usize - 1) {
                changes.write_to(&mut stored[..end], 0);
            }
            recomputed
                .par_chunks_mut(CHUNK_STATES)
                .enumerate()
                .for_each(|(i, out)| {
                    let block = cache.first_block() + i * CHUNK_STATES / LANES;
                    kernel.sweep(&cache, block, &before, out);
                });
            let level_values = &recomputed[start - first..end - first];
            // The first chunk that differs (in parallel), then its first
            // differing board.
            let differs = level_values
                .par_chunks(CHUNK_STATES)
                .zip(stored[start..end].par_chunks(CHUNK_STATES))
                .position_first(|(new, old)| new != old);
            if let Some(offset) = differs.map(|chunk| {
                let at = chunk * CHUNK_STATES;
                let new = &level_values[at..];
                at + new
                    .iter()
                    .zip(&stored[start + at..end])
                    .take_while(|(new, old)| new == old)
                    .count()
            }) {
                return Err(Mismatch {
                    board: index.board(start + offset),
                    turns_left: turn,
                    stored: stored[start + offset],
                    recomputed: level_values[offset],
                });
            }
            verified.values += (end - start) as u64;
            observer(VerifyProgress {
                seeds,
                turn,
                last_turn,
            });
            before[..end]
                .par_chunks_mut(CHUNK_STATES)
                .zip(stored[..end].par_chunks(CHUNK_STATES))
                .for_each(|(before, stored)| before.copy_from_slice(stored));
        }
    }
    Ok(verified)
}

/// Why [`verify_sample`] stopped.
#[derive(Debug)]
pub enum SampleError {
    /// A value drawn that does not follow from its board's moves.
    Mismatch(Mismatch),
    /// A lookup that could not be read: a malformed record or a chunk whose
    /// checksum fails, in a book opened with [`OwareBook::open_for_lookups`].
    Unreadable(ProbeError),
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::Mismatch(mismatch) => mismatch.fmt(f),
            SampleError::Unreadable(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SampleError {}

/// Values drawn per parallel batch of [`verify_sample`]; the observer sees
/// each batch done.
const SAMPLE_BATCH: u64 = 1 << 14;

/// Checks `samples` values of `book` drawn at random, each against its
/// board's moves: the value with `t` turns left must be the best of
/// [`OwareBook::scored_moves`] (the rules' own move code, each move's
/// capture less the book's value of its child with `t - 1` left), or the
/// mover's own seeds without a move. The values are drawn uniformly from the boards of the
/// levels of `min_seeds` seeds and more and the turns [`verify`] checks
/// for each (1 up to the layer after the last change of the level and
/// those below it), by a generator seeded with `seed`: the same arguments
/// draw the same values, whatever the threads. `observer` sees the count
/// checked so far after each batch. Returns the count checked, or the first
/// failure in the order drawn.
///
/// A sample, not a proof: a value wrong in few boards is found only where
/// one is drawn. Works on a book opened either way, in the memory of its
/// mapping.
///
/// # Panics
///
/// Where `min_seeds` is above the book's seed count.
pub fn verify_sample(
    book: &OwareBook,
    samples: u64,
    min_seeds: u32,
    seed: u64,
    mut observer: impl FnMut(u64),
) -> Result<u64, SampleError> {
    assert!(
        min_seeds <= book.max_seeds(),
        "a {}-seed book has no level of {min_seeds} seeds",
        book.max_seeds()
    );
    let index = BoardIndex::new(book.max_seeds());
    let levels = drawn_levels(book, &index, min_seeds);
    let last = levels.last().expect("a level drawn from");
    let pairs = last.pairs_before + last.boards * last.turns;
    let check = |i: u64| -> Result<(), SampleError> {
        let drawn = split_mix(seed ^ split_mix(i)) % pairs;
        let level = &levels[levels.partition_point(|l| l.pairs_before <= drawn) - 1];
        let offset = drawn - level.pairs_before;
        let board = index.board(level.first + (offset / level.turns) as usize);
        let turns_left = (offset % level.turns) as u32 + 1;
        let unreadable = SampleError::Unreadable;
        let stored = book.value(&board, turns_left).map_err(unreadable)?;
        let moves = book.scored_moves(&board, turns_left).map_err(unreadable)?;
        let recomputed = match moves.iter().map(|m| m.score).max() {
            Some(best) => best,
            None => no_move_score(&board) as i32,
        };
        if recomputed == stored {
            return Ok(());
        }
        // Values within a level's bound and captures of at most 48 seeds:
        // both fit a byte.
        Err(SampleError::Mismatch(Mismatch {
            board,
            turns_left,
            stored: stored as i8,
            recomputed: recomputed.clamp(-128, 127) as i8,
        }))
    };
    let mut done = 0;
    while done < samples {
        let end = (done + SAMPLE_BATCH).min(samples);
        let failure = (done..end)
            .into_par_iter()
            .map(check)
            .find_first(Result::is_err);
        if let Some(Err(failure)) = failure {
            return Err(failure);
        }
        done = end;
        observer(done);
    }
    Ok(done)
}

/// A level [`verify_sample`] draws from.
#[derive(Debug)]
struct Drawn {
    /// Its first board's index among the book's, and its boards.
    first: usize,
    boards: u64,
    /// Turns left drawn from, 1 to this.
    turns: u64,
    /// Pairs (board, turns left) of the levels drawn from before it.
    pairs_before: u64,
}

/// The levels of `book` of `min_seeds` seeds and more, each with the turns
/// [`verify`] checks of it: up to the layer after the last change of it and
/// of the levels below (or the turn limit).
fn drawn_levels(book: &OwareBook, index: &BoardIndex, min_seeds: u32) -> Vec<Drawn> {
    let starts = index.level_starts();
    let mut levels = Vec::new();
    let mut pairs = 0u64;
    for (level, last_turn) in last_turns(book) {
        let turns = u64::from(last_turn);
        if level.seeds >= min_seeds {
            levels.push(Drawn {
                first: starts[level.seeds as usize],
                boards: level.states,
                turns,
                pairs_before: pairs,
            });
            pairs += level.states * turns;
        }
    }
    levels
}

/// SplitMix64's output function: a well-mixed 64-bit value of `x`.
fn split_mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::oware::{generate, GenerateOptions};

    /// Each level is drawn from up to the layer after its last change and
    /// those of the levels below (at 10 seeds, level 10 settles at turn 119
    /// but level 9 at 145), or the turn limit; the pairs before a level are
    /// those of the levels drawn from below it.
    #[test]
    fn levels_are_drawn_from_the_turns_verify_checks() {
        for (turn_limit, min_seeds) in [(200, 0), (200, 9), (30, 0)] {
            let options = GenerateOptions {
                turn_limit,
                ..GenerateOptions::new(10)
            };
            let book = OwareBook::from_generated(&generate(options, |_| {}));
            let index = BoardIndex::new(10);
            let levels = drawn_levels(&book, &index, min_seeds);
            let last_changes = [1, 2, 10, 29, 39, 67, 84, 92, 99, 145, 119];
            let turns: Vec<u64> = levels.iter().map(|l| l.turns).collect();
            let expected: Vec<u64> = (min_seeds as usize..=10)
                .map(|seeds| {
                    let settled = last_changes[..=seeds].iter().max().unwrap();
                    u64::from((settled + 1).min(turn_limit))
                })
                .collect();
            assert_eq!(
                turns, expected,
                "{turn_limit} turns, from {min_seeds} seeds"
            );
            let mut pairs = 0;
            for (level, seeds) in levels.iter().zip(min_seeds as usize..) {
                assert_eq!(level.first, index.level_starts()[seeds]);
                assert_eq!(level.boards, BoardIndex::level_size(seeds as u32) as u64);
                assert_eq!(level.pairs_before, pairs);
                pairs += level.boards * level.turns;
            }
        }
    }
}
