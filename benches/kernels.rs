//! Kernel and movegen variants on real data: the child cache of the 12-seed
//! Oware book and its layer 20 (values with 20 turns left).
//!
//! - `sweep/<kernel>`: one dense layer update over all 2,704,156 boards, on
//!   one thread (the kernel alone) and on all threads (as the generator runs it);
//!   throughput in state updates.
//! - `rows/<kernel>`: one run sweep of the 12-seed level (1,352,078 boards)
//!   from the mirror image of layer 20, as the default generator sweeps it;
//!   throughput in state updates.
//! - `rows16/<kernel>`: one run sweep of the 16-seed level (13,037,895
//!   boards, 30.4 MB of mirror layer: past the L2 cache, where the 12-seed
//!   one fits) from synthetic values, starting from its own result (no
//!   changes to pack: the sweep alone); throughput in state updates.
//! - `movegen/<variant>`: every legal move of every 12-seed board; throughput
//!   in moves.
//! - `transpose/`: the mirror image of the 12-seed level's layer 20, as each
//!   dense turn of a run sweep makes it, and of the 16-seed level (random
//!   values, 13 MB: beyond the caches); throughput in boards.
//! - `packing/<variant>`: the change list from layer 20 to layer 21 of all
//!   2,704,156 boards, packed 2,048 boards at a time as the sweeps pack
//!   theirs, on one thread; `portable` and, where the CPU has them, `avx2`
//!   and `avx512`;
//!   throughput in boards.
//!
//! Every variant's output is checked against the scalar (or portable) one's
//! before it is timed, so a broken variant cannot look fast, whichever
//! benches a filter picks; the oracles themselves against an independent
//! computation (the cache kernels' layer for `rows`, the rules module for
//! `movegen`, the definition for `packing`, board-by-board placement for
//! `transpose`, the rules module over the layer a synthetic mirror mirrors
//! for `rows16`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use endbook::engine::{zeroed_layer, MoveCache, PackedChanges, LANES};
use endbook::games::oware::generate::build_cache;
use endbook::games::oware::movegen::GeneratedMove;
use endbook::games::oware::runs::{LevelRows, RunSolver};
use endbook::games::oware::{rules, Board, BoardIndex, MoveGen};
use endbook::kernels::rows::RowSweep;
use endbook::kernels::{Kernel, KernelChoice, Packing, LAYER_PADDING};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const SEEDS: u32 = 12;
/// Layers computed before measuring, so the values are realistic.
const WARM_LAYERS: usize = 20;

fn sweep_serial(kernel: Kernel, cache: &MoveCache<6>, prev: &[i8], out: &mut [i8]) {
    kernel.sweep(cache, 0, prev, out);
}

fn sweep_parallel(kernel: Kernel, cache: &MoveCache<6>, prev: &[i8], out: &mut [i8]) {
    const CHUNK: usize = 8192;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, out)| kernel.sweep(cache, i * CHUNK / LANES, prev, out));
}

