//! `endbook oware ...`: generate, probe, info, verify, stats, export.

use super::checkpoint::{
    being_written, checkpoint_path, checkpoint_state, lock_checkpoint, CheckpointState,
};
use super::progress::{LevelProgress, Progress, WorkProgress};
use super::{
    answer_lines, check_folder_writable, configure_threads, counted, dry_run_outcome, grouped,
    human_bytes, note_replacing, print_book_size, print_time_estimate, print_verdict,
    print_written, same_file, unreadable_book, writable_output, CliError, DiskCheck, DryRun,
    KernelArg, LineError, Resources,
};
use clap::{Args, Subcommand, ValueEnum};
use endbook::book::{temporary_path, BookError};
use endbook::engine::MIN_TRIAL_STATES;
use endbook::games::excerpt;
use endbook::games::oware::verify::{verify, verify_sample, SampleError};
use endbook::games::oware::{
    extend, Board, BoardIndex, BookWriter, Encoded, Encoding, GenerateOptions, GenerateProgress,
    Generated, LevelEncoder, Line, LineEnd, MoveGen, MoveGenKind, OptionsError, OwareBook,
    ProbeError, Sweep, TurnsLeft, DEFAULT_TURN_LIMIT, MAX_BOOK_SEEDS, MAX_TURN_LIMIT,
};
use endbook::kernels::KernelChoice;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum Command {
    /// Generate a book: every board with at most N seeds, every number of turns left.
    ///
    /// Prints progress on stderr, then a table per seed level: boards, the last
    /// turn at which any value changed (values with more turns left repeat it),
    /// and when the level was done.
    #[command(mut_arg("threads", |arg| arg.help(GENERATE_THREADS_HELP)))]
    Generate(GenerateArgs),
    /// Look positions up: a board's value, each legal move's score, the best moves.
    ///
    /// A board is 12 seed counts, houses 0-11, the player to move first (houses
    /// 0-5 are theirs, sowing runs 0, 1, ..., 11): the order in which a
    /// CodinGame bot reads its input. The value is the net score the player to
    /// move gains with perfect play by both sides, seeds already captured aside.
    #[command(
        override_usage = "endbook oware probe --book <FILE> --turns <T> [--line] <BOARD>...\n       endbook oware probe --book <FILE> --batch < LINES"
    )]
    Probe(ProbeArgs),
    /// Check a whole book (checksums and every record) and show its header:
    /// rules, turn limit, and per seed level its boards, last change and
    /// stored bytes.
    Info(InfoArgs),
    /// Prove every value of a book from the rules: each layer recomputed
    /// from the book's layer before it, by playing every move.
    ///
    /// Opening a book checks its checksums and records; a file altered and
    /// checksummed again, or written by a faulty generator, can still hold
    /// values no play gives. verify recomputes each seed level's values
    /// with t turns left from the book's values with t - 1 left (the scalar
    /// move generator and kernel, none of the generator's fast paths) and
    /// compares, up to the layer after the last change of the level and
    /// the levels below it (which must repeat it). Exits 1 at the first
    /// wrong value, naming it; 2 when the book cannot be read or the run
    /// cannot start (too little memory, say).
    ///
    /// With --sample N it checks N values drawn at random instead, each
    /// against its board's moves through the book's lookups: seconds of
    /// checking in the memory of the book's mapping (the book's bytes
    /// checked against their checksums as the draws read them), where the
    /// whole proof takes about 3.4 times the book's size in memory and half
    /// an hour at 20 seeds on two cores.
    Verify(VerifyArgs),
    /// Per seed level: boards, last change, value changes, and how the values
    /// are distributed once converged (or at the turn limit).
    Stats(StatsArgs),
    /// Export a book to another layout.
    Export(ExportArgs),
}

/// `--threads` for `generate`, whose book encoder has threads of its own.
const GENERATE_THREADS_HELP: &str = "Worker threads [default: one per core]. The book \
    encoder has as many of its own, busy while the levels above are solved";

#[derive(Args)]
pub struct GenerateArgs {
    /// Largest number of seeds on the board, 1 to 27 (the memory check
    /// stops most machines far below 27: 20 seeds need about 5.6 GB, 24
    /// about 38.5 GB; --dry-run tells).
    #[arg(long, default_value_t = 12, value_name = "N")]
    max_seeds: u32,
    /// Book file to write [default: oware-N.book; oware-N-tT.book with a
    /// turn limit other than 200]. An existing file is replaced once the run
    /// is complete (a note on stderr says so at the start).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Largest number of turns left (plies) to solve [default: 200; with
    /// --extend, the book's].
    #[arg(long, value_name = "T")]
    turn_limit: Option<u32>,
    #[command(flatten)]
    resources: Resources,
    #[command(flatten)]
    disk: DiskCheck,
    /// Layer-update kernel. `auto` times every kernel this CPU supports side
    /// by side on each large seed level's first layers (their parts shared
    /// out among the kernels, each timed by its thread's CPU time) and keeps
    /// the fastest for the level; the others force one (all give identical
    /// books). The table at the end names each level's kernel.
    #[arg(long, value_enum, default_value = "auto")]
    kernel: KernelArg,
    #[command(flatten)]
    dry: DryRun,
    /// Move generator for the child cache (dense, frontier and hybrid sweeps;
    /// run sweeps build none). `auto` takes bmi2 where pext/pdep are fast
    /// (not on AMD Zen 1/Zen 2, where they are microcoded), else scalar.
    /// Default: auto (naming any with run sweeps is refused).
    #[arg(long, value_enum)]
    movegen: Option<MoveGenArg>,
    /// How layers are swept. `runs`: row by row from contiguous stretches of
    /// the previous layer's mirror image, no child cache (one level at a
    /// time). With a child cache: `dense` recomputes every board, `frontier`
    /// only boards with a child that changed in the previous layer, `hybrid`
    /// dense while many values change and frontier after. All give identical
    /// books. Default: runs (hybrid with --all-levels-at-once).
    #[arg(long, value_enum)]
    sweep: Option<SweepArg>,
    /// Add levels to an existing book: its levels are taken over as they are
    /// and only the seed counts above its own up to --max-seeds are solved.
    /// The turn limit must match.
    #[arg(long, value_name = "OLD_BOOK", conflicts_with = "resume")]
    extend: Option<PathBuf>,
    /// Continue an interrupted run from its checkpoint (the output path with
    /// `.checkpoint` appended: the book being written, a complete book of the
    /// levels finished so far, renamed to the output path at the end);
    /// without one, start from scratch. Without --resume, a run whose
    /// checkpoint holds a finished level stops at once rather than write
    /// over it (one that holds none is written over, with a note).
    #[arg(long)]
    resume: bool,
    /// Solve every level in one pass instead of one level at a time (identical
    /// books; more memory, and no checkpoint written before the end: --resume
    /// takes over the levels of an earlier checkpoint). For comparisons.
    #[arg(long)]
    all_levels_at_once: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum SweepArg {
    Runs,
    Dense,
    Frontier,
    Hybrid,
}

impl SweepArg {
    fn mode(self) -> Sweep {
        match self {
            SweepArg::Dense => Sweep::Dense,
            SweepArg::Frontier => Sweep::Frontier,
            SweepArg::Hybrid => Sweep::Hybrid,
            SweepArg::Runs => Sweep::Runs,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum MoveGenArg {
    Auto,
    Scalar,
    Bmi2,
}

impl MoveGenArg {
    fn movegen(self) -> Result<MoveGen, CliError> {
        let kind = match self {
            MoveGenArg::Auto => return Ok(MoveGen::auto()),
            MoveGenArg::Scalar => MoveGenKind::Scalar,
            MoveGenArg::Bmi2 => MoveGenKind::Bmi2,
        };
        MoveGen::new(kind).ok_or_else(|| {
            CliError::Input(format!("--movegen {kind}: this CPU does not support it"))
        })
    }
}

#[derive(Args)]
pub struct ProbeArgs {
    /// The book to read.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
    /// Turns left (plies until the turn limit), 1 to the book's limit.
    #[arg(long, value_name = "T", required_unless_present = "batch")]
    turns: Option<u32>,
    /// The board: 12 counts, houses 0-11, player to move first, e.g. "0 0 0 0 0 1 1 0 0 0 0 0"
    /// (quoted as one argument, or as twelve); a '|' may part the two sides
    /// ("0 0 0 0 0 1 | 1 0 0 0 0 0").
    #[arg(
        value_name = "BOARD",
        num_args = 1..,
        allow_negative_numbers = true,
        required_unless_present = "batch",
        conflicts_with = "batch"
    )]
    board: Vec<String>,
    /// Read lines "T h0 h1 ... h11" on stdin (spaces or commas between the
    /// numbers), print one value per line. Blank lines and lines starting
    /// with '#' are skipped. Stops with exit code 2 at the first bad line,
    /// naming it on stderr.
    #[arg(long, conflicts_with = "turns")]
    batch: bool,
    /// Also print a line of perfect play: at each ply a best move (the
    /// lowest house where several are equal), the board before it as the
    /// mover sees it, and the net score so far of the player to move at the
    /// start, until the turns run out or a player cannot move.
    #[arg(long, conflicts_with = "batch")]
    line: bool,
}

#[derive(Args)]
pub struct InfoArgs {
    /// The book to read.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The book to verify.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
    /// Check N values drawn at random (with repeats) instead of every
    /// value: each against its board's moves (the rules module's own move
    /// code) through the book's values with one turn less. Seconds of
    /// checking, in the memory of the book's mapping, for books too large
    /// to prove whole (the book's bytes checked against their checksums as
    /// the draws read them); a sample, not a proof (a value wrong in few boards is
    /// found only if drawn). It takes no memory check: not with
    /// --memory-limit or --ignore-memory-check
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
        conflicts_with_all = ["ignore_memory_check", "memory_limit"])]
    sample: Option<u64>,
    /// With --sample: draw only from the levels of K seeds and more
    /// [default: 0, every level]
    #[arg(long, value_name = "K", requires = "sample")]
    min_seeds: Option<u32>,
    /// With --sample: the seed of the random draws (a number, not seeds on
    /// a board); the same one draws the same values [default: 1]
    #[arg(long, value_name = "S", requires = "sample")]
    draw_seed: Option<u64>,
    #[command(flatten)]
    resources: Resources,
}

