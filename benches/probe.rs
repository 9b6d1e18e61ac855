//! The 12-seed book, compact and layer encodings:
//!
//! - `probe/<encoding>`: lookups from the mapped book, random (board, turns
//!   left) queries, one `value` call each. Throughput in lookups; every
//!   query's answer from every encoding is checked against the generator's
//!   own replay before timing.
//! - `encode/<encoding>`: the whole book encoded in memory from the
//!   generator's change lists, on all threads, as `generate` encodes each
//!   level. Throughput in value changes; the bytes must equal the book
//!   written for `probe`.
//! - `encode/level-12-1-thread` and `encode/level-12-all-threads`: the top
//!   level alone (1,352,078 boards, 10.6 million changes) by
//!   `compact::encode_level` in the books' encoding, on one thread and on
//!   all: the encoder's cost a change (at 20 seeds it is about a fifth of a
//!   generation's CPU time). Throughput in changes; before timing, the
//!   records are read back by the book's reader (`compact::Level`) and
//!   compared change by change with the generator's lists.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use endbook::book::compact::{self, Codec, Level};
use endbook::engine::{Solution, VALUE_BOUND};
use endbook::games::oware::{generate, Board, Encoding, GenerateOptions, OwareBook};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const SEEDS: u32 = 12;
const QUERIES: usize = 100_000;

/// Every change of level `level` as (board within the level, turn, value),
/// board by board, turns ascending: from the generator's lists.
fn generated_changes(solution: &Solution, level: usize) -> Vec<(usize, u32, i8)> {
    let (start, end) = (
        solution.level_starts[level],
        solution.level_starts[level + 1],
    );
    let mut changes: Vec<(usize, u32, i8)> = (1..)
        .zip(&solution.changes)
        .flat_map(|(turn, list)| {
            list.within(start, end)
                .map(move |(state, value)| (state as usize - start, turn, value))
        })
        .collect();
    changes.sort_unstable_by_key(|&(board, turn, _)| (board, turn));
    changes
}

/// Panics unless `encoded` reads back, through the book's reader, as
/// exactly `expected`.
fn assert_reads_back(
    encoded: &[u8],
    boards: usize,
    last_change: u32,
    expected: &[(usize, u32, i8)],
) {
    let (level, latest) = Level::parse(encoded, Codec::V2, boards, last_change, VALUE_BOUND)
        .expect("the encoded level parses");
    assert_eq!(latest, last_change, "the level's last change");
    let mut read = Vec::with_capacity(expected.len());
    level.for_each_change(|board, turn, value| read.push((board, turn, value)));
    assert_eq!(read.len(), expected.len(), "changes read back");
    if let Some(at) = (0..read.len()).find(|&i| read[i] != expected[i]) {
        panic!(
            "change {at}: read back {:?}, generated {:?}",
            read[at], expected[at]
        );
    }
}

fn probe(c: &mut Criterion) {
    let generated = generate(GenerateOptions::new(SEEDS), |_| {});
    let index = endbook::games::oware::BoardIndex::new(SEEDS);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next();
    let queries: Vec<(usize, Board, u32)> = (0..QUERIES)
        .map(|_| {
            let global = (next() % index.states() as u64) as usize;
            (global, index.board(global), 1 + (next() % 200) as u32)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("probe");
    group.throughput(Throughput::Elements(QUERIES as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let mut expected: Option<Vec<i32>> = None;
    let mut written = Vec::new();
    for encoding in [Encoding::Changes, Encoding::ChangesV1, Encoding::Layers] {
        let path = dir.path().join(format!("{}.book", encoding.name()));
        OwareBook::write_with(&path, &generated, encoding).unwrap();
        let book = OwareBook::open(&path).unwrap();
        written.push((encoding, std::fs::read(&path).unwrap()));
        // Every query's answer checked before timing (a filter may skip the
        // timed closure): against the replay, where it was computed once.
        let answers: Vec<i32> = (queries.iter())
            .map(|(_, board, turns)| book.value(board, *turns).unwrap())
            .collect();
        let expected = expected.get_or_insert_with(|| {
            (queries.iter())
                .map(|&(global, _, turns)| i32::from(generated.solution.value(global, turns)))
                .collect::<Vec<i32>>()
        });
        assert!(
            answers == *expected,
            "{} answers differently",
            encoding.name()
        );
        let sum_of = || -> i64 {
            queries
                .iter()
                .map(|(_, board, turns)| i64::from(book.value(black_box(board), *turns).unwrap()))
                .sum()
        };
        group.bench_function(encoding.name(), |b| b.iter(sum_of));
    }
    group.finish();

    let changes: usize = generated.solution.changes.iter().map(|c| c.len()).sum();
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(changes as u64));
    group.sample_size(10);
    for (encoding, bytes) in written.into_iter().take(2) {
        assert!(OwareBook::to_bytes_with(&generated, encoding) == bytes);
        group.bench_function(encoding.name(), |b| {
            b.iter(|| OwareBook::to_bytes_with(black_box(&generated), encoding).len())
        });
    }
    let solution = &generated.solution;
    let level = SEEDS as usize;
    let boards = solution.level_starts[level + 1] - solution.level_starts[level];
    let last_change = solution.levels[level].last_change;
    let expected = generated_changes(solution, level);
    assert!(expected.len() > 1_000_000, "{} changes", expected.len());
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    let encode = |pool: Option<&rayon::ThreadPool>| {
        let run = || compact::encode_level(Codec::V2, solution, level);
        pool.map_or_else(run, |pool| pool.install(run))
    };
    group.throughput(Throughput::Elements(expected.len() as u64));
    for (name, pool) in [
        ("level-12-1-thread", Some(&one)),
        ("level-12-all-threads", None),
    ] {
        assert_reads_back(&encode(pool), boards, last_change, &expected);
        group.bench_function(name, |b| b.iter(|| black_box(encode(pool)).len()));
    }
    group.finish();
}

criterion_group!(benches, probe);
criterion_main!(benches);
