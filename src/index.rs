//! Combinatorial indexing: a bijection between arrangements of `items`
//! indistinguishable things in `CELLS` cells and `0..compositions(CELLS, items)`.
//!
//! Oware places seeds in 12 houses; a backgammon bear-off side places checkers on
//! six points. Both are "stars and bars" arrangements, ranked here in
//! lexicographic order with cell 0 most significant, counts ascending: for three
//! items in three cells, `[0,0,3]` has rank 0, `[0,1,2]` rank 1, ..., `[3,0,0]`
//! rank 9. This is the order of the `IndexFunction` in
//! `000-oware-endgame-books.md`, which Oware's flat export must reproduce.
//!
//! Ranking adds one table entry per cell: `offsets[cell][left][count]` counts
//! the arrangements of `left` items over cells `cell..` that put fewer than
//! `count` items in `cell`, which is exactly how many precede ours at that cell.

/// `n` choose `k`, exact while the result fits in a `u64`.
pub const fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = if k > n - k { n - k } else { k };
    // Multiplying before dividing keeps every intermediate an exact binomial.
    let mut result: u128 = 1;
    let mut i = 0;
    while i < k {
        result = result * (n - i) as u128 / (i + 1) as u128;
        i += 1;
    }
    result as u64
}

/// Number of ways to put `items` indistinguishable items into `cells` cells.
pub const fn compositions(cells: u64, items: u64) -> u64 {
    if cells == 0 {
        return (items == 0) as u64;
    }
    binomial(items + cells - 1, cells - 1)
}

/// Rank and unrank tables for arrangements of up to `max_items` items in `CELLS` cells.
#[derive(Clone, Debug)]
pub struct CompositionIndex<const CELLS: usize> {
    max_items: usize,
    /// `offsets[(cell * (max+1) + left) * (max+1) + count]`, see the module docs.
    offsets: Vec<u64>,
}

impl<const CELLS: usize> CompositionIndex<CELLS> {
    /// Builds the tables for arrangements of at most `max_items` items.
    pub fn new(max_items: usize) -> Self {
        assert!(CELLS >= 1, "an arrangement needs at least one cell");
        let width = max_items + 1;
        let mut offsets = vec![0u64; CELLS * width * width];
        for cell in 0..CELLS {
            let cells_after = (CELLS - 1 - cell) as u64;
            for left in 0..=max_items {
                let mut preceding = 0u64;
                for count in 0..=left {
                    offsets[(cell * width + left) * width + count] = preceding;
                    preceding += compositions(cells_after, (left - count) as u64);
                }
            }
        }
        CompositionIndex { max_items, offsets }
    }

    /// The largest item count these tables rank.
    pub fn max_items(&self) -> usize {
        self.max_items
    }

    #[inline(always)]
    fn offset(&self, cell: usize, left: usize, count: usize) -> u64 {
        let width = self.max_items + 1;
        self.offsets[(cell * width + left) * width + count]
    }

    /// Number of arrangements of exactly `items` items.
    pub fn count(items: usize) -> u64 {
        compositions(CELLS as u64, items as u64)
    }

    /// Rank of `cells` among the arrangements with the same total.
    ///
    /// The total must be at most `max_items`.
    #[inline]
    pub fn rank(&self, cells: &[u8; CELLS]) -> u64 {
        let mut left: usize = cells.iter().map(|&c| c as usize).sum();
        debug_assert!(left <= self.max_items);
        let mut rank = 0;
        // The last cell holds whatever is left, so it adds nothing.
        for (cell, &count) in cells[..CELLS - 1].iter().enumerate() {
            rank += self.offset(cell, left, count as usize);
            left -= count as usize;
        }
        rank
    }

    /// Rank of the first arrangement of `items` items that starts with the
    /// cell counts `prefix`: arrangements sharing a prefix are consecutive in
    /// rank order, and this is where they start.
    ///
    /// The prefix must hold at most `items` items, and `items` at most `max_items`.
    #[inline]
    pub fn prefix_rank(&self, items: usize, prefix: &[u8]) -> u64 {
        debug_assert!(prefix.len() < CELLS && items <= self.max_items);
        let mut left = items;
        let mut rank = 0;
        for (cell, &count) in prefix.iter().enumerate() {
            rank += self.offset(cell, left, count as usize);
            left -= count as usize;
        }
        rank
    }

