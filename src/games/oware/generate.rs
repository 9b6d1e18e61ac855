//! Oware book generation: the child cache for the engine, then the layered solve.

use super::board::SIDE;
use super::index::{BoardIndex, MAX_BOOK_SEEDS};
use super::movegen::{GeneratedMove, MoveGen};
use super::rules::no_move_score;
use crate::engine::{self, MoveCache, Solution, SolveOptions, SweepMode, TurnReport};
use crate::kernels::KernelChoice;
use std::time::{Duration, Instant};

/// The turn limit of CodinGame's Oware Abapa.
pub const DEFAULT_TURN_LIMIT: u32 = 200;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct GenerateOptions {
    /// Boards with up to this many seeds.
    pub max_seeds: u32,
    /// Turns left from 1 up to this limit.
    pub turn_limit: u32,
    /// Layer-update kernel.
    pub kernel: KernelChoice,
    /// Move generator for the child cache.
    pub movegen: MoveGen,
    /// Dense, frontier or hybrid sweeps (identical books).
    pub mode: SweepMode,
}

impl GenerateOptions {
    /// Defaults for `max_seeds`: 200 turns, the fastest kernel on this CPU.
    pub fn new(max_seeds: u32) -> GenerateOptions {
        GenerateOptions {
            max_seeds,
            turn_limit: DEFAULT_TURN_LIMIT,
            kernel: KernelChoice::Auto,
            movegen: MoveGen::auto(),
            mode: SweepMode::Hybrid,
        }
    }
}

/// A generated Oware book, in memory.
pub struct Generated {
    /// The options it was generated with.
    pub options: GenerateOptions,
    /// Values per seed level.
    pub solution: Solution,
    /// Time spent building the child cache.
    pub cache_time: Duration,
    /// Size of the child cache.
    pub cache_bytes: usize,
}

/// Builds the child cache of every board with at most `index.max_seeds()` seeds.
pub fn build_cache(index: &BoardIndex, movegen: MoveGen) -> MoveCache<SIDE> {
    MoveCache::build(index.states(), |range, emitter| {
        let mut generated = [GeneratedMove {
            capture: 0,
            child: Default::default(),
        }; SIDE];
        let mut moves = [(0u32, 0i8); SIDE];
        for (board, seeds) in index.boards_from(range.start).take(range.len()) {
            let count = movegen.moves(&board, &mut generated);
            for (slot, generated) in moves.iter_mut().zip(&generated[..count]) {
                let child_seeds = seeds - u32::from(generated.capture);
                let child = index.index_with_seeds(&generated.child, child_seeds);
                *slot = (child as u32, generated.capture as i8);
            }
            emitter.push(&moves[..count], no_move_score(&board) as i8);
        }
    })
}

/// Generates the book; `observer` sees each layer as it completes.
pub fn generate(options: GenerateOptions, observer: impl FnMut(&TurnReport)) -> Generated {
    assert!(options.max_seeds <= MAX_BOOK_SEEDS);
    let start = Instant::now();
    let index = BoardIndex::new(options.max_seeds);
    let cache = build_cache(&index, options.movegen);
    let cache_time = start.elapsed();
    let solution = engine::solve(
        &cache,
        index.level_starts(),
        SolveOptions {
            turn_limit: options.turn_limit,
            kernel: options.kernel,
            mode: options.mode,
        },
        observer,
    );
    Generated {
        options,
        solution,
        cache_time,
        cache_bytes: cache.heap_bytes(),
    }
}