#[derive(Args)]
pub struct StatsArgs {
    /// The book to read.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
    /// Output: an aligned table, Markdown tables, or CSV.
    #[arg(long, value_enum, default_value = "table")]
    format: StatsFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatsFormat {
    Table,
    Markdown,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// The `endSeeds` array of 000-oware-endgame-books.md: one int8 for turns
    /// left t (1..L) and board s at byte (t-1)*S + s, boards with 1..N seeds by
    /// seed count, then rank.
    Flat,
}

#[derive(Args)]
pub struct ExportArgs {
    /// The book to read.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
    /// Output layout.
    #[arg(long, value_enum, default_value = "flat")]
    format: ExportFormat,
    /// Turn layers to write, 1 to the book's limit [default: up to the last
    /// turn at which any value changes].
    #[arg(long, value_name = "L")]
    layers: Option<u32>,
    /// File to write (under a temporary name, renamed when complete), or
    /// `-` for standard output (a pipe: `--out - | sha256sum`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Generate(args) => run_generate(args),
        Command::Probe(args) => run_probe(args),
        Command::Info(args) => run_info(args),
        Command::Verify(args) => run_verify(args),
        Command::Stats(args) => run_stats(args),
        Command::Export(args) => run_export(args),
    }
}

/// Opens a book for a whole-book reader (`info`, `stats`, `export`, the
/// book `--extend` or `--resume` builds on), every record checked: a note
/// first where that takes seconds (from 500 MB: the 16-seed book's 423 MB
/// took 0.8-0.9 s here, 2.3 s with the machine loaded; the 20-seed book's
/// 4.3 GB 7.3 s).
fn open_book(path: &Path) -> Result<OwareBook, CliError> {
    const NOTED_FROM: u64 = 500_000_000;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() >= NOTED_FROM => note!(
            "note: checking every record of {} ({})...",
            path.display(),
            human_bytes(meta.len())
        ),
        _ => {}
    }
    OwareBook::open(path).map_err(unreadable_book)
}

fn book_failure(error: BookError) -> CliError {
    CliError::Failure(error.to_string())
}

/// What a generation of boards with up to `max_seeds` seeds is expected to
/// take, per board, fitted to runs measured on the project's 2-core Intel
/// Xeon (2 threads, run sweeps, level by level; time and book), and on its
/// 2-core AMD EPYC (peak RSS less 24 MiB, the book writer's 8 MiB buffer for
/// direct writes included, which is added back; the largest of two or
/// three runs):
///
/// | seeds | peak memory | book | time |
/// |---|---|---|---|
/// | 12 | 11.6 B | 8.84 B | 0.189 µs |
/// | 16 | 17.2 B | 13.9 B | 0.205 µs |
/// | 20 | 23.0 B | 19.0 B | 0.324 µs |
///
/// Memory per board grows faster past 20 seeds: 30.3 B at 24 seeds and
/// 32.1-32.2 B at 25 on a lent 16-core Intel Xeon (16 threads, peaks of
/// 37.9 GB and 59.5-59.6 GB), which the slope of 1.56 B a seed covers
/// (1.45, fitted to 12-20 seeds, had estimated 36.8 and 57.2 GB); at 20
/// seeds it errs high, 24.5 B. Book bytes up to 25 seeds are measured
/// ([`LEVEL_BYTES`]).
///
/// (Time: medians of three runs, eight at 16 seeds, fitted to 12 and 20
/// seeds, so in between it errs high: 16 seeds were expected to take 7.5 s
/// and took 5.9 s at c439e14. The AMD machine takes longer: at 0038054, 20
/// seeds in 95.7 s where 73 s are estimated, 16 seeds in 9.03 s (median
/// of five) where 8 s are.)
///
/// Memory is mostly change lists (about 2 bytes a change, and boards change
/// value more often with more seeds): with run sweeps, the top level's and
/// the mirror changes of the levels below the top two (no level reads the
/// one just below it; the top level frees each turn's once applied), the
/// level below's while the encoder works on it,
/// the encoded stretches queued for the writer and four layers of the top
/// level; with cache sweeps, the change lists of every
/// level (and a copy of the level below's for the encoder), the top level's
/// child cache (31 bytes a board) and reverse edges. The book, up to 25
/// seeds, is not a fit but the sum of [`LEVEL_BYTES`]. Time grows with the
/// seed count as more turns keep changing and the layers outgrow the CPU
/// caches. Cache sweeps: the run sweeps' time, times [`times_run_sweeps`].
///
/// All of it is for 200 turns, an upper bound with fewer. Beyond 255 turns
/// the book stores every layer ([`Encoding::Layers`]): a byte per board and
/// turn up to each level's last change, and each level's layers are built
/// in memory before they are written. So the book is the levels' layers,
/// memory adds those of the top two levels, and time adds writing the book
/// at 200 MB/s. On the AMD EPYC with 300 turns, 12 seeds took 2.95 s, a
/// peak of 360 MB and a 428 MB book (estimated 2.7 s, 408 MB and 428 MB),
/// 13 seeds 4.80 s, 607 MB and 877 MB (estimated 5.5 s, 785 MB, 877 MB).
struct Estimate {
    memory: u64,
    book: u64,
    seconds_2_threads: f64,
}

/// The share of a run's time on two threads that more threads do not
/// shorten (small levels solved on one thread, the steps between turns,
/// the book's last level encoded and written). From the Intel Xeon's
/// scaling runs (`results/Intel-R-Xeon-R-Processor-family-6/2026-11-26-scaling.md`):
/// 16 seeds took 7.66 s on one thread and 4.30 s on two, 0.22 of which
/// stays; from 20 seeds' 39.4 s on two threads that gives 16.4 s on 8 and
/// 12.5 s on 16, measured 14.3 and 11.2 s (spreading all of it over the
/// threads gave 9.9 and 4.9 s).
const SERIAL_SHARE: f64 = 0.22;

/// A run's own time, whatever its size, on the Intel Xeon's scale (the
/// thread pool's start, the kernel trials, the book's sync and rename):
/// taken as serial. The fit per board leaves it out, as it was made on 12
/// seeds and more; on the AMD EPYC of family 23, whose run sweeps of 12 to
/// 16 seeds took 1.51 to 1.66 times the fit, those of 8, 9, 10 and 11 seeds
/// took 0.029, 0.041, 0.033 and 0.107 s more than 1.6 times it (0.058 to
/// 0.49 s in all).
const RUN_SECONDS: f64 = 0.02;