    /// The arrangement of `items` items with rank `rank`.
    ///
    /// Panics if `items > max_items` or `rank >= count(items)`.
    pub fn unrank(&self, items: usize, mut rank: u64) -> [u8; CELLS] {
        assert!(items <= self.max_items && rank < Self::count(items));
        let mut cells = [0u8; CELLS];
        let mut left = items;
        for (cell, slot) in cells[..CELLS - 1].iter_mut().enumerate() {
            // The largest count whose offset does not pass the rank.
            let mut count = 0;
            while count < left && self.offset(cell, left, count + 1) <= rank {
                count += 1;
            }
            rank -= self.offset(cell, left, count);
            *slot = count as u8;
            left -= count;
        }
        cells[CELLS - 1] = left as u8;
        cells
    }
}

/// Every arrangement of 0 to `max_items` items in `CELLS` cells, numbered
/// level by level: level `n` holds the arrangements of exactly `n` items in
/// rank order, and the levels lie one after another, so an arrangement's
/// global index is its level's start plus its rank. (Oware's boards are
/// its levels of seeds; a game whose positions are such arrangements
/// numbers them with this, each child in its own level or a lower one.)
#[derive(Clone, Debug)]
pub struct LevelIndex<const CELLS: usize> {
    ranks: CompositionIndex<CELLS>,
    /// `level_starts[n]`: arrangements of fewer than `n` items; one extra
    /// entry at the end.
    level_starts: Vec<usize>,
}

impl<const CELLS: usize> LevelIndex<CELLS> {
    /// The index of the arrangements of at most `max_items` items.
    pub fn new(max_items: usize) -> Self {
        let mut level_starts = vec![0usize];
        for items in 0..=max_items {
            let size = usize::try_from(CompositionIndex::<CELLS>::count(items))
                .expect("arrangements counted in a usize");
            level_starts.push(level_starts[items] + size);
        }
        LevelIndex {
            ranks: CompositionIndex::new(max_items),
            level_starts,
        }
    }

    /// The largest item count indexed.
    pub fn max_items(&self) -> usize {
        self.level_starts.len() - 2
    }

    /// Number of arrangements indexed (every level).
    pub fn states(&self) -> usize {
        *self.level_starts.last().unwrap()
    }

    /// Level boundaries: one entry per level and a final one equal to
    /// [`Self::states`].
    pub fn level_starts(&self) -> &[usize] {
        &self.level_starts
    }

    /// The rank tables within a level.
    pub fn ranks(&self) -> &CompositionIndex<CELLS> {
        &self.ranks
    }

    /// Global index of `cells`, which hold `items` items (at most
    /// [`Self::max_items`]; the total is checked in debug builds only: a
    /// move generator calls this for every move and knows it).
    #[inline]
    pub fn index(&self, cells: &[u8; CELLS], items: usize) -> usize {
        debug_assert_eq!(cells.iter().map(|&c| c as usize).sum::<usize>(), items);
        self.level_starts[items] + self.ranks.rank(cells) as usize
    }

    /// The level (item count) of global index `index`.
    ///
    /// # Panics
    ///
    /// Where `index` is not below [`Self::states`].
    pub fn level_of(&self, index: usize) -> usize {
        assert!(index < self.states(), "index {index} of {}", self.states());
        self.level_starts.partition_point(|&start| start <= index) - 1
    }

    /// The arrangement at global index `index`.
    ///
    /// # Panics
    ///
    /// As [`Self::level_of`].
    pub fn arrangement(&self, index: usize) -> [u8; CELLS] {
        let items = self.level_of(index);
        let rank = index - self.level_starts[items];
        self.ranks.unrank(items, rank as u64)
    }

