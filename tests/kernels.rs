//! Every kernel the CPU supports against the scalar oracle: random caches,
//! awkward lengths and offsets, extreme values, and whole books.

use endbook::engine::{zeroed_layer, MoveCache, PackedChanges, LANES, VALUE_BOUND};
use endbook::games::oware::{generate, GenerateOptions, OwareBook, Sweep};
use endbook::kernels::rows::{RowMove, RowProgram, RowSweep, Run, RunLists};
use endbook::kernels::{Kernel, KernelChoice, KernelKind, LAYER_PADDING};
use std::io::Write;

mod common;
use common::{Rng, EVERY_SWEEP};

impl Rng {
    fn value(&mut self) -> i8 {
        (self.below(2 * VALUE_BOUND as u64 + 1) as i64 - VALUE_BOUND as i64) as i8
    }
}

/// The kernels to compare with scalar, announcing the ones this CPU lacks
/// (on the stderr handle itself, which the test harness does not capture).
fn kernels_under_test() -> Vec<Kernel> {
    for kind in KernelKind::ALL {
        if !kind.is_supported() {
            endbook::kernels::skip_unsupported(kind.name(), "kernels against scalar");
        }
    }
    Kernel::available()
        .filter(|k| k.kind() != KernelKind::Scalar)
        .collect()
}

/// How each state's moves are drawn.
#[derive(Clone, Copy)]
enum Shape {
    Random,
    NoMoves,
    AllSix,
    LastChildOnly,
}

fn random_cache(states: usize, shape: Shape, seed: u64) -> MoveCache<6> {
    MoveCache::build(states, |range, emitter| {
        let mut rng = Rng(seed ^ range.start as u64);
        for _ in range {
            let count = match shape {
                Shape::Random => rng.below(7) as usize,
                Shape::NoMoves => 0,
                Shape::AllSix | Shape::LastChildOnly => 6,
            };
            let moves: Vec<(u32, i8)> = (0..count)
                .map(|_| {
                    let child = match shape {
                        Shape::LastChildOnly => states - 1,
                        _ => rng.below(states as u64) as usize,
                    };
                    (child as u32, rng.below(VALUE_BOUND as u64 + 1) as i8)
                })
                .collect();
            emitter.push(&moves, rng.value());
        }
    })
}

fn random_layer(cache: &MoveCache<6>, rng: &mut Rng, fill: Option<i8>) -> Vec<i8> {
    let mut layer: Vec<i8> = (0..cache.blocks() * LANES + LAYER_PADDING)
        .map(|_| fill.unwrap_or_else(|| rng.value()))
        .collect();
    // Padding bytes are never a state's value; make them noisy to prove it.
    let len = layer.len();
    for byte in &mut layer[cache.states()..len] {
        *byte = rng.value();
    }
    layer
}

/// Sweeps `blocks` blocks from `first` with every kernel and compares with scalar.
fn check_range(cache: &MoveCache<6>, prev: &[i8], first: usize, blocks: usize, what: &str) {
    let mut expected = vec![0i8; blocks * LANES];
    Kernel::scalar().sweep(cache, first, prev, &mut expected);
    for kernel in kernels_under_test() {
        let mut got = vec![0x55i8; blocks * LANES];
        kernel.sweep(cache, first, prev, &mut got);
        assert!(
            got == expected,
            "{kernel} differs from scalar on {what}, blocks {first}..{}",
            first + blocks
        );
    }
}

#[test]
fn scalar_matches_the_definition() {
    let cache = random_cache(1001, Shape::Random, 7);
    let mut rng = Rng(3);
    let prev = random_layer(&cache, &mut rng, None);
    let mut out = vec![0i8; cache.blocks() * LANES];
    Kernel::scalar().sweep(&cache, 0, &prev, &mut out);
    for (state, &value) in out.iter().enumerate().take(cache.states()) {
        let best = cache
            .moves(state)
            .map(|(child, capture)| i32::from(capture) - i32::from(prev[child as usize]))
            .max();
        let expected = best.unwrap_or(cache.block_base(state / LANES)[state % LANES].into());
        assert_eq!(i32::from(value), expected, "state {state}");
    }
}