/// Whether books with this turn limit store every layer.
fn encoding_stores_layers(turn_limit: u32) -> bool {
    Encoding::for_turn_limit(turn_limit) == Encoding::Layers
}

/// The last turn at which a value of level `seeds` changes, for levels
/// 0-15, which converge before turn 200 (`results/oware-levels.csv`);
/// the levels above still change at turn 200.
const LAST_CHANGE: [u32; 16] = [
    1, 2, 10, 29, 39, 67, 84, 92, 99, 145, 119, 155, 178, 180, 197, 187,
];

/// The bytes each level takes in a book of 200 turns (the `changes`
/// encoding), levels 0-25: the "stored bytes" of `endbook oware info` on the
/// 20-seed book and, from 21 seeds, on the 25-seed book (levels 1-20 the
/// same in both; levels from 22 seeds on include the 4 bytes of each wrap
/// of their offsets). The encoding is deterministic, so a book of up to 25
/// seeds is these summed (and its header); beyond, the fit below.
const LEVEL_BYTES: [u64; 26] = [
    9,
    30,
    166,
    1_040,
    4_065,
    17_531,
    50_057,
    166_462,
    380_369,
    1_195_003,
    2_430_905,
    6_235_755,
    13_428_463,
    28_405_610,
    57_193_622,
    109_370_121,
    204_544_215,
    364_445_132,
    637_943_292,
    1_079_740_607,
    1_789_686_282,
    2_902_517_724,
    4_620_519_885,
    7_241_104_900,
    11_159_076_626,
    16_956_018_216,
];

/// A book's header and section table, about.
const HEADER_BYTES: u64 = 4096;

impl Estimate {
    fn new(
        max_seeds: u32,
        boards: u64,
        mode: Sweep,
        turn_limit: u32,
        level_by_level: bool,
    ) -> Estimate {
        let estimate = Self::for_200_turns(max_seeds, boards, mode, level_by_level);
        if !encoding_stores_layers(turn_limit) {
            return estimate;
        }
        // Every layer up to a level's last change (no later than the limit;
        // the turn limit itself for the levels still changing at turn 200).
        let layers = |seeds: u32| {
            let last = LAST_CHANGE
                .get(seeds as usize)
                .copied()
                .unwrap_or(turn_limit);
            BoardIndex::level_size(seeds) as u64 * u64::from(last.min(turn_limit))
        };
        let book: u64 = (0..=max_seeds).map(layers).sum();
        let top_two = layers(max_seeds) + max_seeds.checked_sub(1).map_or(0, layers);
        Estimate {
            memory: estimate.memory + top_two,
            book,
            seconds_2_threads: estimate.seconds_2_threads + book as f64 / 200e6,
        }
    }

    fn for_200_turns(max_seeds: u32, boards: u64, mode: Sweep, level_by_level: bool) -> Estimate {
        let above_12 = f64::from(max_seeds) - 12.0;
        let per_board = |bytes: f64| (boards as f64 * bytes) as u64;
        // Cache sweeps solving every level at once held 1.15-1.19 times the
        // per-board memory of one level at a time (hybrid, 12 to 14 seeds,
        // 187-707 MB on the AMD machine); 6 MB is about the process's own
        // (5 and 7 seeds, dense: 5.3 and 6.9 MB).
        let all_at_once = if level_by_level { 1.0 } else { 1.2 };
        let memory = match mode {
            Sweep::Runs => (24 << 20) + per_board(12.0 + 1.56 * above_12.max(0.0)),
            _ => (6 << 20) + per_board((27.0 + 2.6 * f64::from(max_seeds)) * all_at_once),
        };
        let (at_12, per_seed) = times_run_sweeps(mode, level_by_level);
        let seconds_2_threads =
            boards as f64 * 0.189e-6 * 1.070f64.powf(above_12) * at_12 * per_seed.powf(above_12);
        let book = match LEVEL_BYTES.get(..=max_seeds as usize) {
            Some(levels) => HEADER_BYTES + levels.iter().sum::<u64>(),
            None => per_board((8.85 + 1.27 * above_12).max(2.0)),
        };
        Estimate {
            memory,
            book,
            seconds_2_threads,
        }
    }
}

/// How many times as long as run sweeps the sweeps `mode` take, at 12 seeds
/// and for each seed more: `(at_12, per_seed)`. For cache sweeps, fitted to
/// runs of 12 to 16 seeds timed side by side with run sweeps on a 2-core AMD
/// EPYC of CPU family 23 (Zen 1; 2 threads, medians of three, one run at 15
/// and 16 seeds; the seconds of run sweeps in the first row). So they share
/// the run sweeps' fit, made on the Intel Xeon, and its error on another
/// machine. Measured, against the fit:
///
/// | sweeps | 12 | 13 | 14 | 15 | 16 seeds |
/// |---|---|---|---|---|---|
/// | runs (s) | 0.84 | 1.66 | 3.34 | 6.67 | 11.4 |
/// | hybrid | 3.54 | 4.06 | 4.76 | 5.17 | 6.50 |
/// | dense | 3.96 | 5.31 | 5.96 | 6.47 | 7.89 |
/// | frontier | 3.95 | 4.78 | 5.68 | 5.44 | 7.13 |
/// | hybrid, all levels at once | 3.20 | 3.66 | 4.04 | 4.18 | 5.15 |
///
/// Dense and frontier sweeps of all levels at once take the level-by-level
/// fit: dense took 4.35, 4.33 and 5.20 times as long at 12 to 14 seeds.
fn times_run_sweeps(mode: Sweep, level_by_level: bool) -> (f64, f64) {
    match (mode, level_by_level) {
        (Sweep::Runs, _) => (1.0, 1.0),
        (Sweep::Hybrid, false) => (3.22, 1.114),
        (Sweep::Hybrid, true) => (3.51, 1.157),
        (Sweep::Frontier, _) => (4.08, 1.140),
        (Sweep::Dense, _) => (4.21, 1.171),
    }
}

/// [`GenerateOptions::check`]'s refusal in the options' words.
fn options_error(error: OptionsError) -> CliError {
    CliError::Input(match error {
        OptionsError::Seeds(seeds) => {
            format!("--max-seeds must be between 1 and {MAX_BOOK_SEEDS}, got {seeds}")
        }
        OptionsError::TurnLimit(turns) => {
            format!("--turn-limit must be between 1 and {MAX_TURN_LIMIT}, got {turns}")
        }
    })
}

