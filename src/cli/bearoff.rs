//! `endbook bearoff ...`: generate, probe, eval, info, verify.

use super::progress::WorkProgress;
use super::{
    answer_lines, check_folder_writable, configure_threads, counted, dry_run_outcome, grouped,
    human_bytes, note_replacing, on_pool, print_book_size, print_time_estimate, print_verdict,
    print_written, unreadable_book, writable_output, CliError, DiskCheck, DryRun, KernelArg,
    LineError, Resources,
};
use clap::{Args, Subcommand, ValueEnum};
use endbook::games::bearoff::{
    generate, ranked_plays, BearoffBook, CubeAction, Entry, Evaluation, GenerateOptions, Lookup,
    OptionsError, Plan, ProbeError, Progress, Roll, Side, Universe, MAX_CHECKERS, POINTS,
};
use endbook::games::{count_fields, excerpt};
use endbook::kernels::{Kernel, KernelKind};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand)]
pub enum Command {
    /// Generate a book: every pair of sides with at most C checkers each.
    ///
    /// Stores P(win) for the player to move and, with --cube, the cubeful
    /// money equities (cube at 1, no gammons) for the three cube states.
    Generate(GenerateArgs),
    /// Look a position up in a book: P(win), cubeful equities, cube action;
    /// with --roll, every legal play ranked.
    ///
    /// A side is six checker counts on points 1 to 6, point 1 (next to bearing
    /// off) first, e.g. "0 0 0 0 0 1" for one checker on the 6-point.
    #[command(
        override_usage = "endbook bearoff probe --book <FILE> --x <\"x1 .. x6\"> --o <\"o1 .. o6\"> [--roll <D1> <D2>]\n       endbook bearoff probe --book <FILE> --batch < LINES"
    )]
    Probe(ProbeArgs),
    /// Evaluate one position exactly without a book, solving only the
    /// positions it can reach (any sides up to 15 checkers, memory allowing).
    Eval(EvalArgs),
    /// Check a book's checksums and show its header: checkers, values,
    /// sizes.
    Info(InfoArgs),
    /// Check every stored value of a book twice: against the generator
    /// (its table generated again, each 16-bit code compared with the one
    /// this build writes, padding included) and against the rules (each
    /// pair's values recomputed from the book's own values one roll ahead,
    /// by the rules' move generator and plain arithmetic, and allowed the
    /// 16-bit codes' rounding, 1/65535 to 3/65535).
    ///
    /// Opening a book checks its checksums and layout, but any 16-bit code
    /// decodes to a value: a file altered and checksummed again still opens,
    /// and a faulty generator would write its faults in both the book and
    /// the regenerated table. Each check takes about the time of generating
    /// the book; the memory is the book's and, for the check against the
    /// generator, the generation's (the rules' check needs little beside the
    /// book: 61 MB at 15 checkers). Exits 1 at the first value
    /// either check rejects, naming its sides; 2 when the book cannot be
    /// read or the run cannot start (too little memory, say).
    Verify(VerifyArgs),
}

#[derive(Args)]
pub struct GenerateArgs {
    /// Most checkers per side, 1 to 15.
    #[arg(long, value_name = "C")]
    checkers: usize,
    /// Also compute the cubeful equities (four values per pair instead of one).
    #[arg(long)]
    cube: bool,
    /// Book file to write [default: bearoff-C.book, bearoff-C-cube.book with
    /// --cube]. An existing file is replaced once the run is complete (a
    /// note on stderr says so at the start).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    resources: Resources,
    #[command(flatten)]
    disk: DiskCheck,
    /// Kernel: `auto` takes avx2 where the CPU has it, else portable; `scalar`
    /// is the plain-loop oracle. All give identical books.
    #[arg(long, value_enum, default_value = "auto")]
    kernel: KernelArg,
    #[command(flatten)]
    dry: DryRun,
}

