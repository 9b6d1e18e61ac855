//! The layer loop: dense or frontier sweeps, changes per level, closing converged levels.
//!
//! Two buffers hold layers `t-1` (`prev`) and `t-2` (`next`) at the start of
//! turn `t`. A step leaves layer `t` in `next`, and the buffers swap:
//!
//! - dense: every block of the open levels is recomputed from `prev` into
//!   `next`; comparing the two yields the layer's changes;
//! - frontier: only blocks holding a parent of a state that changed at `t-1`
//!   can change at `t`. `next` is first brought from layer `t-2` to `t-1` by
//!   writing the previous layer's changes, then those blocks are recomputed
//!   into scratch space, compared with `prev`, and their changes written.
//!
//! Either way the output is the list of changes per layer (layer 0 being all
//! zeros), from which any layer of any level can be replayed. Hybrid mode
//! sweeps densely while many states change and switches to the frontier once
//! few do; all modes give identical results.

use super::awake::Awake;
use super::cache::{within_bound, MoveCache, LANES, VALUE_BOUND};
use super::changes::{ChangeCursor, LayerChanges, PackedChanges};
use super::layer::zeroed_layer;
use super::picker::{KernelPicker, KernelTrial, TurnKernels};
use super::reverse::{take_dirty_blocks, ReverseEdges};
use crate::kernels::{Kernel, KernelChoice, LAYER_PADDING};
use rayon::prelude::*;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// States per rayon work item in a dense sweep. 8192 states read about 250 KB
/// of cache and write 8 KB: enough to amortise scheduling, small enough to
/// stay in L2 and to balance two threads on a small level.
const SWEEP_CHUNK_STATES: usize = 8192;

/// Dirty blocks per rayon work item in a frontier sweep.
const FRONTIER_CHUNK_BLOCKS: usize = 512;

/// Hybrid mode sweeps by frontier once the previous layer changed fewer than
/// this fraction of the open states. Each changed state dirties the blocks
/// of its parents (a few per state), so well above a few percent nearly every
/// block is dirty and a dense sweep, which needs no marking, is cheaper.
const FRONTIER_MAX_CHANGED_FRACTION: f64 = 0.02;

/// How layers are swept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMode {
    /// Every open state, every layer.
    Dense,
    /// Only blocks with a changed child (after the first layer).
    Frontier,
    /// Dense while many states change, frontier once few do.
    Hybrid,
}

impl SweepMode {
    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            SweepMode::Dense => "dense",
            SweepMode::Frontier => "frontier",
            SweepMode::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for SweepMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to compute.
#[derive(Clone, Copy, Debug)]
pub struct SolveOptions {
    /// Largest number of turns left to solve.
    pub turn_limit: u32,
    /// The layer-update kernel, or `Auto` to time them all and keep the fastest.
    pub kernel: KernelChoice,
    /// Dense, frontier or hybrid sweeps.
    pub mode: SweepMode,
}

/// Progress after one layer.
#[derive(Clone, Copy, Debug)]
pub struct TurnReport {
    /// Turns left of the layer just computed.
    pub turn: u32,
    /// The turn limit.
    pub turn_limit: u32,
    /// Whether the layer was swept by frontier.
    pub frontier: bool,
    /// States recomputed for this layer.
    pub swept_states: usize,
    /// States whose value differs from the previous layer.
    pub changed_states: u64,
    /// Levels closed so far (a prefix `0..closed_levels`).
    pub closed_levels: usize,
    /// Time since the solve started.
    pub elapsed: Duration,
}

/// Cache lines each of [`TurnCursors`]'s cursors prefetches ahead.
const PREFETCH_LINES: usize = 8;

/// The changes of the states from some state on, turn by turn (see
/// [`Solution::changes_from`]): one cursor per layer.
pub struct TurnCursors<'a> {
    cursors: Vec<ChangeCursor<'a>>,
}

