//! Oware state indexing: boards with 0..=N seeds, level by level.
//!
//! Level `n` holds the boards with exactly `n` seeds in rank order (see
//! [`crate::index`]); levels are laid out one after another, so the global index
//! of a board is `level_start(n) + rank` ([`LevelIndex`]). Level 0 is the empty
//! board alone.

use super::board::{Board, HOUSES};
use crate::index::{CompositionIndex, LevelIndex};

/// Largest seed count a book may hold: every global index of 27 seeds fits in
/// 32 bits (`C(39, 12)` boards), and values stay well inside the engine's bound.
pub const MAX_BOOK_SEEDS: u32 = 27;

/// The index of every board with at most `max_seeds` seeds: the
/// arrangements of seeds in twelve houses, level by level
/// ([`LevelIndex`]).
#[derive(Clone, Debug)]
pub struct BoardIndex {
    levels: LevelIndex<HOUSES>,
}

impl BoardIndex {
    /// The index for boards with at most `max_seeds` seeds.
    ///
    /// Panics if `max_seeds > MAX_BOOK_SEEDS`.
    pub fn new(max_seeds: u32) -> BoardIndex {
        assert!(max_seeds <= MAX_BOOK_SEEDS);
        BoardIndex {
            levels: LevelIndex::new(max_seeds as usize),
        }
    }

    /// Number of boards with exactly `seeds` seeds.
    pub fn level_size(seeds: u32) -> usize {
        CompositionIndex::<HOUSES>::count(seeds as usize) as usize
    }

    /// The largest seed count indexed.
    pub fn max_seeds(&self) -> u32 {
        self.levels.max_items() as u32
    }

    /// Number of boards indexed (all levels, the empty board included).
    pub fn states(&self) -> usize {
        self.levels.states()
    }

    /// Level boundaries: one entry per level and a final one equal to [`Self::states`].
    pub fn level_starts(&self) -> &[usize] {
        self.levels.level_starts()
    }

    /// Rank of `board` within its level.
    ///
    /// # Panics
    ///
    /// Where `board` holds more than [`BoardIndex::max_seeds`] seeds.
    #[inline]
    pub fn rank(&self, board: &Board) -> usize {
        self.assert_indexed(board.seeds());
        self.levels.ranks().rank(board.houses()) as usize
    }

    /// Global index of `board`.
    ///
    /// # Panics
    ///
    /// Where `board` holds more than [`BoardIndex::max_seeds`] seeds.
    #[inline]
    pub fn index(&self, board: &Board) -> usize {
        let seeds = board.seeds();
        self.assert_indexed(seeds);
        self.levels.index(board.houses(), seeds as usize)
    }

    #[inline]
    fn assert_indexed(&self, seeds: u32) {
        assert!(
            seeds <= self.max_seeds(),
            "a board of {seeds} seeds: the index holds at most {}",
            self.max_seeds()
        );
    }

    /// Global index of `board`, which holds exactly `seeds` seeds (checked
    /// in debug builds only: the child cache's builder calls this for every
    /// move and knows the count).
    #[inline]
    pub fn index_with_seeds(&self, board: &Board, seeds: u32) -> usize {
        self.levels.index(board.houses(), seeds as usize)
    }

    /// The board at global index `index`.
    pub fn board(&self, index: usize) -> Board {
        Board::new(self.levels.arrangement(index))
    }

    /// The seed count of the board at global index `index`.
    pub fn level_of(&self, index: usize) -> u32 {
        self.levels.level_of(index) as u32
    }

    /// The boards from global index `index` on, in index order.
    pub fn boards_from(&self, index: usize) -> impl Iterator<Item = (Board, u32)> + '_ {
        self.levels
            .from(index)
            .map(|(houses, seeds)| (Board::new(houses), seeds as u32))
    }
}
