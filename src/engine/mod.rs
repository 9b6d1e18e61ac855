//! The generator: retrograde analysis by layered sweeps over a [`MoveCache`].
//!
//! A game hands over its states in index order, grouped in *levels* (Oware: the
//! seed count) such that a state's children lie in its own level or lower ones,
//! plus a child cache built once. Layer `t` holds every state's value with `t`
//! turns left and is computed from layer `t - 1` alone (layer 0 is all zeros),
//! so two buffers suffice for the sweep; each layer is split into rayon chunks
//! over the state index range.
//!
//! Convergence is detected per level. Once a level and every level below it
//! are unchanged from one layer to the next, their later layers all repeat
//! (each is computed from the same inputs), so the level is closed: later
//! sweeps skip it and its stored layers stop at its last change. When every
//! level is closed the run stops early.

mod cache;
mod solve;

pub use cache::{Emitter, MoveCache, HAS_MOVES, LANES, PAD_CAPTURE, VALUE_BOUND};
pub use solve::{solve, KernelTrial, LevelSolution, Solution, SolveOptions, TurnReport};