/// The bear-off kernel for `--kernel`: `auto` takes avx2 where the CPU has
/// it, else portable.
fn kernel(arg: KernelArg) -> Result<Kernel, CliError> {
    Ok(arg.forced()?.unwrap_or_else(|| {
        Kernel::new(KernelKind::Avx2)
            .or_else(|| Kernel::new(KernelKind::Portable))
            .unwrap_or_else(Kernel::scalar)
    }))
}

/// The position: both sides and an optional roll.
#[derive(Args)]
struct PositionArgs {
    /// The player to move: counts on points 1 to 6, e.g. "2 2 2 2 2 5".
    #[arg(long, value_name = "\"x1 .. x6\"", allow_hyphen_values = true)]
    x: String,
    /// The opponent: counts on points 1 to 6.
    #[arg(long, value_name = "\"o1 .. o6\"", allow_hyphen_values = true)]
    o: String,
    /// Rank every legal play of this roll (two dice, 1 to 6).
    #[arg(long, num_args = 2, value_names = ["D1", "D2"], allow_hyphen_values = true, action = clap::ArgAction::Set)]
    roll: Option<Vec<String>>,
}

#[derive(Args)]
pub struct ProbeArgs {
    /// The book to read.
    #[arg(long, value_name = "FILE")]
    book: PathBuf,
    /// The player to move: counts on points 1 to 6, e.g. "2 2 2 2 2 5".
    #[arg(
        long,
        value_name = "\"x1 .. x6\"",
        allow_hyphen_values = true,
        required_unless_present = "batch"
    )]
    x: Option<String>,
    /// The opponent: counts on points 1 to 6.
    #[arg(
        long,
        value_name = "\"o1 .. o6\"",
        allow_hyphen_values = true,
        required_unless_present = "batch"
    )]
    o: Option<String>,
    /// Rank every legal play of this roll (two dice, 1 to 6).
    #[arg(long, num_args = 2, value_names = ["D1", "D2"], allow_hyphen_values = true, action = clap::ArgAction::Set)]
    roll: Option<Vec<String>>,
    /// Read lines "x1 .. x6 o1 .. o6" on stdin (the player to move's side,
    /// then the opponent's; spaces or commas between the numbers), print
    /// one line per position: P(X wins), then, from a book with cube
    /// values, X's equities with X owning the cube, centred, and O owning
    /// it. Blank lines and lines starting with '#' are skipped. Stops with
    /// exit code 2 at the first bad line, naming it on stderr.
    #[arg(long, conflicts_with_all = ["x", "o", "roll"])]
    batch: bool,
}

#[derive(Args)]
pub struct EvalArgs {
    #[command(flatten)]
    position: PositionArgs,
    #[command(flatten)]
    resources: Resources,
    /// P(win) only, without cube values: 4 bytes a pair instead of 32, for
    /// positions whose reachable pairs are too many for the cubeful solve.
    #[arg(long)]
    cubeless: bool,
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
    /// Which checks to run: both, or the one against the generator or the
    /// one against the rules alone.
    #[arg(long, value_enum, default_value = "both")]
    check: CheckArg,
    /// The kernel that generates the table again for the check against the
    /// generator (all give identical tables): auto takes avx2 where the CPU
    /// has it, else portable. Default: auto. The rules' check uses none, so
    /// naming one with `--check rules` is refused.
    #[arg(long, value_enum)]
    kernel: Option<KernelArg>,
    #[command(flatten)]
    resources: Resources,
}

/// `verify --check`.
#[derive(Clone, Copy, ValueEnum)]
pub enum CheckArg {
    Both,
    Generator,
    Rules,
}

pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Generate(args) => run_generate(args),
        Command::Probe(args) => run_probe(args),
        Command::Eval(args) => run_eval(args),
        Command::Info(args) => run_info(args),
        Command::Verify(args) => run_verify(args),
    }
}

