//! The generator: retrograde analysis by layered sweeps over a [`MoveCache`].
//!
//! A game hands over its states in index order, grouped in *levels* (Oware: the
//! seed count) such that a state's children lie in its own level or lower ones,
//! plus a child cache built once. Layer `t` holds every state's value with `t`
//! turns left and is computed from layer `t - 1` alone (layer 0 is all zeros),
//! so two buffers suffice; each sweep is split into rayon chunks over the
//! state index range.
//!
//! Most of a dense sweep reproduces the previous value: a state can only change
//! at turn `t` if one of its children changed at `t - 1`. Frontier sweeps use
//! [`ReverseEdges`] to recompute just the blocks holding such parents, and
//! hybrid mode switches from dense to frontier once few states change. The
//! result is a list of changes per layer, from which any layer is replayed.
//!
//! Convergence is detected per level. Once a level and every level below it
//! are unchanged from one layer to the next, their later layers all repeat
//! (each is computed from the same inputs), so the level is closed: later
//! sweeps skip it and its last change is recorded. When every level is
//! closed the run stops early.
//!
//! A solve may start from levels solved already (a [`Solution`] of the lower
//! levels): their values are replayed from their change lists, and the cache
//! need only hold the levels still to solve. Games use this to solve one
//! level at a time, checkpoint, and extend books. Change lists are stored
//! packed ([`PackedChanges`], about 2 bytes a change): they are what bounds
//! the largest book a machine can generate.
//!
//! Under `--kernel auto`, a [`KernelPicker`] times the kernels side by side
//! on each solve's first turns (their parts shared out among the kernels,
//! each timed by its thread's CPU time) and keeps the fastest.

mod awake;
mod cache;
mod changes;
mod layer;
mod picker;
mod reverse;
mod solve;

pub(crate) use awake::Awake;
pub use cache::{Emitter, MoveCache, HAS_MOVES, LANES, PAD_CAPTURE, VALUE_BOUND};
#[cfg(test)]
pub(crate) use changes::block_pairs;
pub(crate) use changes::BLOCK;
pub use changes::{ChangeCursor, LayerChanges, PackedChanges};
pub use layer::zeroed_layer;
pub use picker::{KernelPicker, KernelTrial, TurnKernels, MIN_TRIAL_STATES, TRIAL_ROTATIONS};
pub use reverse::ReverseEdges;
pub use solve::{solve, LevelSolution, Solution, SolveOptions, SweepMode, TurnCursors, TurnReport};
