//! Every kernel the CPU supports against the scalar oracle: random caches,
//! awkward lengths and offsets, extreme values, and whole books.

use endbook::engine::{MoveCache, LANES, VALUE_BOUND};
use endbook::games::oware::{generate, GenerateOptions, OwareBook};
use endbook::kernels::{Kernel, KernelChoice, KernelKind, LAYER_PADDING};
use std::io::Write;

mod common;
use common::Rng;

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
            let _ = writeln!(
                std::io::stderr(),
                "kernel {kind} skipped: this CPU does not support it"
            );
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

#[test]
fn forced_kernels_generate_identical_books() {
    let book = |choice| {
        let options = GenerateOptions {
            kernel: choice,
            ..GenerateOptions::new(9)
        };
        OwareBook::to_bytes(&generate(options, |_| {}))
    };
    let scalar = book(KernelChoice::Fixed(Kernel::scalar()));
    for kernel in kernels_under_test() {
        assert!(
            book(KernelChoice::Fixed(kernel)) == scalar,
            "{kernel} book differs"
        );
    }
    assert!(book(KernelChoice::Auto) == scalar, "auto book differs");
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
