//! `--kernel auto`: the layer-update kernels timed side by side on real turns.
//!
//! A trial turn hands its parallel parts to the available kernels in turn
//! (part `i` of the `r`-th trial turn to kernel `(i + r) mod k`), and times
//! each part by the CPU time of the thread that swept it. Every kernel
//! sweeps a share of the same layer, under the same load: whatever else
//! the machine does at that moment (the book encoder's threads, another
//! guest on the host) weighs on all of them alike, and a part whose thread
//! was preempted is not charged for the time it did not run. After
//! [`TRIAL_ROTATIONS`] rotations (each part under every kernel that often)
//! the kernel that took the least CPU time per state sweeps the rest.
//!
//! Timing whole layers, one kernel each, did not pick reliably: layers
//! differ in how much they change (the packing's share), and on two cores
//! the encoder's bursts doubled a layer's time; the 20-seed book's top
//! levels kept `portable` or `scalar` in four runs of five, against
//! `avx2` by 15-20% faster there when forced. Part by part, the 17-seed
//! generation's dense turns had `avx2` ahead on 137 of 138 turns of its top
//! level (2.36 against 2.80 ns a state, median over the turns).

use crate::kernels::{Kernel, KernelChoice};
use std::sync::atomic::{AtomicU64, Ordering};

/// Times each part sweeps under every kernel before one is kept.
pub const TRIAL_ROTATIONS: usize = 2;

/// A turn sweeping fewer states than this is too short to time kernels on:
/// its trial is repeated on the next turn.
pub const MIN_TRIAL_STATES: usize = 1 << 16;

/// How fast one kernel swept, when `Auto` compared them on real turns.
#[derive(Clone, Copy, Debug)]
pub struct KernelTrial {
    /// The kernel.
    pub kernel: Kernel,
    /// Thread CPU time per state over its trial parts, in nanoseconds
    /// (infinite until it has swept one).
    pub ns_per_state: f64,
}

/// Picks the kernel for each turn (see the module's documentation).
pub struct KernelPicker {
    /// Under `Auto`, every available kernel; empty when one is forced.
    kernels: Vec<Kernel>,
    /// Per kernel, the thread CPU nanoseconds and the states of its trial
    /// parts since the last [`KernelPicker::retime`].
    totals: Vec<(u64, u64)>,
    /// Trial turns still to come.
    trial_turns_left: usize,
    /// Trial turns so far: the rotation of the next one.
    rotation: usize,
    chosen: Kernel,
}

impl KernelPicker {
    /// A picker for `choice`.
    pub fn new(choice: KernelChoice) -> KernelPicker {
        let (kernels, chosen) = match choice {
            KernelChoice::Fixed(kernel) => (Vec::new(), kernel),
            KernelChoice::Auto => (Kernel::available().collect(), Kernel::scalar()),
        };
        KernelPicker {
            totals: vec![(0, 0); kernels.len()],
            trial_turns_left: TRIAL_ROTATIONS * kernels.len(),
            kernels,
            rotation: 0,
            chosen,
        }
    }

    /// Times the kernels afresh on the turns to come (under `Auto`, when a
    /// turn sweeps at least `states` states, enough to time), keeping the
    /// current choice until then: which kernel is fastest can change with
    /// the size of what a layer reads (the row kernels' AVX2 gathers win
    /// only once the layer no longer fits in L2).
    pub fn retime(&mut self, states: usize) {
        if self.kernels.is_empty() || states < MIN_TRIAL_STATES {
            return;
        }
        self.totals.fill((0, 0));
        self.trial_turns_left = TRIAL_ROTATIONS * self.kernels.len();
        self.rotation = 0;
    }

    /// The kernels of turn `turn`: a trial while trial turns are left (the
    /// first turn touches every page for the first time, not a fair trial),
    /// else the kernel kept.
    pub fn turn(&self, turn: u32) -> TurnKernels {
        if turn == 1 || self.trial_turns_left == 0 {
            return self.kept();
        }
        TurnKernels {
            chosen: self.chosen,
            trial: Some(TurnTrial {
                kernels: self.kernels.clone(),
                rotation: self.rotation,
                tallies: self.kernels.iter().map(|_| Tally::default()).collect(),
            }),
        }
    }

    /// The kernel kept so far, for every part of a turn: no trial.
    pub fn kept(&self) -> TurnKernels {
        TurnKernels {
            chosen: self.chosen,
            trial: None,
        }
    }

    /// The kernel kept so far.
    pub fn chosen(&self) -> Kernel {
        self.chosen
    }

    /// Takes in a turn's tallies, if it was a trial that swept at least
    /// [`MIN_TRIAL_STATES`] states (else its trial comes again), and keeps
    /// the kernel with the least CPU time per state so far.
    pub fn settle(&mut self, turn: TurnKernels, states: usize) {
        let Some(trial) = turn.trial else {
            return;
        };
        if states < MIN_TRIAL_STATES {
            return;
        }
        for (total, tally) in self.totals.iter_mut().zip(&trial.tallies) {
            total.0 += tally.ns.load(Ordering::Relaxed);
            total.1 += tally.states.load(Ordering::Relaxed);
        }
        if let Some(fastest) = self
            .trials()
            .into_iter()
            .filter(|t| t.ns_per_state.is_finite())
            .min_by(|a, b| a.ns_per_state.total_cmp(&b.ns_per_state))
        {
            self.chosen = fastest.kernel;
        }
        self.rotation += 1;
        self.trial_turns_left -= 1;
    }

