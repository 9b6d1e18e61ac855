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
use crate::kernels::rows::{self, ApplyRun, Columns, PlainLoops, RowSweep, RunLists};
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
/// and every child index in the cache must be below its state count, and
/// that count at most `i32::MAX` (the gather's offsets are signed; a cache
/// may hold up to `u32::MAX` states, so the caller checks).
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

/// The row sweep (see [`crate::kernels::rows`]), compiled with AVX2, its
/// runs in whole vectors and its stretches gathered ([`Gathers`]).
///
/// # Safety
///
/// The CPU must support AVX2. (Everything else is checked: the sweep itself
/// is safe code, and [`Gathers`] checks its bounds.)
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sweep_rows(
    sweep: &RowSweep<'_>,
    rows: Range<usize>,
    previous: &[i8],
    out: &mut [i8],
) -> PackedChanges {
    rows::sweep::<Gathers>(sweep, rows, previous, out)
}

/// Runs in 32-byte vectors (16-byte ones below 32 columns) with a last one
/// overlapping the one before, no scalar tail ([`run`]); stretches eight
/// columns at a time: the child rows' starts picked by slot with `vpermd`
/// (two and a blend for slots 8-15) from two masked loads of the program's
/// ([`slot_starts`]), the child values fetched by one `vpgatherdd` (the
/// 32-bit word at each child's byte, its low byte kept), the scores stored
/// as 8 bytes.
///
/// Private to this module: its methods may only run inside [`sweep_rows`],
/// entered after runtime detection of AVX2.
struct Gathers;

impl ApplyRun for Gathers {
    #[inline(always)]
    fn set(out: &mut [i8], source: &[i8], capture: i8) {
        // SAFETY: this runs inside `sweep_rows` only, so the CPU has AVX2.
        unsafe { run::<true>(out, source, capture) }
    }

    #[inline(always)]
    fn max(out: &mut [i8], source: &[i8], capture: i8) {
        // SAFETY: as in `set`.
        unsafe { run::<false>(out, source, capture) }
    }

    #[inline(always)]
    fn stretches(
        lists: &RunLists,
        list: u32,
        bases: &[u32],
        mirror: &[i8],
        out: &mut [i8],
        first: bool,
    ) {
        let stretches = lists.stretches(list);
        if stretches.is_empty() {
            return;
        }
        let (top_slot, top_column) = lists.tops(list);
        let slots = usize::from(top_slot) + 1;
        // The gather reads 4 bytes from each child's: every child must lie
        // 3 bytes before the mirror's end (the last rows of the last level
        // may not, and then this move's columns go one at a time), and a
        // slot's start must be one of the 16 picked by the permutes.
        let reach =
            bases[..slots].iter().max().copied().unwrap_or(0) as usize + top_column as usize;
        if slots > 16 || reach + 4 > mirror.len() || mirror.len() > i32::MAX as usize {
            PlainLoops::stretches(lists, list, bases, mirror, out, first);
            return;
        }
        // The child rows' starts by slot, eight to a vector, loaded straight
        // from `bases` (a copy to an array first makes the vector load
        // wait for the copy's smaller stores).
        // SAFETY: this runs inside `sweep_rows` only, so the CPU has AVX2;
        // `bases` holds at least `slots` starts (indexed above).
        let starts = unsafe { slot_starts(&bases[..slots]) };
        for stretch in stretches {
            let out = &mut out[stretch.src as usize..(stretch.src + stretch.len) as usize];
            let columns = lists.columns(stretch);
            let whole = out.len() / 8 * 8;
            for at in (0..whole).step_by(8) {
                // SAFETY: this runs inside `sweep_rows` only, so the CPU has
                // AVX2; columns at..at + 8 exist and `out` has 8 bytes from
                // `at`; every slot is at most `top_slot`, below 16 (and below
                // 8 unless `slots > 8`); every child lies within `mirror`, 4
                // bytes from its end (checked above), below i32::MAX.
                unsafe {
                    gather8(
                        &columns,
                        at,
                        starts,
                        slots > 8,
                        mirror,
                        &mut out[at..at + 8],
                        first,
                    )
                };
            }
            let rest = Columns {
                dst: &columns.dst[whole..],
                slot: &columns.slot[whole..],
                capture: &columns.capture[whole..],
            };
            rows::stretch_columns(rest, bases, mirror, &mut out[whole..], first);
        }
    }
}