/// Solve speed in result reads (one opponent's value of one result) per
/// second, 2 threads, avx2 kernel, refitted on the project's 2-core AMD
/// EPYC: cubeless 5.0e9 at 10 checkers, 6.4e9 at 12 and 5.0e9 at 13,
/// cubeful 7.7e8 at 10. The whole runs took 2.28, 11.0, 29.8 and 13.5 s,
/// estimated 2.2, 12.7, 28.2 and 12.5 s (the first fit, to an earlier
/// build on the Intel Xeon, 3.0e9 and 6.0e8, had estimated 3, 19, 43 and
/// 15 s). The Xeon's 14 and 15 checkers took 53.3 and 99.9 s, estimated
/// 60 and 122 s.
const READS_PER_SECOND: [f64; 2] = [5.0e9, 7.5e8];
/// Memory a solve takes beside its tables (the program, the sides and
/// their results, the threads): peaks measured on the AMD EPYC against the
/// tables alone, 11.0 MB against 4.5 MB at 6 checkers, 296.1 against 272.1
/// MB at 10, 340.4 against 329.3 MB at 8 with cube values.
const BESIDE_TABLE: u64 = 24 << 20;
/// Time to list the sides and results, per side (0.67 s for 27,132 sides).
const UNIVERSE_SECONDS_PER_SIDE: f64 = 2.5e-5;
/// Narrowing to 16 bits and writing the book, bytes per second (1.47 GB in 5.4 s).
const WRITE_BYTES_PER_SECOND: f64 = 2.7e8;

fn run_generate(args: GenerateArgs) -> Result<(), CliError> {
    let kernel = kernel(args.kernel)?;
    let options = GenerateOptions {
        checkers: args.checkers,
        cube: args.cube,
        kernel,
    };
    options.check().map_err(|error| match error {
        OptionsError::Checkers(checkers) => CliError::Input(format!(
            "--checkers must be between 1 and {MAX_CHECKERS}, got {checkers}"
        )),
    })?;
    let threads = configure_threads(args.resources.threads)?;
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from(match args.cube {
            true => format!("bearoff-{}-cube.book", args.checkers),
            false => format!("bearoff-{}.book", args.checkers),
        })
    });
    let out = writable_output(&out, None)?;
    let memory = options.table_bytes() + BESIDE_TABLE;
    let available = args.resources.available_memory();
    let what = if args.cube {
        "P(win) and cubeful equities"
    } else {
        "P(win)"
    };
    // The work, as the memory check names it.
    let work = || format!("{} checkers per side ({what})", args.checkers);
    if args.dry.dry_run {
        let universe = Universe::full(args.checkers);
        let reads = universe.total_children() as f64 * universe.slots() as f64;
        let serial_seconds = universe.positions() as f64 * UNIVERSE_SECONDS_PER_SIDE
            + options.book_bytes() as f64 / WRITE_BYTES_PER_SECOND;
        let parallel_seconds = reads / READS_PER_SECOND[usize::from(args.cube)];
        println!(
            "sides         {} per player (0..={} checkers), {} pairs with padding",
            grouped(universe.positions() as u64),
            args.checkers,
            grouped(options.pairs())
        );
        println!("values        {what}");
        println!(
            "memory        about {} ({})",
            human_bytes(memory),
            args.resources.memory_label()
        );
        print_book_size(options.book_bytes(), 0, "", &out);
        println!(
            "work          {} result reads ({:.1} results per side and opponent)",
            grouped(reads as u64),
            universe.total_children() as f64 / universe.positions() as f64
        );
        print_time_estimate(serial_seconds, parallel_seconds, threads);
        let stop = print_verdict(
            check_folder_writable(&out).err().map(|why| why.to_string()),
            memory,
            available,
            args.resources.ignore_memory_check,
            work,
            || args.disk.shortfall(options.book_bytes(), 0, &out),
        );
        println!("(time fitted to measured runs on a 2-core AMD EPYC; nothing was generated)");
        return dry_run_outcome(stop);
    }
    check_folder_writable(&out)?;
    args.resources.check_memory(memory, work)?;
    args.disk.check(options.book_bytes(), 0, &out)?;
    note_replacing(&out);
    note!(
        "generating bear-off book: {} per side up to {} checkers, {what}, {threads_counted}, kernel {kernel}, about {} of memory",
        grouped(Universe::full_layout(args.checkers).positions() as u64),
        args.checkers,
        human_bytes(memory),
        threads_counted = counted(threads as u64, "thread"),
    );
    let start = Instant::now();
    let generated = solving(|report| generate(options, report));
    let (universe_time, solve_time) = (generated.universe_time, generated.solve_time);
    let sides = generated.universe.positions() as u64;
    let reads = generated.universe.total_children() as u64 * generated.universe.slots() as u64;
    let write_start = Instant::now();
    let interrupted = super::interrupt::Temporary::new(&endbook::book::temporary_path(&out));
    generated
        .write(&out)
        .map_err(|e| CliError::Failure(e.to_string()))?;
    drop(interrupted);
    let write_time = write_start.elapsed();
    println!(
        "{} sides per player, {} pairs, {what}",
        grouped(sides),
        grouped(sides * sides)
    );
    println!(
        "total {:.3} s (sides and results {:.3} s, solve {:.3} s, write {:.3} s)",
        start.elapsed().as_secs_f64(),
        universe_time.as_secs_f64(),
        solve_time.as_secs_f64(),
        write_time.as_secs_f64()
    );
    println!(
        "{} result reads, {:.3e} reads/s in the solve, kernel {kernel}",
        grouped(reads),
        reads as f64 / solve_time.as_secs_f64()
    );
    print_written(&out, memory);
    Ok(())
}