    /// Each kernel's CPU time per state so far (none when one is forced).
    pub fn trials(&self) -> Vec<KernelTrial> {
        self.kernels
            .iter()
            .zip(&self.totals)
            .map(|(&kernel, &(ns, states))| KernelTrial {
                kernel,
                ns_per_state: if states == 0 {
                    f64::INFINITY
                } else {
                    ns as f64 / states as f64
                },
            })
            .collect()
    }

    /// The kernel chosen and the trials, for a solution built on one that
    /// chose `before_kernel` after `before_trials`: a run whose turns were
    /// all too small to time a kernel on reports the earlier choice.
    pub fn outcome(
        &self,
        before_kernel: Kernel,
        before_trials: &[KernelTrial],
    ) -> (Kernel, Vec<KernelTrial>) {
        let timed = self.totals.iter().any(|&(_, states)| states > 0);
        if timed || before_trials.is_empty() {
            (self.chosen, self.trials())
        } else {
            (before_kernel, before_trials.to_vec())
        }
    }
}

/// The kernels of one turn's parts, from [`KernelPicker::turn`]; shared by
/// the workers that sweep them, then handed back to
/// [`KernelPicker::settle`].
#[derive(Debug)]
pub struct TurnKernels {
    chosen: Kernel,
    trial: Option<TurnTrial>,
}

#[derive(Debug)]
struct TurnTrial {
    kernels: Vec<Kernel>,
    rotation: usize,
    tallies: Vec<Tally>,
}

/// Thread CPU nanoseconds and states of one kernel's parts of a turn.
#[derive(Debug, Default)]
struct Tally {
    ns: AtomicU64,
    states: AtomicU64,
}

impl TurnKernels {
    /// Whether this turn times the kernels.
    pub fn is_trial(&self) -> bool {
        self.trial.is_some()
    }

    /// The kernel for part `part` of the turn.
    pub fn kernel(&self, part: usize) -> Kernel {
        match &self.trial {
            None => self.chosen,
            Some(trial) => trial.kernels[trial.slot(part)],
        }
    }

    /// Runs `sweep` with part `part`'s kernel; under a trial, charges the
    /// thread CPU time it takes, and its `states`, to that kernel.
    #[inline]
    pub fn run<R>(&self, part: usize, states: usize, sweep: impl FnOnce(Kernel) -> R) -> R {
        let kernel = self.kernel(part);
        let Some(trial) = &self.trial else {
            return sweep(kernel);
        };
        let start = thread_cpu_ns();
        let result = sweep(kernel);
        trial.charge(part, thread_cpu_ns().saturating_sub(start), states);
        result
    }
}

impl TurnTrial {
    /// The index of part `part`'s kernel (and tally): the kernels in turn,
    /// from this trial's rotation.
    fn slot(&self, part: usize) -> usize {
        (part + self.rotation) % self.kernels.len()
    }

    /// Charges `ns` nanoseconds and `states` states to part `part`'s kernel.
    fn charge(&self, part: usize, ns: u64, states: usize) {
        let tally = &self.tallies[self.slot(part)];
        tally.ns.fetch_add(ns, Ordering::Relaxed);
        tally.states.fetch_add(states as u64, Ordering::Relaxed);
    }
}

