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
use super::cache::{MoveCache, LANES};
use super::changes::{ChangeCursor, LayerChanges, PackedChanges};
use super::layer::zeroed_layer;
use super::quiet::Spell;
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

/// Rounds of timing each kernel gets under [`KernelChoice::Auto`].
const TRIAL_ROUNDS: usize = 3;

/// A layer sweeping fewer states than this is too short to time a kernel on.
const MIN_TRIAL_STATES: usize = 1 << 16;

/// How layers are swept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMode {
    /// Every open state, every layer.
    Dense,
    /// Only blocks with a changed child (after the first layer).
    Frontier,
    /// Dense while many states change, frontier once few do.
    Hybrid,
    /// Row by row from contiguous runs of the mirror layer, with no child
    /// cache: a game-specific sweep (Oware's `runs` module), which [`solve`]
    /// does not perform.
    Runs,
}

impl SweepMode {
    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            SweepMode::Dense => "dense",
            SweepMode::Frontier => "frontier",
            SweepMode::Hybrid => "hybrid",
            SweepMode::Runs => "runs",
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

/// How fast one kernel swept, when `Auto` compared them on real layers.
#[derive(Clone, Copy, Debug)]
pub struct KernelTrial {
    /// The kernel.
    pub kernel: Kernel,
    /// Its fastest layer, in nanoseconds per state update.
    pub ns_per_state: f64,
}

/// A kernel trial under way: which kernel, since when, and the quiet spell
/// that keeps the background work paused while it is timed.
#[derive(Debug)]
pub struct Trial {
    index: usize,
    start: Instant,
    _quiet: Spell,
}

/// Picks the kernel for each layer: under `Auto`, the layers after the first
/// rotate through the available kernels (each computes identical bytes), then
/// the fastest of them sweeps the rest. A layer too small to time repeats its
/// trial on the next one.
#[derive(Clone)]
pub struct KernelPicker {
    trials: Vec<KernelTrial>,
    rounds_left: usize,
    next_trial: usize,
    chosen: Kernel,
}

impl KernelPicker {
    /// A picker for `choice`.
    pub fn new(choice: KernelChoice) -> KernelPicker {
        let (trials, chosen) = match choice {
            KernelChoice::Fixed(kernel) => (Vec::new(), kernel),
            KernelChoice::Auto => {
                let trials = Kernel::available()
                    .map(|kernel| KernelTrial {
                        kernel,
                        ns_per_state: f64::INFINITY,
                    })
                    .collect();
                (trials, Kernel::scalar())
            }
        };
        KernelPicker {
            rounds_left: if trials.is_empty() { 0 } else { TRIAL_ROUNDS },
            trials,
            next_trial: 0,
            chosen,
        }
    }

    /// Times the kernels afresh on the layers to come (under `Auto`, when
    /// they sweep at least `states` states, enough to time), keeping the
    /// current choice until then: which kernel is fastest can change with
    /// the size of what a layer reads (the row kernels' AVX2 gathers win
    /// only once the layer no longer fits in L2).
    pub fn retime(&mut self, states: usize) {
        if self.trials.is_empty() || states < MIN_TRIAL_STATES {
            return;
        }
        for trial in &mut self.trials {
            trial.ns_per_state = f64::INFINITY;
        }
        self.rounds_left = TRIAL_ROUNDS;
        self.next_trial = 0;
    }

    /// The kernel for a layer, and the trial it belongs to, if any: a
    /// trial's clock starts now, once the background work under way (the
    /// book encoder's) has paused until the trial is recorded or dropped.
    pub fn pick(&self, turn: u32) -> (Kernel, Option<Trial>) {
        // Layer 1 touches every page for the first time: not a fair trial.
        if turn == 1 || self.rounds_left == 0 {
            (self.chosen, None)
        } else {
            let quiet = Spell::cast();
            let trial = Trial {
                index: self.next_trial,
                start: Instant::now(),
                _quiet: quiet,
            };
            (self.trials[self.next_trial].kernel, Some(trial))
        }
    }

    /// The kernel kept so far, for a layer that is no trial.
    pub fn chosen(&self) -> Kernel {
        self.chosen
    }

