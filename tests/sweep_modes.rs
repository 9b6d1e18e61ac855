//! Dense, frontier, hybrid and run sweeps compute identical books, whether
//! the levels are solved one at a time or all in one pass (run sweeps always
//! solve one at a time), and whether a book is extended or made at once.

use endbook::engine::PackedChanges;
use endbook::games::oware::{
    extend, generate, runs, GenerateOptions, GenerateProgress, Generated, OwareBook, Sweep,
};
use sha2::{Digest, Sha256};

mod common;
use common::EVERY_SWEEP;

fn generate_with(max_seeds: u32, mode: Sweep) -> Generated {
    generate_levels(max_seeds, mode, true)
}

fn generate_levels(max_seeds: u32, mode: Sweep, level_by_level: bool) -> Generated {
    generate(
        GenerateOptions {
            mode,
            level_by_level,
            ..GenerateOptions::new(max_seeds)
        },
        |_| {},
    )
}

#[test]
fn modes_give_identical_books_up_to_ten_seeds() {
    for max_seeds in 1..=10 {
        let digest = |mode, by_level| {
            Sha256::digest(OwareBook::to_bytes(&generate_levels(
                max_seeds, mode, by_level,
            )))
        };
        let dense = digest(Sweep::Dense, false);
        let others = EVERY_SWEEP
            .into_iter()
            .filter(|&sweep| sweep != (Sweep::Dense, false));
        for (mode, by_level) in others {
            assert_eq!(
                digest(mode, by_level),
                dense,
                "{mode}, level by level {by_level}, {max_seeds} seeds"
            );
        }
    }
}

#[test]
fn modes_give_identical_changes_at_twelve_seeds() {
    let dense = generate_levels(12, Sweep::Dense, false).solution;
    assert_eq!(dense.frontier_turns, 0);
    let others = [
        (Sweep::Dense, true),
        (Sweep::Frontier, true),
        (Sweep::Hybrid, true),
        (Sweep::Hybrid, false),
        (Sweep::Runs, true),
    ];
    for (mode, by_level) in others {
        let other = generate_levels(12, mode, by_level).solution;
        let mode = format!("{mode}, level by level {by_level}");
        // Frontier, hybrid and run sweeps all sweep some late layers partly.
        assert_eq!(
            other.frontier_turns > 0,
            !mode.starts_with("dense"),
            "{mode}: layers swept only in part"
        );
        assert_eq!(other.turns_swept, dense.turns_swept, "{mode}");
        assert!(other.changes == dense.changes, "{mode} changes differ");
        let last_changes = |s: &endbook::engine::Solution| {
            s.levels.iter().map(|l| l.last_change).collect::<Vec<_>>()
        };
        assert_eq!(last_changes(&other), last_changes(&dense), "{mode}");
    }
}

#[test]
fn frontier_recomputes_far_fewer_states_than_dense() {
    // Only parents of changed states are recomputed: at 11 seeds about a
    // third of the dense sweeps' updates (66 M against 198 M when measured).
    let dense = generate_with(11, Sweep::Dense).solution;
    let frontier = generate_with(11, Sweep::Frontier).solution;
    let hybrid = generate_with(11, Sweep::Hybrid).solution;
    assert!(
        frontier.state_updates * 2 < dense.state_updates,
        "frontier {} vs dense {} state updates",
        frontier.state_updates,
        dense.state_updates
    );
    assert!(frontier.state_updates < hybrid.state_updates);
    assert!(hybrid.state_updates < dense.state_updates);
}

/// Hybrid sweeps go dense while many states change and by frontier once
/// few do: at 11 seeds the top level's second turn (after the first's
/// many changes) is dense, and its last is by frontier.
#[test]
fn hybrid_sweeps_turn_to_frontier_late() {
    let mut top = Vec::new();
    generate(
        GenerateOptions {
            mode: Sweep::Hybrid,
            ..GenerateOptions::new(11)
        },
        |progress| {
            if let GenerateProgress::Turn { seeds, report } = progress {
                if *seeds.start() == 11 {
                    top.push((report.turn, report.frontier));
                }
            }
        },
    );
    assert_eq!(top.get(1), Some(&(2, false)), "turn 2 dense");
    assert!(top.last().is_some_and(|&(_, frontier)| frontier), "{top:?}");
}

#[test]
fn run_sweeps_extend_books_of_any_sweep() {
    // Levels solved by the cache-based sweeps carry no mirror changes: the
    // run sweeps derive them by replay before solving the levels above.
    let (low, high) = (7, 10);
    let base = generate_with(low, Sweep::Hybrid);
    let runs = GenerateOptions {
        mode: Sweep::Runs,
        ..GenerateOptions::new(high)
    };
    let extended = extend(base, runs, |_| {});
    let at_once = generate_with(high, Sweep::Dense);
    assert!(extended.solution.changes == at_once.solution.changes);
    assert_eq!(
        OwareBook::to_bytes(&extended),
        OwareBook::to_bytes(&at_once),
        "{low} seeds extended to {high}"
    );
    // And run sweeps on top of a book of run sweeps read back from its file.
    let book = OwareBook::from_generated(&generate_with(low, Sweep::Runs));
    let extended = extend(Generated::from_book(&book, runs), runs, |_| {});
    assert_eq!(
        OwareBook::to_bytes(&extended),
        OwareBook::to_bytes(&at_once)
    );
}