fn kernels(c: &mut Criterion) {
    let index = BoardIndex::new(SEEDS);
    let cache = build_cache(&index, 0, MoveGen::auto());
    let len = cache.blocks() * LANES;
    let mut prev = vec![0i8; len + LAYER_PADDING];
    let mut next = prev.clone();
    for _ in 0..WARM_LAYERS {
        sweep_parallel(Kernel::scalar(), &cache, &prev, &mut next[..len]);
        std::mem::swap(&mut prev, &mut next);
    }
    let mut expected = vec![0i8; len];
    sweep_serial(Kernel::scalar(), &cache, &prev, &mut expected);
    rows(c, &index, &prev, &expected);
    rows_beyond_cache(c);
    packing(c, &prev[..len], &expected);
    transpose(c, &index, &prev);

    let mut group = c.benchmark_group("sweep");
    group.throughput(Throughput::Elements(len as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    type Sweep = fn(Kernel, &MoveCache<6>, &[i8], &mut [i8]);
    let modes: [(&str, Sweep); 2] = [("1-thread", sweep_serial), ("all-threads", sweep_parallel)];
    for kernel in Kernel::available() {
        for (mode, sweep) in modes {
            let mut out = vec![0i8; len];
            sweep(kernel, &cache, &prev, &mut out);
            assert!(out == expected, "{kernel} ({mode}) computed a wrong layer");
            group.bench_function(BenchmarkId::new(kernel.name(), mode), |b| {
                b.iter(|| sweep(kernel, black_box(&cache), black_box(&prev), &mut out))
            });
        }
    }
    group.finish();
}

/// The run sweep of the top level from layer 20 (`layer`, every board),
/// checked against the cache kernels' layer 21 (`expected`).
fn rows(c: &mut Criterion, index: &BoardIndex, layer: &[i8], expected: &[i8]) {
    let starts = index.level_starts();
    let mut mirror = vec![0i8; index.states()];
    for seeds in 0..=SEEDS {
        let range = starts[seeds as usize]..starts[seeds as usize + 1];
        LevelRows::new(seeds).transpose(&layer[range.clone()], &mut mirror[range]);
    }
    let solver = RunSolver::new(SEEDS, 200, KernelChoice::Fixed(Kernel::scalar()));
    let program = solver.compile_level(SEEDS);
    let level = starts[SEEDS as usize]..starts[SEEDS as usize + 1];
    let sweep = RowSweep {
        lists: solver.run_lists(),
        program: &program,
        mirror: &mirror,
        first_state: level.start,
        only: None,
    };
    row_sweeps(c, "rows", &sweep, &layer[level.clone()], &expected[level]);
}

/// Fills `values` with values in `-spread..=spread` from the tests' data
/// generator seeded with `seed`.
fn fill_random(values: &mut [i8], seed: u64, spread: i8) {
    let mut rng = Rng(seed);
    let width = 2 * spread as u64 + 1;
    for value in values {
        *value = rng.below(width) as i8 - spread;
    }
}

/// The run sweep of the 16-seed level from a synthetic mirror layer of
/// every level up to it, each kernel checked against the scalar one.
fn rows_beyond_cache(c: &mut Criterion) {
    const LARGE: u32 = 16;
    let solver = RunSolver::new(LARGE, 200, KernelChoice::Fixed(Kernel::scalar()));
    let program = solver.compile_level(LARGE);
    let index = BoardIndex::new(LARGE);
    let starts = index.level_starts();
    let level = starts[LARGE as usize]..starts[LARGE as usize + 1];
    // Values in the range the book's take.
    let mut mirror = vec![0i8; level.end];
    fill_random(&mut mirror, 0x9e37_79b9_7f4a_7c15, 20);
    let sweep = RowSweep {
        lists: solver.run_lists(),
        program: &program,
        mirror: &mirror,
        first_state: level.start,
        only: None,
    };
    let mut expected = vec![0i8; level.len()];
    Kernel::scalar().sweep_rows(
        &sweep,
        0..program.rows(),
        &vec![0; level.len()],
        &mut expected,
    );
    // The oracle against the definition: the mirror's own image is the
    // layer it mirrors (flipping a board twice gives it back), and each
    // board's value the best of its moves' captures less its child's value
    // in that layer (or its own seeds without a move), moves by the rules
    // module.
    let mut layer = vec![0i8; level.end];
    for seeds in 0..=LARGE {
        let range = starts[seeds as usize]..starts[seeds as usize + 1];
        LevelRows::new(seeds).transpose(&mirror[range.clone()], &mut layer[range]);
    }
    for (at, (board, _)) in index.boards_from(level.start).enumerate() {
        let value = rules::legal_moves(&board)
            .map(|outcome| outcome.capture as i8 - layer[index.index(&outcome.child())])
            .max()
            .unwrap_or(rules::no_move_score(&board) as i8);
        assert_eq!(expected[at], value, "rows16's oracle is wrong at {board}");
    }
    row_sweeps(c, "rows16", &sweep, &expected, &expected);
}

/// Bench group `name`: `sweep` (a whole level's rows, from `previous`) by
/// each kernel on one thread and on all, each checked before it is timed:
/// its layer against `expected`, its changes against those from
/// `previous` to `expected`.
fn row_sweeps(
    c: &mut Criterion,
    name: &str,
    sweep: &RowSweep<'_>,
    previous: &[i8],
    expected: &[i8],
) {
    let program = sweep.program;
    let ranges = program.row_ranges(1 << 15);
    let run = |kernel: Kernel, threads: bool, out: &mut [i8]| {
        if !threads {
            return vec![kernel.sweep_rows(sweep, 0..program.rows(), previous, out)];
        }
        let mut parts = Vec::new();
        let mut rest = out;
        for range in &ranges {
            let start = program.row_starts[range.start] as usize;
            let len = program.row_starts[range.end] as usize - start;
            let (part, tail) = rest.split_at_mut(len);
            parts.push((range.clone(), start, part));
            rest = tail;
        }
        parts
            .into_par_iter()
            .map(|(range, start, out)| {
                kernel.sweep_rows(sweep, range, &previous[start..start + out.len()], out)
            })
            .collect()
    };
    let mut expected_changes = PackedChanges::default();
    expected_changes.push_differences_portable(sweep.first_state, previous, expected);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(expected.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for kernel in Kernel::available() {
        for (mode, threads) in [("1-thread", false), ("all-threads", true)] {
            let mut out = vec![0i8; expected.len()];
            let changes = PackedChanges::concatenate(run(kernel, threads, &mut out));
            assert!(
                out == expected && changes == expected_changes,
                "{kernel} {name} ({mode}): a wrong layer"
            );
            group.bench_function(BenchmarkId::new(kernel.name(), mode), |b| {
                b.iter(|| black_box(run(kernel, threads, &mut out)))
            });
        }
    }
    group.finish();
}

/// The changes from `old` to `new` packed by each packing variant.
fn packing(c: &mut Criterion, old: &[i8], new: &[i8]) {
    const SPAN: usize = 2048;
    let pack = |packing: Packing| {
        let mut changes = PackedChanges::default();
        for (i, (old, new)) in old.chunks(SPAN).zip(new.chunks(SPAN)).enumerate() {
            packing.push_differences(&mut changes, i * SPAN, old, new);
        }
        changes
    };
    // The oracle against the definition: one change per differing byte,
    // each with its new value.
    let expected = pack(Packing::Portable);
    let differing = old.iter().zip(new).filter(|(a, b)| a != b).count();
    assert!(!expected.is_empty() && expected.len() == differing);
    assert!(expected
        .iter()
        .all(|(s, v)| new[s as usize] == v && old[s as usize] != v));
    let mut group = c.benchmark_group("packing");
    group.throughput(Throughput::Elements(old.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for packing in Packing::ALL {
        if !packing.is_supported() {
            endbook::kernels::skip_unsupported(packing.name(), "packing bench");
            continue;
        }
        assert!(
            pack(packing) == expected,
            "{packing} packed different changes"
        );
        group.bench_function(packing.name(), |b| b.iter(|| pack(black_box(packing))));
    }
    group.finish();
}

/// The mirror image of the 12-seed level's layer 20, as every dense run
/// sweep turn makes it: checked against each board's flip first.
fn transpose(c: &mut Criterion, index: &BoardIndex, layer: &[i8]) {
    let first = index.level_starts()[SEEDS as usize];
    let rows = LevelRows::new(SEEDS);
    let values = &layer[first..first + rows.states()];
    let mut mirror = vec![0i8; values.len()];
    rows.transpose(values, &mut mirror);
    for ((board, _), value) in index.boards_from(first).zip(values) {
        let flipped = index.index(&board.flipped()) - first;
        assert_eq!(mirror[flipped], *value, "transpose misplaced {board}");
    }
    let mut group = c.benchmark_group("transpose");
    group.throughput(Throughput::Elements(values.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function("1-thread", |b| {
        b.iter(|| one.install(|| rows.transpose(black_box(values), &mut mirror)))
    });
    group.bench_function("all-threads", |b| {
        b.iter(|| rows.transpose(black_box(values), &mut mirror))
    });
    // A level far beyond the caches, on huge pages as the sweeps' layers:
    // the 16-seed one, random values. Every 997th board lands at its flip,
    // and mirroring twice gives them all back.
    const LARGE: u32 = 16;
    let rows = LevelRows::new(LARGE);
    let mut values = zeroed_layer(rows.states());
    fill_random(&mut values, 0x2545_f491_4f6c_dd1d, 48);
    let mut mirror = zeroed_layer(values.len());
    let mut back = zeroed_layer(values.len());
    rows.transpose(&values, &mut mirror);
    let large = BoardIndex::new(LARGE);
    let first = large.level_starts()[LARGE as usize];
    for ((board, _), value) in large.boards_from(first).zip(values.iter()).step_by(997) {
        let flipped = large.index(&board.flipped()) - first;
        assert_eq!(mirror[flipped], *value, "transpose misplaced {board}");
    }
    rows.transpose(&mirror, &mut back);
    assert!(
        back == values,
        "mirroring the 16-seed level twice changed it"
    );
    group.throughput(Throughput::Elements(values.len() as u64));
    group.bench_function("16-seeds-all-threads", |b| {
        b.iter(|| rows.transpose(black_box(&values), &mut mirror))
    });
    group.finish();
}

fn movegens(c: &mut Criterion) {
    let index = BoardIndex::new(SEEDS);
    let start = index.level_starts()[SEEDS as usize];
    let boards: Vec<Board> = index.boards_from(start).map(|(board, _)| board).collect();
    let run = |movegen: MoveGen| {
        let mut out = [GeneratedMove {
            capture: 0,
            child: Board::default(),
        }; 6];
        let (mut moves, mut digest) = (0u64, 0u64);
        for board in &boards {
            let count = movegen.moves(black_box(board), &mut out);
            moves += count as u64;
            for generated in &out[..count] {
                digest = digest.rotate_left(5)
                    ^ u64::from(generated.capture)
                    ^ index.index(&generated.child) as u64;
            }
        }
        (moves, digest)
    };
    // The oracle against the rules module (a separate, plain implementation
    // of sowing and capture), the moves in the same house order.
    let (mut moves, mut digest) = (0u64, 0u64);
    for board in &boards {
        for outcome in rules::legal_moves(board) {
            moves += 1;
            digest = digest.rotate_left(5)
                ^ u64::from(outcome.capture)
                ^ index.index(&outcome.child()) as u64;
        }
    }
    let expected = run(MoveGen::scalar());
    assert_eq!(
        expected,
        (moves, digest),
        "the scalar move generator disagrees with the rules"
    );
    let mut group = c.benchmark_group("movegen");
    group.throughput(Throughput::Elements(expected.0));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for movegen in MoveGen::available() {
        assert_eq!(
            run(movegen),
            expected,
            "{movegen} generated different moves"
        );
        group.bench_function(movegen.kind().name(), |b| b.iter(|| run(movegen)));
    }
    group.finish();
}

criterion_group!(benches, kernels, movegens);
criterion_main!(benches);