    /// Records how long `trial`'s layer took per state; layers of fewer than
    /// `MIN_TRIAL_STATES` states are too short to count.
    pub fn record(&mut self, trial: Trial, states: usize) {
        let (index, elapsed) = (trial.index, trial.start.elapsed());
        drop(trial);
        if states < MIN_TRIAL_STATES {
            return;
        }
        let ns_per_state = elapsed.as_nanos() as f64 / states as f64;
        let entry = &mut self.trials[index];
        entry.ns_per_state = entry.ns_per_state.min(ns_per_state);
        let fastest = self
            .trials
            .iter()
            .min_by(|a, b| a.ns_per_state.total_cmp(&b.ns_per_state))
            .unwrap();
        self.chosen = fastest.kernel;
        self.next_trial += 1;
        if self.next_trial == self.trials.len() {
            self.next_trial = 0;
            self.rounds_left -= 1;
        }
    }
}

impl KernelPicker {
    /// The kernel chosen and the trials, for a solution built on one that
    /// chose `before_kernel` after `before_trials`: a run whose layers were
    /// all too small to time a kernel on reports the earlier choice.
    pub fn outcome(
        self,
        before_kernel: Kernel,
        before_trials: &[KernelTrial],
    ) -> (Kernel, Vec<KernelTrial>) {
        let timed = self.trials.iter().any(|t| t.ns_per_state.is_finite());
        if timed || before_trials.is_empty() {
            (self.chosen, self.trials)
        } else {
            (before_kernel, before_trials.to_vec())
        }
    }
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
    /// Under `Auto`: every available kernel's fastest trial layer.
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
    pub fn value(&self, state: usize, turns_left: u32) -> i8 {
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
pub fn solve<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    level_starts: &[usize],
    solved: Solution,
    options: SolveOptions,
    mut observer: impl FnMut(&TurnReport),
) -> Solution {
    let levels = level_starts.len() - 1;
    let fixed = solved.levels.len();
    assert_eq!(level_starts[0], 0);
    assert_eq!(level_starts[levels], cache.states());
    assert!(fixed < levels, "nothing left to solve");
    assert_eq!(
        solved.level_starts,
        level_starts[..=fixed],
        "solved levels are a prefix"
    );
    let fixed_end = level_starts[fixed];
    assert!(cache.first_block() * LANES <= fixed_end);
    assert!(options.turn_limit >= 1);
    assert_ne!(
        options.mode,
        SweepMode::Runs,
        "run sweeps are game-specific"
    );

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
        // Blocks of closed levels hold the same values in both buffers, so a
        // block straddling the boundary may be recomputed harmlessly.
        let first_state = level_starts[closed].max(cache.first_block() * LANES);
        let first_block = first_state / LANES;
        let open_states = cache.states() - first_state;
        let use_frontier = turn > 1
            && match options.mode {
                SweepMode::Dense => false,
                SweepMode::Frontier => true,
                SweepMode::Runs => unreachable!(),
                SweepMode::Hybrid => {
                    let last = last_changes.len() + known_before.len();
                    (last as f64) < FRONTIER_MAX_CHANGED_FRACTION * open_states as f64
                }
            };
        // The solved levels in `next` go from layer `turn - 2` to `turn - 1`.
        known_before.write_to(&mut next);
        let (kernel, trial) = picker.pick(turn);
        let (layer_changes, swept_states) = if use_frontier {
            frontier_turns += 1;
            let previous = [&known_before, &last_changes];
            frontier.step(cache, kernel, previous, fixed_end, &prev, &mut next)
        } else {
            dense_step(cache, kernel, first_block, fixed_end, &prev, &mut next)
        };
        // And from `turn - 1` to `turn`.
        known_now.write_to(&mut next);
        if let Some(trial) = trial {
            picker.record(trial, swept_states);
        }
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
    kernel: Kernel,
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
            kernel.sweep(cache, block, prev, out);
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
        kernel: Kernel,
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
            .map(|blocks| {
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
            .collect();
        let changes = concatenate(parts);
        changes.write_to(next);
        (changes, swept_states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turns at which `picker` runs a trial, recording each at once,
    /// over turns `1..=turns` of a level of `states` states.
    fn trial_turns(picker: &mut KernelPicker, turns: u32, states: usize) -> Vec<u32> {
        let mut at = Vec::new();
        for turn in 1..=turns {
            let (kernel, trial) = picker.pick(turn);
            match trial {
                Some(trial) => {
                    assert_eq!(kernel, picker.trials[trial.index].kernel);
                    at.push(turn);
                    picker.record(trial, states);
                }
                None => assert_eq!(kernel, picker.chosen),
            }
        }
        at
    }

    #[test]
    fn trials_come_in_rounds_from_the_second_layer() {
        let kernels = Kernel::available().count() as u32;
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        let at = trial_turns(&mut picker, 200, MIN_TRIAL_STATES);
        let expected: Vec<u32> = (2..2 + TRIAL_ROUNDS as u32 * kernels).collect();
        assert_eq!(at, expected);
        // Every kernel timed, and the one kept is the fastest of them.
        assert!(picker.trials.iter().all(|t| t.ns_per_state.is_finite()));
        let fastest = picker
            .trials
            .iter()
            .min_by(|a, b| a.ns_per_state.total_cmp(&b.ns_per_state))
            .unwrap();
        assert_eq!(picker.chosen, fastest.kernel);

        // A new level of enough states times them again from its turn 2; a
        // smaller one keeps the choice.
        picker.retime(MIN_TRIAL_STATES - 1);
        assert!(trial_turns(&mut picker, 200, MIN_TRIAL_STATES).is_empty());
        picker.retime(MIN_TRIAL_STATES);
        assert_eq!(trial_turns(&mut picker, 200, MIN_TRIAL_STATES), expected);
    }

    #[test]
    fn layers_too_small_to_time_repeat_their_trial() {
        let kernels = Kernel::available().count() as u32;
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        // Turns 2 and 3 too small: the first round starts over at turn 4.
        let (_, trial) = picker.pick(2);
        picker.record(trial.expect("turn 2 is a trial"), MIN_TRIAL_STATES - 1);
        let (_, trial) = picker.pick(3);
        assert_eq!(trial.as_ref().map(|t| t.index), Some(0));
        picker.record(trial.unwrap(), MIN_TRIAL_STATES - 1);
        assert!(picker.trials.iter().all(|t| t.ns_per_state.is_infinite()));
        let mut at = Vec::new();
        for turn in 4..4 + kernels {
            let (_, trial) = picker.pick(turn);
            let trial = trial.expect("the first round's trials");
            at.push(trial.index);
            picker.record(trial, MIN_TRIAL_STATES);
        }
        assert_eq!(at, (0..kernels as usize).collect::<Vec<_>>());
        // Then the second round.
        let (_, trial) = picker.pick(4 + kernels);
        assert_eq!(trial.map(|t| t.index), Some(0));
    }

    #[test]
    fn a_forced_kernel_runs_no_trials() {
        let mut picker = KernelPicker::new(KernelChoice::Fixed(Kernel::scalar()));
        assert!(trial_turns(&mut picker, 200, MIN_TRIAL_STATES).is_empty());
    }
}
