//! The reference kernel: plain loops over the move-major blocks.

use crate::engine::{MoveCache, LANES};

pub(super) fn sweep<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    first_block: usize,
    prev: &[i8],
    out: &mut [i8],
) {
    for (offset, out) in out.chunks_exact_mut(LANES).enumerate() {
        let block = first_block + offset;
        let children = cache.block_children(block);
        let captures = cache.block_captures(block);
        let mut best = [0i16; LANES];
        for (best, &base) in best.iter_mut().zip(cache.block_base(block)) {
            *best = base.into();
        }
        for (children, captures) in children
            .chunks_exact(LANES)
            .zip(captures.chunks_exact(LANES))
        {
            for lane in 0..LANES {
                let score = i16::from(captures[lane]) - i16::from(prev[children[lane] as usize]);
                best[lane] = best[lane].max(score);
            }
        }
        for (out, best) in out.iter_mut().zip(best) {
            *out = best as i8;
        }
    }
}
