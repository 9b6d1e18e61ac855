//! Oware book generation: by default Oware's own run sweeps, level by level
//! (a run plan per level, no child cache: the [`runs`] module); on request,
//! the engine's sweeps over a child cache built here.

use super::board::SIDE;
use super::book::OwareBook;
use super::index::{BoardIndex, MAX_BOOK_SEEDS};
use super::movegen::{GeneratedMove, MoveGen};
use super::rules::no_move_score;
use super::runs::{self, RunSolver};
use crate::engine::{self, MoveCache, Solution, SolveOptions, SweepMode, TurnReport, LANES};
use crate::kernels::KernelChoice;
use std::fmt;
use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

/// The turn limit of CodinGame's Oware Abapa.
pub const DEFAULT_TURN_LIMIT: u32 = 200;

/// The largest turn limit a run accepts: a bound of policy, not of the
/// format (which records the limit in 64 bits). Past 255 turns a book stores
/// every layer whole, a byte per board and turn, so even a 12-seed book
/// would take 177 GB at this limit.
pub const MAX_TURN_LIMIT: u32 = u16::MAX as u32;

/// How the layers are swept: Oware's own run sweeps, or the engine's over a
/// child cache. All give identical books.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Row by row from contiguous runs of the mirror layer, no child cache
    /// (the [`runs`] module; the default, and the fastest).
    Runs,
    /// The engine's: every open board, every layer.
    Dense,
    /// The engine's: only blocks with a changed child.
    Frontier,
    /// The engine's: dense while many boards change, frontier once few do.
    Hybrid,
}

impl Sweep {
    /// The engine's sweep mode, for the sweeps over a child cache.
    pub fn engine_mode(self) -> Option<SweepMode> {
        match self {
            Sweep::Runs => None,
            Sweep::Dense => Some(SweepMode::Dense),
            Sweep::Frontier => Some(SweepMode::Frontier),
            Sweep::Hybrid => Some(SweepMode::Hybrid),
        }
    }

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        self.engine_mode().map_or("runs", SweepMode::name)
    }
}

impl fmt::Display for Sweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// Run sweeps (the default), or dense, frontier or hybrid sweeps over a
    /// child cache (identical books).
    pub mode: Sweep,
    /// Solve one seed level at a time, each after the levels below it, with
    /// the child cache of that level alone in memory (the default); or every
    /// level in one pass (identical books). Run sweeps always solve one level
    /// at a time.
    pub level_by_level: bool,
}

impl GenerateOptions {
    /// Defaults for `max_seeds`: 200 turns, the fastest kernel on this CPU.
    pub fn new(max_seeds: u32) -> GenerateOptions {
        GenerateOptions {
            max_seeds,
            turn_limit: DEFAULT_TURN_LIMIT,
            kernel: KernelChoice::Auto,
            movegen: MoveGen::auto(),
            mode: Sweep::Runs,
            level_by_level: true,
        }
    }

    /// Whether a book can hold what these options ask for: at most
    /// [`MAX_BOOK_SEEDS`] seeds and a turn limit in `1..=`[`MAX_TURN_LIMIT`].
    /// [`generate`] and [`extend`] panic where this fails.
    ///
    /// ```
    /// use endbook::games::oware::{GenerateOptions, OptionsError};
    ///
    /// assert_eq!(GenerateOptions::new(12).check(), Ok(()));
    /// let options = GenerateOptions { turn_limit: 0, ..GenerateOptions::new(12) };
    /// assert_eq!(options.check(), Err(OptionsError::TurnLimit(0)));
    /// ```
    pub fn check(&self) -> Result<(), OptionsError> {
        if self.max_seeds > MAX_BOOK_SEEDS {
            return Err(OptionsError::Seeds(self.max_seeds));
        }
        if !(1..=MAX_TURN_LIMIT).contains(&self.turn_limit) {
            return Err(OptionsError::TurnLimit(self.turn_limit));
        }
        Ok(())
    }
}

