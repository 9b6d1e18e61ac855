//! Run sweeps: a layer computed row by row from contiguous stretches of the
//! previous one, with no child cache.
//!
//! Within a seed level, the boards sharing the mover's side `a` (houses 0-5)
//! are consecutive in index order: a *row*, indexed by the rank of the
//! opponent's side `b` among the sides holding the remaining `m` seeds. A
//! move from house `h` holding `c` seeds does the same to every board of a
//! row: the mover's side becomes `a'` (house `h` emptied, the seeds that stay
//! on that side added), and `b` receives a fixed vector `δ` of seeds,
//! possibly followed by a capture that depends on `b + δ` alone. So the
//! children of a row, seen unflipped as `(a', b'')`, all lie in the rows of
//! `a'` of the levels `n - q` for the captures `q` that occur.
//!
//! The child's value is `v(b'', a')`, the value of the *flipped* board. Keep
//! each layer also as its mirror image `w(a, b) = v(b, a)` (the same array
//! permuted by the flip, a ragged transpose of the level's row matrix), and
//! `v_t(a, b) = max over moves of (q - w_{t-1}(a', b''))` reads row `a'` of
//! the mirror layer. Better: `b ↦ b''` does not depend on the row at all,
//! only on the spill pattern `(δ, last house)` and on `m`, and it maps
//! consecutive sides to consecutive sides except where a house `δ` touches
//! changes. Precomputed once per pattern and `m` as a list of *runs*
//! (source offset, capture, destination offset, length), a move becomes a
//! handful of contiguous `max(out, q - src)` byte loops, which the compiler
//! vectorises: no gathers and no per-board child indices to stream from
//! memory (the short runs, most of them, are applied column by column from
//! records shared by every row: see `kernels::rows::SHORT_RUN`). A turn is
//! then: sweep every row (in parallel over row ranges), compare with the
//! previous layer for the change list, transpose into the mirror layer for
//! the next turn, and apply the lower levels' mirror changes.
//! Late in a level, when few values change, a turn sweeps only the rows
//! reading a changed mirror row, then only the boards reading a changed
//! mirror position (module `frontier`; the thresholds are `SPARSITY`).
//!
//! Levels are solved one at a time on top of the lower ones, whose mirror
//! layers are replayed from their mirror change lists
//! ([`Solution::mirrored`]), recorded as each level is solved or derived from
//! its normal changes by replay (when a book is extended). A capture takes
//! two seeds or more, so no level reads the one just below it: the top two
//! levels record none (at 20 seeds, level 19's would be 1.5 GB held to the
//! end), and the top level, the last to read the others', frees each
//! turn's once applied (`Above`).

mod frontier;

use super::board::{Board, HOUSES, SIDE};
use super::index::{BoardIndex, MAX_BOOK_SEEDS};
use super::rules::play;
use crate::engine::{
    zeroed_layer, Awake, KernelPicker, LevelSolution, PackedChanges, Solution, TurnReport,
};
use crate::index::{next_arrangement, CompositionIndex};
use crate::kernels::rows::{RowMove, RowProgram, RowSweep, Run, RunLists};
use crate::kernels::KernelChoice;
use frontier::{Frontier, ListColumns, Readers};
use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;
use wide::u8x16;

/// States per parallel work item of a row sweep.
const SWEEP_CHUNK_STATES: usize = 1 << 15;

/// Rows and columns of a transpose tile: 64 x 64 bytes stay in L1.
const TILE: usize = 64;

/// Tiles per parallel task of a transpose, side by side: at most 64 KiB,
/// so that no task holds the others up at the end of a turn (a task of
/// all the columns of 64 rows reached 480 KB at 16 seeds, 3.4 MB at 20).
const TASK_TILES: usize = 16;

/// One spill pattern applied to every opponent side with `m` seeds.
#[derive(Clone, Debug, Default)]
struct RunList {
    /// The runs, as built; [`RunPlan`] keeps them in its [`RunLists`].
    runs: Vec<Run>,
    /// Bit `q` set when some run captures `q` seeds.
    captures: u32,
    /// The move is illegal for every side of this size (it leaves the
    /// opponent without seeds: nothing reaches an empty side).
    illegal: bool,
}

/// A [`RunList`] once its runs are stored in the plan's [`RunLists`].
#[derive(Clone, Copy, Debug)]
struct ListInfo {
    /// The runs' number in [`RunPlan::run_lists`].
    id: u32,
    captures: u32,
    illegal: bool,
}

/// What sowing a house does to the mover's own side, and which spill
/// pattern it applies to the opponent's.
#[derive(Clone, Copy, Debug, Default)]
struct Sowing {
    /// Seeds added to each own house (the origin is emptied: 0 there).
    own: [u8; SIDE],
    /// Index of the spill pattern in [`RunPlan::lists`].
    pattern: usize,
}

/// What sowing does to the opponent's side: everything about that side after
/// a move (spill, capture, legality) depends on this alone.
struct Pattern {
    /// Seeds added to each of the opponent's houses.
    spill: [u8; SIDE],
    /// The house the last seed falls in, if on the opponent's side.
    last: Option<usize>,
    /// A move with this pattern: `seeds` sown from `house`.
    house: usize,
    seeds: usize,
}

/// The precomputed runs of every move, for boards of up to `max_seeds` seeds.
pub struct RunPlan {
    max_seeds: usize,
    /// `sowings[house * (max_seeds + 1) + seeds]`.
    sowings: Vec<Sowing>,
    /// `lists[pattern][m]`: a spill pattern over sides of `m` seeds.
    lists: Vec<Vec<ListInfo>>,
    /// Every pattern's runs, for the kernels.
    run_lists: RunLists,
    /// The same lists column by column and inverted, for frontier turns.
    columns: ListColumns,
    /// Ranks of whole boards, for row starts.
    boards: CompositionIndex<HOUSES>,
}

impl RunPlan {
    /// Plans every move of every board with at most `max_seeds` seeds.
    pub fn new(max_seeds: u32) -> RunPlan {
        let max_seeds = max_seeds as usize;
        let sides = CompositionIndex::<SIDE>::new(max_seeds);
        // Spill patterns: (seeds added to the opponent's houses, last house if
        // on the opponent's side). Everything about the opponent's side after
        // a move depends on that alone. Each keeps a representative move and
        // the fewest seeds any of its moves sows.
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut sowings = vec![Sowing::default(); SIDE * (max_seeds + 1)];
        for house in 0..SIDE {
            for seeds in 1..=max_seeds {
                // Opponent houses of 4 can neither be captured nor emptied.
                let mut houses = [0u8; HOUSES];
                houses[house] = seeds as u8;
                houses[SIDE..].fill(4);
                let after = play(&Board::new(houses), house).expect("a legal move");
                let mut spill = [0u8; SIDE];
                for (s, &h) in spill.iter_mut().zip(&after.after.houses()[SIDE..]) {
                    *s = h - 4;
                }
                let last = (house + (seeds - 1) % (HOUSES - 1) + 1) % HOUSES;
                let last_on_other_side = if last >= SIDE { Some(last) } else { None };
                let pattern = match patterns
                    .iter()
                    .position(|p| p.spill == spill && p.last == last_on_other_side)
                {
                    Some(p) => p,
                    None => {
                        patterns.push(Pattern {
                            spill,
                            last: last_on_other_side,
                            house,
                            seeds,
                        });
                        patterns.len() - 1
                    }
                };
                let mut own = [0u8; SIDE];
                own.copy_from_slice(&after.after.houses()[..SIDE]);
                sowings[house * (max_seeds + 1) + seeds] = Sowing { own, pattern };
            }
        }
        // The mover sows at least `fewest` seeds: the opponent holds at most
        // the rest.
        let mut fewest = vec![max_seeds; patterns.len()];
        for house in 0..SIDE {
            for seeds in 1..=max_seeds {
                let pattern = sowings[house * (max_seeds + 1) + seeds].pattern;
                fewest[pattern] = fewest[pattern].min(seeds);
            }
        }
        let lists: Vec<Vec<RunList>> = patterns
            .par_iter()
            .zip(&fewest)
            .map(|(pattern, &fewest)| {
                (0..=max_seeds - fewest)
                    .map(|m| run_list(&sides, pattern.house, pattern.seeds, m))
                    .collect()
            })
            .collect();
        let mut run_lists = RunLists::default();
        let mut columns = ListColumns::default();
        let lists = lists
            .into_iter()
            .map(|by_m| {
                by_m.into_iter()
                    .enumerate()
                    .map(|(m, list)| {
                        columns.push(&list.runs, CompositionIndex::<SIDE>::count(m) as usize);
                        ListInfo {
                            id: run_lists.push(&list.runs),
                            captures: list.captures,
                            illegal: list.illegal,
                        }
                    })
                    .collect()
            })
            .collect();
        RunPlan {
            max_seeds,
            sowings,
            lists,
            run_lists,
            columns,
            boards: CompositionIndex::new(max_seeds),
        }
    }