impl TurnCursors<'_> {
    /// Calls `f(turn, state, value)` for each change of a state below `end`
    /// not taken yet: turn by turn, states ascending within a turn. Taken in
    /// ascending stretches, each board's changes come in turn order.
    #[inline]
    pub fn take_below(&mut self, end: usize, mut f: impl FnMut(u32, u32, i8)) {
        for (turn, cursor) in (1..).zip(&mut self.cursors) {
            cursor.take_below(end, |state, value| f(turn, state, value));
            // Hundreds of cursors are read a stretch at a time: fetch the
            // next stretch's bytes while the others are read.
            cursor.prefetch(PREFETCH_LINES);
        }
    }
}

/// One level's outcome.
#[derive(Clone, Debug)]
pub struct LevelSolution {
    /// Number of states in the level.
    pub states: usize,
    /// The last turn at which any of its values changed (1 if none ever did);
    /// values with more turns left equal those at this turn.
    pub last_change: u32,
    /// Time from the start of the solve until the level was closed.
    pub closed_after: Duration,
    /// The kernel that swept its layers once the trials were over (`None`
    /// for a level taken over from a book).
    pub kernel: Option<Kernel>,
    /// The threads its turns were shared among: the pool's, or 1 for a
    /// level too small to share out (0 for a level taken over from a book).
    pub threads: usize,
}

/// A solved game: every layer as changes from the one before.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Level boundaries, as given to [`solve`].
    pub level_starts: Vec<usize>,
    /// Per level, in order.
    pub levels: Vec<LevelSolution>,
    /// `changes[t - 1]`: the states whose value with `t` turns left differs
    /// from that with `t - 1` (all zeros for `t - 1 = 0`).
    pub changes: Vec<PackedChanges>,
    /// For games whose positions come in mirror pairs (the same position seen
    /// by the other player, at another index): `mirrored[t - 1]` holds the
    /// same changes as `changes[t - 1]`, each at its mirror position, for the
    /// levels below `mirrored_levels`: one list per level that changed, in
    /// level order (a level's list is added as it is, never copied onto the
    /// lists below). Sweeps that read the previous layer mirrored replay
    /// lower levels from these.
    pub mirrored: Vec<Vec<PackedChanges>>,
    /// How many levels, from level 0, `mirrored` covers.
    pub mirrored_levels: usize,
    /// How many levels, from level 0, have had their changes dropped from
    /// `changes` (see [`Solution::forget_changes`] and
    /// [`Solution::take_changes`]).
    pub forgotten_levels: usize,
    /// Layers swept before every level closed or the turn limit was reached.
    pub turns_swept: u32,
    /// Of those, layers swept by frontier.
    pub frontier_turns: u32,
    /// Total state updates performed.
    pub state_updates: u64,
    /// Time spent in the layer loop.
    pub elapsed: Duration,
    /// The kernel that swept the layers (after the trials, under `Auto`).
    pub kernel: Kernel,
    /// Under `Auto`: every available kernel's thread CPU time per state
    /// over its trial parts (run sweeps: those of the last level timed).
    pub kernel_trials: Vec<KernelTrial>,
}

impl Solution {
    /// No level solved: where a solve from scratch starts.
    pub fn empty() -> Solution {
        Solution {
            level_starts: vec![0],
            levels: Vec::new(),
            changes: Vec::new(),
            mirrored: Vec::new(),
            mirrored_levels: 0,
            forgotten_levels: 0,
            turns_swept: 0,
            frontier_turns: 0,
            state_updates: 0,
            elapsed: Duration::ZERO,
            kernel: Kernel::scalar(),
            kernel_trials: Vec::new(),
        }
    }

    /// Drops the changes of levels `0..levels` from [`Solution::changes`],
    /// keeping their summaries and mirror changes: for a generator that has
    /// stored those levels elsewhere (a book being written) and solves the
    /// levels above by run sweeps, which read only mirror changes. Their
    /// values can no longer be replayed from this solution.
    pub fn forget_changes(&mut self, levels: usize) {
        assert!(levels < self.level_starts.len());
        if levels <= self.forgotten_levels {
            return;
        }
        let below = self.level_starts[levels];
        self.changes
            .par_iter_mut()
            .for_each(|changes| changes.drop_below(below));
        self.forgotten_levels = levels;
    }