/// The calling thread's CPU time in nanoseconds.
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec, and
    // CLOCK_THREAD_CPUTIME_ID is a clock every Linux has.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    debug_assert_eq!(status, 0, "the thread's CPU clock reads");
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Elsewhere, the wall clock of the part: a preempted part is charged for
/// the time it waited.
#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turns out of `1..=turns` that are trials, each settled at once
    /// with `states` states, its parts charged by `cost` (kernel -> ns a
    /// state).
    fn trial_turns(
        picker: &mut KernelPicker,
        turns: u32,
        states: usize,
        cost: impl Fn(Kernel) -> u64,
    ) -> Vec<u32> {
        let mut at = Vec::new();
        for turn in 1..=turns {
            let kernels = picker.turn(turn);
            if let Some(trial) = &kernels.trial {
                at.push(turn);
                let parts = 7;
                for part in 0..parts {
                    let share = states / parts;
                    trial.charge(part, cost(kernels.kernel(part)) * share as u64, share);
                }
            } else {
                assert!((0..9).all(|part| kernels.kernel(part) == picker.chosen()));
            }
            picker.settle(kernels, states);
        }
        at
    }

    /// A cost per state that makes `fast` the fastest kernel.
    fn favouring(fast: Kernel) -> impl Fn(Kernel) -> u64 {
        move |kernel| if kernel == fast { 1 } else { 3 }
    }

    #[test]
    fn trials_rotate_the_kernels_over_the_parts_from_the_second_turn() {
        let available: Vec<Kernel> = Kernel::available().collect();
        let k = available.len();
        let picker = KernelPicker::new(KernelChoice::Auto);
        assert!(!picker.turn(1).is_trial());
        // In any k trial turns in a row, each part sweeps under every kernel.
        let mut picker = picker;
        for part in 0..5 {
            let mut seen = Vec::new();
            for turn in 2..2 + k as u32 {
                let kernels = picker.turn(turn);
                assert!(kernels.is_trial());
                seen.push(kernels.kernel(part));
                picker.settle(kernels, MIN_TRIAL_STATES);
            }
            seen.sort_by_key(|kernel| kernel.name());
            let mut all = available.clone();
            all.sort_by_key(|kernel| kernel.name());
            assert_eq!(seen, all, "part {part}");
            picker.retime(MIN_TRIAL_STATES);
        }
    }

    #[test]
    fn the_kernel_with_the_least_time_a_state_is_kept() {
        let k = Kernel::available().count() as u32;
        for fast in Kernel::available() {
            let mut picker = KernelPicker::new(KernelChoice::Auto);
            let at = trial_turns(&mut picker, 200, MIN_TRIAL_STATES, favouring(fast));
            let expected: Vec<u32> = (2..2 + TRIAL_ROTATIONS as u32 * k).collect();
            assert_eq!(at, expected);
            assert_eq!(picker.chosen(), fast);
            let trials = picker.trials();
            assert!(trials.iter().all(|t| t.ns_per_state.is_finite()));
            for trial in trials {
                let expected = if trial.kernel == fast { 1.0 } else { 3.0 };
                assert_eq!(trial.ns_per_state, expected, "{}", trial.kernel);
            }
            assert_eq!(picker.outcome(Kernel::scalar(), &[]).0, fast);
        }
    }

    #[test]
    fn each_level_times_them_again_if_large_enough() {
        let k = Kernel::available().count() as u32;
        let mut kernels = Kernel::available();
        let (first, second) = (kernels.next().unwrap(), kernels.last());
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        trial_turns(&mut picker, 200, MIN_TRIAL_STATES, favouring(first));
        assert_eq!(picker.chosen(), first);
        // A smaller level keeps the choice without a trial.
        picker.retime(MIN_TRIAL_STATES - 1);
        let at = trial_turns(&mut picker, 200, MIN_TRIAL_STATES, |_| 1);
        assert!(at.is_empty());
        assert_eq!(picker.chosen(), first);
        // A larger one starts afresh, the earlier tallies forgotten.
        picker.retime(MIN_TRIAL_STATES);
        let second = second.unwrap_or(first);
        let at = trial_turns(&mut picker, 200, MIN_TRIAL_STATES, favouring(second));
        assert_eq!(at.len() as u32, TRIAL_ROTATIONS as u32 * k);
        assert_eq!(picker.chosen(), second);
    }

    #[test]
    fn turns_too_small_to_time_repeat_their_trial() {
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        let small = trial_turns(&mut picker, 10, MIN_TRIAL_STATES - 1, |_| 1);
        // Every turn from the second was a trial, none counted.
        assert_eq!(small, (2..=10).collect::<Vec<u32>>());
        assert!(picker.trials().iter().all(|t| t.ns_per_state.is_infinite()));
        assert_eq!(picker.rotation, 0);
        // The choice made before stands when nothing could be timed.
        let earlier = [KernelTrial {
            kernel: Kernel::scalar(),
            ns_per_state: 1.5,
        }];
        let (kernel, trials) = picker.outcome(Kernel::scalar(), &earlier);
        assert_eq!((kernel, trials[0].ns_per_state), (Kernel::scalar(), 1.5));
    }

    #[test]
    fn a_forced_kernel_runs_no_trials() {
        let mut picker = KernelPicker::new(KernelChoice::Fixed(Kernel::scalar()));
        assert!(trial_turns(&mut picker, 200, MIN_TRIAL_STATES, |_| 1).is_empty());
        assert!(picker.trials().is_empty());
        assert_eq!(picker.chosen(), Kernel::scalar());
    }

    #[test]
    fn a_part_is_charged_the_cpu_time_it_takes() {
        let mut picker = KernelPicker::new(KernelChoice::Auto);
        let kernels = picker.turn(2);
        let spin = |kernel: Kernel| {
            // Busy for at least 2 ms of this thread's CPU time.
            let start = thread_cpu_ns();
            while thread_cpu_ns() - start < 2_000_000 {
                std::hint::black_box(0);
            }
            kernel
        };
        let swept = kernels.run(0, MIN_TRIAL_STATES, spin);
        assert_eq!(swept, kernels.kernel(0));
        picker.settle(kernels, MIN_TRIAL_STATES);
        let trial = picker
            .trials()
            .into_iter()
            .find(|t| t.kernel == swept)
            .unwrap();
        assert!(trial.ns_per_state * MIN_TRIAL_STATES as f64 >= 2e6);
    }
}