    #[inline]
    fn sowing(&self, house: usize, seeds: u8) -> &Sowing {
        &self.sowings[house * (self.max_seeds + 1) + seeds as usize]
    }

    /// Bytes held by the plan's run lists.
    pub fn heap_bytes(&self) -> usize {
        self.run_lists.heap_bytes() + self.columns.heap_bytes()
    }
}

/// The runs of the move `house` with `seeds` seeds over every opponent side
/// of `m` seeds, found by playing it (the rules are the single definition).
fn run_list(sides: &CompositionIndex<SIDE>, house: usize, seeds: usize, m: usize) -> RunList {
    let mut list = RunList::default();
    let mut other = sides.unrank(m, 0);
    let mut column = 0u32;
    loop {
        let mut houses = [0u8; HOUSES];
        houses[house] = seeds as u8;
        houses[SIDE..].copy_from_slice(&other);
        match play(&Board::new(houses), house) {
            None => {
                // Only an empty side stays empty: m = 0, a single column.
                debug_assert_eq!(m, 0);
                list.illegal = true;
            }
            Some(outcome) => {
                let mut child = [0u8; SIDE];
                child.copy_from_slice(&outcome.after.houses()[SIDE..]);
                let dst = sides.rank(&child) as u32;
                let capture = outcome.capture;
                list.captures |= 1 << capture;
                match list.runs.last_mut() {
                    Some(run)
                        if run.capture == capture
                            && run.src + run.len == column
                            && run.dst + run.len == dst =>
                    {
                        run.len += 1
                    }
                    _ => list.runs.push(Run {
                        src: column,
                        dst,
                        len: 1,
                        capture,
                        slot: 0,
                    }),
                }
            }
        }
        column += 1;
        if !next_arrangement(&mut other) {
            break;
        }
    }
    for run in &mut list.runs {
        run.slot = (list.captures & ((1 << run.capture) - 1)).count_ones() as u8;
    }
    list
}

/// The rows of one seed level: every own side with at most `seeds` seeds, in
/// index order, and where each starts.
pub struct LevelRows {
    seeds: usize,
    /// Own side of each row.
    own: Vec<[u8; SIDE]>,
    /// Seeds on the opponent's side in each row.
    other: Vec<u8>,
    /// Index (within the level) of each row's first board; one extra entry.
    starts: Vec<u32>,
    /// `starts_by_sum[k]`: where the rows whose own side holds `k` seeds
    /// start, in the rank order of their own sides.
    starts_by_sum: Vec<Vec<u32>>,
    /// Each row's own side's rank among the sides of its sum: the column
    /// its boards take in the mirror rows.
    rank_in_sum: Vec<u32>,
}

impl LevelRows {
    /// The rows of level `seeds`.
    ///
    /// # Panics
    ///
    /// Above [`MAX_BOOK_SEEDS`] (its boards are counted in 32 bits).
    pub fn new(seeds: u32) -> LevelRows {
        assert!(
            seeds <= MAX_BOOK_SEEDS,
            "{seeds} seeds: rows of at most {MAX_BOOK_SEEDS}"
        );
        let seeds = seeds as usize;
        let mut own = Vec::new();
        let mut other = Vec::new();
        let mut starts = vec![0u32];
        let mut starts_by_sum = vec![Vec::new(); seeds + 1];
        let mut rank_in_sum = Vec::new();
        // Own sides in lexicographic order, house 0 most significant: the
        // order of the boards' ranks.
        let mut side = [0u8; SIDE];
        loop {
            let sum: usize = side.iter().map(|&s| s as usize).sum();
            let start = *starts.last().unwrap();
            rank_in_sum.push(starts_by_sum[sum].len() as u32);
            starts_by_sum[sum].push(start);
            own.push(side);
            other.push((seeds - sum) as u8);
            let len = CompositionIndex::<SIDE>::count(seeds - sum) as u32;
            starts.push(start + len);
            // Next side: increment the last house that can grow, zero the rest.
            let mut house = SIDE;
            loop {
                if house == 0 {
                    return LevelRows {
                        seeds,
                        own,
                        other,
                        starts,
                        starts_by_sum,
                        rank_in_sum,
                    };
                }
                house -= 1;
                let before: usize = side[..house].iter().map(|&s| s as usize).sum();
                if before + (side[house] as usize) < seeds {
                    side[house] += 1;
                    side[house + 1..].fill(0);
                    break;
                }
            }
        }
    }

    /// Number of boards in the level.
    pub fn states(&self) -> usize {
        *self.starts.last().unwrap() as usize
    }

    /// Writes the mirror image of layer `values` into `mirror`: the value of
    /// board `(a, b)` goes where board `(b, a)` is.
    pub fn transpose(&self, values: &[i8], mirror: &mut [i8]) {
        assert_eq!(values.len(), self.states());
        assert_eq!(mirror.len(), self.states());
        let out = SharedBytes(mirror.as_mut_ptr());
        // Tasks: (own-side sum k, a block of TILE rows of that sum, a
        // stretch of TASK_TILES tiles of their columns).
        let tasks: Vec<(usize, usize, usize)> = (0..=self.seeds)
            .flat_map(|k| {
                let (rows, columns) = (
                    self.starts_by_sum[k].len(),
                    self.starts_by_sum[self.seeds - k].len(),
                );
                (0..rows).step_by(TILE).flat_map(move |r| {
                    (0..columns)
                        .step_by(TILE * TASK_TILES)
                        .map(move |c| (k, r, c))
                })
            })
            .collect();
        tasks
            .par_iter()
            .with_max_len(1)
            .for_each(|&(k, first_row, first_column)| {
                self.transpose_tiles(k, first_row, first_column, values, out)
            });
    }