#[test]
fn kernels_match_scalar_on_random_caches_of_every_tail_length() {
    for states in [
        1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 1000, 8191, 8192, 8193, 40_005,
    ] {
        for shape in [
            Shape::Random,
            Shape::NoMoves,
            Shape::AllSix,
            Shape::LastChildOnly,
        ] {
            let cache = random_cache(states, shape, states as u64);
            let mut rng = Rng(states as u64 * 31);
            let prev = random_layer(&cache, &mut rng, None);
            check_range(&cache, &prev, 0, cache.blocks(), "the whole cache");
        }
    }
}

#[test]
fn kernels_match_scalar_on_every_offset_and_block_count() {
    let cache = random_cache(8 * 24 + 5, Shape::Random, 99);
    let mut rng = Rng(5);
    let prev = random_layer(&cache, &mut rng, None);
    // Block counts 0..=9 cover every remainder of the 4-block groups.
    for first in 0..cache.blocks() {
        for blocks in 0..=(cache.blocks() - first).min(9) {
            check_range(&cache, &prev, first, blocks, "a sub-range");
        }
    }
}

#[test]
fn kernels_match_scalar_on_extreme_values() {
    let cache = random_cache(777, Shape::AllSix, 11);
    let mut rng = Rng(1);
    for fill in [-VALUE_BOUND, VALUE_BOUND, 0, -1] {
        let prev = random_layer(&cache, &mut rng, Some(fill));
        check_range(
            &cache,
            &prev,
            0,
            cache.blocks(),
            &format!("a layer of {fill}"),
        );
    }
}

/// Every kernel forced, in every sweep mode, level by level and (but for
/// run sweeps, which solve one level at a time) all levels at once: the
/// book of scalar run sweeps.
#[test]
fn forced_kernels_generate_identical_books() {
    let book = |choice, mode, level_by_level| {
        let options = GenerateOptions {
            kernel: choice,
            mode,
            level_by_level,
            ..GenerateOptions::new(9)
        };
        let generated = generate(options, |_| {});
        // A forced kernel is the one the run reports (and the command line
        // prints), with no trials.
        if let KernelChoice::Fixed(kernel) = choice {
            assert_eq!(generated.solution.kernel, kernel, "{mode} sweeps");
            assert!(generated.solution.kernel_trials.is_empty());
        }
        OwareBook::to_bytes(&generated)
    };
    let scalar = KernelChoice::Fixed(Kernel::scalar());
    let reference = (Sweep::Runs, true);
    let expected = book(scalar, reference.0, reference.1);
    let kernels = kernels_under_test();
    for (mode, level_by_level) in EVERY_SWEEP {
        let choices = [scalar, KernelChoice::Auto]
            .into_iter()
            .chain(kernels.iter().map(|&kernel| KernelChoice::Fixed(kernel)))
            // Not the reference again.
            .filter(|&choice| (choice, mode, level_by_level) != (scalar, reference.0, reference.1));
        for choice in choices {
            assert!(
                book(choice, mode, level_by_level) == expected,
                "{choice:?} book differs ({mode} sweeps, level by level {level_by_level})"
            );
        }
    }
}