fn run_generate(args: GenerateArgs) -> Result<(), CliError> {
    // (The library makes a book of the empty board alone from 0 seeds; the
    // command line asks for at least 1.)
    if args.max_seeds == 0 {
        return Err(options_error(OptionsError::Seeds(0)));
    }
    GenerateOptions::new(args.max_seeds)
        .check()
        .map_err(options_error)?;
    // Before anything runs on the global pool (checksums do).
    let threads = configure_threads(args.resources.threads)?;
    // The book --extend builds on, its header and structure checked (its
    // every byte and record are, as the run opens it whole; a dry run,
    // which opens it no further, checks every checksum here). Its turn
    // limit is the run's unless one is given.
    let dry_run = args.dry.dry_run;
    let extended = args.extend.as_ref().map(|old| {
        OwareBook::open_for_lookups(old)
            .and_then(|book| book.check_frames().map(|()| book))
            .and_then(|book| {
                if dry_run {
                    book.check_checksums()?;
                }
                Ok(book)
            })
            .map_err(|e| named_extend(unreadable_book(e)))
            .map(|book| (book.turn_limit(), book.max_seeds(), book.file_len()))
    });
    let turn_limit = match (args.turn_limit, &extended) {
        (Some(turn_limit), _) => turn_limit,
        (None, Some(Ok((turn_limit, _, _)))) => *turn_limit,
        // (A book that cannot be read is reported by the checks below.)
        _ => DEFAULT_TURN_LIMIT,
    };
    GenerateOptions {
        turn_limit,
        ..GenerateOptions::new(args.max_seeds)
    }
    .check()
    .map_err(options_error)?;
    let named = args.out.is_some();
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from(if turn_limit == DEFAULT_TURN_LIMIT {
            format!("oware-{}.book", args.max_seeds)
        } else {
            format!("oware-{}-t{turn_limit}.book", args.max_seeds)
        })
    });
    let out = writable_output(&out, None)?;
    let states = BoardIndex::new(args.max_seeds).states() as u64;
    let sweep = match (args.sweep, args.all_levels_at_once) {
        (Some(SweepArg::Runs), true) => {
            return Err(CliError::Input(
                "--all-levels-at-once needs a cache-based sweep (dense, frontier or hybrid): run sweeps solve one level at a time".into(),
            ))
        }
        (Some(sweep), _) => sweep,
        (None, true) => SweepArg::Hybrid,
        (None, false) => SweepArg::Runs,
    };
    if matches!(sweep, SweepArg::Runs) && args.movegen.is_some() {
        return Err(CliError::Input(
            "--movegen picks the move generator of a child cache: run sweeps (the default) build none; add --sweep dense, frontier or hybrid".into(),
        ));
    }
    let available = args.resources.available_memory();
    // The book is written level by level under the checkpoint's name, a
    // complete book of the levels so far after each one, and renamed to
    // `out` when the last is in. The checkpoint of an interrupted run is
    // never written over: why this run would stop, if it would.
    let checkpoint = checkpoint_path(&out);
    let existing = checkpoint_state(&checkpoint)?;
    // Default names carry a turn limit other than 200 since a later build:
    // an earlier one's checkpoint of this turn limit is under the plain name.
    let plain = checkpoint_path(Path::new(&format!("oware-{}.book", args.max_seeds)));
    let earlier = || BookWriter::committed(&plain).is_ok_and(|(limit, _)| limit == turn_limit);
    if args.resume && !named && existing == CheckpointState::Missing && earlier() {
        let plain = plain.display();
        return Err(CliError::Input(format!(
            "no checkpoint at {}, but {plain} is there (from a build whose default name left out \
             the turn limit): add --out {} to resume it",
            checkpoint.display(),
            plain.to_string().trim_end_matches(".checkpoint")
        )));
    }
    // The checkpoint's header, where it holds levels: read once, for the
    // checks below and the estimate.
    let committed =
        (existing == CheckpointState::Levels).then(|| BookWriter::committed(&checkpoint));
    let kept_checkpoint = match (existing, &committed) {
        (_, Some(committed)) if !args.resume => Some(match committed {
            // Cut short, another game's, a newer format: --resume would
            // refuse it too, so it is not offered.
            Err(error) if !matches!(error, BookError::Corrupt { .. }) => unresumable(error),
            _ => CliError::Input(format!(
                "{} holds the levels an interrupted run finished: add --resume to continue it, or remove it to start afresh",
                checkpoint.display()
            )),
        }),
        (CheckpointState::Busy, _) => Some(CliError::Input(being_written(&checkpoint))),
        _ => None,
    };
    // A checkpoint resumed grows into the book, and an empty one (whatever
    // its length) is cut to nothing first: its bytes need no more room.
    let kept = match existing {
        CheckpointState::Levels => args.resume,
        CheckpointState::Empty => true,
        _ => false,
    };
    let kept_bytes = match kept {
        true => std::fs::metadata(&checkpoint).map_or(0, |m| m.len()),
        false => 0,
    };
    // The levels taken over from --extend's book or the checkpoint resumed
    // (those up to its seed count), and that book's bytes: read whole, it
    // stays mapped through the run, and its levels' change lists are
    // rebuilt from it (packed, about 1.5 times its bytes). Peaks measured
    // over a fresh run's estimate, extending a 23.9 MB 12-seed book to 13
    // and 14 seeds: 2.4 and 2.1 times its bytes more (153.4 and 218.9 MB
    // against 95.1 and 169.1), an 11-seed book of 10.5 MB to 12: 2.1
    // times (79.5 against 57.6 MB). Unreadable, it is reported below.
    let taken_over = match (&extended, &committed) {
        (Some(extended), _) => extended
            .as_ref()
            .ok()
            .map(|&(_, seeds, bytes)| (seeds, bytes)),
        // (One not laid out for appending, an earlier build's, is copied
        // from: its levels are taken over all the same.)
        (None, Some(committed)) if args.resume => match committed {
            Ok((_, seeds)) => Some(*seeds),
            Err(_) => OwareBook::open_for_lookups(&checkpoint)
                .map(|book| book.max_seeds())
                .ok(),
        }
        .map(|seeds| (seeds, kept_bytes)),
        _ => None,
    }
    .filter(|&(seeds, _)| {
        // A checkpoint may hold every level (a run stopped before renaming it).
        seeds < args.max_seeds || (extended.is_none() && seeds == args.max_seeds)
    });
    let level_by_level = !args.all_levels_at_once;
    let mut expected = Estimate::new(
        args.max_seeds,
        states,
        sweep.mode(),
        turn_limit,
        level_by_level,
    );
    match taken_over {
        // Every level: nothing is solved, the book is copied out of the
        // checkpoint. Peaks measured: 70.6-71.7 MB for the 23.9 MB 12-seed
        // book (2.95 times), 5.0 MB for the 0.24 MB 7-seed one (the
        // process's own 4 MB and more).
        Some((seeds, bytes)) if seeds == args.max_seeds => {
            expected.memory = (4 << 20) + bytes * 3;
            expected.seconds_2_threads = 0.0;
        }
        Some((seeds, bytes)) => {
            let below = BoardIndex::new(seeds).states() as u64;
            let below = Estimate::new(seeds, below, sweep.mode(), turn_limit, level_by_level);
            expected.memory += bytes * 5 / 2;
            expected.seconds_2_threads -= below.seconds_2_threads.min(expected.seconds_2_threads);
        }
        None => {}
    }
    let estimate = expected.memory;
    let options = GenerateOptions {
        max_seeds: args.max_seeds,
        turn_limit,
        kernel: args
            .kernel
            .forced()?
            .map_or(KernelChoice::Auto, KernelChoice::Fixed),
        movegen: args.movegen.unwrap_or(MoveGenArg::Auto).movegen()?,
        mode: sweep.mode(),
        level_by_level,
    };
    // The work, as the memory check names it.
    let work = || format!("{} seeds ({} boards)", args.max_seeds, grouped(states));
    // Whether the book --extend builds on, or the checkpoint --resume
    // takes up, fits the run, by their headers, before either is opened to
    // be built on (reopening a checkpoint cuts what follows its last
    // commit: a refused run leaves it as it was).
    let base = || match (&args.extend, &extended, &committed) {
        (Some(old), Some(extended), _) => match extended {
            Ok((turn_limit, max_seeds, _)) => {
                check_base(*turn_limit, *max_seeds, old, &options, true).err()
            }
            Err(why) => Some(why.clone()),
        },
        (_, _, Some(committed)) if args.resume => match committed {
            Ok((turn_limit, max_seeds)) => {
                check_base(*turn_limit, *max_seeds, &checkpoint, &options, false).err()
            }
            // As the run: copied from (its levels checked then).
            Err(BookError::Corrupt { .. }) => None,
            Err(error) => Some(unresumable(error)),
        },
        _ => None,
    };
    if args.dry.dry_run {
        println!(
            "boards        {} (0..={} seeds{})",
            grouped(states),
            args.max_seeds,
            taken_over.map_or(String::new(), |(seeds, _)| format!(
                "; levels 0..={seeds} taken over"
            ))
        );
        println!(
            "memory        about {} ({})",
            human_bytes(estimate),
            args.resources.memory_label()
        );
        print_book_size(expected.book, kept_bytes, "about ", &out);
        print_time_estimate(
            RUN_SECONDS + SERIAL_SHARE * expected.seconds_2_threads,
            (1.0 - SERIAL_SHARE) * expected.seconds_2_threads,
            threads,
        );
        let stop = print_verdict(
            kept_checkpoint
                .or_else(|| check_folder_writable(&out).err())
                .map(|why| why.to_string()),
            estimate,
            available,
            args.resources.ignore_memory_check,
            work,
            || {
                args.disk
                    .shortfall(expected.book, kept_bytes, &out)
                    .or_else(|| base().map(|why| why.to_string()))
            },
        );
        println!("(estimates fitted to measured runs of 12 to 25 seeds, the time to those of");
        println!(" 12 to 20 on a 2-core Intel Xeon: a 2-core AMD EPYC took 1.3 to 1.7 times");
        println!(" as long; a 16-core Xeon took 0.50 to 0.58 of the 16-thread estimate at");
        println!(" 24 and 25 seeds;");
        if encoding_stores_layers(turn_limit) {
            println!(" beyond 255 turns the book stores every layer, built in memory and");
            println!(" written at an assumed 200 MB/s; nothing was generated)");
        } else {
            println!(" for 200 turns, fewer take less; nothing was generated)");
        }
        return dry_run_outcome(stop);
    }
    if let Some(why) = kept_checkpoint {
        return Err(why);
    }
    check_folder_writable(&out)?;
    args.resources.check_memory(estimate, work)?;
    args.disk.check(expected.book, kept_bytes, &out)?;
    if let Some(why) = base() {
        return Err(why);
    }
    // Held to the end: no other run writes this checkpoint meanwhile (one
    // made below is locked as it is made).
    let mut locks = Vec::new();
    if existing != CheckpointState::Missing {
        locks.push(lock_checkpoint(&checkpoint)?);
    }
    if existing == CheckpointState::Empty && !args.resume {
        note!(
            "{} holds no finished level (an interrupted run's): starting from scratch",
            checkpoint.display()
        );
    }
    let encoding = Encoding::for_turn_limit(options.turn_limit);
    let mut reopened = None;
    let base_path = match (&args.extend, args.resume) {
        (Some(old), _) => Some(old.clone()),
        (None, true) if checkpoint.exists() => match BookWriter::reopen(&checkpoint) {
            Ok(writer) => {
                reopened = Some(writer);
                Some(checkpoint.clone())
            }
            Err(BookError::NotABook { .. }) => {
                note!(
                    "the checkpoint at {} holds no finished level yet: starting from scratch",
                    checkpoint.display()
                );
                None
            }
            // Not laid out for appending (an earlier build's checkpoint, say):
            // its levels are copied into a new book below.
            Err(BookError::Corrupt { .. }) => Some(checkpoint.clone()),
            // Cut short, another game's, a newer format: nothing to resume.
            Err(error) => return Err(unresumable(&error)),
        },
        (None, true) => {
            note!(
                "no checkpoint at {}: starting from scratch",
                checkpoint.display()
            );
            None
        }
        (None, false) => None,
    };
    let base = base_path
        .as_deref()
        .map(|path| base_book(path, &options, args.extend.is_some()))
        .transpose()?;
    // (Once nothing stops the run before it starts.)
    note_replacing(&out);
    // No checkpoint yet: one is made now, empty and locked, before any
    // file is written (a run stopped from here on leaves it empty, which
    // the next run writes over).
    if locks.is_empty() {
        locks.push(lock_checkpoint(&checkpoint)?);
    }
    let mut interrupted = None;
    note!(
        "generating Oware book: {} boards (0..={} seeds), up to {} turns, {}, about {} of memory",
        grouped(states),
        args.max_seeds,
        turn_limit,
        counted(threads as u64, "thread"),
        human_bytes(estimate)
    );
    let (base, writer) = match base {
        Some(book) => {
            note!(
                "taking over levels 0..={} from {}",
                book.max_seeds(),
                base_path.as_deref().unwrap_or(Path::new("?")).display()
            );
            let base = Generated::from_book(&book, options);
            match reopened.filter(|writer| writer.encoding() == encoding) {
                // The checkpoint goes on growing where it stopped.
                Some(writer) => (base, writer),
                None => {
                    // A new book, the old one's levels copied in (encoded anew
                    // if stored otherwise), built beside the checkpoint and
                    // renamed over it once committed: a crash meanwhile
                    // leaves the old checkpoint. (The old file stays mapped
                    // until dropped; a rename leaves its bytes alone.)
                    let new_checkpoint = temporary_path(&checkpoint);
                    // Locked under its temporary name before it is cut to
                    // nothing, the lock going with it through the rename.
                    locks.push(lock_checkpoint(&new_checkpoint)?);
                    let mut writer =
                        BookWriter::create(&new_checkpoint, encoding).map_err(book_failure)?;
                    // To the end of the run: the writer's thread renames it
                    // over the old checkpoint (which a signal leaves as it
                    // was) when it gets there, and unlinking its name after
                    // that finds nothing.
                    interrupted = Some(super::interrupt::Temporary::new(&new_checkpoint));
                    for seeds in 0..=book.max_seeds() {
                        let level = seeds as usize;
                        match book.encoding() == encoding {
                            true => {
                                let bytes = book.level_bytes(seeds).to_vec();
                                writer.append(&base.solution, level, bytes)
                            }
                            false => writer.append_level(&base.solution, level),
                        }
                        .map_err(book_failure)?;
                    }
                    writer.commit(&base).map_err(book_failure)?;
                    writer.rename(&checkpoint).map_err(book_failure)?;
                    (base, writer)
                }
            }
        }
        None => {
            // Cut to nothing in place, the lock taken above kept.
            let writer = BookWriter::create(&checkpoint, encoding).map_err(book_failure)?;
            (Generated::empty(options), writer)
        }
    };
    let taken_over = writer.levels();

    let start = Instant::now();
    let mut progress = LevelProgress::new();
    // Each level solved is handed to the encoder (threads of its own, then
    // the writer's) and encoded while the next is solved.
    let mut encoder = LevelEncoder::start(writer, threads);
    let mut handed_over = taken_over;
    let generated = crate::cli::on_pool(|| {
        extend(base, options, |event| match event {
            GenerateProgress::Turn { seeds, report } => {
                progress.turn(
                    &levels_name(&seeds),
                    report.turn,
                    report.turn_limit,
                    report.changed_states,
                    match options.mode {
                        Sweep::Runs if report.frontier => "runs, changed rows or boards",
                        Sweep::Runs => "runs",
                        _ if report.frontier => "frontier",
                        _ => "dense",
                    },
                );
            }
            GenerateProgress::LevelDone { seeds, generated } => {
                let new_levels = handed_over..seeds as usize + 1;
                let solution = &mut generated.solution;
                let last_change = solution.levels[seeds as usize].last_change;
                progress.level_done(
                    &levels_name(&(new_levels.start as u32..=seeds)),
                    &format!(
                        "{}, last change at turn {last_change}, done after {:.3} s",
                        counted(
                            solution.levels[new_levels.clone()]
                                .iter()
                                .map(|l| l.states as u64)
                                .sum(),
                            "board"
                        ),
                        start.elapsed().as_secs_f64()
                    ),
                );
                // Run sweeps read the lower levels' mirror changes alone: the
                // changes go to the encoder. Cache sweeps replay lower levels
                // from them: it gets a copy of the new levels'.
                let changes = match options.mode {
                    Sweep::Runs => solution.take_changes(),
                    _ => solution.copy_changes(new_levels.start),
                };
                // The last level is committed by `finish`.
                let commit = (seeds < args.max_seeds).then_some(&*generated);
                encoder.append(changes, new_levels.clone(), commit);
                handed_over = new_levels.end;
            }
        })
    });
    let solve_time = start.elapsed();
    let waited = encoder.waited();
    let Encoded {
        writer,
        result,
        encode_time,
    } = encoder.finish();
    // A run that fails writing keeps the levels its checkpoint committed:
    // the message says so, and how to go on from them.
    let failed = |error: BookError| match BookWriter::committed(&checkpoint) {
        Ok((_, seeds)) => CliError::Failure(format!(
            "{error}; the levels up to {seeds} seeds finished are kept in {}: once that is \
             mended, run again with --resume to go on from them",
            checkpoint.display()
        )),
        Err(_) => book_failure(error),
    };
    result.map_err(failed)?;
    writer.finish(&generated, &out).map_err(failed)?;
    let total_time = start.elapsed();

    let solution = &generated.solution;
    println!("seeds        boards  last change  done after  kernel");
    for (seeds, level) in solution.levels.iter().enumerate() {
        let done = if seeds < taken_over {
            "taken over".to_string()
        } else {
            format!("{:.3} s", generated.level_done[seeds].as_secs_f64())
        };
        println!(
            "{seeds:>5} {:>13} {:>12} {done:>12}  {}",
            grouped(level.states as u64),
            level.last_change,
            level.kernel.map_or("-", |kernel| kernel.name()),
        );
    }
    if taken_over >= solution.levels.len() {
        // A checkpoint resumed that held every level: nothing was swept.
        println!(
            "total {} boards, every level taken over: nothing solved, {:.3} s in all",
            grouped(states),
            total_time.as_secs_f64()
        );
    } else {
        let runs = options.mode == Sweep::Runs;
        let (partial, prepared) = if runs {
            ("on changed rows or boards only", "run plans")
        } else {
            ("by frontier", "child caches")
        };
        println!(
            "total {} boards, {} swept ({} {partial}), {:.3} s ({prepared} {:.3} s, sweeps {:.3} s, waiting for the encoder {:.3} s, then encoding and writing {:.3} s)",
            grouped(states),
            counted(u64::from(solution.turns_swept), "layer"),
            counted(u64::from(solution.frontier_turns), "level layer"),
            total_time.as_secs_f64(),
            generated.cache_time.as_secs_f64(),
            solution.elapsed.as_secs_f64(),
            waited.as_secs_f64(),
            (total_time - solve_time).as_secs_f64(),
        );
        println!(
            "book encoded in {:.3} s on {threads_counted} of the encoder's own, {}",
            encode_time.as_secs_f64(),
            match options.level_by_level {
                true => "each level but the last while the levels above were solved",
                false => "after the sweeps",
            },
            threads_counted = counted(threads as u64, "thread"),
        );
        println!(
            "{} state updates, {:.3e} state updates/s in the sweeps",
            grouped(solution.state_updates),
            solution.state_updates as f64 / solution.elapsed.as_secs_f64()
        );
        if runs {
            println!("run sweeps, level by level (no child cache, no move generator)");
        } else {
            println!(
                "movegen {}, {} sweeps, {}",
                options.movegen,
                options.mode,
                if options.level_by_level {
                    "level by level"
                } else {
                    "all levels at once"
                }
            );
        }
        if solution.kernel_trials.is_empty() {
            println!("kernel {} (forced)", solution.kernel);
        } else if solution
            .kernel_trials
            .iter()
            .all(|t| !t.ns_per_state.is_finite())
        {
            println!(
                "kernel {} (auto; no turn swept enough boards, {} or more, to time the kernels on)",
                solution.kernel,
                grouped(MIN_TRIAL_STATES as u64)
            );
        } else {
            let trials: Vec<String> = solution
                .kernel_trials
                .iter()
                .map(|t| format!("{} {:.2}", t.kernel, t.ns_per_state))
                .collect();
            println!(
                "kernel {} (auto; thread CPU time per state update on its trial parts, ns: {})",
                solution.kernel,
                trials.join(", ")
            );
        }
        if runs {
            // (Cache sweeps, and run sweeps' turns on changed boards only,
            // list their changes one by one.)
            println!(
                "change lists of the row sweeps packed by {} (runtime detection)",
                endbook::kernels::change_packing()
            );
        }
    }
    print_written(&out, estimate);
    drop((interrupted, locks));
    Ok(())
}