    /// Transposes rows `first_row..first_row + TILE` of own-side sum `k`,
    /// columns `first_column..first_column + TILE * TASK_TILES` of them.
    #[inline(never)]
    fn transpose_tiles(
        &self,
        k: usize,
        first_row: usize,
        first_column: usize,
        values: &[i8],
        out: SharedBytes,
    ) {
        let sources = &self.starts_by_sum[k];
        let sources = &sources[first_row..(first_row + TILE).min(sources.len())];
        // Row `first_row + i` of sum k is column `first_row + i` of the rows
        // of sum `seeds - k`, which are its columns.
        let targets = &self.starts_by_sum[self.seeds - k];
        let last_column = (first_column + TILE * TASK_TILES).min(targets.len());
        for first_column in (first_column..last_column).step_by(TILE) {
            // The next tile's sources: the rows are too many streams for
            // the hardware prefetchers.
            let next = first_column + TILE;
            if next < last_column {
                for &source in sources {
                    let at = source as usize + next;
                    crate::kernels::prefetch(values, at);
                    crate::kernels::prefetch(values, at + TILE - 1);
                }
                // And its targets: each is written 8 bytes at a time, and
                // would otherwise be read from memory at the first.
                for &target in &targets[next..(next + TILE).min(last_column)] {
                    let at = target as usize + first_row;
                    out.prefetch(at);
                    out.prefetch(at + sources.len() - 1);
                }
            }
            let targets = &targets[first_column..(first_column + TILE).min(targets.len())];
            // 8 x 8 blocks in registers: whole ones, then those of the last
            // columns (fewer than 8, each of their targets gets 8 bytes) and
            // of the last rows (fewer than 8, each target gets that many).
            let (full_rows, full_columns) = (sources.len() / 8 * 8, targets.len() / 8 * 8);
            // Block (i, j) of the edges: rows `i..` (up to 8 of `sources`)
            // from column `j` (8 bytes each, those past the tile's columns
            // unused).
            let edge_block = |i: usize, j: usize| {
                let mut block = [0u64; 8];
                for (word, &source) in block.iter_mut().zip(&sources[i..]) {
                    *word = word_at(values, source as usize + first_column + j);
                }
                transpose_8x8(&mut block);
                block
            };
            let block_targets = targets[..full_columns].as_chunks::<8>().0;
            for i in (0..full_rows).step_by(8) {
                // The block row's eight source rows from the tile's first
                // column, each checked once, not at every block.
                let rows: [&[[i8; 8]]; 8] = std::array::from_fn(|r| {
                    let at = sources[i + r] as usize + first_column;
                    values[at..at + full_columns].as_chunks::<8>().0
                });
                for (j, block_targets) in block_targets.iter().enumerate() {
                    let mut block = rows.map(|row| u64::from_le_bytes(row[j].map(|b| b as u8)));
                    transpose_8x8(&mut block);
                    for (&word, &target) in block.iter().zip(block_targets) {
                        let at = target as usize + first_row + i;
                        // SAFETY: the eight bytes at `at` are row `target`'s
                        // columns `first_row + i..+8`, all within it (rows
                        // of sum `seeds - k` have a column per row of sum
                        // k). Every (row, column) pair of the level is
                        // visited by exactly one tile, and the flip is a
                        // bijection, so no two writes share a byte.
                        unsafe { out.write_u64(at, word) };
                    }
                }
                if full_columns < targets.len() {
                    let block = edge_block(i, full_columns);
                    for (&word, &target) in block.iter().zip(&targets[full_columns..]) {
                        let at = target as usize + first_row + i;
                        // SAFETY: as above.
                        unsafe { out.write_u64(at, word) };
                    }
                }
            }
            let last_rows = sources.len() - full_rows;
            if last_rows > 0 {
                for j in (0..targets.len()).step_by(8) {
                    for (&word, &target) in edge_block(full_rows, j).iter().zip(&targets[j..]) {
                        let at = target as usize + first_row + full_rows;
                        // SAFETY: as above, for the `last_rows` bytes of
                        // columns `first_row + full_rows..` of row `target`,
                        // the tile's last (these are the matrix's last rows).
                        unsafe { out.write_low_bytes(at, word, last_rows) };
                    }
                }
            }
        }
    }
}

/// The eight bytes of `values` from `at`, as a little-endian word; past the
/// end of `values`, zeros.
#[inline(always)]
fn word_at(values: &[i8], at: usize) -> u64 {
    let bytes: [i8; 8] = match values.get(at..at + 8) {
        Some(bytes) => bytes.try_into().unwrap(),
        None => {
            let mut bytes = [0i8; 8];
            let tail = &values[at.min(values.len())..];
            bytes[..tail.len()].copy_from_slice(tail);
            bytes
        }
    };
    u64::from_le_bytes(bytes.map(|b| b as u8))
}

/// Transposes an 8 x 8 byte matrix held as eight little-endian rows. Read
/// as 64 bytes in row order, the transpose is three perfect shuffles (each
/// interleaves the first 32 bytes with the last 32: an index's six bits
/// rotate left by one, so three turn (row, column) into (column, row)),
/// each four byte interleaves of 16-byte vectors.
#[inline(always)]
fn transpose_8x8(rows: &mut [u64; 8]) {
    let pair = |first: u64, second: u64| {
        u8x16::from((u128::from(first) | u128::from(second) << 64).to_le_bytes())
    };
    let mut x = [
        pair(rows[0], rows[1]),
        pair(rows[2], rows[3]),
        pair(rows[4], rows[5]),
        pair(rows[6], rows[7]),
    ];
    for _ in 0..3 {
        x = [
            u8x16::unpack_low(x[0], x[2]),
            u8x16::unpack_high(x[0], x[2]),
            u8x16::unpack_low(x[1], x[3]),
            u8x16::unpack_high(x[1], x[3]),
        ];
    }
    for (two_rows, vector) in rows.chunks_exact_mut(2).zip(x) {
        let bits = u128::from_le_bytes(vector.to_array());
        two_rows[0] = bits as u64;
        two_rows[1] = (bits >> 64) as u64;
    }
}

/// A byte array written by several tasks at disjoint positions.
#[derive(Clone, Copy)]
struct SharedBytes(*mut i8);
// SAFETY: only used by `LevelRows::transpose`, whose tasks write disjoint bytes.
unsafe impl Sync for SharedBytes {}
// SAFETY: the pointer is only written through (by the methods below, under
// their callers' contracts), from the tasks it is handed to; moving it to
// another thread moves no data.
unsafe impl Send for SharedBytes {}

impl SharedBytes {
    /// Asks for the cache line holding byte `at` (a hint: any `at` will do).
    #[inline(always)]
    fn prefetch(self, at: usize) {
        crate::kernels::prefetch_address(self.0.wrapping_add(at).cast_const());
    }

    /// # Safety
    /// `at..at + 8` must be in bounds, and no other thread may access those
    /// bytes during the parallel section.
    #[inline(always)]
    unsafe fn write_u64(self, at: usize, word: u64) {
        // SAFETY: as the caller promises; no alignment is needed.
        unsafe { self.0.add(at).cast::<u64>().write_unaligned(word.to_le()) };
    }

    /// Writes the low `count` bytes of `word` (little-endian) from `at`, in
    /// at most three stores.
    ///
    /// # Safety
    /// `count` must be below 8; otherwise as for [`Self::write_u64`], for
    /// the `count` bytes from `at`.
    #[inline(always)]
    unsafe fn write_low_bytes(self, at: usize, word: u64, count: usize) {
        debug_assert!(count < 8);
        let (mut at, mut word) = (self.0.wrapping_add(at), word);
        // The pieces of 4, 2 and 1 bytes taken add up to `count`, each
        // starting where the one before ended.
        if count & 4 != 0 {
            // SAFETY: the first 4 of the `count` bytes the caller gave.
            unsafe { at.cast::<u32>().write_unaligned((word as u32).to_le()) };
            (at, word) = (at.wrapping_add(4), word >> 32);
        }
        if count & 2 != 0 {
            // SAFETY: the next 2 of the `count` bytes, within them as above.
            unsafe { at.cast::<u16>().write_unaligned((word as u16).to_le()) };
            (at, word) = (at.wrapping_add(2), word >> 16);
        }
        if count & 1 != 0 {
            // SAFETY: the last of the `count` bytes, within them as above.
            unsafe { *at = word as i8 };
        }
    }
}