/// Why [`GenerateOptions`] ask for a book no book can hold
/// ([`GenerateOptions::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionsError {
    /// More seeds than [`MAX_BOOK_SEEDS`].
    Seeds(u32),
    /// A turn limit outside `1..=`[`MAX_TURN_LIMIT`].
    TurnLimit(u32),
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionsError::Seeds(seeds) => {
                write!(f, "{seeds} seeds: books hold at most {MAX_BOOK_SEEDS}")
            }
            OptionsError::TurnLimit(turns) => {
                write!(f, "turn limit {turns}: books hold 1 to {MAX_TURN_LIMIT}")
            }
        }
    }
}

impl std::error::Error for OptionsError {}

/// A generated Oware book, in memory.
pub struct Generated {
    /// The options it was generated with.
    pub options: GenerateOptions,
    /// Values per seed level.
    pub solution: Solution,
    /// Time spent preparing the sweeps: building child caches (the
    /// engine's sweeps), or the run plans and the mirror (run sweeps).
    pub cache_time: Duration,
    /// Size of the largest child cache held at once (the engine's sweeps),
    /// or of the run solver's tables (run sweeps).
    pub cache_bytes: usize,
    /// Per seed level, when it was done, from the start of the generation
    /// (levels taken over from an earlier book: zero).
    pub level_done: Vec<Duration>,
}

impl std::fmt::Debug for Generated {
    /// A summary: its options and extent (the values left out: megabytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generated")
            .field("options", &self.options)
            .field("states", &self.solution.level_starts.last().unwrap_or(&0))
            .field("turns_swept", &self.solution.turns_swept)
            .field("elapsed", &self.solution.elapsed)
            .finish_non_exhaustive()
    }
}

impl Generated {
    /// No level yet: what [`extend`] starts from to generate from scratch.
    pub fn empty(options: GenerateOptions) -> Generated {
        Generated {
            options: GenerateOptions {
                max_seeds: 0,
                ..options
            },
            solution: Solution::empty(),
            cache_time: Duration::ZERO,
            cache_bytes: 0,
            level_done: Vec::new(),
        }
    }

    /// The levels of `book`, for [`extend`] to build on (`options` as for
    /// the extension): its options are `options` with the book's seed count
    /// and turn limit, so the extension's turn limit must equal the book's.
    ///
    /// # Panics
    ///
    /// On a book opened with [`OwareBook::open_for_lookups`] (see
    /// [`OwareBook::solution`]).
    pub fn from_book(book: &OwareBook, options: GenerateOptions) -> Generated {
        let solution = book.solution();
        Generated {
            options: GenerateOptions {
                max_seeds: book.max_seeds(),
                turn_limit: book.turn_limit(),
                ..options
            },
            level_done: vec![Duration::ZERO; solution.levels.len()],
            solution,
            cache_time: Duration::ZERO,
            cache_bytes: 0,
        }
    }
}

/// What a generation reports as it goes.
pub enum Progress<'a> {
    /// A layer was swept; `seeds` are the levels being solved.
    Turn {
        /// The seed levels being solved.
        seeds: RangeInclusive<u32>,
        /// The layer.
        report: &'a TurnReport,
    },
    /// Every level up to `seeds` is solved; `generated` holds them.
    LevelDone {
        /// The highest level solved.
        seeds: u32,
        /// The book so far (`options.max_seeds` is `seeds`). An observer
        /// that stores the new levels elsewhere may drop their changes
        /// ([`Solution::forget_changes`]), or take them to store them while
        /// the levels above are solved ([`Solution::take_changes`]), when
        /// sweeping by runs.
        generated: &'a mut Generated,
    },
}