    /// The arrangements from global index `index` on, in index order, each
    /// with its item count.
    pub fn from(&self, index: usize) -> impl Iterator<Item = ([u8; CELLS], usize)> + '_ {
        let mut items = if index < self.states() {
            self.level_of(index)
        } else {
            self.max_items() + 1
        };
        let mut next = (items <= self.max_items()).then(|| self.arrangement(index));
        std::iter::from_fn(move || {
            let cells = next?;
            let current = (cells, items);
            let mut following = cells;
            next = if next_arrangement(&mut following) {
                Some(following)
            } else if items < self.max_items() {
                items += 1;
                Some(self.ranks.unrank(items, 0))
            } else {
                None
            };
            Some(current)
        })
    }
}

/// Steps `cells` to the next arrangement with the same total in rank order.
/// Returns `false` (leaving `cells` unspecified) after the last one.
#[inline]
pub fn next_arrangement<const CELLS: usize>(cells: &mut [u8; CELLS]) -> bool {
    // In rank order the last cell changes fastest:
    // if the final cell holds items, move one into the cell before it;
    // otherwise empty the last non-empty cell q into the final cell, keeping
    // one item back for cell q-1.
    let last = CELLS - 1;
    if cells[last] > 0 {
        if last == 0 {
            return false;
        }
        cells[last] -= 1;
        cells[last - 1] += 1;
        return true;
    }
    let Some(q) = (0..last).rev().find(|&c| cells[c] > 0) else {
        return false;
    };
    if q == 0 {
        return false;
    }
    let moved = cells[q] - 1;
    cells[q] = 0;
    cells[last] = moved;
    cells[q - 1] += 1;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials_match_pascal() {
        for n in 0..60u64 {
            for k in 1..n {
                assert_eq!(binomial(n, k), binomial(n - 1, k - 1) + binomial(n - 1, k));
            }
        }
        assert_eq!(binomial(66, 33), 7_219_428_434_016_265_740);
    }

    #[test]
    fn article_state_counts() {
        let counts = [12, 78, 364, 1365, 4368, 12376, 31824, 75582, 167960, 352716];
        for (seeds, &expected) in (1..).zip(&counts) {
            assert_eq!(CompositionIndex::<12>::count(seeds), expected);
        }
    }

    #[test]
    fn article_three_pit_example() {
        let index = CompositionIndex::<3>::new(3);
        let order = [
            [0, 0, 3],
            [0, 1, 2],
            [0, 2, 1],
            [0, 3, 0],
            [1, 0, 2],
            [1, 1, 1],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
            [3, 0, 0],
        ];
        for (rank, cells) in order.iter().enumerate() {
            assert_eq!(index.rank(cells), rank as u64);
            assert_eq!(&index.unrank(3, rank as u64), cells);
        }
    }

    #[test]
    fn level_indices_number_every_arrangement_level_by_level() {
        let index = LevelIndex::<3>::new(5);
        let counts: Vec<usize> = (0..=5)
            .map(|n| CompositionIndex::<3>::count(n) as usize)
            .collect();
        assert_eq!(counts, [1, 3, 6, 10, 15, 21]);
        assert_eq!(index.level_starts(), [0, 1, 4, 10, 20, 35, 56]);
        assert_eq!((index.states(), index.max_items()), (56, 5));
        // From every index on, the arrangements come in index order, each
        // at its own index, and the walk ends after the last.
        for start in 0..=index.states() {
            let walked: Vec<_> = index.from(start).collect();
            assert_eq!(walked.len(), index.states() - start);
            for (at, (cells, items)) in (start..).zip(walked) {
                assert_eq!(index.arrangement(at), cells);
                assert_eq!(index.level_of(at), items);
                assert_eq!(index.index(&cells, items), at);
            }
        }
        assert_eq!(index.arrangement(10), [0, 0, 3]);
        assert_eq!(index.arrangement(19), [3, 0, 0]);
    }

    #[test]
    fn next_walks_every_rank_in_order() {
        let index = CompositionIndex::<6>::new(9);
        for items in 0..=9 {
            let mut cells = index.unrank(items, 0);
            let mut rank = 0;
            loop {
                assert_eq!(index.rank(&cells), rank);
                rank += 1;
                if !next_arrangement(&mut cells) {
                    break;
                }
            }
            assert_eq!(rank, CompositionIndex::<6>::count(items));
        }
    }
}
