//! The AVX2 kernel: per block and move row, one 8-lane gather of child values.
//!
//! The previous layer is an `i8` array, and AVX2 has no byte gather, so
//! `vpgatherdd` with scale 1 fetches the 32-bit word starting at each child's
//! byte (the layer buffer carries [`LAYER_PADDING`] spare bytes for the last
//! state) and a shift pair sign-extends its low byte. Captures and base scores
//! are widened from 8 bytes with `vpmovsxbd`; the reduction is `vpmaxsd`.
//! Four blocks (32 states) are narrowed together with two saturating packs and
//! a lane permutation, so each iteration stores one full vector.
//!
//! [`LAYER_PADDING`]: crate::kernels::LAYER_PADDING

use crate::engine::{MoveCache, PackedChanges, LANES};
use crate::kernels::rows::{self, PlainLoops, RowSweep};
use std::arch::x86_64::*;
use std::ops::Range;

/// Blocks narrowed and stored together.
const GROUP: usize = 4;

/// Sweeps `out` (whole blocks from `first_block`) from `prev`.
///
/// # Safety
///
/// The CPU must support AVX2. `out.len()` must be a multiple of [`LANES`],
/// blocks `first_block..first_block + out.len() / LANES` must exist in
/// `cache`, `prev` must hold `cache.blocks() * LANES + LAYER_PADDING` bytes,
/// and every child index in the cache must be below its state count (which
/// also keeps it below `i32::MAX`, as the gather's offsets are signed).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sweep<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    first_block: usize,
    prev: &[i8],
    out: &mut [i8],
) {
    let blocks = out.len() / LANES;
    let mut groups = out.chunks_exact_mut(GROUP * LANES);
    let mut block = first_block;
    for out in &mut groups {
        // SAFETY: the caller's contract covers these four blocks and `prev`.
        let (a, b, c, d) = unsafe {
            (
                block_best(cache, block, prev),
                block_best(cache, block + 1, prev),
                block_best(cache, block + 2, prev),
                block_best(cache, block + 3, prev),
            )
        };
        let words = _mm256_packs_epi32(a, b); // a0-3 b0-3 | a4-7 b4-7 as i16
        let words_cd = _mm256_packs_epi32(c, d);
        let bytes = _mm256_packs_epi16(words, words_cd); // a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7
                                                         // Dword i of `bytes` holds 4 states; put a0-3 a4-7 b0-3 b4-7 ... in order.
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let bytes = _mm256_permutevar8x32_epi32(bytes, order);
        // SAFETY: `out` is a 32-byte chunk; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), bytes) };
        block += GROUP;
    }
    for out in groups.into_remainder().chunks_exact_mut(LANES) {
        // SAFETY: as above, for one remaining block.
        let best = unsafe { block_best(cache, block, prev) };
        let words = _mm_packs_epi32(
            _mm256_castsi256_si128(best),
            _mm256_extracti128_si256(best, 1),
        );
        let bytes = _mm_packs_epi16(words, words);
        // SAFETY: `out` is an 8-byte chunk.
        unsafe { _mm_storel_epi64(out.as_mut_ptr().cast(), bytes) };
        block += 1;
    }
    debug_assert_eq!(block, first_block + blocks);
}

/// The new values of block `block` as eight `i32` lanes.
///
/// # Safety
///
/// As for [`sweep`], for this one block.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn block_best<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    block: usize,
    prev: &[i8],
) -> __m256i {
    let children = cache.block_children(block).as_ptr();
    let captures = cache.block_captures(block).as_ptr();
    let base = cache.block_base(block).as_ptr();
    let words = prev.as_ptr().cast::<i32>();
    // SAFETY: `block_base` is 8 bytes; `_mm_loadl_epi64` reads exactly 8, unaligned.
    let mut best = _mm256_cvtepi8_epi32(unsafe { _mm_loadl_epi64(base.cast()) });
    for k in 0..MOVES {
        // SAFETY: row k of the block holds 8 child indices (32 bytes) and 8
        // captures (8 bytes); unaligned loads are allowed.
        let (indices, capture) = unsafe {
            (
                _mm256_loadu_si256(children.add(k * LANES).cast()),
                _mm_loadl_epi64(captures.add(k * LANES).cast()),
            )
        };
        // SAFETY: each index is below the state count, so the 4 bytes read at
        // `prev + index` end within `prev`'s padding; the gather needs no alignment.
        let gathered = unsafe { _mm256_i32gather_epi32::<1>(words, indices) };
        let value = _mm256_srai_epi32::<24>(_mm256_slli_epi32::<24>(gathered));
        let score = _mm256_sub_epi32(_mm256_cvtepi8_epi32(capture), value);
        best = _mm256_max_epi32(best, score);
    }
    best
}

/// The row sweep (see [`crate::kernels::rows`]), compiled with AVX2: its
/// byte loops become 32-byte `vpsubb`/`vpmaxsb`.
///
/// # Safety
///
/// The CPU must support AVX2. (Everything else is checked: the sweep itself
/// is safe code.)
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sweep_rows(
    sweep: &RowSweep<'_>,
    rows: Range<usize>,
    previous: &[i8],
    out: &mut [i8],
) -> PackedChanges {
    rows::sweep::<PlainLoops>(sweep, rows, previous, out)
}