/// Compiles level `level` into a row program: per row, the run list of each
/// legal move and, for each capture its runs make, the global index in the
/// mirror layer where the child row starts. Built once for all the level's turns.
fn compile(plan: &RunPlan, level: &LevelRows, level_starts: &[usize]) -> RowProgram {
    let seeds = level.seeds;
    let mut program = RowProgram {
        row_starts: level.starts.clone(),
        row_moves: Vec::with_capacity(level.own.len() + 1),
        no_move: Vec::with_capacity(level.own.len()),
        moves: Vec::new(),
        bases: Vec::new(),
    };
    program.row_moves.push(0);
    for (&own, &other) in level.own.iter().zip(&level.other) {
        // Without a legal move the mover scores their own seeds.
        program.no_move.push((seeds - other as usize) as i8);
        for house in 0..SIDE {
            if own[house] == 0 {
                continue;
            }
            let sowing = plan.sowing(house, own[house]);
            let list = &plan.lists[sowing.pattern][other as usize];
            if list.illegal {
                continue;
            }
            let mut after = own;
            after[house] = 0;
            for (a, &s) in after.iter_mut().zip(&sowing.own) {
                *a += s;
            }
            program.moves.push(RowMove {
                list: list.id,
                first_base: program.bases.len() as u32,
            });
            let mut captures = list.captures;
            while captures != 0 {
                let child_seeds = seeds - captures.trailing_zeros() as usize;
                captures &= captures - 1;
                let row_start = plan.boards.prefix_rank(child_seeds, &after) as usize;
                let base = level_starts[child_seeds] + row_start;
                program
                    .bases
                    .push(u32::try_from(base).expect("32-bit board indices"));
            }
        }
        program.row_moves.push(program.moves.len() as u32);
    }
    program
}

/// Sets in `sweep` the program rows reading a mirror row set in `dirty`;
/// returns the boards they hold.
fn mark_rows_to_sweep(
    program: &RowProgram,
    base_rows: &[u32],
    dirty: &[u64],
    sweep: &mut [u64],
) -> usize {
    let is_dirty = |row: u32| dirty[row as usize / 64] & (1 << (row % 64)) != 0;
    // Pieces of 16 words (1,024 rows): a word alone is too little work to
    // hand out, a few big pieces too uneven.
    sweep
        .par_iter_mut()
        .with_min_len(16)
        .with_max_len(16)
        .enumerate()
        .map(|(word, bits)| {
            *bits = 0;
            let mut boards = 0;
            for row in word * 64..((word + 1) * 64).min(program.rows()) {
                let moves = program.move_range(row);
                let Some(first) = program.moves.get(moves.start).filter(|_| !moves.is_empty())
                else {
                    continue; // no moves: the same value every turn
                };
                let end = program
                    .moves
                    .get(moves.end)
                    .map_or(base_rows.len(), |m| m.first_base as usize);
                if base_rows[first.first_base as usize..end]
                    .iter()
                    .any(|&r| is_dirty(r))
                {
                    *bits |= 1 << (row % 64);
                    boards += (program.row_starts[row + 1] - program.row_starts[row]) as usize;
                }
            }
            boards
        })
        .sum()
}

/// `changes` (of the level `rows`, from global index `offset`) at their
/// mirror positions: found in parallel over the row ranges `ranges`, then,
/// if `ascending`, sorted by position ([`sort_by_position`]).
fn mirror_positions(
    rows: &LevelRows,
    offset: usize,
    ranges: &[Range<usize>],
    changes: &PackedChanges,
    ascending: bool,
) -> Vec<(u32, i8)> {
    let parts: Vec<Vec<(u32, i8)>> = ranges
        .par_iter()
        .with_max_len(1)
        .map(|range| {
            let (from, to) = (rows.starts[range.start], rows.starts[range.end]);
            let mut row = range.start;
            let mut moved = Vec::new();
            for (state, value) in changes.within(offset + from as usize, offset + to as usize) {
                let at = state as usize - offset;
                while rows.starts[row + 1] as usize <= at {
                    row += 1;
                }
                let column = at - rows.starts[row] as usize;
                let other = rows.other[row] as usize;
                let mirrored = offset
                    + rows.starts_by_sum[other][column] as usize
                    + rows.rank_in_sum[row] as usize;
                moved.push((mirrored as u32, value));
            }
            moved
        })
        .collect();
    let mut moved = parts.concat();
    if ascending {
        sort_by_position(&mut moved, offset as u32);
    }
    moved
}

/// Bits of a position sorted per pass of [`sort_by_position`].
const RADIX_BITS: u32 = 12;

/// Sorts `moved` (distinct positions from `first` on) by position: a
/// least-significant-digit radix sort, [`RADIX_BITS`] bits a pass, over
/// the bits of the positions' offsets from `first` (two passes up to 16
/// seeds). Measured on the 16-seed top level, a parallel comparison sort
/// took 5.7 ms of the 9.5 ms that 283,000 changes took to reach the mirror.
fn sort_by_position(moved: &mut Vec<(u32, i8)>, first: u32) {
    const DIGITS: usize = 1 << RADIX_BITS;
    let top = moved.iter().map(|&(at, _)| at - first).max().unwrap_or(0);
    let mut from = std::mem::take(moved);
    let mut to = vec![(0, 0); from.len()];
    let mut shift = 0;
    while shift < u32::BITS - top.leading_zeros() {
        let digit = |at: u32| ((at - first) >> shift) as usize % DIGITS;
        let mut next = vec![0usize; DIGITS];
        for &(at, _) in &from {
            next[digit(at)] += 1;
        }
        let mut sum = 0;
        for count in &mut next {
            (*count, sum) = (sum, sum + *count);
        }
        for &(at, value) in &from {
            let slot = &mut next[digit(at)];
            to[*slot] = (at, value);
            *slot += 1;
        }
        std::mem::swap(&mut from, &mut to);
        shift += RADIX_BITS;
    }
    *moved = from;
}

/// Changes (ascending, from scratch) packed in parallel pieces.
fn pack(changes: &[(u32, i8)]) -> PackedChanges {
    const PIECE: usize = 1 << 14;
    PackedChanges::concatenate(
        changes
            .par_chunks(PIECE)
            .map(|piece| {
                let mut packed = PackedChanges::default();
                for &(state, value) in piece {
                    packed.push(state, value);
                }
                packed
            })
            .collect(),
    )
}

/// Brings `layer` (a level's layer starting at global index `offset`) to
/// `new`, returning the changes, packed: in parallel chunks, each compared,
/// then copied, while in cache.
fn update(layer: &mut [i8], new: &[i8], offset: usize) -> PackedChanges {
    const CHUNK: usize = 1 << 16;
    let parts: Vec<PackedChanges> = layer
        .par_chunks_mut(CHUNK)
        .zip(new.par_chunks(CHUNK))
        .with_max_len(1)
        .enumerate()
        .map(|(i, (old, new))| {
            let mut changes = PackedChanges::with_room_for(old.len());
            changes.push_differences(offset + i * CHUNK, old, new);
            old.copy_from_slice(new);
            changes.fit();
            changes
        })
        .collect();
    PackedChanges::concatenate(parts)
}

/// Appends `changes` to turn `turn`'s list in `lists`.
fn record(lists: &mut Vec<PackedChanges>, turn: u32, changes: PackedChanges) {
    let at = turn as usize - 1;
    if lists.len() <= at {
        lists.resize(at + 1, PackedChanges::default());
    }
    lists[at].append(changes);
}