/// "level 7" or "levels 0-12".
fn levels_name(seeds: &std::ops::RangeInclusive<u32>) -> String {
    if seeds.start() == seeds.end() {
        format!("level {}", seeds.start())
    } else {
        format!("levels {}-{}", seeds.start(), seeds.end())
    }
}

/// Opens the book a run builds on (`--extend`, or a checkpoint) and checks
/// that it fits the run.
fn base_book(
    path: &Path,
    options: &GenerateOptions,
    extending: bool,
) -> Result<OwareBook, CliError> {
    let book = open_book(path).map_err(|e| if extending { named_extend(e) } else { e })?;
    check_base(
        book.turn_limit(),
        book.max_seeds(),
        path,
        options,
        extending,
    )?;
    Ok(book)
}

/// An error about the book `--extend` names, named by its option:
/// "--extend old.book: ...".
fn named_extend(error: CliError) -> CliError {
    match error {
        CliError::Input(message) => CliError::Input(format!("--extend {message}")),
        other => other,
    }
}

/// Why a run cannot resume from its checkpoint.
fn unresumable(error: &BookError) -> CliError {
    CliError::Input(format!(
        "{error}: the checkpoint cannot be resumed (remove it to start afresh)"
    ))
}

/// Whether a book of `turn_limit` and `max_seeds`, at `path`, fits a run
/// extending it (or resuming from it, a checkpoint) with `options`.
fn check_base(
    turn_limit: u32,
    max_seeds: u32,
    path: &Path,
    options: &GenerateOptions,
    extending: bool,
) -> Result<(), CliError> {
    let what = if extending {
        "--extend"
    } else {
        "the checkpoint"
    };
    if turn_limit != options.turn_limit {
        return Err(CliError::Input(format!(
            "{what} {} has turn limit {}, this run {}; they must match",
            path.display(),
            turn_limit,
            options.turn_limit
        )));
    }
    if max_seeds > options.max_seeds || (extending && max_seeds == options.max_seeds) {
        return Err(CliError::Input(format!(
            "{what} {} holds up to {} seeds already; --max-seeds must be {} {}",
            path.display(),
            max_seeds,
            if extending { "above" } else { "at least" },
            max_seeds
        )));
    }
    Ok(())
}