    /// Frees what the lists of [`Solution::changes`] hold of states below
    /// `state` in pieces of their own (no piece is copied): for a book
    /// encoder that reads the states in ascending stretches and has passed
    /// `state`, so that the memory goes back while it encodes the rest. The
    /// changes below `state` are then no longer all there: only a reader of
    /// the states from `state` on may go on with this solution.
    pub fn release_changes_below(&mut self, state: usize) {
        self.changes
            .iter_mut()
            .for_each(|changes| changes.release_below(state));
    }

    /// Moves the changes held ([`Solution::changes`] of the levels not
    /// forgotten) into a solution of their own, with this one's level
    /// summaries, for an encoder to read while the levels above are solved
    /// by run sweeps (which read mirror changes alone); this one forgets
    /// every level it has, as [`Solution::forget_changes`] would. The lists
    /// move whole: nothing is copied.
    pub fn take_changes(&mut self) -> Solution {
        let changes = self.changes.iter_mut().map(std::mem::take).collect();
        let taken = self.with_changes(changes, self.forgotten_levels);
        self.forgotten_levels = self.levels.len();
        taken
    }

    /// A copy of the changes of levels `from..` in a solution of their own,
    /// with this one's level summaries (what [`Solution::take_changes`]
    /// gives, for sweeps that replay the lower levels from their changes).
    pub fn copy_changes(&self, from: usize) -> Solution {
        assert!(from >= self.forgotten_levels && from <= self.levels.len());
        let start = self.level_starts[from];
        let changes = self
            .changes
            .par_iter()
            .map(|changes| changes.copied_from(start))
            .collect();
        self.with_changes(changes, from)
    }

    /// This solution's summaries with `changes`, the levels below
    /// `forgotten_levels` forgotten, and no mirror changes.
    fn with_changes(&self, changes: Vec<PackedChanges>, forgotten_levels: usize) -> Solution {
        Solution {
            level_starts: self.level_starts.clone(),
            levels: self.levels.clone(),
            changes,
            mirrored: Vec::new(),
            mirrored_levels: 0,
            forgotten_levels,
            kernel_trials: self.kernel_trials.clone(),
            ..*self
        }
    }

    /// Panics unless the changes of states `start..` are still held.
    fn assert_held(&self, start: usize) {
        assert!(
            start >= self.level_starts[self.forgotten_levels],
            "the changes of these levels were dropped"
        );
    }

    /// Level `level`'s layers `1..=last_change`, each `states` values, layer-major.
    pub fn level_layers(&self, level: usize) -> Vec<i8> {
        let (start, end) = (self.level_starts[level], self.level_starts[level + 1]);
        self.assert_held(start);
        let states = end - start;
        let layers = self.levels[level].last_change as usize;
        let mut out = vec![0i8; states * layers];
        let mut layer = vec![0i8; states];
        for (changes, out) in self.changes.iter().zip(out.chunks_exact_mut(states.max(1))) {
            for (state, value) in changes.within(start, end) {
                layer[state as usize - start] = value;
            }
            out.copy_from_slice(&layer);
        }
        out
    }

    /// The changes of the states from `start` on, turn by turn, to take in
    /// ascending stretches of states (what a book encoder reads): each
    /// change is decoded once.
    pub fn changes_from(&self, start: usize) -> TurnCursors<'_> {
        self.assert_held(start);
        TurnCursors {
            cursors: self.changes.iter().map(|c| c.cursor(start)).collect(),
        }
    }

    /// The value of global state `state` with `turns_left` turns left, by replay
    /// (for tests; books answer lookups directly).
    ///
    /// # Panics
    ///
    /// Where the solution does not cover `state`, or no longer holds its changes.
    pub fn value(&self, state: usize, turns_left: u32) -> i8 {
        let states = self.level_starts.last().copied().unwrap_or(0);
        assert!(state < states, "state {state} of {states}");
        self.assert_held(state);
        let turns = (turns_left as usize).min(self.changes.len());
        let mut value = 0;
        for changes in &self.changes[..turns] {
            if let Some((_, new)) = changes.within(state, state + 1).next() {
                value = new;
            }
        }
        value
    }
}