/// Adds `changes` (a level's, above those there) to turn `turn`'s lists of
/// mirror changes, as a list of its own.
fn record_mirrored(lists: &mut Vec<Vec<PackedChanges>>, turn: u32, changes: PackedChanges) {
    let at = turn as usize - 1;
    if lists.len() <= at {
        lists.resize(at + 1, Vec::new());
    }
    let first = changes.iter().next().map(|(state, _)| state);
    if let Some(first) = first {
        // Readers rely on the lists' states ascending, level after level.
        let previous = lists[at].last().map_or(0, PackedChanges::next_state);
        assert!(
            u64::from(first) >= previous,
            "mirror changes recorded level by level"
        );
        lists[at].push(changes);
    }
}

/// Solves levels one at a time by run sweeps.
pub struct RunSolver {
    plan: RunPlan,
    level_starts: Vec<usize>,
    turn_limit: u32,
    picker: KernelPicker,
    /// A pool of one thread, for levels too small to share out.
    single_thread: Option<rayon::ThreadPool>,
    layers: Layers,
}

/// The layer buffers of a level's solve, kept from level to level and made
/// once, for the largest level: each level reuses the memory the ones below
/// it touched. (Fresh memory costs a fault and a zeroing per page on first
/// touch; at 20 seeds the levels' layers would add up to 1.2 GB of it.)
#[derive(Default)]
struct Layers {
    values: Vec<i8>,
    previous: Vec<i8>,
    /// Every level up to the one being solved, mirrored.
    mirror: Vec<i8>,
    next_mirror: Vec<i8>,
}

impl Layers {
    /// Readies the buffers for level `level` of the levels from
    /// `level_starts`, sizing any it makes for the largest of them:
    /// `previous` and the mirror zeroed (layer 0); `next_mirror` only if
    /// `keep_mirror`, else let go (the top two levels: no level above reads
    /// their mirror changes).
    fn prepare(&mut self, level_starts: &[usize], level: usize, keep_mirror: bool) {
        let (offset, states) = (
            level_starts[level],
            level_starts[level + 1] - level_starts[level],
        );
        let most_states = || {
            level_starts
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0)
        };
        if self.values.len() < states {
            self.values = zeroed_layer(most_states());
            self.previous = zeroed_layer(most_states());
        }
        if !keep_mirror {
            self.next_mirror = Vec::new();
        } else if self.next_mirror.len() < states {
            self.next_mirror = zeroed_layer(most_states());
        }
        if self.mirror.len() < offset + states {
            self.mirror = zeroed_layer(*level_starts.last().unwrap_or(&0));
        }
        const PIECE: usize = 1 << 20;
        let zero = |layer: &mut [i8]| layer.par_chunks_mut(PIECE).for_each(|piece| piece.fill(0));
        zero(&mut self.previous[..states]);
        zero(&mut self.mirror[..offset + states]);
    }
}

/// Levels with fewer boards are solved on one thread. A turn's parallel
/// steps cost their sharing out and, between turns, the other workers'
/// waiting (`engine::awake`); below this they cost more than a second core gains.
/// Measured at 9 seeds, alternating runs (medians of 31): 0.068 s with
/// levels under 100,000 boards on one thread (levels 0..=8), 0.063 with
/// 10,000 (levels 6, 7 and 8 shared out: 12,376, 31,824 and 75,582
/// boards), 0.062-0.063 with 2,000 or 30,000.
pub const SMALL_LEVEL: usize = 10_000;

impl RunSolver {
    /// A solver for boards of up to `max_seeds` seeds and `1..=turn_limit`
    /// turns left, sweeping with `kernel`.
    pub fn new(max_seeds: u32, turn_limit: u32, kernel: KernelChoice) -> RunSolver {
        RunSolver {
            plan: RunPlan::new(max_seeds),
            level_starts: BoardIndex::new(max_seeds).level_starts().to_vec(),
            turn_limit,
            picker: KernelPicker::new(kernel),
            single_thread: None,
            layers: Layers::default(),
        }
    }

    /// Bytes held by the precomputed runs.
    pub fn heap_bytes(&self) -> usize {
        self.plan.heap_bytes()
    }

    /// The run lists every level's row program refers to.
    pub fn run_lists(&self) -> &RunLists {
        &self.plan.run_lists
    }

    /// Level `seeds` compiled into a row program (what each of its turns sweeps).
    pub fn compile_level(&self, seeds: u32) -> RowProgram {
        compile(&self.plan, &LevelRows::new(seeds), &self.level_starts)
    }

    /// Solves level `seeds` on top of `solved` (every level below it, with
    /// the mirror changes of those it reads: all but the one just below,
    /// since a capture takes two seeds or more).
    ///
    /// Records the level's mirror changes too when a level above the next
    /// is still to come (up to the solver's `max_seeds`): the next level
    /// reads none of its boards. The top level frees the lower levels'
    /// mirror changes as it applies them (none are held after it) and lets
    /// the layer buffers kept from level to level go (a level after it
    /// would have to make them anew, and could not start before
    /// `derive_mirror` gave every level's mirror changes again).
    pub fn solve_level(
        &mut self,
        seeds: u32,
        solved: Solution,
        observer: impl FnMut(&TurnReport),
    ) -> Solution {
        let max_seeds = self.plan.max_seeds as u32;
        assert!(
            seeds <= max_seeds,
            "the solver's plan covers {max_seeds} seeds"
        );
        let above = Above::of(seeds, max_seeds);
        let states = self.level_starts[seeds as usize + 1] - self.level_starts[seeds as usize];
        let small = states < SMALL_LEVEL && rayon::current_num_threads() > 1;
        let (plan, level_starts, turn_limit) = (&self.plan, &self.level_starts, self.turn_limit);
        // Each level times the kernels again on its own layers.
        self.picker.retime(states);
        let picker = &mut self.picker;
        let layers = &mut self.layers;
        let solve = |observer: &mut dyn FnMut(&TurnReport)| {
            layers.prepare(level_starts, seeds as usize, above == Above::Reads);
            solve_level(
                plan,
                seeds,
                level_starts,
                solved,
                turn_limit,
                above,
                picker,
                SPARSITY,
                layers,
                observer,
            )
        };
        let mut observer = observer;
        let mut solution = if small {
            // Too little work per turn to share: on one thread, the turns'
            // parallel steps run inline instead of waking the others (the
            // reports reach the observer after the level).
            let single = self.single_thread.get_or_insert_with(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .expect("a one-thread pool")
            });
            let mut reports = Vec::new();
            let solution = single.install(|| solve(&mut |report| reports.push(*report)));
            reports.iter().for_each(&mut observer);
            solution
        } else {
            solve(&mut observer)
        };
        if above == Above::Nothing {
            // Nothing is solved after the top level: its layers need not
            // outlive it (the book is encoded next, at the run's peak).
            self.layers = Layers::default();
        }
        (solution.kernel, solution.kernel_trials) = self
            .picker
            .outcome(solution.kernel, &solution.kernel_trials);
        solution
    }
}

/// The mirror rows of every level up to the one being solved, in index order.
struct MirrorRows {
    /// Global index of each row's first position; one extra entry.
    starts: Vec<usize>,
}

impl MirrorRows {
    fn new(levels: &[LevelRows], level_starts: &[usize]) -> MirrorRows {
        let mut starts = Vec::new();
        for (level, rows) in levels.iter().enumerate() {
            let first = level_starts[level];
            starts.extend(
                rows.starts[..rows.own.len()]
                    .iter()
                    .map(|&s| first + s as usize),
            );
        }
        starts.push(level_starts[levels.len()]);
        MirrorRows { starts }
    }

    fn rows(&self) -> usize {
        self.starts.len() - 1
    }