fn parse_side(text: &str, flag: &str) -> Result<Side, CliError> {
    text.parse()
        .map_err(|e| CliError::Input(format!("{flag} \"{}\": {e}", excerpt(text))))
}

fn parse_roll(dice: &[String]) -> Result<Roll, CliError> {
    let die = |text: &String| -> Result<u8, CliError> {
        text.parse::<u8>()
            .ok()
            .filter(|d| (1..=6).contains(d))
            .ok_or_else(|| {
                CliError::Input(format!(
                    "--roll: a die shows 1 to 6, got '{}'",
                    excerpt(text)
                ))
            })
    };
    let (a, b) = (die(&dice[0])?, die(&dice[1])?);
    Ok(Roll::new(a, b).expect("dice checked"))
}

struct Position {
    x: Side,
    o: Side,
    roll: Option<Roll>,
}

impl PositionArgs {
    fn parse(&self) -> Result<Position, CliError> {
        position(&self.x, &self.o, self.roll.as_deref())
    }
}

/// The position of `--x`, `--o` and `--roll`.
fn position(x: &str, o: &str, roll: Option<&[String]>) -> Result<Position, CliError> {
    let (x, o) = (parse_side(x, "--x")?, parse_side(o, "--o")?);
    if x.is_empty() && o.is_empty() {
        return Err(CliError::Input(both_empty("--x and --o")));
    }
    Ok(Position {
        x,
        o,
        roll: roll.map(parse_roll).transpose()?,
    })
}

/// Why no position has both sides empty, the sides named as `sides`.
fn both_empty(sides: &str) -> String {
    format!("{sides} both have no checkers left: the game ends when one side bears off its last, so no position has both sides empty")
}

fn run_probe(args: ProbeArgs) -> Result<(), CliError> {
    let position = match (&args.x, &args.o) {
        (Some(x), Some(o)) => Some(position(x, o, args.roll.as_deref())?),
        _ => None,
    };
    // Checked as its lookups read it: a probe reads a few chunks.
    let book = BearoffBook::open_for_lookups(&args.book).map_err(unreadable_book)?;
    match position {
        Some(position) => report(&book, &position),
        None => run_batch(&book),
    }
}