/// Solves every state of `cache` for `1..=turn_limit` turns left.
///
/// `level_starts` has one entry per level plus a final one equal to the
/// number of states; a state's children must lie in its level or lower ones.
/// `solved` holds the levels solved already, a prefix of them (or
/// [`Solution::empty`]): their values are replayed from its changes, never
/// recomputed, so `cache` need only hold the states from the first level to
/// solve on (from the block that level starts in). The result covers every
/// level. `observer` sees every layer as it completes.
///
/// # Panics
///
/// Where `level_starts` does not fit `cache` and `solved`, a state has a
/// child in a level above its own, or a value passes ±[`VALUE_BOUND`] (the
/// game's scores are its to keep within it).
pub fn solve<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    level_starts: &[usize],
    solved: Solution,
    options: SolveOptions,
    mut observer: impl FnMut(&TurnReport),
) -> Solution {
    assert!(
        level_starts.first() == Some(&0) && level_starts.is_sorted(),
        "level starts {level_starts:?}: from 0, never decreasing"
    );
    let levels = level_starts.len() - 1;
    let fixed = solved.levels.len();
    assert_eq!(
        level_starts[levels],
        cache.states(),
        "the last level ends at the cache's state count"
    );
    assert!(fixed < levels, "nothing left to solve");
    assert_eq!(
        solved.level_starts,
        level_starts[..=fixed],
        "solved levels are a prefix"
    );
    let fixed_end = level_starts[fixed];
    assert!(
        cache.first_block() * LANES <= fixed_end,
        "the cache starts at state {}, past the first state to solve ({fixed_end})",
        cache.first_block() * LANES
    );
    assert!(options.turn_limit >= 1, "a turn limit of at least 1");
    // Closing a level once it and those below are quiet, and replaying the
    // solved ones, rest on this: a child in a higher level gave wrong values
    // with no error.
    (fixed_end..cache.states())
        .into_par_iter()
        .with_min_len(1 << 12)
        .for_each(|state| {
            let end = level_starts[level_starts.partition_point(|&start| start <= state)];
            if let Some((child, _)) = cache.moves(state).find(|&(c, _)| c as usize >= end) {
                panic!("state {state} has child {child}, past its level's end {end}");
            }
        });

    let start = Instant::now();
    let Solution {
        levels: mut solved_levels,
        changes: mut all_changes,
        ..
    } = solved;
    // Changes of the solved levels with `turn` turns left, unpacked.
    let known_at = |changes: &[PackedChanges], turn: u32| {
        changes
            .get(turn as usize - 1)
            .map_or_else(LayerChanges::default, PackedChanges::unpack)
    };
    // The solved levels' changes at the previous turn and this one; this
    // run's changes of the previous turn. Each turn's changes of the levels
    // solved here are packed after the solved levels' ones in `all_changes`.
    let mut known_now = LayerChanges::default();
    let mut last_changes = LayerChanges::default();
    let mut turns_swept = 0;
    let buffer_len = cache.blocks() * LANES + LAYER_PADDING;
    let mut prev = zeroed_layer(buffer_len);
    let mut next = zeroed_layer(buffer_len);
    solved_levels.extend((fixed..levels).map(|level| LevelSolution {
        states: level_starts[level + 1] - level_starts[level],
        last_change: 1,
        closed_after: Duration::ZERO,
        kernel: None,
        threads: rayon::current_num_threads(),
    }));
    let mut frontier = Frontier::default();
    let mut closed = 0;
    let mut state_updates = 0u64;
    let mut frontier_turns = 0;
    let mut picker = KernelPicker::new(options.kernel);

    // Each turn is a few parallel steps: the other workers wait for them
    // awake.
    let awake = Awake::start();
    for turn in 1..=options.turn_limit {
        awake.rearm();
        let known_before = std::mem::replace(&mut known_now, known_at(&all_changes, turn));
        // Blocks of closed levels solved here hold the same values in both
        // buffers, so a block straddling the boundary may be recomputed
        // harmlessly; the solved levels' states in the cache's first block
        // are put back below (their moves need not be in the cache).
        let first_state = level_starts[closed].max(cache.first_block() * LANES);
        let first_block = first_state / LANES;
        let open_states = cache.states() - first_state;
        let use_frontier = turn > 1
            && match options.mode {
                SweepMode::Dense => false,
                SweepMode::Frontier => true,
                SweepMode::Hybrid => {
                    let last = last_changes.len() + known_before.len();
                    (last as f64) < FRONTIER_MAX_CHANGED_FRACTION * open_states as f64
                }
            };
        // The solved levels in `next` go from layer `turn - 2` to `turn - 1`.
        known_before.write_to(&mut next);
        let kernels = picker.turn(turn);
        let (layer_changes, swept_states) = if use_frontier {
            frontier_turns += 1;
            let previous = [&known_before, &last_changes];
            frontier.step(cache, &kernels, previous, fixed_end, &prev, &mut next)
        } else {
            let step = dense_step(cache, &kernels, first_block, fixed_end, &prev, &mut next);
            // The solved states it swept back to layer `turn - 1`.
            let solved_swept = first_block * LANES..fixed_end.max(first_block * LANES);
            next[solved_swept.clone()].copy_from_slice(&prev[solved_swept]);
            step
        };
        // And from `turn - 1` to `turn`.
        known_now.write_to(&mut next);
        // Every value starts within the bound, and one turn from values
        // within it cannot leave i8, so the first to pass it is seen here
        // (past it, the kernels' byte arithmetic would wrap or saturate,
        // each its own way).
        assert!(
            layer_changes.values.iter().all(|&v| within_bound(v)),
            "a value past ±{VALUE_BOUND} with {}: the game's scores exceed the engine's range",
            TurnsLeft(turn)
        );
        picker.settle(kernels, swept_states);
        state_updates += swept_states as u64;

        let mut all_quiet_below = true;
        let open_from = closed;
        for level in open_from..levels {
            let range = (level_starts[level], level_starts[level + 1]);
            let layer = if level < fixed {
                &known_now
            } else {
                &layer_changes
            };
            let changed = !layer.within(range.0, range.1).0.is_empty();
            let solution = &mut solved_levels[level];
            if level >= fixed && turn > 1 && changed {
                solution.last_change = turn;
            }
            all_quiet_below &= turn > 1 && !changed;
            if all_quiet_below && level == closed {
                if level >= fixed {
                    solution.closed_after = solved.elapsed + start.elapsed();
                }
                closed += 1;
            }
        }
        observer(&TurnReport {
            turn,
            turn_limit: options.turn_limit,
            frontier: use_frontier,
            swept_states,
            changed_states: (layer_changes.len() + known_now.len()) as u64,
            closed_levels: closed,
            elapsed: start.elapsed(),
        });
        match all_changes.get_mut(turn as usize - 1) {
            Some(packed) => packed.extend(&layer_changes),
            None => all_changes.push(PackedChanges::from(&layer_changes)),
        }
        last_changes = layer_changes;
        turns_swept = turn;
        std::mem::swap(&mut prev, &mut next);
        if closed == levels {
            break;
        }
    }
    drop(awake);

    let elapsed = start.elapsed();
    for solution in &mut solved_levels[closed.max(fixed)..] {
        solution.closed_after = solved.elapsed + elapsed;
    }
    for solution in &mut solved_levels[fixed..] {
        solution.kernel = Some(picker.chosen());
    }
    // The last layers may repeat their predecessors; keep up to the last change.
    let last_change = solved_levels
        .iter()
        .map(|l| l.last_change)
        .max()
        .unwrap_or(1);
    let (kernel, kernel_trials) = picker.outcome(solved.kernel, &solved.kernel_trials);
    all_changes.truncate(last_change as usize);
    Solution {
        level_starts: level_starts.to_vec(),
        levels: solved_levels,
        changes: all_changes,
        mirrored: Vec::new(),
        mirrored_levels: 0,
        forgotten_levels: 0,
        turns_swept: turns_swept.max(solved.turns_swept),
        frontier_turns: frontier_turns + solved.frontier_turns,
        state_updates: state_updates + solved.state_updates,
        elapsed: solved.elapsed + elapsed,
        kernel,
        kernel_trials,
    }
}