    /// The row holding global position `position`.
    fn row_of(&self, position: usize) -> usize {
        self.starts.partition_point(|&start| start <= position) - 1
    }

    /// The row and column of each of `positions` (ascending), walking the
    /// rows from the first one's.
    fn cells<'a, P>(&'a self, positions: P) -> impl Iterator<Item = (usize, usize)> + 'a
    where
        P: IntoIterator<Item = u32>,
        P::IntoIter: 'a,
    {
        let mut row = None;
        positions.into_iter().map(move |position| {
            let position = position as usize;
            let mut at = *row.get_or_insert_with(|| self.row_of(position));
            while self.starts[at + 1] <= position {
                at += 1;
            }
            row = Some(at);
            (at, position - self.starts[at])
        })
    }

    /// Marks in `dirty` the rows holding `positions` (ascending).
    fn mark(&self, positions: impl IntoIterator<Item = u32>, dirty: &mut [u64]) {
        for (row, _) in self.cells(positions) {
            dirty[row / 64] |= 1 << (row % 64);
        }
    }
}

/// When to sweep less than the whole level: once a turn changes fewer than
/// `rows` times the level's boards (its own changes and those of the
/// mirror rows below), the next turn sweeps only the rows that read a
/// changed mirror row, and a turn's changes reach the mirror layer one by
/// one instead of by a whole transpose; under `boards` times, the next
/// turn recomputes only the boards that read one ([`frontier`]). Once a
/// turn on changed rows still sweeps more than `rows_swept` times the
/// level's boards, the level's later turns sweep every row again until
/// they may recompute boards alone (marking rows then costs more than it
/// saves). Every choice gives the same layers.
#[derive(Clone, Copy, Debug)]
struct Sparsity {
    rows: f64,
    boards: f64,
    rows_swept: f64,
}

/// The thresholds measured best: at 16 seeds, a turn's changes under 2%
/// of the level make sweeping whole rows cost more than marking the rows
/// to sweep; under 0.4%, following each change back to its boards costs
/// less than sweeping the rows that read it. But changes spread: at 16
/// seeds the turns on changed rows swept over 99% of the top level and
/// took 1-3 ms more than whole sweeps (12 seeds: 81-97%), so they stop
/// once one sweeps 90%.
const SPARSITY: Sparsity = Sparsity {
    rows: 0.02,
    boards: 0.004,
    rows_swept: 0.9,
};

/// Which levels above a level read what its solve leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Above {
    /// A level two seeds or more above it: its mirror changes are recorded.
    Reads,
    /// Only the next level, which reads none of its boards (a capture takes
    /// two seeds or more).
    Next,
    /// None: the top level. It is the last to read the lower levels' mirror
    /// changes, so each turn's are freed once applied, and its own memory
    /// goes to the lists it makes (at 20 seeds, about 2.2 GB that were
    /// held to the end).
    Nothing,
}

impl Above {
    /// For level `seeds` of a solve up to `max_seeds`.
    fn of(seeds: u32, max_seeds: u32) -> Above {
        match max_seeds - seeds {
            0 => Above::Nothing,
            1 => Above::Next,
            _ => Above::Reads,
        }
    }
}

/// How a turn is swept (see [`Sparsity`]).
enum TurnMode {
    /// Every row.
    Dense,
    /// The rows reading a mirror row marked in `dirty_mirror`.
    ChangedRows,
    /// The boards reading one of these mirror positions (ascending).
    ChangedBoards(Vec<u32>),
}

