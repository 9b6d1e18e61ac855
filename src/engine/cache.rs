//! The child cache: every state's moves, precomputed once and laid out for the kernels.
//!
//! States are grouped in blocks of [`LANES`] consecutive indices. Inside a block
//! the cache is move-major: row `k` holds the `k`-th move of each of the block's
//! states, so one AVX2 load fetches the eight child indices a gather needs and
//! the scalar kernel walks the same bytes in order. States with fewer than
//! `MOVES` moves are padded with [`PAD_CAPTURE`] moves to child 0, which can
//! never win the maximum while values stay within [`VALUE_BOUND`].

use rayon::prelude::*;
use std::ops::Range;

/// States per cache block: one AVX2 register of 32-bit lanes.
pub const LANES: usize = 8;

/// Largest magnitude a value may have. A padded move scores at most
/// `PAD_CAPTURE + VALUE_BOUND < -VALUE_BOUND`, so it never beats a real move
/// or a no-move score.
pub const VALUE_BOUND: i8 = 63;

/// Whether `value` lies within ±[`VALUE_BOUND`].
#[inline(always)]
pub(crate) fn within_bound(value: i8) -> bool {
    value.unsigned_abs() <= VALUE_BOUND as u8
}

/// Capture stored in padding slots.
pub const PAD_CAPTURE: i8 = i8::MIN;

/// `base` of a state that has moves: the maximum comes from the moves alone.
pub const HAS_MOVES: i8 = i8::MIN;

/// States per parallel work item when building the cache: large enough to
/// amortise one unrank, small enough to balance the threads.
const BUILD_CHUNK_STATES: usize = 1 << 14;

/// The moves of states `first_state..states` as (child index, capture) pairs
/// plus a base score.
///
/// A cache may start past state 0 (at a block boundary) when the states
/// below are solved already: their values are read, never recomputed. Block
/// numbers are global either way. Every child index is below the state count:
/// [`Emitter::push`] checks it, and the SIMD kernels rely on it.
///
/// A layer update is `v[s] = max(base[s], max_k(capture[s,k] - prev[child[s,k]]))`,
/// where `base[s]` is the score of a state without moves and [`HAS_MOVES`] otherwise.
pub struct MoveCache<const MOVES: usize> {
    states: usize,
    first_block: usize,
    children: Vec<u32>,
    captures: Vec<i8>,
    base: Vec<i8>,
}

/// Receives the states of one build chunk, in index order.
pub struct Emitter<'a, const MOVES: usize> {
    children: &'a mut [u32],
    captures: &'a mut [i8],
    base: &'a mut [i8],
    next: usize,
    states: usize,
}

impl<const MOVES: usize> Emitter<'_, MOVES> {
    /// Records the next state: its moves as (child index, capture), and the
    /// score it gets when `moves` is empty.
    ///
    /// # Panics
    ///
    /// With more than `MOVES` moves, a child index not below the cache's
    /// state count, or a capture or no-move score beyond ±[`VALUE_BOUND`]
    /// (past it, the kernels' results would differ: the SIMD ones saturate
    /// where the plain ones wrap).
    #[inline]
    pub fn push(&mut self, moves: &[(u32, i8)], no_move_score: i8) {
        assert!(moves.len() <= MOVES, "more than {MOVES} moves");
        assert!(
            within_bound(no_move_score),
            "no-move score {no_move_score} beyond the value bound"
        );
        let (block, lane) = (self.next / LANES, self.next % LANES);
        let row = block * MOVES * LANES + lane;
        for k in 0..MOVES {
            let (child, capture) = moves.get(k).copied().unwrap_or((0, PAD_CAPTURE));
            // Kernels read `prev[child]` unchecked: this bound is what makes that sound.
            assert!((child as usize) < self.states, "child index out of range");
            assert!(
                k >= moves.len() || within_bound(capture),
                "capture {capture} beyond the value bound"
            );
            self.children[row + k * LANES] = child;
            self.captures[row + k * LANES] = capture;
        }
        self.base[self.next] = if moves.is_empty() {
            no_move_score
        } else {
            HAS_MOVES
        };
        self.next += 1;
    }
}