/// Builds the child cache of the boards with `from_seeds` to
/// `index.max_seeds()` seeds, starting at the block that holds the first board
/// with `from_seeds` seeds (0: every board).
pub fn build_cache(index: &BoardIndex, from_seeds: u32, movegen: MoveGen) -> MoveCache<SIDE> {
    let first_state = index.level_starts()[from_seeds as usize] / LANES * LANES;
    MoveCache::build_from(first_state, index.states(), |range, emitter| {
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

/// Generates the book from scratch; `observer` sees each layer and each
/// completed level.
///
/// # Panics
///
/// Where [`GenerateOptions::check`] fails: more than [`MAX_BOOK_SEEDS`]
/// seeds, or a turn limit outside `1..=`[`MAX_TURN_LIMIT`].
pub fn generate(options: GenerateOptions, observer: impl FnMut(Progress<'_>)) -> Generated {
    extend(Generated::empty(options), options, observer)
}

/// Adds the levels above `base.options.max_seeds` up to `options.max_seeds`
/// to `base` (generated with the same turn limit), solving only the new ones.
/// A `base` with `options.max_seeds = 0` and [`Solution::empty`] starts
/// from scratch; one holding every level asked for is returned as it is.
///
/// # Panics
///
/// As [`generate`], and where `base`'s turn limit differs from
/// `options.turn_limit` or `base` holds more seed levels than
/// `options.max_seeds` asks for.
pub fn extend(
    base: Generated,
    options: GenerateOptions,
    mut observer: impl FnMut(Progress<'_>),
) -> Generated {
    if let Err(error) = options.check() {
        panic!("{error}");
    }
    assert_eq!(
        base.options.turn_limit, options.turn_limit,
        "the base's turn limit differs from the extension's"
    );
    let solved_levels = base.solution.levels.len() as u32;
    assert!(
        solved_levels <= options.max_seeds + 1,
        "the base holds {} seed levels, more than the {} asked for",
        solved_levels,
        options.max_seeds + 1
    );
    if solved_levels > options.max_seeds {
        // Every level asked for is solved already (a checkpoint resumed
        // that holds them all): nothing to sweep, no plan or cache to build.
        return base;
    }
    let start = Instant::now();
    let generated = base;
    let Some(mode) = options.mode.engine_mode() else {
        return extend_by_runs(generated, options, start, observer);
    };
    let solve_options = SolveOptions {
        turn_limit: options.turn_limit,
        kernel: options.kernel,
        mode,
    };
    let mut generated = generated;
    // One solve per level, or one for every new level at once.
    let batches: Vec<RangeInclusive<u32>> = if options.level_by_level {
        (solved_levels..=options.max_seeds).map(|s| s..=s).collect()
    } else {
        vec![solved_levels..=options.max_seeds]
    };
    for seeds in batches {
        let (first, last) = (*seeds.start(), *seeds.end());
        let cache_start = Instant::now();
        let batch_index = BoardIndex::new(last);
        let cache = build_cache(&batch_index, first, options.movegen);
        let cache_time = cache_start.elapsed();
        generated.cache_time += cache_time;
        generated.cache_bytes = generated.cache_bytes.max(cache.heap_bytes());
        let level_starts = batch_index.level_starts();
        let solution = std::mem::replace(&mut generated.solution, Solution::empty());
        generated.solution =
            engine::solve(&cache, level_starts, solution, solve_options, |report| {
                observer(Progress::Turn {
                    seeds: seeds.clone(),
                    report,
                })
            });
        drop(cache);
        level_done(&mut generated, last, options, start, &mut observer);
    }
    generated
}

/// Records that every level up to `seeds` is solved and tells `observer`.
fn level_done(
    generated: &mut Generated,
    seeds: u32,
    options: GenerateOptions,
    start: Instant,
    observer: &mut impl FnMut(Progress<'_>),
) {
    generated
        .level_done
        .resize(seeds as usize + 1, start.elapsed());
    generated.options = GenerateOptions {
        max_seeds: seeds,
        ..options
    };
    observer(Progress::LevelDone { seeds, generated });
}

/// [`extend`] by run sweeps: one level at a time, no child cache (see [`runs`]).
fn extend_by_runs(
    mut generated: Generated,
    options: GenerateOptions,
    start: Instant,
    mut observer: impl FnMut(Progress<'_>),
) -> Generated {
    let plan_start = Instant::now();
    let mut solver = RunSolver::new(options.max_seeds, options.turn_limit, options.kernel);
    runs::derive_mirror(&mut generated.solution);
    generated.cache_time += plan_start.elapsed();
    generated.cache_bytes = generated.cache_bytes.max(solver.heap_bytes());
    let first = generated.solution.levels.len() as u32;
    for seeds in first..=options.max_seeds {
        let solution = std::mem::replace(&mut generated.solution, Solution::empty());
        generated.solution = solver.solve_level(seeds, solution, |report| {
            observer(Progress::Turn {
                seeds: seeds..=seeds,
                report,
            })
        });
        level_done(&mut generated, seeds, options, start, &mut observer);
    }
    generated
}