fn parse_board(text: &str) -> Result<Board, String> {
    text.parse::<Board>().map_err(|e| e.to_string())
}

fn run_probe(args: ProbeArgs) -> Result<(), CliError> {
    // Lookups check the records they read: a probe need not read the whole
    // book (the 20-seed book: 0.35 s instead of 7.3 s here).
    let book = OwareBook::open_for_lookups(&args.book).map_err(unreadable_book)?;
    if args.batch {
        return run_batch(&book);
    }
    let Some(turns) = args.turns else {
        unreachable!("clap requires --turns and BOARD without --batch");
    };
    // One argument "0 3 0 ...", or the counts as arguments of their own.
    let board = parse_board(&args.board.join(" ")).map_err(CliError::Input)?;
    let analysis = book
        .analyse(&board, turns)
        .map_err(|e| CliError::Input(e.to_string()))?;
    // The line too before anything is printed: a lookup that fails (a
    // corrupt book) leaves no partial answer.
    let line = args
        .line
        .then(|| book.best_line(&board, turns))
        .transpose()
        .map_err(|e| CliError::Input(e.to_string()))?;
    let houses = board.houses();
    println!("board       {board:#}   (player to move: houses 0-5)");
    println!("turns left  {turns}");
    println!("value       {:+}", analysis.value);
    if analysis.moves.is_empty() {
        println!(
            "no legal move: the game ends and the player to move scores the {} on their side",
            counted(u64::from(board.own_seeds()), "seed")
        );
    } else {
        println!("house  seeds  capture  score");
        for mv in &analysis.moves {
            let best = if mv.score == analysis.value {
                "  best"
            } else {
                ""
            };
            println!(
                "{:>5} {:>6} {:>8} {:>+6}{best}",
                mv.house, houses[mv.house], mv.capture, mv.score
            );
        }
        let best: Vec<String> = analysis.best_moves().map(|h| h.to_string()).collect();
        println!(
            "best move{}: {}",
            if best.len() > 1 { "s" } else { "" },
            best.join(" ")
        );
    }
    if let Some(line) = line {
        print_line(&line);
    }
    Ok(())
}

/// A line of perfect play, ply by ply, and how it ends.
fn print_line(line: &Line) {
    println!();
    println!(
        "line of perfect play (A: the player to move above, B: the other; net: A's score so far)"
    );
    if !line.plies.is_empty() {
        println!("  ply  turns  mover  board (mover's houses first)  house  capture   net");
    }
    for (ply, step) in line.plies.iter().enumerate() {
        println!(
            "{:>5} {:>6}  {:>5}  {:<28} {:>6} {:>8} {:>+5}",
            ply + 1,
            step.turns_left,
            mover(ply),
            format!("{:#}", step.board),
            step.house,
            step.capture,
            step.net
        );
    }
    match line.end {
        LineEnd::TurnLimit => println!(
            "end: no turns left, and the seeds left on the board ({}) score nothing",
            line.plies
                .last()
                .map_or(0, |p| p.board.seeds() - u32::from(p.capture))
        ),
        LineEnd::NoMove { board, seeds } => println!(
            "end: {} ({board:#}) has no legal move and scores the {} on their side",
            mover(line.plies.len()),
            counted(u64::from(seeds), "seed")
        ),
    }
    println!("net {:+} for A, the value", line.net());
}

/// Who moves at ply `ply` of a line (from 0): A, the player to move at its
/// start, or B.
fn mover(ply: usize) -> char {
    if ply.is_multiple_of(2) {
        'A'
    } else {
        'B'
    }
}