/// A random row program over a random mirror layer: rows of 0 to 200
/// positions (every length around the vector widths), 0 to 6 moves, each
/// cutting the row into runs of random lengths read from random places of
/// up to 20 child rows, with extreme values and captures. Also returns each
/// list's runs as made (the [`RunLists`] store short ones column by column).
/// With `extreme` `(value, capture)`, every mirror value and capture is
/// that one, and rows without moves alternate `-VALUE_BOUND` and
/// `VALUE_BOUND`.
fn random_program(
    rng: &mut Rng,
    rows: usize,
    extreme: Option<(i8, u8)>,
) -> (RunLists, RowProgram, Vec<i8>, Vec<Vec<Run>>) {
    let mirror: Vec<i8> = (0..5200)
        .map(|_| extreme.map_or_else(|| rng.value(), |(value, _)| value))
        .collect();
    let mut lists = RunLists::default();
    let mut made = Vec::new();
    let mut program = RowProgram::default();
    program.row_starts.push(0);
    program.row_moves.push(0);
    for _ in 0..rows {
        let len = rng.below(201) as u32;
        program.no_move.push(match extreme {
            Some(_) if program.no_move.len() % 2 == 0 => -VALUE_BOUND,
            Some(_) => VALUE_BOUND,
            None => rng.value(),
        });
        for _ in 0..rng.below(7) {
            // Up to 4 child rows, or up to 20 (the AVX2 gathers pick
            // starts for 8 slots, for 16 with a blend, beyond it none).
            let most = if rng.below(3) == 0 { 20 } else { 4 };
            let slots = 1 + rng.below(most) as u8;
            let first_base = program.bases.len() as u32;
            for _ in 0..slots {
                program.bases.push(rng.below(2000) as u32);
            }
            let mut runs = Vec::new();
            let mut src = 0;
            while src < len {
                // Short runs, and long ones of several whole vectors and
                // a part of one (their last vector overlaps the one before).
                let longest = if rng.below(4) == 0 { 130 } else { 40 };
                let run_len = (1 + rng.below(longest) as u32).min(len - src);
                let slot = rng.below(u64::from(slots)) as u8;
                // Some runs read the mirror's last bytes (no room for a
                // whole vector past them).
                let dst = match rng.below(8) {
                    0 => {
                        mirror.len() as u32
                            - program.bases[(first_base + u32::from(slot)) as usize]
                            - run_len
                    }
                    _ => rng.below(2900) as u32,
                };
                runs.push(Run {
                    src,
                    dst,
                    len: run_len,
                    capture: extreme.map_or_else(
                        || rng.below(VALUE_BOUND as u64 + 1) as u8,
                        |(_, capture)| capture,
                    ),
                    slot,
                });
                src += run_len;
            }
            let list = lists.push(&runs);
            assert_eq!(list as usize, made.len());
            made.push(runs);
            program.moves.push(RowMove { list, first_base });
        }
        program.row_moves.push(program.moves.len() as u32);
        program
            .row_starts
            .push(program.row_starts.last().unwrap() + len);
    }
    (lists, program, mirror, made)
}

/// The extremes of a row sweep: every child worth `-VALUE_BOUND` under the
/// largest capture (the largest score, `2 * VALUE_BOUND`), or `VALUE_BOUND`
/// under none (the smallest), and the two mixed.
const EXTREMES: [(i8, u8); 4] = [
    (-VALUE_BOUND, VALUE_BOUND as u8),
    (VALUE_BOUND, 0),
    (-VALUE_BOUND, 0),
    (VALUE_BOUND, VALUE_BOUND as u8),
];

