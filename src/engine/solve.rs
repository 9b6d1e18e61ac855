//! The layer loop: sweep, detect changes per level, store, close converged levels.

use super::cache::{MoveCache, LANES};
use crate::kernels::{Kernel, KernelChoice, LAYER_PADDING};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// States per rayon work item in a sweep. 8192 states read about 250 KB of
/// cache and write 8 KB: enough to amortise scheduling, small enough to stay in
/// L2 and to balance two threads on a small level.
const SWEEP_CHUNK_STATES: usize = 8192;

/// Chunk for counting changed states.
const COMPARE_CHUNK: usize = 1 << 16;

/// What to compute.
#[derive(Clone, Copy, Debug)]
pub struct SolveOptions {
    /// Largest number of turns left to solve.
    pub turn_limit: u32,
    /// The layer-update kernel, or `Auto` to time them all and keep the fastest.
    pub kernel: KernelChoice,
}

/// Rounds of timing each kernel gets under [`KernelChoice::Auto`].
const TRIAL_ROUNDS: usize = 3;

/// How fast one kernel swept, when `Auto` compared them on real layers.
#[derive(Clone, Copy, Debug)]
pub struct KernelTrial {
    /// The kernel.
    pub kernel: Kernel,
    /// Its fastest layer, in nanoseconds per state update.
    pub ns_per_state: f64,
}

/// Picks the kernel for each layer: under `Auto`, the first layers after the
/// first rotate through the available kernels (each computes identical bytes),
/// then the fastest of them sweeps the rest.
struct KernelPicker {
    trials: Vec<KernelTrial>,
    rounds_left: usize,
    next_trial: usize,
    chosen: Kernel,
}

impl KernelPicker {
    fn new(choice: KernelChoice) -> KernelPicker {
        match choice {
            KernelChoice::Fixed(kernel) => KernelPicker {
                trials: Vec::new(),
                rounds_left: 0,
                next_trial: 0,
                chosen: kernel,
            },
            KernelChoice::Auto => KernelPicker {
                trials: Kernel::available()
                    .map(|kernel| KernelTrial {
                        kernel,
                        ns_per_state: f64::INFINITY,
                    })
                    .collect(),
                rounds_left: TRIAL_ROUNDS,
                next_trial: 0,
                chosen: Kernel::scalar(),
            },
        }
    }

    /// The kernel for `turn`, and the trial it belongs to, if any.
    fn pick(&self, turn: u32) -> (Kernel, Option<usize>) {
        // Layer 1 touches every page for the first time: not a fair trial.
        if turn == 1 || self.rounds_left == 0 {
            (self.chosen, None)
        } else {
            (self.trials[self.next_trial].kernel, Some(self.next_trial))
        }
    }