/// `out = capture - source` (`SET`) or `out = max(out, capture - source)`
/// over a run: in 32-byte vectors and a last one overlapping the one
/// before (16-byte ones below 32 columns), so no column is left to a
/// scalar tail. A column computed twice gets the same value twice. The
/// last vector's old values are loaded before anything is stored, so that
/// no load waits on a store it overlaps.
///
/// # Safety
///
/// The CPU must support AVX2. (`out` and `source` must have the same
/// length; the function checks it.)
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn run<const SET: bool>(out: &mut [i8], source: &[i8], capture: i8) {
    let len = out.len();
    assert_eq!(source.len(), len);
    if len < 16 {
        if SET {
            PlainLoops::set(out, source, capture);
        } else {
            PlainLoops::max(out, source, capture);
        }
        return;
    }
    let (o, s) = (out.as_mut_ptr(), source.as_ptr());
    // The accesses below lie within the `len` bytes of `out` and of
    // `source`: vectors of 32 bytes start at most at `len - 32`, of 16 at
    // most at `len - 16`, and `len >= 16`.
    if len >= 32 {
        let capture = _mm256_set1_epi8(capture);
        // Columns `at..at + 32` from their old values `old`.
        // SAFETY: `at <= len - 32` at every call below.
        let put = |at: usize, old: __m256i| unsafe {
            let score = _mm256_sub_epi8(capture, _mm256_loadu_si256(s.add(at).cast()));
            let new = if SET {
                score
            } else {
                _mm256_max_epi8(old, score)
            };
            _mm256_storeu_si256(o.add(at).cast(), new);
        };
        let last = len - 32;
        // SAFETY: `last = len - 32`.
        let last_old = unsafe { _mm256_loadu_si256(o.add(last).cast()) };
        let mut at = 0;
        while at + 32 <= len {
            // SAFETY: `at + 32 <= len`.
            put(at, unsafe { _mm256_loadu_si256(o.add(at).cast()) });
            at += 32;
        }
        if at < len {
            put(last, last_old);
        }
    } else {
        let capture = _mm_set1_epi8(capture);
        // Columns `at..at + 16` from their old values `old`.
        // SAFETY: `at` is 0 or `len - 16` at the calls below.
        let put = |at: usize, old: __m128i| unsafe {
            let score = _mm_sub_epi8(capture, _mm_loadu_si128(s.add(at).cast()));
            let new = if SET { score } else { _mm_max_epi8(old, score) };
            _mm_storeu_si128(o.add(at).cast(), new);
        };
        let last = len - 16;
        // SAFETY: `len >= 16`; both are read before either is written.
        let (first_old, last_old) = unsafe {
            (
                _mm_loadu_si128(o.cast()),
                _mm_loadu_si128(o.add(last).cast()),
            )
        };
        put(0, first_old);
        put(last, last_old);
    }
}

/// Up to 16 child row starts in two vectors: `starts[i]` in lane `i` of
/// the first, `starts[8 + i]` in lane `i` of the second; lanes past the
/// end hold 0. Masked loads read nothing past `starts`.
///
/// # Safety
///
/// The CPU must support AVX2. (`starts` may have any length; past 16 are ignored.)
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn slot_starts(starts: &[u32]) -> [__m256i; 2] {
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let load = |from: &[u32]| {
        let count = from.len().min(8) as i32;
        let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes);
        // SAFETY: the mask enables lanes `0..count` only, which lie within
        // `from`: a masked load reads no other memory.
        unsafe { _mm256_maskload_epi32(from.as_ptr().cast(), mask) }
    };
    // (The second only where there is a ninth: no pointer past the slice.)
    let high = match starts.get(8..) {
        Some(high) if !high.is_empty() => load(high),
        _ => _mm256_setzero_si256(),
    };
    [load(starts), high]
}

/// Columns `at..at + 8` of a stretch into `out` (8 bytes).
///
/// # Safety
///
/// The CPU must support AVX2; `columns` must hold columns `at..at + 8`
/// and `out` 8 bytes; each of these columns' slots must be below 16 (below
/// 8 unless `high`), and the start of each one's slot (lane `slot` of
/// `starts[0]`, or lane `slot - 8` of `starts[1]`: see [`slot_starts`])
/// plus its `dst` plus 4 at most `mirror.len()`, itself at most `i32::MAX`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather8(
    columns: &Columns<'_>,
    at: usize,
    starts: [__m256i; 2],
    high: bool,
    mirror: &[i8],
    out: &mut [i8],
    first: bool,
) {
    debug_assert!(columns.dst.len() >= at + 8 && out.len() >= 8);
    // SAFETY: the loads read columns at..at + 8 of the three arrays, the
    // store writes `out`'s 8 bytes (caller's contract); each gathered word
    // lies within `mirror` (caller's contract).
    unsafe {
        let slot = _mm256_cvtepu8_epi32(_mm_loadl_epi64(columns.slot.as_ptr().add(at).cast()));
        let low = starts[0];
        let mut start = _mm256_permutevar8x32_epi32(low, slot);
        if high {
            let upper = starts[1];
            let is_high = _mm256_cmpgt_epi32(slot, _mm256_set1_epi32(7));
            start = _mm256_blendv_epi8(start, _mm256_permutevar8x32_epi32(upper, slot), is_high);
        }
        let dst = _mm256_loadu_si256(columns.dst.as_ptr().add(at).cast());
        let words = mirror.as_ptr().cast::<i32>();
        let gathered = _mm256_i32gather_epi32::<1>(words, _mm256_add_epi32(start, dst));
        // The low byte of each word to the bottom of its lane, then the two
        // lanes' four bytes together.
        let low_bytes = _mm256_setr_epi8(
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        );
        let packed = _mm256_shuffle_epi8(gathered, low_bytes);
        let values = _mm_unpacklo_epi32(
            _mm256_castsi256_si128(packed),
            _mm256_extracti128_si256::<1>(packed),
        );
        let capture = _mm_loadl_epi64(columns.capture.as_ptr().add(at).cast());
        let mut score = _mm_sub_epi8(capture, values);
        let out = out.as_mut_ptr().cast::<__m128i>();
        if !first {
            score = _mm_max_epi8(score, _mm_loadl_epi64(out));
        }
        _mm_storel_epi64(out, score);
    }
}