/// Random programs (40 rounds), then the [`EXTREMES`] (two rounds each).
#[test]
fn row_kernels_match_scalar_on_random_programs() {
    let mut rng = Rng(0x2f0f_1e55);
    for round in 0..48usize {
        let rows = 1 + rng.below(60) as usize;
        let extreme = round.checked_sub(40).map(|i| EXTREMES[i % EXTREMES.len()]);
        let (lists, program, mirror, made) = random_program(&mut rng, rows, extreme);
        let positions = *program.row_starts.last().unwrap() as usize;
        let previous: Vec<i8> = (0..positions)
            .map(|i| if i % 3 == 0 { 0 } else { rng.value() })
            .collect();
        let sweep = RowSweep {
            lists: &lists,
            program: &program,
            mirror: &mirror,
            first_state: 1000 * round,
            only: None,
        };
        // The rows split in two parts at a random row (a different split each
        // round), as the solver's chunks are.
        let split = rng.below(rows as u64 + 1) as usize;
        let run = |kernel: Kernel| {
            let mut out = vec![0i8; positions];
            let at = program.row_starts[split] as usize;
            let (low, high) = out.split_at_mut(at);
            let mut changes = kernel.sweep_rows(&sweep, 0..split, &previous[..at], low);
            changes.append(kernel.sweep_rows(&sweep, split..rows, &previous[at..], high));
            (out, changes)
        };
        let (expected, expected_changes) = run(Kernel::scalar());
        // The oracle against the definition, row by row.
        for row in 0..rows {
            let (start, end) = (program.row_starts[row], program.row_starts[row + 1]);
            let moves = &program.moves
                [program.row_moves[row] as usize..program.row_moves[row + 1] as usize];
            for column in 0..end - start {
                let best = moves
                    .iter()
                    .map(|m| {
                        let run = made[m.list as usize]
                            .iter()
                            .find(|r| (r.src..r.src + r.len).contains(&column))
                            .unwrap();
                        let base = program.bases[(m.first_base + u32::from(run.slot)) as usize];
                        let child = mirror[(base + run.dst + column - run.src) as usize];
                        run.capture as i8 - child
                    })
                    .max()
                    .unwrap_or(program.no_move[row]);
                assert_eq!(expected[(start + column) as usize], best);
            }
        }
        let mut changes = PackedChanges::default();
        changes.push_differences(1000 * round, &previous, &expected);
        assert!(changes == expected_changes);
        for kernel in kernels_under_test() {
            let (out, changes) = run(kernel);
            assert_eq!(out, expected, "{kernel}, round {round}");
            assert!(
                changes == expected_changes,
                "{kernel} changes, round {round}"
            );
        }
        // Only the rows whose bit is set (sparse turns): those get their
        // values, the others are left as they were, and the changes are
        // those of the rows swept.
        let only: Vec<u64> = (0..rows.div_ceil(64)).map(|_| rng.next()).collect();
        let chosen = |row: usize| only[row / 64] & (1 << (row % 64)) != 0;
        let sparse = RowSweep {
            only: Some(&only),
            ..sweep
        };
        let before: Vec<i8> = (0..positions).map(|_| rng.value()).collect();
        let mut expected_sparse = before.clone();
        for row in (0..rows).filter(|&row| chosen(row)) {
            let cells = program.row_starts[row] as usize..program.row_starts[row + 1] as usize;
            expected_sparse[cells.clone()].copy_from_slice(&expected[cells]);
        }
        for kernel in kernels_under_test() {
            let mut out = before.clone();
            let changes = kernel.sweep_rows(&sparse, 0..rows, &previous, &mut out);
            assert_eq!(
                out, expected_sparse,
                "{kernel} on chosen rows, round {round}"
            );
            let mut swept_changes = PackedChanges::default();
            let mut swept_previous = out.clone();
            for row in (0..rows).filter(|&row| !chosen(row)) {
                let cells = program.row_starts[row] as usize..program.row_starts[row + 1] as usize;
                swept_previous[cells.clone()].copy_from_slice(&out[cells]);
            }
            for row in (0..rows).filter(|&row| chosen(row)) {
                let cells = program.row_starts[row] as usize..program.row_starts[row + 1] as usize;
                swept_previous[cells.clone()].copy_from_slice(&previous[cells]);
            }
            swept_changes.push_differences(1000 * round, &swept_previous, &out);
            assert!(
                changes == swept_changes,
                "{kernel} changes on chosen rows, round {round}"
            );
        }
    }
}

/// Run lists from safe code cannot make a kernel read out of bounds: a run
/// whose columns pass `u32::MAX` is refused as it is pushed (it had wrapped,
/// the list's bounds had been taken from the wrapped sum, and the AVX2
/// gathers read past the mirror), and a stretch reading past the mirror
/// panics in every kernel.
#[test]
fn run_lists_out_of_range_panic_instead_of_reading_past_the_mirror() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let short = |dst: u32| Run {
        src: 0,
        dst,
        len: 8,
        capture: 0,
        slot: 0,
    };
    let wraps = catch_unwind(|| RunLists::default().push(&[short(u32::MAX - 4)]));
    assert!(wraps.is_err(), "a run wrapping past u32::MAX is pushed");
    for dst in [60, 1 << 20, 200_000_000] {
        let mut lists = RunLists::default();
        let list = lists.push(&[short(dst)]);
        let program = RowProgram {
            row_starts: vec![0, 8],
            row_moves: vec![0, 1],
            no_move: vec![0],
            moves: vec![RowMove {
                list,
                first_base: 0,
            }],
            bases: vec![0],
        };
        let mirror = vec![0i8; 64];
        let sweep = RowSweep {
            lists: &lists,
            program: &program,
            mirror: &mirror,
            first_state: 0,
            only: None,
        };
        for kernel in kernels_under_test() {
            let swept = catch_unwind(AssertUnwindSafe(|| {
                kernel.sweep_rows(&sweep, 0..1, &[0; 8], &mut [0; 8])
            }));
            assert!(swept.is_err(), "{kernel} read columns {dst}.. of 64");
        }
    }
}