/// `probe --batch`: a line per position on stdin, its values on stdout.
fn run_batch(book: &BearoffBook) -> Result<(), CliError> {
    answer_lines("x1 .. x6 o1 .. o6", |line| {
        let side = |text: &str, who: &str| {
            text.parse::<Side>()
                .map_err(|e| LineError::Bad(format!("{who}: {e}")))
        };
        let (x, o) = match line.split('|').collect::<Vec<_>>()[..] {
            // X's six counts, then O's, or the two split by a '|'.
            [x, o] => (side(x, "X")?, side(o, "O")?),
            [line] => {
                let counts: Vec<&str> = count_fields(line).collect();
                if counts.len() != 2 * POINTS {
                    return Err(LineError::Bad(format!(
                        "expected {} counts, found {}",
                        2 * POINTS,
                        counts.len()
                    )));
                }
                (
                    side(&counts[..POINTS].join(" "), "X")?,
                    side(&counts[POINTS..].join(" "), "O")?,
                )
            }
            ref sides => {
                return Err(LineError::Bad(format!(
                    "at most one '|', between X's counts and O's; found {}",
                    sides.len() - 1
                )))
            }
        };
        if x.is_empty() && o.is_empty() {
            return Err(LineError::Bad(both_empty("X and O")));
        }
        let entry = book.entry(&x, &o).map_err(|e| match e {
            // The book's fault, not the line's.
            ProbeError::Corrupt { .. } => LineError::Fatal(CliError::Input(e.to_string())),
            e => LineError::Bad(e.to_string()),
        })?;
        Ok(match entry.cube {
            None => format!("{:.6}", entry.win),
            Some(cube) => format!(
                "{:.6} {:+.6} {:+.6} {:+.6}",
                entry.win, cube.owned, cube.centred, cube.opponent_owns
            ),
        })
    })
}

fn run_eval(args: EvalArgs) -> Result<(), CliError> {
    let position = args.position.parse()?;
    let threads = configure_threads(args.resources.threads)?;
    let plan = Plan::new(&position.x, &position.o);
    args.resources
        .check_memory(plan.table_bytes(!args.cubeless) + BESIDE_TABLE, || {
            format!(
                "evaluating \"{}\" against \"{}\" ({} pairs)",
                position.x,
                position.o,
                grouped(plan.pairs())
            )
        })?;
    let start = Instant::now();
    let kernel = kernel(KernelArg::Auto)?;
    let evaluation = solving(|report| Evaluation::solve(plan, !args.cubeless, kernel, report));
    note!(
        "solved {} reachable, {}, in {:.3} s on {threads_counted}",
        counted(evaluation.sides() as u64, "side"),
        counted(evaluation.pairs(), "pair"),
        start.elapsed().as_secs_f64(),
        threads_counted = counted(threads as u64, "thread"),
    );
    report(&evaluation, &position)
}

/// Runs a solve (a generation, an evaluation, the generator's check) on the
/// pool, its pairs done shown on stderr by pip total: `work` is handed the
/// callback the solve reports its progress to.
fn solving<R: Send>(work: impl FnOnce(&mut dyn FnMut(Progress)) -> R + Send) -> R {
    let mut progress = WorkProgress::new("pairs");
    let result = on_pool(|| {
        work(&mut |p: Progress| {
            progress.update(p.pairs_done, p.pairs, || {
                format!("pip total {}/{}", p.diagonal + 1, p.diagonals)
            })
        })
    });
    progress.finish();
    result
}

fn describe(side: &Side) -> String {
    format!(
        "{side}   ({}, {})",
        counted(side.checkers() as u64, "checker"),
        counted(side.pips() as u64, "pip")
    )
}