#[allow(clippy::too_many_arguments)] // the solver's fields, borrowed apart
fn solve_level(
    plan: &RunPlan,
    seeds: u32,
    level_starts: &[usize],
    solved: Solution,
    turn_limit: u32,
    above: Above,
    picker: &mut KernelPicker,
    sparsity: Sparsity,
    layers: &mut Layers,
    mut observer: impl FnMut(&TurnReport),
) -> Solution {
    let level = seeds as usize;
    let keep_mirror = above == Above::Reads;
    assert_eq!(solved.levels.len(), level, "levels below are solved");
    assert!(
        solved.mirrored_levels + 1 >= level,
        "with the mirror changes of the levels it reads (all but the one just below)"
    );
    let start = Instant::now();
    let levels: Vec<LevelRows> = (0..=seeds).into_par_iter().map(LevelRows::new).collect();
    let rows = &levels[level];
    let offset = level_starts[level];
    let states = rows.states();
    assert_eq!(level_starts[level + 1] - offset, states);
    let program = compile(plan, rows, level_starts);
    // Which mirror rows each program row reads, for sparse turns.
    let mirror_rows = MirrorRows::new(&levels, level_starts);
    let base_rows: Vec<u32> = program
        .bases
        .par_iter()
        .map(|&base| mirror_rows.row_of(base as usize) as u32)
        .collect();
    let mut dirty_mirror = vec![0u64; mirror_rows.rows().div_ceil(64)];
    let mut sweep_rows = vec![0u64; program.rows().div_ceil(64)];
    // Which boards read each mirror position, for frontier turns.
    let readers = Readers::new(&program, &plan.columns, &base_rows, mirror_rows.rows());
    let frontier = Frontier::new(&program, &plan.columns, &readers, &mirror_rows, offset);
    let mut mode = TurnMode::Dense;
    // Until a turn on changed rows sweeps nearly all of them.
    let mut rows_pay = true;

    let mut solution = solved;
    let mut values = &mut layers.values[..states];
    let mut previous = &mut layers.previous[..states];
    // Layer `turn - 1` mirrored, every level up to this one.
    let mirror = &mut layers.mirror[..offset + states];
    let next_mirror = &mut layers.next_mirror[..if keep_mirror { states } else { 0 }];
    let ranges = program.row_ranges(SWEEP_CHUNK_STATES);
    let mut last_change = 1;
    let mut turns = 0;
    // Turns of a few parallel steps each, a few hundred microseconds
    // apiece: the other workers wait for them awake instead of being woken
    // for each.
    let awake = Awake::start();
    for turn in 1..=turn_limit {
        awake.rearm();
        let mut swept_states = states;
        if !matches!(mode, TurnMode::Dense) {
            // Boards left alone keep layer `turn - 1`: bring `values` there
            // from `turn - 2`.
            solution.changes[turn as usize - 2].write_to(values, offset);
        }
        if let TurnMode::ChangedRows = mode {
            swept_states = mark_rows_to_sweep(&program, &base_rows, &dirty_mirror, &mut sweep_rows);
        }
        let changes = if let TurnMode::ChangedBoards(changed) = &mode {
            let (changes, recomputed) = frontier.sweep(changed, mirror, previous, values);
            swept_states = recomputed;
            changes
        } else {
            let mut parts = Vec::with_capacity(ranges.len());
            let mut rest = &mut values[..];
            for range in &ranges {
                let len = (rows.starts[range.end] - rows.starts[range.start]) as usize;
                let (part, tail) = rest.split_at_mut(len);
                parts.push((range.clone(), part));
                rest = tail;
            }
            let sweep = RowSweep {
                lists: &plan.run_lists,
                program: &program,
                mirror,
                first_state: offset,
                only: matches!(mode, TurnMode::ChangedRows).then_some(&sweep_rows[..]),
            };
            let previous = &previous[..];
            // Only dense turns time the kernels: their parts sweep every row.
            let kernels = match mode {
                TurnMode::Dense => picker.turn(turn),
                _ => picker.kept(),
            };
            let changes = PackedChanges::concatenate(
                parts
                    .into_par_iter()
                    .enumerate()
                    .with_max_len(1)
                    .map(|(part, (range, out))| {
                        let from = rows.starts[range.start] as usize;
                        let previous = &previous[from..from + out.len()];
                        kernels.run(part, out.len(), |kernel| {
                            kernel.sweep_rows(&sweep, range, previous, out)
                        })
                    })
                    .collect(),
            );
            picker.settle(kernels, swept_states);
            changes
        };
        // (The mirror changes: the levels below may have dropped their others.)
        let lower = solution
            .mirrored
            .get(turn as usize - 1)
            .map_or(&[][..], Vec::as_slice);
        let lower_changes: usize = lower.iter().map(PackedChanges::len).sum();
        // The lower levels' mirror from layer `turn - 1` to `turn`.
        for changes in lower {
            changes.write_to(mirror, 0);
        }
        let quiet = turn > 1 && changes.is_empty();
        if turn > 1 && !changes.is_empty() {
            last_change = turn;
        }
        // A quiet turn ends the level only if the levels it reads were quiet
        // too: their changes reach it a turn later. (In none of the books
        // the tests generate, up to 16 seeds, is a level quiet while those
        // it reads change, so no test tells the two conditions apart.)
        let converged = quiet && lower_changes == 0;
        // This level's mirror from `turn - 1` to `turn`: change by change
        // when few changed, else by a whole transpose.
        let changed = (changes.len() + lower_changes) as f64;
        let few = changed < sparsity.rows * states as f64;
        let very_few = few && turn > 1 && changed < sparsity.boards * states as f64;
        if matches!(mode, TurnMode::ChangedRows)
            && swept_states as f64 > sparsity.rows_swept * states as f64
        {
            rows_pay = false;
        }
        // Whether the next turn sweeps only what reads a changed mirror
        // position (else it sweeps every row).
        let sparse_next = few && turn > 1 && (very_few || rows_pay);
        let mut moved = Vec::new();
        if few {
            // Sorted only for what reads them in order: the mirror change
            // list and the next turn's marking.
            let ascending = keep_mirror || sparse_next;
            moved = mirror_positions(rows, offset, &ranges, &changes, ascending);
            for &(at, value) in &moved {
                mirror[at as usize] = value;
            }
            if keep_mirror {
                record_mirrored(&mut solution.mirrored, turn, pack(&moved));
            }
        } else if keep_mirror {
            rows.transpose(values, next_mirror);
            let mirrored = update(&mut mirror[offset..], next_mirror, offset);
            record_mirrored(&mut solution.mirrored, turn, mirrored);
        } else if !converged && turn < turn_limit {
            rows.transpose(values, &mut mirror[offset..]);
        }
        // The next turn sweeps less when few changed: note which mirror
        // positions or rows did.
        mode = {
            let lower = solution
                .mirrored
                .get(turn as usize - 1)
                .into_iter()
                .flatten()
                .flat_map(|c| c.within(0, offset))
                .map(|(state, _)| state);
            if !sparse_next {
                TurnMode::Dense
            } else if very_few {
                let here = moved.iter().map(|&(at, _)| at);
                TurnMode::ChangedBoards(lower.chain(here).collect())
            } else {
                dirty_mirror.fill(0);
                let here = moved.iter().map(|&(at, _)| at);
                mirror_rows.mark(lower.chain(here), &mut dirty_mirror);
                TurnMode::ChangedRows
            }
        };
        observer(&TurnReport {
            turn,
            turn_limit,
            frontier: swept_states < states,
            swept_states,
            changed_states: changes.len() as u64,
            closed_levels: if converged { level + 1 } else { level },
            elapsed: start.elapsed(),
        });
        record(&mut solution.changes, turn, changes);
        if above == Above::Nothing {
            // No level reads this turn's lower mirror changes again.
            if let Some(lists) = solution.mirrored.get_mut(turn as usize - 1) {
                std::mem::take(lists).into_par_iter().for_each(drop);
            }
        }
        std::mem::swap(&mut previous, &mut values);
        turns = turn;
        solution.state_updates += swept_states as u64;
        if swept_states < states {
            solution.frontier_turns += 1;
        }
        if converged {
            break;
        }
    }
    drop(awake);
    let elapsed = start.elapsed();
    // Trailing turns that changed nothing anywhere are not kept.
    let last = solution
        .levels
        .iter()
        .map(|l| l.last_change)
        .chain([last_change])
        .max()
        .unwrap_or(1);
    solution.changes.truncate(last as usize);
    solution.mirrored.truncate(last as usize);
    solution.levels.push(LevelSolution {
        states,
        last_change,
        closed_after: solution.elapsed + elapsed,
        kernel: Some(picker.chosen()),
        threads: rayon::current_num_threads(),
    });
    solution.level_starts.push(level_starts[level + 1]);
    if keep_mirror {
        solution.mirrored_levels = level + 1;
    }
    if above == Above::Nothing {
        // Those of the turns after its last (if it converged) too: no
        // level's mirror changes are held any more.
        solution.mirrored = Vec::new();
        solution.mirrored_levels = 0;
    }
    solution.turns_swept = solution.turns_swept.max(turns);
    solution.elapsed += elapsed;
    solution
}

