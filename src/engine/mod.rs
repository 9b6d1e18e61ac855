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
//!
//! # What a game provides
//!
//! The engine solves any game that fits this model; nothing in it knows a
//! game's rules.
//!
//! - **States**, numbered `0..S`, in **levels**: consecutive index ranges
//!   (`level_starts`, one entry per level and a final `S`) such that every
//!   child of a state lies in its own level or a lower one (Oware: the seed
//!   count, which no move raises).
//! - **Moves**, through a [`MoveCache`]: [`MoveCache::build`] hands each
//!   chunk of states to the game, which [`Emitter::push`]es every state in
//!   index order: its moves as (child index, capture), at most `MOVES` of
//!   them, and the score it gets when it has none.
//! - **Values**: the net score the player to move gains with perfect play
//!   over the turns left, `v_t(s) = max over moves (capture - v_{t-1}(child))`,
//!   or the no-move score, with `v_0 = 0`: the players alternate at every
//!   ply (a game where one player moves twice in a row folds both into one
//!   move), and there are no chance moves (the bear-off generator, which
//!   has dice, is its own). Every value must stay within
//!   ±[`VALUE_BOUND`]: captures and no-move scores are checked as they are
//!   pushed, and a game must keep the score at stake within it (Oware: the
//!   seeds on the board).
//!
//! [`solve()`] returns a [`Solution`]: each layer's changes, which
//! [`Solution::changes_from`] streams state by state (what a book encoder
//! reads) and [`Solution::value`] replays for one state. Oware's default
//! sweep, `runs`, is its own (`games::oware::runs`): it reads the previous
//! layer in a game-specific mirror layout instead of a child cache.
//!
//! A take-away game: a heap of counters, a move takes one, two or three, and
//! taking the last scores 1. Each heap size is a level of its own.
//!
//! ```
//! use endbook::engine::{solve, MoveCache, Solution, SolveOptions, SweepMode};
//! use endbook::kernels::KernelChoice;
//!
//! const HEAPS: usize = 21; // heaps of 0..=20 counters, state n the heap of n
//! let cache = MoveCache::<3>::build(HEAPS, |states, emitter| {
//!     for n in states {
//!         let moves: Vec<(u32, i8)> = (1..=n.min(3))
//!             .map(|take| ((n - take) as u32, i8::from(take == n)))
//!             .collect();
//!         emitter.push(&moves, 0);
//!     }
//! });
//! let level_starts: Vec<usize> = (0..=HEAPS).collect();
//! let options = SolveOptions {
//!     turn_limit: 30,
//!     kernel: KernelChoice::Auto,
//!     mode: SweepMode::Hybrid,
//! };
//! let solution = solve(&cache, &level_starts, Solution::empty(), options, |_| {});
//! // With time enough, the mover loses exactly the multiples of four.
//! for n in 1..HEAPS {
//!     assert_eq!(solution.value(n, 30), if n % 4 == 0 { -1 } else { 1 });
//! }
//! // With one turn left only a heap of three or fewer is taken at once.
//! assert_eq!((solution.value(3, 1), solution.value(5, 1)), (1, 0));
//! // Five needs three turns: take one, the opponent takes from four, take the rest.
//! assert_eq!((solution.value(5, 2), solution.value(5, 3)), (0, 1));
//! ```

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
pub use solve::{
    solve, LevelSolution, Solution, SolveOptions, SweepMode, TurnCursors, TurnReport, TurnsLeft,
};