/// Prints a position's values and, with a roll, its plays.
fn report(lookup: &impl Lookup, position: &Position) -> Result<(), CliError> {
    let (x, o) = (&position.x, &position.o);
    // A side past the book names its option, as other side errors do.
    let probe_error = |e: ProbeError| match e {
        ProbeError::NotCovered {
            side,
            checkers,
            max,
        } if side == *x || side == *o => CliError::Input(format!(
            "{} \"{side}\": {checkers} checkers; the book covers at most {max} per side",
            if side == *x { "--x" } else { "--o" }
        )),
        e => CliError::Input(e.to_string()),
    };
    let entry: Entry = lookup.entry(x, o).map_err(probe_error)?;
    // The plays too before anything is printed: a lookup that fails (a
    // corrupt book) leaves no partial answer.
    let ranked = match position.roll {
        None => None,
        Some(roll) => Some(match ranked_plays(lookup, x, o, roll) {
            Err(ProbeError::GameOver { .. }) => None,
            ranked => Some(ranked.map_err(probe_error)?),
        }),
    };
    println!("X to move   {}", describe(x));
    println!("O           {}", describe(o));
    println!("            (checkers on points 1 to 6, point 1 next to bearing off)");
    println!("P(X wins)   {:.6}   (cubeless, best play)", entry.win);
    let over = x.is_empty() || o.is_empty();
    if over {
        let winner = if x.is_empty() { "X" } else { "O" };
        println!("the game is over: {winner} has borne off every checker");
    }
    if let Some(cube) = entry.cube.filter(|_| !over) {
        println!("cubeful money equities for X, cube at 1, no gammons, if X does not double now:");
        println!("  X owns the cube     {:+.6}", cube.owned);
        println!("  cube centred        {:+.6}", cube.centred);
        println!("  O owns the cube     {:+.6}", cube.opponent_owns);
        println!(
            "  if O took a double  {:+.6}   (O {} a double; a pass gives X +1)",
            2.0 * cube.opponent_owns,
            if cube.pass() { "passes" } else { "takes" }
        );
        let action = |action: CubeAction, verb: &str| match action {
            CubeAction::NoDouble => format!("no {verb}"),
            CubeAction::DoubleTake => format!("{verb}, take"),
            CubeAction::DoublePass => format!("{verb}, pass"),
        };
        println!(
            "cube action, centred:        {}",
            action(cube.centred_action(), "double")
        );
        println!(
            "cube action, X owns cube:    {}",
            action(cube.owned_action(), "redouble")
        );
    }
    let (Some(roll), Some(ranked)) = (position.roll, ranked) else {
        return Ok(());
    };
    let Some(ranked) = ranked else {
        println!("roll {roll}: no play, the game is over");
        return Ok(());
    };
    // Cube columns where the lookup has cube values (a play that ends the
    // game has them even without).
    let cube = entry.cube.is_some() && ranked.iter().all(|r| r.cube.is_some());
    println!();
    println!(
        "roll {roll}: {}, best first {}",
        counted(ranked.len() as u64, "distinct play"),
        if cube {
            "by X's equity with the cube centred (the cubeless best can differ)"
        } else {
            "by P(win)"
        }
    );
    if cube {
        println!(
            "{:>4}  {:<24} {:<15} {:>9} {:>10} {:>10} {:>10}",
            "rank", "play", "leaves", "P(win)", "centred", "X owns", "O owns"
        );
    } else {
        println!(
            "{:>4}  {:<24} {:<15} {:>9}",
            "rank", "play", "leaves", "P(win)"
        );
    }
    for (rank, r) in ranked.iter().enumerate() {
        let leaves = r.play.result.to_string();
        match r.cube.filter(|_| cube) {
            Some((owned, centred, opponent_owns)) => println!(
                "{:>4}  {:<24} {:<15} {:>9.6} {:>+10.6} {:>+10.6} {:>+10.6}",
                rank + 1,
                r.play.notation(),
                leaves,
                r.win,
                centred,
                owned,
                opponent_owns
            ),
            None => println!(
                "{:>4}  {:<24} {:<15} {:>9.6}",
                rank + 1,
                r.play.notation(),
                leaves,
                r.win
            ),
        }
    }
    Ok(())
}

