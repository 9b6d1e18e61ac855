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

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use endbook::games::oware::{generate, Board, Encoding, GenerateOptions, OwareBook};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const SEEDS: u32 = 12;
const QUERIES: usize = 100_000;

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
    group.finish();
}

criterion_group!(benches, probe);
criterion_main!(benches);
