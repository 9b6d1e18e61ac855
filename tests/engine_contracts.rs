//! The generic engine refuses games that break its model, where it had
//! answered wrong values with no error.

use endbook::engine::{solve, MoveCache, Solution, SolveOptions, SweepMode, VALUE_BOUND};
use endbook::kernels::{Kernel, KernelChoice};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Solves `cache` with `level_starts` by every sweep mode and every kernel
/// this CPU has; returns how many of those runs panicked, of how many.
fn panics(cache: &MoveCache<2>, level_starts: &[usize], turn_limit: u32) -> (usize, usize) {
    let mut runs = 0;
    let mut panicked = 0;
    for mode in [SweepMode::Dense, SweepMode::Frontier, SweepMode::Hybrid] {
        for kernel in Kernel::available() {
            let options = SolveOptions {
                turn_limit,
                kernel: KernelChoice::Fixed(kernel),
                mode,
            };
            runs += 1;
            let solved = catch_unwind(AssertUnwindSafe(|| {
                solve(cache, level_starts, Solution::empty(), options, |_| {})
            }));
            panicked += usize::from(solved.is_err());
        }
    }
    (panicked, runs)
}

/// A chain of states, state `n` moving to `next(n)` capturing `capture(n)`.
fn chain(
    states: usize,
    next: impl Fn(usize) -> usize + Sync,
    capture: impl Fn(usize) -> i8 + Sync,
) -> MoveCache<2> {
    MoveCache::<2>::build(states, |range, emitter| {
        for n in range {
            emitter.push(&[(next(n) as u32, capture(n))], 0);
        }
    })
}

#[test]
fn a_child_in_a_higher_level_is_refused() {
    // Each state a level of its own, moving to the next state up (the last
    // to itself): against the model.
    let cache = chain(8, |n| (n + 1).min(7), |_| -1);
    let level_starts: Vec<usize> = (0..=8).collect();
    let (panicked, runs) = panics(&cache, &level_starts, 10);
    assert_eq!(panicked, runs, "every mode and kernel refuses it");
    // The same moves downwards are within it and solve.
    let cache = chain(8, |n| n.saturating_sub(1), |_| -1);
    assert_eq!(panics(&cache, &level_starts, 10).0, 0);
}

#[test]
fn values_past_the_bound_are_refused() {
    // Two states moving to each other, the first gaining VALUE_BOUND, the
    // second losing it: with two turns left the first is worth twice it.
    let cache = chain(
        2,
        |n| 1 - n,
        |n| if n == 0 { VALUE_BOUND } else { -VALUE_BOUND },
    );
    let (panicked, runs) = panics(&cache, &[0, 2], 5);
    assert_eq!(panicked, runs, "every mode and kernel refuses it");
    // One turn stays within it.
    assert_eq!(panics(&cache, &[0, 2], 1).0, 0);
}

#[test]
fn a_solution_answers_only_for_its_states() {
    let cache = chain(8, |n| n.saturating_sub(1), |_| -1);
    let level_starts: Vec<usize> = (0..=8).collect();
    let options = SolveOptions {
        turn_limit: 4,
        kernel: KernelChoice::Fixed(Kernel::scalar()),
        mode: SweepMode::Dense,
    };
    let solution = solve(&cache, &level_starts, Solution::empty(), options, |_| {});
    // State 0 moves to itself losing one each turn; state 1 to state 0.
    assert_eq!(solution.value(0, 1), -1);
    assert_eq!(solution.value(1, 2), -1 - solution.value(0, 1));
    let past = catch_unwind(AssertUnwindSafe(|| solution.value(8, 1)));
    assert!(past.is_err(), "a value for state 8 of 8");
}