fn run_batch(book: &OwareBook) -> Result<(), CliError> {
    answer_lines("T h0 h1 ... h11", |line| {
        let (turns, board) = line
            .split_once(|c: char| c.is_whitespace() || c == ',')
            .unwrap_or((line, ""));
        let turns: u32 = turns.parse().map_err(|_| {
            LineError::Bad(format!("'{}' is not a number of turns", excerpt(turns)))
        })?;
        let board = parse_board(board).map_err(LineError::Bad)?;
        match book.value(&board, turns) {
            Ok(value) => Ok(value.to_string()),
            Err(e @ ProbeError::Corrupt { .. }) => {
                Err(LineError::Fatal(CliError::Input(e.to_string())))
            }
            Err(e) => Err(LineError::Bad(e.to_string())),
        }
    })
}

fn run_info(args: InfoArgs) -> Result<(), CliError> {
    let book = open_book(&args.book)?;
    println!("book          {}", book.path().display());
    println!("game          Oware Abapa (CodinGame rules)");
    println!(
        "size          {} ({} encoding)",
        human_bytes(book.file_len()),
        book.encoding().name()
    );
    // Levels whose bytes are checked in chunks (the container's version 2).
    let chunked: Vec<(u32, u32)> = (0..)
        .zip(book.sections())
        .filter(|(_, section)| section.chunk_shift != 0)
        .map(|(seeds, section)| (seeds, section.chunk_shift))
        .collect();
    match (chunked.first(), chunked.last()) {
        (Some(&(first, shift)), Some(&(last, _))) => {
            let levels = if first == last {
                format!("level {first}")
            } else if chunked.len() as u32 == last - first + 1 {
                format!("levels {first}-{last}")
            } else {
                format!("{} levels", chunked.len())
            };
            println!(
                "checksums     verified: CRC-32s of chunks of {} for {levels} (lookups check the chunks they read), of the whole section for the others",
                match shift {
                    20.. => format!("{} MiB", 1u64 << (shift - 20)),
                    10.. => format!("{} KiB", 1u64 << (shift - 10)),
                    _ => format!("{} bytes", 1u64 << shift),
                }
            );
        }
        _ => println!("checksums     verified: a CRC-32 of each level's bytes"),
    }
    println!("records       all well formed, values within -seeds..=seeds");
    println!("values        not checked against the rules (endbook oware verify does)");
    println!("max seeds     {}", book.max_seeds());
    println!("turn limit    {}", book.turn_limit());
    println!("layers swept  {}", book.turns_swept());
    println!();
    // Stored: the level's section in the book's encoding; as layers: a byte
    // per board and turn up to its last change (the `layers` encoding).
    println!("seeds        boards  last change  stored bytes      as layers");
    for level in book.levels() {
        println!(
            "{:>5} {:>13} {:>12} {:>13} {:>14}",
            level.seeds,
            grouped(level.states),
            level.last_change,
            grouped(book.level_bytes(level.seeds).len() as u64),
            grouped(level.states * u64::from(level.last_change))
        );
    }
    Ok(())
}

/// Bytes `verify` takes besides its book's changes and cache: the
/// program, the thread stacks, the book's block tables.
const VERIFY_BESIDE: u64 = 16 << 20;

