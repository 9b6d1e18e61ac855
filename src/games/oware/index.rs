//! Oware state indexing: boards with 0..=N seeds, level by level.
//!
//! Level `n` holds the boards with exactly `n` seeds in rank order (see
//! [`crate::index`]); levels are laid out one after another, so the global index
//! of a board is `level_start(n) + rank`. Level 0 is the empty board alone.

use super::board::{Board, HOUSES};
use crate::index::{next_arrangement, CompositionIndex};

/// Largest seed count a book may hold: every global index of 27 seeds fits in
/// 32 bits (`C(39, 12)` boards), and values stay well inside the engine's bound.
pub const MAX_BOOK_SEEDS: u32 = 27;

/// The index of every board with at most `max_seeds` seeds.
#[derive(Clone, Debug)]
pub struct BoardIndex {
    ranks: CompositionIndex<HOUSES>,
    /// `level_starts[n]` = boards with fewer than `n` seeds; one extra entry at the end.
    level_starts: Vec<usize>,
}

impl BoardIndex {
    /// The index for boards with at most `max_seeds` seeds.
    ///
    /// Panics if `max_seeds > MAX_BOOK_SEEDS`.
    pub fn new(max_seeds: u32) -> BoardIndex {
        assert!(max_seeds <= MAX_BOOK_SEEDS);
        let mut level_starts = vec![0usize];
        for seeds in 0..=max_seeds as usize {
            let next = level_starts[seeds] + Self::level_size(seeds as u32);
            level_starts.push(next);
        }
        BoardIndex {
            ranks: CompositionIndex::new(max_seeds as usize),
            level_starts,
        }
    }

    /// Number of boards with exactly `seeds` seeds.
    pub fn level_size(seeds: u32) -> usize {
        CompositionIndex::<HOUSES>::count(seeds as usize) as usize
    }

    /// The largest seed count indexed.
    pub fn max_seeds(&self) -> u32 {
        self.level_starts.len() as u32 - 2
    }

    /// Number of boards indexed (all levels, the empty board included).
    pub fn states(&self) -> usize {
        *self.level_starts.last().unwrap()
    }

    /// Level boundaries: one entry per level and a final one equal to [`Self::states`].
    pub fn level_starts(&self) -> &[usize] {
        &self.level_starts
    }

    /// Rank of `board` within its level.
    ///
    /// # Panics
    ///
    /// Where `board` holds more than [`BoardIndex::max_seeds`] seeds.
    #[inline]
    pub fn rank(&self, board: &Board) -> usize {
        self.assert_indexed(board.seeds());
        self.ranks.rank(board.houses()) as usize
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
        self.level_starts[seeds as usize] + self.ranks.rank(board.houses()) as usize
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
        debug_assert_eq!(board.seeds(), seeds);
        self.level_starts[seeds as usize] + self.ranks.rank(board.houses()) as usize
    }

    /// The board at global index `index`.
    pub fn board(&self, index: usize) -> Board {
        let seeds = self.level_of(index);
        let rank = index - self.level_starts[seeds as usize];
        Board::new(self.ranks.unrank(seeds as usize, rank as u64))
    }

    /// The seed count of the board at global index `index`.
    pub fn level_of(&self, index: usize) -> u32 {
        assert!(index < self.states());
        (self.level_starts.partition_point(|&start| start <= index) - 1) as u32
    }

    /// The boards from global index `index` on, in index order.
    pub fn boards_from(&self, index: usize) -> impl Iterator<Item = (Board, u32)> + '_ {
        let mut seeds = if index < self.states() {
            self.level_of(index)
        } else {
            self.max_seeds() + 1
        };
        let mut next = (seeds <= self.max_seeds()).then(|| *self.board(index).houses());
        std::iter::from_fn(move || {
            let houses = next?;
            let current = (Board::new(houses), seeds);
            let mut following = houses;
            next = if next_arrangement(&mut following) {
                Some(following)
            } else if seeds < self.max_seeds() {
                seeds += 1;
                Some(self.ranks.unrank(seeds as usize, 0))
            } else {
                None
            };
            Some(current)
        })
    }
}