impl<const MOVES: usize> MoveCache<MOVES> {
    /// Builds the cache for `states` states in parallel. `describe(range, emitter)`
    /// must push every state of `range` in order.
    pub fn build<F>(states: usize, describe: F) -> Self
    where
        F: Fn(Range<usize>, &mut Emitter<'_, MOVES>) + Sync,
    {
        Self::build_from(0, states, describe)
    }

    /// Builds the cache for states `first_state..states` (`first_state` a
    /// multiple of [`LANES`]); children may be any state below `states`.
    pub fn build_from<F>(first_state: usize, states: usize, describe: F) -> Self
    where
        F: Fn(Range<usize>, &mut Emitter<'_, MOVES>) + Sync,
    {
        assert!(states <= u32::MAX as usize, "child indices are 32-bit");
        assert!(first_state.is_multiple_of(LANES) && first_state <= states);
        let first_block = first_state / LANES;
        let blocks = states.div_ceil(LANES) - first_block;
        let padded = blocks * LANES;
        let mut children = vec![0u32; padded * MOVES];
        let mut captures = vec![PAD_CAPTURE; padded * MOVES];
        // Padding states beyond `states` have no moves and score 0.
        let mut base = vec![0i8; padded];
        let chunk = BUILD_CHUNK_STATES;
        children
            .par_chunks_mut(chunk * MOVES)
            .zip(captures.par_chunks_mut(chunk * MOVES))
            .zip(base.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(i, ((children, captures), base))| {
                let start = first_state + i * chunk;
                let end = (start + chunk).min(states);
                let mut emitter = Emitter {
                    children,
                    captures,
                    base,
                    next: 0,
                    states,
                };
                describe(start..end, &mut emitter);
                assert_eq!(emitter.next, end - start, "describe must push every state");
            });
        MoveCache {
            states,
            first_block,
            children,
            captures,
            base,
        }
    }

    /// Number of states (without the padding of the last block).
    pub fn states(&self) -> usize {
        self.states
    }

    /// Number of blocks of [`LANES`] states, counted from state 0: the blocks
    /// held are `first_block()..blocks()`.
    pub fn blocks(&self) -> usize {
        self.first_block + self.base.len() / LANES
    }

    /// The first block held.
    pub fn first_block(&self) -> usize {
        self.first_block
    }

    /// Child indices of block `block`, move-major.
    #[inline(always)]
    pub fn block_children(&self, block: usize) -> &[u32] {
        let block = block - self.first_block;
        &self.children[block * MOVES * LANES..(block + 1) * MOVES * LANES]
    }

    /// Captures of block `block`, move-major.
    #[inline(always)]
    pub fn block_captures(&self, block: usize) -> &[i8] {
        let block = block - self.first_block;
        &self.captures[block * MOVES * LANES..(block + 1) * MOVES * LANES]
    }

    /// Base scores of block `block`.
    #[inline(always)]
    pub fn block_base(&self, block: usize) -> &[i8] {
        let block = block - self.first_block;
        &self.base[block * LANES..(block + 1) * LANES]
    }

    /// The moves of state `state` (a state the cache holds) as (child index,
    /// capture), padding left out.
    pub fn moves(&self, state: usize) -> impl Iterator<Item = (u32, i8)> + '_ {
        let (block, lane) = (state / LANES - self.first_block, state % LANES);
        (0..MOVES)
            .map(move |k| {
                let i = (block * MOVES + k) * LANES + lane;
                (self.children[i], self.captures[i])
            })
            .take_while(|&(_, capture)| capture != PAD_CAPTURE)
    }

    /// Memory held by the cache, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.children.len() * 4 + self.captures.len() + self.base.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache of 16 states whose state 5 has `moves` and `no_move_score`,
    /// the others no move.
    fn build_with(moves: &[(u32, i8)], no_move_score: i8) -> MoveCache<2> {
        MoveCache::<2>::build(16, |states, emitter| {
            for state in states {
                match state {
                    5 => emitter.push(moves, no_move_score),
                    _ => emitter.push(&[], 0),
                }
            }
        })
    }

    #[test]
    fn pushes_within_the_bound_are_kept() {
        let cache = build_with(&[(3, VALUE_BOUND), (15, -VALUE_BOUND)], 0);
        let moves: Vec<_> = cache.moves(5).collect();
        assert_eq!(moves, [(3, VALUE_BOUND), (15, -VALUE_BOUND)]);
        let cache = build_with(&[], -VALUE_BOUND);
        assert_eq!(cache.block_base(0)[5], -VALUE_BOUND);
        assert_eq!(cache.moves(5).count(), 0);
    }

    #[test]
    #[should_panic(expected = "capture 64 beyond the value bound")]
    fn a_capture_beyond_the_bound_is_refused() {
        build_with(&[(3, 1), (4, VALUE_BOUND + 1)], 0);
    }

    #[test]
    #[should_panic(expected = "capture -128 beyond the value bound")]
    fn the_padding_capture_is_refused() {
        build_with(&[(3, PAD_CAPTURE)], 0);
    }

    #[test]
    #[should_panic(expected = "no-move score -64 beyond the value bound")]
    fn a_no_move_score_beyond_the_bound_is_refused() {
        build_with(&[], -VALUE_BOUND - 1);
    }

    #[test]
    #[should_panic(expected = "more than 2 moves")]
    fn more_moves_than_the_cache_holds_are_refused() {
        build_with(&[(1, 0), (2, 0), (3, 0)], 0);
    }

    #[test]
    #[should_panic(expected = "child index out of range")]
    fn a_child_beyond_the_states_is_refused() {
        build_with(&[(16, 0)], 0);
    }
}
