//! The generic engine refuses games that break its model, where it had
//! answered wrong values with no error.

use endbook::engine::{solve, MoveCache, Solution, SolveOptions, SweepMode, LANES, VALUE_BOUND};
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

/// Take-away: from a heap of `n`, take 1 to 3, scoring 1 for the last.
fn take_away(n: usize) -> Vec<(u32, i8)> {
    (1..=n.min(3))
        .map(|take| ((n - take) as u32, i8::from(take == n)))
        .collect()
}

/// Take-away's value with `turns` turns left, by plain recursion.
fn take_away_value(n: usize, turns: u32) -> i8 {
    if turns == 0 {
        return 0;
    }
    take_away(n)
        .into_iter()
        .map(|(child, capture)| capture - take_away_value(child as usize, turns - 1))
        .max()
        .unwrap_or(0)
}

/// The solved states a cache starts among (it starts at the block holding
/// the first state to solve) are read, never recomputed: a game may give
/// them no moves. The dense and hybrid sweeps had recomputed them from the
/// cache, and kept what it gave where their value did not change.
#[test]
fn solved_states_sharing_the_caches_first_block_keep_their_values() {
    const HEAPS: usize = 20;
    const TURNS: u32 = 12;
    // Each heap a level of its own; heaps up to 10 are solved first, so the
    // second cache starts at the block of heaps 8 to 15.
    let level_starts: Vec<usize> = (0..=HEAPS).collect();
    let solved_below = 11;
    let first_state = solved_below / LANES * LANES;
    assert!(first_state < solved_below, "solved heaps share the block");
    let low = MoveCache::<3>::build(solved_below, |heaps, emitter| {
        heaps.for_each(|n| emitter.push(&take_away(n), 0))
    });
    // The solved heaps of the first block without moves, scoring 5 if
    // recomputed (none is worth 5).
    let high = MoveCache::<3>::build_from(first_state, HEAPS, |heaps, emitter| {
        for n in heaps {
            match n < solved_below {
                true => emitter.push(&[], 5),
                false => emitter.push(&take_away(n), 0),
            }
        }
    });
    for mode in [SweepMode::Dense, SweepMode::Frontier, SweepMode::Hybrid] {
        for kernel in Kernel::available() {
            let options = SolveOptions {
                turn_limit: TURNS,
                kernel: KernelChoice::Fixed(kernel),
                mode,
            };
            let solved = solve(
                &low,
                &level_starts[..=solved_below],
                Solution::empty(),
                options,
                |_| {},
            );
            let all = solve(&high, &level_starts, solved, options, |_| {});
            for n in 0..HEAPS {
                for turns in 1..=TURNS {
                    assert_eq!(
                        all.value(n, turns),
                        take_away_value(n, turns),
                        "heap {n}, {turns} turns, {mode:?}, {kernel:?}"
                    );
                }
            }
        }
    }
}

/// Level starts and caches that do not fit are refused with a message
/// saying what is wrong (starts that went down had solved on, a level's
/// size wrapping; no starts had indexed out of bounds).
#[test]
fn level_starts_that_do_not_fit_are_refused_with_a_reason() {
    let cache = chain(4, |n| n.saturating_sub(1), |_| -1);
    let from_8 = MoveCache::<2>::build_from(8, 12, |range, emitter| {
        range.for_each(|n| emitter.push(&[(n as u32 - 1, -1)], 0))
    });
    let options = SolveOptions {
        turn_limit: 3,
        kernel: KernelChoice::Fixed(Kernel::scalar()),
        mode: SweepMode::Dense,
    };
    for (cache, level_starts, reason) in [
        (
            &cache,
            &[0, 3, 2, 4][..],
            "level starts [0, 3, 2, 4]: from 0, never decreasing",
        ),
        (&cache, &[], "level starts []: from 0, never decreasing"),
        (
            &cache,
            &[1, 4],
            "level starts [1, 4]: from 0, never decreasing",
        ),
        (
            &cache,
            &[0, 3],
            "the last level ends at the cache's state count",
        ),
        (
            &from_8,
            &[0, 12],
            "the cache starts at state 8, past the first state to solve (0)",
        ),
    ] {
        let refusal = catch_unwind(AssertUnwindSafe(|| {
            solve(cache, level_starts, Solution::empty(), options, |_| {})
        }))
        .expect_err("refused");
        let message = refusal
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| refusal.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap();
        assert!(message.contains(reason), "{level_starts:?}: {message}");
    }
}