    fn record(&mut self, trial: usize, ns_per_state: f64) {
        let entry = &mut self.trials[trial];
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

/// Progress after one layer.
#[derive(Clone, Copy, Debug)]
pub struct TurnReport {
    /// Turns left of the layer just computed.
    pub turn: u32,
    /// The turn limit.
    pub turn_limit: u32,
    /// States recomputed for this layer.
    pub swept_states: usize,
    /// States whose value differs from the previous layer.
    pub changed_states: u64,
    /// Levels closed so far (a prefix `0..closed_levels`).
    pub closed_levels: usize,
    /// Time since the solve started.
    pub elapsed: Duration,
}

/// One level's values.
#[derive(Clone, Debug)]
pub struct LevelSolution {
    /// Number of states in the level.
    pub states: usize,
    /// The last turn at which any of its values changed (1 if none ever did);
    /// values with more turns left equal those at this turn.
    pub last_change: u32,
    /// Layers `1..=last_change`, each `states` values, layer-major.
    pub layers: Vec<i8>,
    /// Time from the start of the solve until the level was closed.
    pub closed_after: Duration,
}

impl LevelSolution {
    /// The value of `state` (index within the level) with `turns_left` turns left.
    pub fn value(&self, state: usize, turns_left: u32) -> i8 {
        let layer = turns_left.clamp(1, self.last_change) as usize - 1;
        self.layers[layer * self.states + state]
    }
}

/// A solved game.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Per level, in order.
    pub levels: Vec<LevelSolution>,
    /// Layers swept before every level closed or the turn limit was reached.
    pub turns_swept: u32,
    /// Total state updates performed.
    pub state_updates: u64,
    /// Time spent in the layer loop.
    pub elapsed: Duration,
    /// The kernel that swept the layers (after the trials, under `Auto`).
    pub kernel: Kernel,
    /// Under `Auto`: every available kernel's fastest trial layer.
    pub kernel_trials: Vec<KernelTrial>,
}

/// Solves every state of `cache` for `1..=turn_limit` turns left.
///
/// `level_starts` has one entry per level plus a final one equal to the
/// number of states; a state's children must lie in its level or lower ones.
/// `observer` sees every layer as it completes.
pub fn solve<const MOVES: usize>(
    cache: &MoveCache<MOVES>,
    level_starts: &[usize],
    options: SolveOptions,
    mut observer: impl FnMut(&TurnReport),
) -> Solution {
    let levels = level_starts.len() - 1;
    assert_eq!(level_starts[0], 0);
    assert_eq!(level_starts[levels], cache.states());
    assert!(options.turn_limit >= 1);

    let start = Instant::now();
    let buffer_len = cache.blocks() * LANES + LAYER_PADDING;
    let mut prev = vec![0i8; buffer_len];
    let mut cur = vec![0i8; buffer_len];
    let mut solved: Vec<LevelSolution> = (0..levels)
        .map(|level| LevelSolution {
            states: level_starts[level + 1] - level_starts[level],
            last_change: 1,
            layers: Vec::new(),
            closed_after: Duration::ZERO,
        })
        .collect();
    let mut closed = 0;
    let mut state_updates = 0u64;
    let mut turns_swept = 0;
    let mut picker = KernelPicker::new(options.kernel);

    for turn in 1..=options.turn_limit {
        let (kernel, trial) = picker.pick(turn);
        let sweep_start = Instant::now();
        // Blocks of closed levels hold the same values in both buffers, so a
        // block straddling the boundary may be recomputed harmlessly.
        let first_block = level_starts[closed] / LANES;
        let swept = &mut cur[first_block * LANES..cache.blocks() * LANES];
        let swept_states = swept.len();
        swept
            .par_chunks_mut(SWEEP_CHUNK_STATES)
            .enumerate()
            .for_each(|(i, out)| {
                let block = first_block + i * (SWEEP_CHUNK_STATES / LANES);
                kernel.sweep(cache, block, &prev, out);
            });
        if let Some(trial) = trial {
            let ns = sweep_start.elapsed().as_nanos() as f64 / swept_states.max(1) as f64;
            picker.record(trial, ns);
        }
        state_updates += swept_states as u64;
        turns_swept = turn;

        let mut changed_states = 0;
        let mut all_quiet_below = true;
        let open_from = closed;
        for level in open_from..levels {
            let range = level_starts[level]..level_starts[level + 1];
            let changed = if turn == 1 {
                0
            } else {
                count_changes(&cur[range.clone()], &prev[range.clone()])
            };
            changed_states += changed;
            let solution = &mut solved[level];
            if changed > 0 {
                solution.last_change = turn;
            }
            solution.layers.extend_from_slice(&cur[range]);
            all_quiet_below &= turn > 1 && changed == 0;
            if all_quiet_below && level == closed {
                solution.closed_after = start.elapsed();
                closed += 1;
            }
        }
        observer(&TurnReport {
            turn,
            turn_limit: options.turn_limit,
            swept_states,
            changed_states,
            closed_levels: closed,
            elapsed: start.elapsed(),
        });
        if closed == levels {
            break;
        }
        std::mem::swap(&mut prev, &mut cur);
    }

    let elapsed = start.elapsed();
    for solution in &mut solved[closed..] {
        solution.closed_after = elapsed;
    }
    for solution in &mut solved {
        solution
            .layers
            .truncate(solution.last_change as usize * solution.states);
        solution.layers.shrink_to_fit();
    }
    Solution {
        levels: solved,
        turns_swept,
        state_updates,
        elapsed,
        kernel: picker.chosen,
        kernel_trials: picker.trials,
    }
}

/// Number of positions where `a` and `b` differ.
fn count_changes(a: &[i8], b: &[i8]) -> u64 {
    a.par_chunks(COMPARE_CHUNK)
        .zip(b.par_chunks(COMPARE_CHUNK))
        .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count() as u64)
        .sum()
}
