//! The portable vector kernel: the eight states of a block in one `wide::i16x8`.
//!
//! `wide` picks its instructions when the crate is compiled (SSE2 on a plain
//! x86-64 build, NEON on aarch64), so this is the baseline vector path, not a
//! runtime-dispatched one. There is no portable gather: the child values are
//! loaded one by one, and the subtraction and maximum run on vectors.

use crate::engine::{MoveCache, LANES};
use wide::i16x8;

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