/// Recomputes every block from `first_block` on into `next`; returns the
/// changes against `prev` of the states from `first_changed` on, and the
/// number of states swept.
fn dense_step<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    kernels: &TurnKernels,
    first_block: usize,
    first_changed: usize,
    prev: &[i8],
    next: &mut [i8],
) -> (LayerChanges, usize) {
    let end = cache.blocks() * LANES;
    let swept = &mut next[first_block * LANES..end];
    let swept_states = swept.len();
    let parts: Vec<LayerChanges> = swept
        .par_chunks_mut(SWEEP_CHUNK_STATES)
        .enumerate()
        .map(|(i, out)| {
            let block = first_block + i * (SWEEP_CHUNK_STATES / LANES);
            let states = out.len();
            kernels.run(i, states, |kernel| kernel.sweep(cache, block, prev, out));
            let first_state = block * LANES;
            let mut changes = LayerChanges::default();
            for (offset, (&new, &old)) in out.iter().zip(&prev[first_state..]).enumerate() {
                if new != old && first_state + offset >= first_changed {
                    changes.states.push((first_state + offset) as u32);
                    changes.values.push(new);
                }
            }
            changes
        })
        .collect();
    (concatenate(parts), swept_states)
}

fn concatenate(parts: Vec<LayerChanges>) -> LayerChanges {
    let mut all = LayerChanges::default();
    let total = parts.iter().map(LayerChanges::len).sum();
    all.states.reserve_exact(total);
    all.values.reserve_exact(total);
    for part in parts {
        all.append(part);
    }
    all
}