fn run_verify(args: VerifyArgs) -> Result<(), CliError> {
    if let Some(samples) = args.sample {
        return run_verify_sample(&args, samples);
    }
    let threads = configure_threads(args.resources.threads)?;
    let book = open_book(&args.book)?;
    let levels = book.levels();
    let boards: u64 = levels.iter().map(|level| level.states).sum();
    let largest = levels.last().map_or(0, |level| level.states);
    // The book, read whole through its mapping, and its changes as the
    // generator packs them (together 2.04, 2.49, 2.58 and 2.55 times the
    // book's size at 12, 14, 15 and 16 seeds, measured), the largest
    // level's child cache (31 bytes a board), three layers of every board.
    let estimate = VERIFY_BESIDE + 3 * book.file_len() + 31 * largest + 3 * boards;
    args.resources
        .check_memory(estimate, || format!("verifying {}", args.book.display()))?;
    note!(
        "verifying {}: {} boards, {threads_counted}, about {} of memory",
        args.book.display(),
        grouped(boards),
        human_bytes(estimate),
        threads_counted = counted(threads as u64, "thread"),
    );
    let started = Instant::now();
    let mut progress = Progress::new();
    let verified = verify(&book, |layer| {
        // Shown after the first second (the 12-seed book takes seconds).
        if started.elapsed() < Duration::from_secs(1) {
            return;
        }
        progress.update(|| {
            format!(
                "verify: level {} of {}, layer {} of {}",
                layer.seeds,
                book.max_seeds(),
                layer.turn,
                layer.last_turn
            )
        })
    });
    progress.finish();
    let verified = verified.map_err(|mismatch| {
        CliError::Failure(format!(
            "{} holds a wrong value: {mismatch}",
            args.book.display()
        ))
    })?;
    println!(
        "verified {}: every value of its {} boards follows from the rules ({} values recomputed: each level up to the layer after the last change of it and the levels below) in {:.2} s",
        args.book.display(),
        grouped(verified.boards),
        grouped(verified.values),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `verify --sample N`: values drawn at random, checked against their moves.
fn run_verify_sample(args: &VerifyArgs, samples: u64) -> Result<(), CliError> {
    let threads = configure_threads(args.resources.threads)?;
    let started = Instant::now();
    let book = OwareBook::open_for_lookups(&args.book).map_err(unreadable_book)?;
    // As many draws as the book has chunks reach most of them: all checked
    // now, in parallel, and not one by one as the draws first read them.
    let chunks: u64 = book.sections().iter().map(|section| section.chunks()).sum();
    if samples >= chunks {
        book.check_checksums().map_err(unreadable_book)?;
    }
    let opening = started.elapsed();
    let max = book.max_seeds();
    let min_seeds = args.min_seeds.unwrap_or(0);
    if min_seeds > max {
        return Err(CliError::Input(format!(
            "--min-seeds {min_seeds}: {} holds boards of at most {max} seeds",
            args.book.display()
        )));
    }
    let seed = args.draw_seed.unwrap_or(1);
    let levels = if min_seeds == max {
        format!("level {max}")
    } else {
        format!("levels {min_seeds}-{max}")
    };
    note!(
        "verifying {} by sample: {} draws from {levels} (draw seed {seed}), {threads_counted}",
        args.book.display(),
        grouped(samples),
        threads_counted = counted(threads as u64, "thread"),
    );
    let mut progress = Progress::new();
    let checked = verify_sample(&book, samples, min_seeds, seed, |done| {
        if started.elapsed() < Duration::from_secs(1) {
            return;
        }
        progress.update(|| {
            format!(
                "verify: {} of {} draws checked",
                grouped(done),
                grouped(samples)
            )
        })
    });
    progress.finish();
    let checked = checked.map_err(|failure| match failure {
        SampleError::Mismatch(mismatch) => CliError::Failure(format!(
            "{} holds a wrong value: {mismatch}",
            args.book.display()
        )),
        SampleError::Unreadable(e) => CliError::Input(e.to_string()),
    })?;
    println!(
        "sampled {}: the values of {} draws from {levels} (draw seed {seed}) each follow from their board's moves, in {:.2} s ({:.2} s of it opening the book); a sample, not a proof (verify without --sample checks every value)",
        args.book.display(),
        grouped(checked),
        started.elapsed().as_secs_f64(),
        opening.as_secs_f64()
    );
    Ok(())
}

fn run_stats(args: StatsArgs) -> Result<(), CliError> {
    let book = open_book(&args.book)?;
    let max = book.max_seeds() as i32;
    // Shown after the first second (the 20-seed book takes seconds), by
    // stretches of boards as the workers finish them.
    let started = Instant::now();
    let progress = std::sync::Mutex::new(Progress::new());
    let total: u64 = book.levels().iter().map(|l| l.states).sum();
    let done = std::sync::atomic::AtomicU64::new(book.levels()[0].states);
    let stats: Vec<_> = (1..=book.max_seeds())
        .map(|seeds| {
            book.level_stats_observed(seeds, |boards| {
                use std::sync::atomic::Ordering::Relaxed;
                let done = done.fetch_add(boards, Relaxed) + boards;
                if started.elapsed() < Duration::from_secs(1) {
                    return;
                }
                // A worker that finds the line busy leaves it to the other.
                if let Ok(mut progress) = progress.try_lock() {
                    progress.update(|| {
                        format!(
                            "stats: level {seeds} of {}, {:.0}% of the boards done",
                            book.max_seeds(),
                            100.0 * done as f64 / total as f64
                        )
                    });
                }
            })
        })
        .collect();
    progress.into_inner().expect("no worker panicked").finish();
    let values = -max..=max;
    match args.format {
        StatsFormat::Csv => {
            let columns: Vec<String> = values.clone().map(|v| format!("value_{v}")).collect();
            println!(
                "seeds,boards,last_change,value_changes,{}",
                columns.join(",")
            );
            for stat in &stats {
                let seeds = stat.level.seeds as i32;
                let counts: Vec<String> = values
                    .clone()
                    .map(|v| {
                        let count =
                            (v.abs() <= seeds).then(|| stat.converged[(v + seeds) as usize]);
                        count.unwrap_or(0).to_string()
                    })
                    .collect();
                println!(
                    "{},{},{},{},{}",
                    stat.level.seeds,
                    stat.level.states,
                    stat.level.last_change,
                    stat.changes,
                    counts.join(",")
                );
            }
        }
        StatsFormat::Table | StatsFormat::Markdown => {
            let markdown = args.format == StatsFormat::Markdown;
            let row = |cells: &[String]| {
                if markdown {
                    println!("| {} |", cells.join(" | "));
                } else {
                    let widths = [5, 13, 11, 15, 9, 7, 7, 7];
                    let line: Vec<String> = cells
                        .iter()
                        .zip(widths)
                        .map(|(c, w)| format!("{c:>w$}"))
                        .collect();
                    // Two spaces, as the other tables: headings that fill
                    // their columns would read as one phrase with one.
                    println!("{}", line.join("  "));
                }
            };
            let header = [
                "seeds",
                "boards",
                "last change",
                "value changes",
                "per board",
                "> 0 %",
                "= 0 %",
                "< 0 %",
            ];
            row(&header.map(String::from));
            if markdown {
                println!("|{}", "---|".repeat(header.len()));
            }
            for stat in &stats {
                let seeds = stat.level.seeds as usize;
                let boards = stat.level.states as f64;
                let share = |range: std::ops::Range<usize>| {
                    format!(
                        "{:.1}",
                        100.0 * stat.converged[range].iter().sum::<u64>() as f64 / boards
                    )
                };
                row(&[
                    stat.level.seeds.to_string(),
                    grouped(stat.level.states),
                    stat.level.last_change.to_string(),
                    grouped(stat.changes),
                    format!("{:.2}", stat.changes as f64 / boards),
                    share(seeds + 1..2 * seeds + 1),
                    share(seeds..seeds + 1),
                    share(0..seeds),
                ]);
            }
            println!();
            if markdown {
                let columns: Vec<String> = values.clone().map(|v| format!("{v:+}")).collect();
                println!(
                    "Boards by converged value (with {}):",
                    TurnsLeft(book.turn_limit())
                );
                println!();
                println!("| seeds | {} |", columns.join(" | "));
                println!("|---|{}", "---|".repeat(columns.len()));
                for stat in &stats {
                    let seeds = stat.level.seeds as i32;
                    let cells: Vec<String> = values
                        .clone()
                        .map(|v| {
                            if v.abs() > seeds {
                                String::new()
                            } else {
                                stat.converged[(v + seeds) as usize].to_string()
                            }
                        })
                        .collect();
                    println!("| {} | {} |", seeds, cells.join(" | "));
                }
            } else {
                println!(
                    "> 0, = 0, < 0: boards whose value with {} is positive, zero, negative",
                    TurnsLeft(book.turn_limit())
                );
            }
        }
    }
    Ok(())
}

fn run_export(args: ExportArgs) -> Result<(), CliError> {
    // The output first: a large book takes seconds to check.
    let to_stdout = args.out.as_os_str() == "-";
    let out = match to_stdout {
        true => None,
        false => Some(writable_output(
            &args.out,
            Some("--out - writes the export to standard output, which may be one"),
        )?),
    };
    let book = open_book(&args.book)?;
    let last_change = book
        .levels()
        .iter()
        .map(|l| l.last_change)
        .max()
        .unwrap_or(1);
    let layers = args.layers.unwrap_or(last_change);
    if !(1..=book.turn_limit()).contains(&layers) {
        return Err(CliError::Input(format!(
            "--layers must be between 1 and the book's turn limit {}, got {layers}",
            book.turn_limit()
        )));
    }
    let ExportFormat::Flat = args.format;
    let Some(out) = out else {
        return export_to_stdout(&book, layers);
    };
    check_folder_writable(&out)?;
    if same_file(&out, &args.book) {
        return Err(CliError::Input(format!(
            "--out {} is the book being exported: name another file",
            args.out.display()
        )));
    }
    note_replacing(&out);
    let temporary = temporary_path(&out);
    let failed = |e: io::Error| {
        let _ = std::fs::remove_file(&temporary);
        CliError::Failure(format!("{}: {e}", out.display()))
    };
    let file = File::create(&temporary).map_err(failed)?;
    let _interrupted = super::interrupt::Temporary::new(&temporary);
    let mut writer = ShowingProgress::new(BufWriter::with_capacity(1 << 20, file), &book, layers);
    book.export_flat(layers, &mut writer).map_err(failed)?;
    writer
        .into_inner()
        .into_inner()
        .map_err(|e| failed(e.into_error()))?
        .sync_all()
        .map_err(failed)?;
    std::fs::rename(&temporary, &out).map_err(failed)?;
    print_exported(&out.display().to_string(), &book, layers);
    Ok(())
}

/// `export --out -`: the layers streamed to standard output as they are
/// replayed (nothing written to disk), for a pipe (`| sha256sum`); refused
/// when standard output is a terminal.
fn export_to_stdout(book: &OwareBook, layers: u32) -> Result<(), CliError> {
    use std::io::IsTerminal;
    let stdout = io::stdout();
    if stdout.is_terminal() {
        return Err(CliError::Input(
            "--out - writes binary layers to standard output, which is a terminal here: pipe or redirect it".into(),
        ));
    }
    // A closed standard output is /dev/null by the time `main` runs (Rust's
    // runtime opens it there): the export would seem to succeed.
    #[cfg(target_os = "linux")]
    if same_file(Path::new("/proc/self/fd/1"), Path::new("/dev/null")) {
        note!(
            "note: standard output is /dev/null (or was closed when endbook started): the export goes nowhere"
        );
    }
    let failed = |e: io::Error| {
        CliError::Failure(format!("standard output: {}", super::unless_reader_gone(e)))
    };
    let mut writer = ShowingProgress::new(
        BufWriter::with_capacity(1 << 20, stdout.lock()),
        book,
        layers,
    );
    book.export_flat(layers, &mut writer).map_err(failed)?;
    writer.into_inner().flush().map_err(failed)?;
    print_exported("standard output", book, layers);
    Ok(())
}

/// An export's output, counted: after its first second (a small export
/// shows nothing), its progress on stderr, in bytes and layers.
struct ShowingProgress<W> {
    inner: W,
    written: u64,
    total: u64,
    layer: u64,
    layers: u32,
    started: Instant,
    progress: WorkProgress,
}

impl<W: Write> ShowingProgress<W> {
    fn new(inner: W, book: &OwareBook, layers: u32) -> ShowingProgress<W> {
        ShowingProgress {
            inner,
            written: 0,
            total: book.flat_len(layers),
            layer: book.flat_len(1).max(1),
            layers,
            started: Instant::now(),
            progress: WorkProgress::new("bytes"),
        }
    }

    /// The writer, the progress cleared.
    fn into_inner(mut self) -> W {
        self.progress.finish();
        self.inner
    }
}

impl<W: Write> Write for ShowingProgress<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.written += n as u64;
        if self.started.elapsed() >= Duration::from_secs(1) {
            let layer = (self.written / self.layer + 1).min(u64::from(self.layers));
            let layers = self.layers;
            self.progress.update(self.written, self.total, || {
                format!("layer {layer}/{layers}")
            });
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The line on stderr after an export to `to`.
fn print_exported(to: &str, book: &OwareBook, layers: u32) {
    note!(
        "wrote {to} ({} bytes: {} x {} boards with 1..={} seeds)",
        grouped(book.flat_len(layers)),
        counted(u64::from(layers), "layer"),
        grouped(book.flat_len(1)),
        book.max_seeds()
    );
}