fn run_verify(args: VerifyArgs) -> Result<(), CliError> {
    let generator = matches!(args.check, CheckArg::Both | CheckArg::Generator);
    let rules = matches!(args.check, CheckArg::Both | CheckArg::Rules);
    // The rules' check runs no kernel: one is only resolved (and checked
    // against the CPU) where the generator's runs.
    let kernel = match (generator, args.kernel) {
        (true, forced) => kernel(forced.unwrap_or(KernelArg::Auto))?,
        (false, None) => Kernel::scalar(),
        (false, Some(_)) => {
            return Err(CliError::Input(
                "--kernel picks the kernel that generates the table again: --check rules runs none; leave it out, or add --check both or generator".into(),
            ))
        }
    };
    let threads = configure_threads(args.resources.threads)?;
    let book = BearoffBook::open(&args.book).map_err(unreadable_book)?;
    let options = GenerateOptions {
        checkers: book.checkers(),
        cube: book.has_cube(),
        kernel,
    };
    // The book read whole through its mapping, and the larger of the
    // generation's table and the rules' sides and rolls (the checks run one
    // after the other), with the universe and the threads.
    let generation = if generator { options.table_bytes() } else { 0 };
    let rolls = if rules { book.verify_rules_bytes() } else { 0 };
    let memory = book.file_len() + generation.max(rolls) + BESIDE_TABLE;
    args.resources
        .check_memory(memory, || format!("verifying {}", args.book.display()))?;
    note!(
        "verifying {} ({} checkers per side{}) against {}: {threads_counted}{}, about {} of memory",
        args.book.display(),
        book.checkers(),
        if book.has_cube() { ", cubeful" } else { "" },
        match args.check {
            CheckArg::Both => "the generator (its table generated again) and the rules",
            CheckArg::Generator => "the generator (its table generated again)",
            CheckArg::Rules => "the rules",
        },
        if generator {
            format!(", kernel {kernel}")
        } else {
            String::new()
        },
        human_bytes(memory),
        threads_counted = counted(threads as u64, "thread"),
    );
    if generator {
        let start = Instant::now();
        let verified = solving(|report| book.verify(kernel, report));
        let pairs = verified.map_err(|mismatch| {
            CliError::Failure(format!(
                "{} holds a value this build does not generate: {mismatch}",
                args.book.display()
            ))
        })?;
        println!(
            "verified {}: every stored value of its {} pairs (padding included) is the one this build generates, in {:.2} s",
            args.book.display(),
            grouped(pairs),
            start.elapsed().as_secs_f64()
        );
    }
    if rules {
        let start = Instant::now();
        let mut progress = WorkProgress::new("pairs");
        let checked = on_pool(|| {
            book.verify_rules(|done, pairs| {
                progress.update(done, pairs, || "against the rules".into())
            })
        });
        progress.finish();
        let checked = checked.map_err(|broken| {
            CliError::Failure(format!(
                "{} holds a value its rolls do not give: {broken}",
                args.book.display()
            ))
        })?;
        let [win, owned, centred, opponent_owns] = checked.largest;
        let largest = if book.has_cube() {
            format!("P(win) {win:.1e}, equities {owned:.1e}, {centred:.1e} and {opponent_owns:.1e} (owned, centred, opponent owns)")
        } else {
            format!("P(win) {win:.1e}")
        };
        println!(
            "verified {} against the rules: each of its {} pairs is what its rolls give from the book's values one roll ahead, within the 16-bit codes' precision (largest differences: {largest}), in {:.2} s",
            args.book.display(),
            grouped(checked.pairs),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn run_info(args: InfoArgs) -> Result<(), CliError> {
    let book = BearoffBook::open(&args.book).map_err(unreadable_book)?;
    let sides = book.positions() as u64;
    println!("book          {}", book.path().display());
    println!("game          backgammon bear-off (two-sided, no gammons)");
    println!("size          {}", human_bytes(book.file_len()));
    println!(
        "checksums     verified (the values themselves: endbook bearoff verify checks them against the generator and the rules)"
    );
    println!("checkers      at most {} per side", book.checkers());
    println!(
        "sides         {} per player, {} pairs",
        grouped(sides),
        grouped(sides * sides)
    );
    println!(
        "values        {}",
        if book.has_cube() {
            "P(win); no-double equities: X owns, centred, O owns (16 bits each)"
        } else {
            "P(win) (16 bits)"
        }
    );
    Ok(())
}