#[test]
fn changes_stream_turn_by_turn_in_stretches_as_recorded() {
    let solution = generate_with(8, Sweep::Runs).solution;
    let states = *solution.level_starts.last().unwrap();
    // Every board's changes from the per-layer lists, the slow way.
    let mut expected = vec![Vec::new(); states];
    for (turn, changes) in (1..).zip(&solution.changes) {
        for (state, value) in changes.iter() {
            expected[state as usize].push((turn, value));
        }
    }
    for (start, end, stretch) in [
        (0, states, 1000),
        (1, 2, 1),
        (5000, 70_000, 4096),
        (states - 9, states, 3),
    ] {
        let mut cursors = solution.changes_from(start);
        let mut got = vec![Vec::new(); end - start];
        let mut last_turn = 0;
        for stretch_start in (start..end).step_by(stretch) {
            let stretch_end = (stretch_start + stretch).min(end);
            cursors.take_below(stretch_end, |turn, state, value| {
                let state = state as usize;
                assert!(
                    (stretch_start..stretch_end).contains(&state),
                    "state {state}"
                );
                assert!(turn >= last_turn, "turn by turn");
                last_turn = turn;
                got[state - start].push((turn, value));
            });
            last_turn = 0;
        }
        assert!(got[..] == expected[start..end], "{start}..{end}");
    }
}

#[test]
fn changes_taken_level_by_level_are_the_whole_solution() {
    // What a generator writing its book in the background does: take each
    // level's changes as soon as it is solved and solve the next without them.
    let max_seeds = 9;
    let mut parts = Vec::new();
    let taken = generate(GenerateOptions::new(max_seeds), |progress| {
        if let GenerateProgress::LevelDone { seeds, generated } = progress {
            let part = generated.solution.take_changes();
            assert_eq!(part.levels.len(), seeds as usize + 1);
            assert_eq!(generated.solution.forgotten_levels, seeds as usize + 1);
            assert!(generated.solution.changes.iter().all(|c| c.is_empty()));
            // Read as the encoder reads it: from the level's first board on.
            let level = seeds as usize;
            let mut cursors = part.changes_from(part.level_starts[level]);
            let mut read = 0;
            cursors.take_below(part.level_starts[level + 1], |_, _, _| read += 1);
            assert_eq!(read, part.changes.iter().map(|c| c.len()).sum::<usize>());
            parts.push(part);
        }
    });
    let whole = generate_with(max_seeds, Sweep::Runs).solution;
    assert_eq!(parts.len(), max_seeds as usize + 1);
    assert_eq!(taken.solution.levels.len(), whole.levels.len());
    let mut joined = vec![PackedChanges::default(); whole.changes.len()];
    for part in parts {
        for (joined, changes) in joined.iter_mut().zip(part.changes) {
            joined.append(changes);
        }
    }
    assert!(joined == whole.changes);
    // Copied instead (as for cache sweeps), from a level on.
    for from in [0, 6, max_seeds as usize] {
        let copy = whole.copy_changes(from);
        assert_eq!(copy.forgotten_levels, from);
        for level in from..=max_seeds as usize {
            assert!(copy.level_layers(level) == whole.level_layers(level));
        }
    }
    assert!(whole.changes.iter().map(|c| c.len()).sum::<usize>() > 100_000);
}

#[test]
fn run_sweeps_on_a_pools_workers_give_the_same_book() {
    // The CLI solves on a worker of its pool, where each turn of a level
    // large enough is shared out and the other workers wait for the next
    // step awake (engine::awake); from outside a pool, as above, neither
    // happens. Ten seeds: levels 6..=10 are shared out. Three threads on a
    // machine of two cores leave a waiter with no core of its own.
    let max_seeds = 10;
    let reference = Sha256::digest(OwareBook::to_bytes(&generate_levels(
        max_seeds,
        Sweep::Dense,
        false,
    )));
    for threads in 1..=3 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for _ in 0..2 {
            let generated = pool.install(|| {
                assert!(rayon::current_thread_index().is_some());
                generate_with(max_seeds, Sweep::Runs)
            });
            assert_eq!(
                Sha256::digest(OwareBook::to_bytes(&generated)),
                reference,
                "{threads} threads"
            );
            // Levels of SMALL_LEVEL boards or more were shared out (6..=10),
            // the smaller ones solved on one thread.
            let shared: Vec<usize> = (generated.solution.levels.iter())
                .map(|level| level.threads)
                .collect();
            let expected: Vec<usize> = (generated.solution.levels.iter())
                .map(|level| {
                    if level.states < runs::SMALL_LEVEL {
                        1
                    } else {
                        threads
                    }
                })
                .collect();
            assert_eq!(shared, expected, "{threads} threads");
            assert_eq!(expected[6..], [threads; 5]);
        }
    }
}
