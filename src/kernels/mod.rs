//! Layer-update kernels: `v[s] = max(base[s], max_k(capture[s,k] - prev[child[s,k]]))`
//! over a run of cache blocks.
//!
//! Every kernel computes exactly the same bytes; [`Kernel::Scalar`] is the
//! oracle the others are tested against.

mod scalar;

use crate::engine::{MoveCache, LANES};

/// Bytes a layer buffer must hold past its last state, so that a kernel may
/// read a 32-bit word at any state's byte.
pub const LAYER_PADDING: usize = 3;

/// A layer-update implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// The plain loop: one gather per move and state.
    Scalar,
}

impl Kernel {
    /// The kernel to use on this CPU.
    pub fn detect() -> Kernel {
        Kernel::Scalar
    }

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
        }
    }

    /// Computes `out` (a whole number of blocks) for the blocks starting at
    /// `first_block`, reading the previous layer `prev`.
    ///
    /// `prev` must hold every child index in the cache plus [`LAYER_PADDING`] bytes.
    #[inline]
    pub fn sweep<const MOVES: usize>(
        self,
        cache: &MoveCache<MOVES>,
        first_block: usize,
        prev: &[i8],
        out: &mut [i8],
    ) {
        assert_eq!(out.len() % LANES, 0);
        assert!(first_block + out.len() / LANES <= cache.blocks());
        assert!(prev.len() >= cache.blocks() * LANES + LAYER_PADDING);
        match self {
            Kernel::Scalar => scalar::sweep(cache, first_block, prev, out),
        }
    }
}
