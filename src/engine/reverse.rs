//! Reverse edges: for every state, the cache blocks holding a parent of it.
//!
//! Frontier sweeps recompute only the blocks whose states have a child that
//! changed value in the previous layer; this table finds them. It is stored
//! as compressed rows (an offset per state into one array of block indices)
//! and built in two parallel passes over the child cache: count each child's
//! parents, then place them. A block appears once per move that reaches the
//! child, so duplicates are possible and harmless.

use super::cache::{MoveCache, PAD_CAPTURE};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Parent blocks of every state.
pub struct ReverseEdges {
    offsets: Vec<u32>,
    parent_blocks: Vec<u32>,
}

impl ReverseEdges {
    /// Builds the table for `cache`.
    pub fn build<const MOVES: usize>(cache: &MoveCache<MOVES>) -> ReverseEdges {
        let states = cache.states();
        let for_each_edge = |f: &(dyn Fn(usize, u32) + Sync)| {
            (cache.first_block()..cache.blocks())
                .into_par_iter()
                .for_each(|block| {
                    let children = cache.block_children(block);
                    for (slot, &capture) in cache.block_captures(block).iter().enumerate() {
                        if capture != PAD_CAPTURE {
                            f(children[slot] as usize, block as u32);
                        }
                    }
                })
        };
        let counts: Vec<AtomicU32> = (0..states).map(|_| AtomicU32::new(0)).collect();
        for_each_edge(&|child, _| {
            counts[child].fetch_add(1, Ordering::Relaxed);
        });
        let mut offsets = Vec::with_capacity(states + 1);
        let mut total = 0u64;
        for count in &counts {
            offsets.push(total as u32);
            total += u64::from(count.swap(0, Ordering::Relaxed));
        }
        // 32-bit offsets: at most 6 edges per cached state (under 510 M at 20 seeds).
        let total = u32::try_from(total).expect("fewer than 2^32 edges");
        offsets.push(total);
        let slots: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
        for_each_edge(&|child, block| {
            let at = offsets[child] + counts[child].fetch_add(1, Ordering::Relaxed);
            slots[at as usize].store(block, Ordering::Relaxed);
        });
        ReverseEdges {
            offsets,
            parent_blocks: slots.into_iter().map(AtomicU32::into_inner).collect(),
        }
    }

    /// The blocks holding a parent of `state`.
    #[inline]
    pub fn parent_blocks(&self, state: usize) -> &[u32] {
        &self.parent_blocks[self.offsets[state] as usize..self.offsets[state + 1] as usize]
    }

    /// Marks in `dirty` (one bit per block) every block holding a parent of a
    /// state in `changed`.
    pub fn mark_parents(&self, changed: &[u32], dirty: &[AtomicU64]) {
        changed.par_chunks(4096).for_each(|chunk| {
            for &state in chunk {
                for &block in self.parent_blocks(state as usize) {
                    dirty[block as usize / 64].fetch_or(1 << (block % 64), Ordering::Relaxed);
                }
            }
        });
    }

    /// Memory held, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.len() * 4 + self.parent_blocks.len() * 4
    }
}

/// Collects the set bits of `dirty` as block indices (ascending) and clears them.
pub fn take_dirty_blocks(dirty: &[AtomicU64], blocks: &mut Vec<u32>) {
    blocks.clear();
    for (word_index, word) in dirty.iter().enumerate() {
        let mut bits = word.swap(0, Ordering::Relaxed);
        while bits != 0 {
            blocks.push((word_index * 64) as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}