#[test]
fn auto_reports_a_trial_for_every_available_kernel() {
    let generated = generate(GenerateOptions::new(8), |_| {});
    let tried: Vec<Kernel> = generated
        .solution
        .kernel_trials
        .iter()
        .map(|t| t.kernel)
        .collect();
    assert_eq!(tried, Kernel::available().collect::<Vec<_>>());
    let fastest = generated
        .solution
        .kernel_trials
        .iter()
        .min_by(|a, b| a.ns_per_state.total_cmp(&b.ns_per_state))
        .unwrap();
    assert!(fastest.ns_per_state.is_finite());
    assert_eq!(generated.solution.kernel, fastest.kernel);
}

/// A cache may hold up to `u32::MAX` states, past what the AVX2 gathers'
/// signed 32-bit offsets reach (`avx2` hands such a cache to `portable`):
/// a cache of the last 16 states below 2^31 + 16, children up to the last,
/// and one ending at the last block the gathers reach, 2^31 - 8 states
/// (`avx2` gathering there itself), are swept alike by every kernel (each
/// 2 GiB layer is zeroed memory the system maps only where it is touched).
#[test]
fn kernels_match_scalar_up_to_and_past_the_reach_of_signed_offsets() {
    let reach = i32::MAX as usize / LANES * LANES;
    if KernelKind::Avx2.is_supported() {
        let _ = writeln!(
            std::io::stderr(),
            "kernel avx2 past 2^31 states: swept by portable, as it is outside tests"
        );
    }
    sweep_far_from_zero(1 << 31, (1 << 31) + 16, "states past 2^31");
    sweep_far_from_zero(reach - 16, reach, "the last states the gathers reach");
}

/// A cache of states `first..states`, their children at both ends of the
/// range and far below it, swept by every kernel and by the definition.
fn sweep_far_from_zero(first: usize, states: usize, what: &str) {
    let cache: MoveCache<6> = MoveCache::build_from(first, states, |range, emitter| {
        for state in range {
            let children = [states - 1, state, first - 1, 7, states - 2, first];
            let moves: Vec<(u32, i8)> = children
                .iter()
                .take(state % 7)
                .enumerate()
                .map(|(k, &child)| (child as u32, k as i8))
                .collect();
            emitter.push(&moves, -3);
        }
    });
    let mut prev = zeroed_layer(cache.blocks() * LANES + LAYER_PADDING);
    for (i, at) in [7, first - 1, first, states - 2, states - 1]
        .into_iter()
        .enumerate()
    {
        prev[at] = 5 - 3 * i as i8;
    }
    let blocks = cache.blocks() - cache.first_block();
    check_range(&cache, &prev, cache.first_block(), blocks, what);
    let mut out = vec![0i8; blocks * LANES];
    Kernel::scalar().sweep(&cache, cache.first_block(), &prev, &mut out);
    for (state, &value) in (first..states).zip(&out) {
        let best = cache
            .moves(state)
            .map(|(child, capture)| i32::from(capture) - i32::from(prev[child as usize]))
            .max()
            .unwrap_or(-3);
        assert_eq!(i32::from(value), best, "state {state}");
    }
    assert!(
        out.iter().any(|&v| v != 0 && v != -3),
        "children read: {out:?}"
    );
}

/// `ENDBOOK_REQUIRE_SIMD` knows every variant a CPU may lack, and only
/// those: the plain ones (`scalar`, `portable`) run everywhere.
#[test]
fn simd_variants_are_the_variants_a_cpu_may_lack() {
    use endbook::games::oware::MoveGenKind;
    use endbook::kernels::{Packing, SIMD_VARIANTS};
    let mut names: Vec<&str> = KernelKind::ALL.iter().map(|k| k.name()).collect();
    names.extend(Packing::ALL.iter().map(|p| p.name()));
    names.extend(MoveGenKind::ALL.iter().map(|m| m.name()));
    names.retain(|name| !matches!(*name, "scalar" | "portable"));
    names.sort_unstable();
    names.dedup();
    assert_eq!(names, SIMD_VARIANTS);
}