/// State kept across frontier steps: the reverse edges (built on first use)
/// and the dirty-block bitmap.
#[derive(Default)]
struct Frontier {
    reverse: Option<ReverseEdges>,
    dirty: Vec<AtomicU64>,
    dirty_blocks: Vec<u32>,
}

impl Frontier {
    /// Brings the states from `first_changed` on in `next` from layer `t-2`
    /// to `t`, given layer `t-1` in `prev` and its changes `previous` (of the
    /// solved levels, then of the others); returns layer `t`'s changes from
    /// `first_changed` on and the states swept.
    fn step<const MOVES: usize>(
        &mut self,
        cache: &MoveCache<MOVES>,
        kernels: &TurnKernels,
        previous: [&LayerChanges; 2],
        first_changed: usize,
        prev: &[i8],
        next: &mut [i8],
    ) -> (LayerChanges, usize) {
        let reverse = self
            .reverse
            .get_or_insert_with(|| ReverseEdges::build(cache));
        if self.dirty.is_empty() {
            self.dirty = (0..cache.blocks().div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect();
        }
        previous[1].write_to(next);
        for changes in previous {
            reverse.mark_parents(&changes.states, &self.dirty);
        }
        take_dirty_blocks(&self.dirty, &mut self.dirty_blocks);
        let swept_states = self.dirty_blocks.len() * LANES;
        let parts: Vec<LayerChanges> = self
            .dirty_blocks
            .par_chunks(FRONTIER_CHUNK_BLOCKS)
            .enumerate()
            .map(|(part, blocks)| {
                kernels.run(part, blocks.len() * LANES, |kernel| {
                    let mut changes = LayerChanges::default();
                    let mut scratch = [0i8; LANES];
                    for &block in blocks {
                        let block = block as usize;
                        kernel.sweep(cache, block, prev, &mut scratch);
                        let first_state = block * LANES;
                        for (lane, &new) in scratch.iter().enumerate() {
                            let state = first_state + lane;
                            if new != prev[state] && state >= first_changed {
                                changes.states.push(state as u32);
                                changes.values.push(new);
                            }
                        }
                    }
                    changes
                })
            })
            .collect();
        let changes = concatenate(parts);
        changes.write_to(next);
        (changes, swept_states)
    }
}

/// "1 turn left", "`n` turns left": how messages name a number of turns left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnsLeft(pub u32);

impl fmt::Display for TurnsLeft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 turn left"),
            n => write!(f, "{n} turns left"),
        }
    }
}
