//! The portable vector kernels: the eight states of a block in one
//! `wide::i16x8`, and row runs 32 bytes at a time in `wide::i8x32`.
//!
//! `wide` picks its instructions when the crate is compiled (SSE2 on a plain
//! x86-64 build, NEON on aarch64), so this is the baseline vector path, not a
//! runtime-dispatched one. There is no portable gather: the child values are
//! loaded one by one, and the subtraction and maximum run on vectors.

use super::rows::{ApplyRun, PlainLoops};
use crate::engine::{MoveCache, LANES};
use wide::{i16x8, i8x32};

/// Row runs in `i8x32` vectors, the tail in plain loops.
pub(super) struct WideVectors;

impl WideVectors {
    #[inline(always)]
    fn apply(
        out: &mut [i8],
        source: &[i8],
        capture: i8,
        vector: impl Fn(i8x32, i8x32) -> i8x32,
        tail: impl Fn(&mut [i8], &[i8], i8),
    ) {
        const WIDTH: usize = 32;
        let capture_lanes = i8x32::splat(capture);
        let mut outs = out.chunks_exact_mut(WIDTH);
        let mut sources = source.chunks_exact(WIDTH);
        for (out, source) in (&mut outs).zip(&mut sources) {
            let old = i8x32::new(out[..WIDTH].try_into().unwrap());
            let score = capture_lanes - i8x32::new(source.try_into().unwrap());
            out.copy_from_slice(&vector(old, score).to_array());
        }
        tail(outs.into_remainder(), sources.remainder(), capture);
    }
}

impl ApplyRun for WideVectors {
    #[inline(always)]
    fn set(out: &mut [i8], source: &[i8], capture: i8) {
        Self::apply(out, source, capture, |_, score| score, PlainLoops::set);
    }

    #[inline(always)]
    fn max(out: &mut [i8], source: &[i8], capture: i8) {
        Self::apply(
            out,
            source,
            capture,
            |old, score| old.max(score),
            PlainLoops::max,
        );
    }
}

pub(super) fn sweep<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    first_block: usize,
    prev: &[i8],
    out: &mut [i8],
) {
    for (offset, out) in out.chunks_exact_mut(LANES).enumerate() {
        let block = first_block + offset;
        let widen = |bytes: &[i8]| i16x8::new(std::array::from_fn(|lane| bytes[lane].into()));
        let mut best = widen(cache.block_base(block));
        for (children, captures) in cache
            .block_children(block)
            .chunks_exact(LANES)
            .zip(cache.block_captures(block).chunks_exact(LANES))
        {
            let child_values = i16x8::new(std::array::from_fn(|lane| {
                prev[children[lane] as usize].into()
            }));
            best = best.max(widen(captures) - child_values);
        }
        for (out, best) in out.iter_mut().zip(best.to_array()) {
            *out = best as i8;
        }
    }
}