/// Derives the mirror changes of the solved levels that lack them, by
/// replaying each level's layers and transposing them.
pub fn derive_mirror(solution: &mut Solution) {
    assert!(
        solution.forgotten_levels <= solution.mirrored_levels,
        "the changes to mirror were dropped"
    );
    for level in solution.mirrored_levels..solution.levels.len() {
        let rows = LevelRows::new(level as u32);
        let (start, end) = (
            solution.level_starts[level],
            solution.level_starts[level + 1],
        );
        let mut values = zeroed_layer(end - start);
        let mut mirror = zeroed_layer(end - start);
        let mut next_mirror = zeroed_layer(end - start);
        for turn in 1..=solution.levels[level].last_change {
            solution.changes[turn as usize - 1].write_to(&mut values, start);
            rows.transpose(&values, &mut next_mirror);
            let mirrored = update(&mut mirror, &next_mirror, start);
            record_mirrored(&mut solution.mirrored, turn, mirrored);
        }
        solution.mirrored_levels = level + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_orders_positions() {
        let mut random = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        // Offsets of one digit, two and three (with empty digits between),
        // from a first position of 0 and above.
        for (first, span, len) in [
            (0u32, 1u32 << 10, 700),
            (5_000_000, 1 << 24, 50_000),
            (90_000_000, 1 << 27, 20_000),
            (7, 1, 1),
            (7, 1, 0),
        ] {
            let mut positions: Vec<u32> =
                (0..len).map(|_| first + random() as u32 % span).collect();
            positions.sort_unstable();
            positions.dedup();
            // Shuffled, each with a value of its own.
            let mut moved: Vec<(u32, i8)> = positions.iter().map(|&at| (at, at as i8)).collect();
            for i in (1..moved.len()).rev() {
                moved.swap(i, random() as usize % (i + 1));
            }
            sort_by_position(&mut moved, first);
            let expected: Vec<(u32, i8)> = positions.iter().map(|&at| (at, at as i8)).collect();
            assert_eq!(moved, expected, "first {first}, span {span}");
        }
    }

    #[test]
    fn blocks_of_8_by_8_bytes_transpose() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100 {
            let mut rows = [0u64; 8];
            for row in &mut rows {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *row = seed;
            }
            let byte = |rows: &[u64; 8], r: usize, c: usize| (rows[r] >> (8 * c)) as u8;
            let mut transposed = rows;
            transpose_8x8(&mut transposed);
            for r in 0..8 {
                for c in 0..8 {
                    assert_eq!(byte(&transposed, c, r), byte(&rows, r, c), "({r}, {c})");
                }
            }
        }
    }
    use crate::games::oware::BoardIndex;

    /// Every level up to `max_seeds` solved with `sparsity`: each turn's
    /// changes, and the boards recomputed over all turns. With `reuse`, one
    /// set of layer buffers serves every level, as in the solver; else each
    /// level gets fresh ones.
    fn changes_with(
        max_seeds: u32,
        sparsity: Sparsity,
        reuse: bool,
    ) -> (Vec<PackedChanges>, u32, usize) {
        let plan = RunPlan::new(max_seeds);
        let level_starts = BoardIndex::new(max_seeds).level_starts().to_vec();
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        let mut solution = Solution::empty();
        let (mut frontier_turns, mut swept) = (0, 0);
        let mut layers = Layers::default();
        for seeds in 0..=max_seeds {
            if !reuse {
                layers = Layers::default();
            }
            // As in the solver: the top two levels' mirror changes are not
            // kept (no level reads the one just below it), and the top
            // level frees the others' as it goes.
            let above = Above::of(seeds, max_seeds);
            layers.prepare(&level_starts, seeds as usize, above == Above::Reads);
            solution = solve_level(
                &plan,
                seeds,
                &level_starts,
                solution,
                200,
                above,
                &mut picker,
                sparsity,
                &mut layers,
                |report| {
                    frontier_turns += u32::from(report.frontier);
                    swept += report.swept_states;
                },
            );
        }
        (solution.changes, frontier_turns, swept)
    }

    #[test]
    fn mirror_changes_are_kept_while_a_level_above_reads_them() {
        let max_seeds = 8;
        let mut solver = RunSolver::new(max_seeds, 200, KernelChoice::Auto);
        let mut solution = Solution::empty();
        for seeds in 0..=max_seeds {
            solution = solver.solve_level(seeds, solution, |_| ());
            // The top level frees them all.
            let mirrored = if seeds < max_seeds {
                (seeds + 1).min(max_seeds - 1) as usize
            } else {
                0
            };
            assert_eq!(solution.mirrored_levels, mirrored, "after level {seeds}");
            let end = solution.level_starts[mirrored];
            for lists in &solution.mirrored {
                assert!(lists.iter().all(|list| list.next_state() <= end as u64));
            }
        }
        // Level 7 changes, so its changes would have been recorded.
        assert!(solution.levels[7].last_change > 1);
        // The same layers as with every level's mirror changes recorded: a
        // solver planned for two seeds more, stopped at the same level.
        let mut wider = RunSolver::new(max_seeds + 2, 200, KernelChoice::Auto);
        let mut all = Solution::empty();
        for seeds in 0..=max_seeds {
            all = wider.solve_level(seeds, all, |_| ());
        }
        assert_eq!(all.mirrored_levels, max_seeds as usize + 1);
        assert!(solution.changes == all.changes);
    }

    #[test]
    fn every_turn_mode_gives_the_same_layers() {
        // Dense throughout; as measured best; rows reading a change from the
        // second turn on; the same until a turn sweeps over a tenth of the
        // level, then whole rows; boards reading one from the second turn on.
        let sparsity = |rows, boards, rows_swept| Sparsity {
            rows,
            boards,
            rows_swept,
        };
        let modes = [
            sparsity(0.0, 0.0, f64::INFINITY),
            SPARSITY,
            sparsity(f64::INFINITY, 0.0, f64::INFINITY),
            sparsity(f64::INFINITY, 0.0, 0.1),
            sparsity(f64::INFINITY, f64::INFINITY, f64::INFINITY),
        ];
        let [dense, measured, rows, rows_then_dense, boards] =
            modes.map(|sparsity| changes_with(9, sparsity, true));
        assert_eq!(dense.1, 0);
        assert!(
            rows_then_dense.1 < rows.1,
            "turns on changed rows stop once they sweep a tenth of the level"
        );
        // Layer buffers reused from level to level hold nothing over.
        let fresh = changes_with(9, sparsity(0.0, 0.0, f64::INFINITY), false);
        assert!(fresh.0 == dense.0, "reused layers: other changes");
        // Boards reading a changed position lie in rows reading a changed
        // row: fewer, so a turn on changed boards is not one on rows.
        assert!(
            boards.2 < rows.2,
            "boards {} against rows {}: no turn on changed boards",
            boards.2,
            rows.2
        );
        for (name, (changes, frontier_turns, _)) in [
            ("measured", measured),
            ("rows", rows),
            ("rows, then whole", rows_then_dense),
            ("boards", boards),
        ] {
            assert!(frontier_turns > 0, "{name}: no turn swept less");
            assert!(changes == dense.0, "{name}: other changes");
        }
    }

    #[test]
    fn rows_are_the_boards_in_index_order() {
        for seeds in 0..=7 {
            let rows = LevelRows::new(seeds);
            let index = BoardIndex::new(seeds);
            let first = index.level_starts()[seeds as usize];
            assert_eq!(rows.states(), BoardIndex::level_size(seeds));
            for (board, at) in index.boards_from(first).zip(0..) {
                let (board, _) = board;
                let own: [u8; SIDE] = board.houses()[..SIDE].try_into().unwrap();
                let row = rows.own.iter().position(|&o| o == own).unwrap();
                let column = at - rows.starts[row] as usize;
                assert!(at >= rows.starts[row] as usize && at < rows.starts[row + 1] as usize);
                let sides = CompositionIndex::<SIDE>::new(seeds as usize);
                let other: [u8; SIDE] = board.houses()[SIDE..].try_into().unwrap();
                assert_eq!(column as u64, sides.rank(&other), "{board}");
            }
        }
    }

    /// The largest level a book holds is counted right in 32 bits; one
    /// beyond is refused (at 32 seeds and more the row starts had wrapped,
    /// and a transpose wrote past its layer).
    #[test]
    fn rows_are_counted_up_to_the_largest_level_and_refused_beyond() {
        let rows = LevelRows::new(MAX_BOOK_SEEDS);
        assert_eq!(rows.states(), BoardIndex::level_size(MAX_BOOK_SEEDS));
        let beyond = std::panic::catch_unwind(|| LevelRows::new(MAX_BOOK_SEEDS + 1));
        assert!(beyond.is_err());
    }

    #[test]
    fn transpose_puts_each_value_at_the_flipped_board() {
        for seeds in 0..=12 {
            let rows = LevelRows::new(seeds);
            let index = BoardIndex::new(seeds);
            let first = index.level_starts()[seeds as usize];
            let values: Vec<i8> = (0..rows.states()).map(|i| (i * 31 % 251) as i8).collect();
            let mut mirror = vec![0i8; rows.states()];
            rows.transpose(&values, &mut mirror);
            for (board, at) in index.boards_from(first).zip(0..).take(rows.states()) {
                let flipped = index.index(&board.0.flipped()) - first;
                assert_eq!(mirror[flipped], values[at], "{}", board.0);
            }
            let mut back = vec![0i8; rows.states()];
            rows.transpose(&mirror, &mut back);
            assert_eq!(back, values);
        }
    }

    #[test]
    fn runs_cover_every_side_once() {
        let plan = RunPlan::new(12);
        for lists in &plan.lists {
            for (m, list) in lists.iter().enumerate() {
                let columns = CompositionIndex::<SIDE>::count(m) as u32;
                let mut runs = plan.run_lists.runs(list.id).to_vec();
                runs.extend(plan.run_lists.short_columns(list.id));
                if list.illegal {
                    assert!(m == 0 && runs.is_empty());
                    continue;
                }
                runs.sort_by_key(|run| run.src);
                let mut next = 0;
                for run in &runs {
                    assert_eq!(run.src, next, "runs are consecutive");
                    next += run.len;
                }
                assert_eq!(next, columns);
            }
        }
    }
}
