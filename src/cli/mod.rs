//! Argument parsing, exit codes and output shared by every game's subcommands.
//!
//! Exit codes: 0 on success, 2 for bad input (arguments, boards, book files
//! that are missing, foreign or corrupt), 1 when the work itself fails (for
//! example a full disk). Errors go to stderr as one line, `endbook: ...`.
//! On Linux, output cut off by its reader (`| head`) ends the process by
//! SIGPIPE, quietly. Notes and progress on stderr are written with their
//! failures ignored (`note!`): a run whose stderr reader has gone (a log
//! pipe closed, a terminal hung up under `nohup`) goes on to its book.

/// Writes a line to stderr, like `eprintln!`, ignoring a failure: notes and
/// progress are not worth stopping the work for.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bearoff;
mod checkpoint;
#[cfg(target_os = "linux")]
mod interrupt;
mod oware;
mod progress;

/// Elsewhere, signals end a command as they do by default.
#[cfg(not(target_os = "linux"))]
mod interrupt {
    pub fn install() {}
    pub struct Temporary;
    impl Temporary {
        pub fn new(_: &std::path::Path) -> Temporary {
            Temporary
        }
    }
}

use clap::{Args, Parser, Subcommand, ValueEnum};
use endbook::book::BookError;
use endbook::games::{count_fields, escape_controls, excerpt, game_of};
use endbook::kernels::{Kernel, KernelKind};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exact endgame books by parallel retrograde analysis.
///
/// Generates, for every position up to a size limit and every number of turns
/// left, the exact value under perfect play; stores it in a checksummed,
/// memory-mapped book; looks positions up.
#[derive(Parser)]
#[command(name = "endbook", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    game: Game,
}

#[derive(Subcommand)]
enum Game {
    /// Oware Abapa (CodinGame rules): net score with perfect play.
    #[command(subcommand)]
    Oware(oware::Command),
    /// Backgammon bear-offs: exact two-sided tables, P(win) and cubeful money equities.
    #[command(subcommand)]
    Bearoff(bearoff::Command),
}

/// A failed command: what to print and how to exit.
#[derive(Clone, Debug)]
pub enum CliError {
    /// Bad input from the user: exit code 2.
    Input(String),
    /// The work itself failed: exit code 1.
    Failure(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(message) | CliError::Failure(message) => f.write_str(message),
        }
    }
}

pub fn main() -> ExitCode {
    interrupt::install();
    report_failed_prints();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            return usage_error(error, &args);
        }
    };
    let result = match cli.game {
        Game::Oware(command) => oware::run(command),
        Game::Bearoff(command) => bearoff::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line whatever it quotes (a path with a newline or an
            // escape sequence in it, say).
            note!("endbook: {}", escape_controls(&error.to_string()));
            match error {
                CliError::Input(_) => ExitCode::from(2),
                CliError::Failure(_) => ExitCode::from(1),
            }
        }
    }
}

/// Help and version as clap prints them; any other error in the arguments
/// as one line on stderr, like every other bad input, and exit code 2. Its
/// details (the possible values, a similar flag) are kept; the usage
/// lines clap adds are left to `--help`.
fn usage_error(error: clap::Error, args: &[String]) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // (Help asked for goes to stdout with exit code 0; the help of a
        // command named without its subcommand, a usage error, to stderr
        // with exit code 2. On stdout, a reader that has gone ends the
        // process; one that cannot take it, as `>/dev/full`, fails it, as
        // any other output does. Flushed here: clap leaves that to the exit.)
        use std::io::Write as _;
        let printed = error
            .print()
            .and_then(|()| std::io::stdout().flush())
            .map_err(unless_reader_gone);
        if let Err(e) = printed {
            note!("endbook: failed printing to stdout: {e}");
            return ExitCode::from(1);
        }
        return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
    }
    if let Some(message) = hyphen_value(&error, args) {
        note!("endbook: {message} (see --help)");
        return ExitCode::from(2);
    }
    // Every argument clap quotes as it was given (a value, a flag, a
    // subcommand) is quoted by its excerpt: a long one shortened, control
    // characters escaped, so the message stays one short line.
    let mut text = error.render().to_string();
    let mut quoted: Vec<&str> = args[1..]
        .iter()
        .flat_map(|arg| {
            [arg.as_str()]
                .into_iter()
                .chain(arg.split_once('=').map(|(_, v)| v))
        })
        .filter(|token| excerpt(token) != *token)
        .collect();
    quoted.sort_by_key(|token| std::cmp::Reverse(token.len()));
    // (As clap quotes them: an argument that is a bare newline must not
    // stand for every line break of the text.)
    for token in quoted {
        text = text.replace(&format!("'{token}'"), &format!("'{}'", excerpt(token)));
    }
    // Without the usage lines (a command's may run over several, the
    // later ones indented) and the pointer to --help.
    let mut in_usage = false;
    let details: Vec<&str> = text
        .lines()
        .filter(|line| {
            let continued = in_usage && line.starts_with(char::is_whitespace);
            in_usage = line.starts_with("Usage:") || continued;
            !in_usage
        })
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect();
    let mut message = String::new();
    for detail in details {
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(detail);
    }
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    note!("endbook: {message}{} (see --help)", side_hint(&error, args));
    ExitCode::from(2)
}

/// Where a bear-off side's counts were given as separate arguments (`--x 0
/// 0 2 2 1 1`: clap takes the first and finds the rest unexpected), how to
/// give them.
fn side_hint(error: &clap::Error, args: &[String]) -> &'static str {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    // The unexpected number follows a side's option and its value, with
    // only numbers between (not the dice of --roll, say).
    let side = |arg: &String| {
        ["--x", "--o"]
            .iter()
            .any(|flag| arg == flag || arg.starts_with(&format!("{flag}=")))
    };
    let invalid = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.as_str(),
        _ => "",
    };
    let number = invalid.parse::<u32>().is_ok();
    let after_side = (0..args.len()).filter(|&i| args[i] == invalid).any(|i| {
        args[..i]
            .iter()
            .rev()
            .find(|arg| arg.parse::<u32>().is_err())
            .is_some_and(side)
    });
    match error.kind() {
        ErrorKind::UnknownArgument if number && after_side => {
            "; a side's six counts go in quotes, as one value: --x \"0 0 2 2 1 1\""
        }
        _ => "",
    }
}

/// What to say of an argument clap refused where its own message puts it
/// badly: a count past 32 bits, that it is too large (clap names the
/// type's range, 0 included); an argument starting with '-' that clap took
/// for an unknown flag, or refused as a value: after an option that takes
/// a number, or among a board's counts, that it cannot be negative (or,
/// for `-0`, that it is written without a sign); after
/// one that takes another kind of value, that such a value goes after '='.
/// `None`: clap's own message says it (its quotes shortened by
/// `usage_error`).
fn hyphen_value(error: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    // Named by its option where it has one (`--turns`, of clap's
    // `--turns <T>`).
    let negative = |whole: &str, option: Option<&str>| {
        // `-0` (or `-0.0G`, or a board's `-0`) is no negative number: every
        // number with a sign is a zero.
        let zero = |token: &str| !token.bytes().any(|b| (b'1'..=b'9').contains(&b));
        let signed_zeros = count_fields(whole)
            .filter(|token| token.starts_with('-'))
            .all(zero);
        let quoted = excerpt(whole);
        match option.and_then(|o| o.split_whitespace().next()) {
            Some(option) if signed_zeros => {
                format!("'{quoted}' for {option}: write it without a sign")
            }
            Some(option) => format!("'{quoted}' for {option}: it cannot be negative"),
            None if signed_zeros => {
                format!("'{quoted}': counts, sizes and turns are written without a sign")
            }
            None => format!("'{quoted}': counts, sizes and turns cannot be negative"),
        }
    };
    // A negative number, or a board's counts or a size with one.
    let negative_number = |text: &str| {
        text.starts_with('-')
            && text[1..].starts_with(|c: char| c.is_ascii_digit())
            && (text[1..].chars()).all(|c| c.is_ascii_digit() || " ,.-KMGTkmgtiBb".contains(c))
    };
    match (error.kind(), error.get(ContextKind::InvalidValue)) {
        // Past a 32-bit count (clap: "is not in 0..=4294967295", where 0
        // may not be allowed either).
        (ErrorKind::ValueValidation, Some(ContextValue::String(value)))
            if !value.is_empty()
                && value.bytes().all(|b| b.is_ascii_digit())
                && value.parse::<u32>().is_err() =>
        {
            let option = match error.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(option)) => option.as_str(),
                _ => "this option",
            };
            return Some(format!("'{}' is too large for {option}", excerpt(value)));
        }
        (ErrorKind::ValueValidation, Some(ContextValue::String(value))) => {
            let option = match error.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(option)) => Some(option.as_str()),
                _ => None,
            };
            return negative_number(value).then(|| negative(value, option));
        }
        (ErrorKind::UnknownArgument, _) => {}
        _ => return None,
    }
    // clap names the flag-like start of the argument (`-1` of `-1.book`).
    let Some(ContextValue::String(start)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let at = args.iter().position(|a| a.starts_with(start.as_str()))?;
    let whole = &args[at];
    if !whole.starts_with('-') || whole.starts_with("--") {
        return None;
    }
    // The option before it, if it takes a value (`--out -1.book`).
    let option = (args.get(at.wrapping_sub(1)))
        .and_then(|previous| previous.strip_prefix("--"))
        .and_then(|long| value_option(args, long));
    match option {
        Some(true) if negative_number(whole) => Some(negative(whole, Some(&args[at - 1]))),
        Some(_) => Some(format!(
            "'{}': a value starting with '-' goes after '=' ({}={})",
            excerpt(whole),
            excerpt(&args[at - 1]),
            excerpt(whole)
        )),
        // A board's counts, or a stray number.
        None if negative_number(whole) => Some(negative(whole, None)),
        None => None,
    }
}

/// Whether option `--long` of the command `args` name takes a value: `Some`
/// of whether that value is a number, `None` if it takes none (a flag) or
/// is not an option of the command.
fn value_option(args: &[String], long: &str) -> Option<bool> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    for word in args.iter().skip(1).take(2) {
        match command.find_subcommand(word) {
            Some(sub) => command = sub.clone(),
            None => break,
        }
    }
    let arg = command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))?;
    if !arg.get_action().takes_values() {
        return None;
    }
    let kind = arg.get_value_parser().type_id();
    use std::any::TypeId;
    let numbers = [
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<u8>(),
    ];
    Some(numbers.iter().any(|number| kind == *number))
}

/// Ends the process as a closed pipe ends other command-line tools: by
/// SIGPIPE, quietly, on Linux (exit code 1 elsewhere), for output whose
/// reader stopped early (`endbook oware info ... | head -3`).
///
/// Rust's runtime ignores SIGPIPE, and so does this program: a write to a
/// pipe without a reader fails instead. On stderr that failure is ignored
/// (see `note!`); on stdout it ends the process here.
pub(crate) fn end_by_broken_pipe() -> ! {
    #[cfg(target_os = "linux")]
    // SAFETY: `signal` with `SIG_DFL` only sets SIGPIPE's disposition, and
    // `raise` sends it to this thread, ending the process: nothing runs
    // after either that could see a state they changed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(1)
}

/// `error`, from a write to stdout, unless it says the reader has gone
/// (EPIPE): then the process ends by [`end_by_broken_pipe`].
pub(crate) fn unless_reader_gone(error: std::io::Error) -> std::io::Error {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        end_by_broken_pipe();
    }
    error
}

/// Output that cannot be written (a full disk, `>/dev/full`) makes
/// `println!` panic: such a panic ends the process with one line on stderr
/// (where that can still be written) and exit code 1, as other failures of
/// the work do, instead of a panic message and code 101. Other panics keep
/// the default report.
fn report_failed_prints() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("os error 32") {
            // EPIPE: the reader has gone.
            end_by_broken_pipe();
        }
        if message.starts_with("failed printing to std") {
            note!("endbook: {message}");
            std::process::exit(1);
        }
        default(info);
    }));
}

/// Options every long-running command shares: its threads and its memory check.
#[derive(Args)]
pub struct Resources {
    /// Worker threads [default: one per core].
    #[arg(long, value_name = "K")]
    pub threads: Option<usize>,
    /// Start even when the memory estimate exceeds the memory available.
    #[arg(long)]
    pub ignore_memory_check: bool,
    /// Plan for at most SIZE of memory, when less than the system reports
    /// available (for a run sharing the machine): bytes, or with a suffix
    /// K, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (of 1024), e.g. 8G.
    /// The memory check uses it (and, for generate, its dry run).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,
}

impl Resources {
    /// The memory a run may plan on: what the system reports available
    /// (where it does), capped by `--memory-limit`.
    pub fn available_memory(&self) -> Option<u64> {
        match (available_memory(), self.memory_limit) {
            (Some(system), Some(limit)) => Some(system.min(limit)),
            (system, limit) => system.or(limit),
        }
    }

    /// Refuses a run needing about `needed` bytes (`what` names it) beyond
    /// what [`Resources::available_memory`] allows, unless
    /// `--ignore-memory-check` says to try anyway.
    pub fn check_memory(&self, needed: u64, what: impl FnOnce() -> String) -> Result<(), CliError> {
        match memory_shortfall(needed, self.available_memory(), what) {
            Some(why) if !self.ignore_memory_check => Err(CliError::Input(why)),
            _ => Ok(()),
        }
    }

    /// What [`Resources::available_memory`] is, for the dry runs: `8.0 GB
    /// available`, or under a `--memory-limit` both it and what the system
    /// reports.
    pub fn memory_label(&self) -> String {
        let system = available_memory().map_or("unknown".into(), human_bytes);
        match self.memory_limit {
            None => format!("{system} available"),
            Some(limit) => format!("--memory-limit {}, {system} available", human_bytes(limit)),
        }
    }
}

/// A size such as `8G`, `1.5Gi`, `500M` or `123456` (bytes), as
/// `--memory-limit` takes it.
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err("sizes cannot be negative".into());
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let unit = unit.strip_suffix(['B', 'b']).unwrap_or(unit);
    let scale: f64 = match unit.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        "ki" => 1024f64,
        "mi" => 1024f64.powi(2),
        "gi" => 1024f64.powi(3),
        "ti" => 1024f64.powi(4),
        _ => {
            return Err(format!(
                "unknown unit '{}' (bytes, or K, M, G, T, Ki, Mi, Gi, Ti)",
                excerpt(unit)
            ))
        }
    };
    let number: f64 = number
        .parse()
        .map_err(|_| "not a size such as 8G, 1.5Gi or 500M".to_string())?;
    let bytes = number * scale;
    if bytes < 1.0 {
        return Err("not a size of at least one byte".into());
    }
    if bytes >= u64::MAX as f64 {
        return Err("larger than any memory (2^64 bytes)".into());
    }
    Ok(bytes as u64)
}

/// `--kernel`: `auto`, or a kernel to force. What `auto` means is each
/// command's to say.
#[derive(Clone, Copy, ValueEnum)]
pub enum KernelArg {
    Auto,
    Scalar,
    Portable,
    Avx2,
}

impl KernelArg {
    /// The forced kernel (`None` for `auto`), if this CPU supports it.
    pub fn forced(self) -> Result<Option<Kernel>, CliError> {
        let kind = match self {
            KernelArg::Auto => return Ok(None),
            KernelArg::Scalar => KernelKind::Scalar,
            KernelArg::Portable => KernelKind::Portable,
            KernelArg::Avx2 => KernelKind::Avx2,
        };
        Kernel::new(kind).map(Some).ok_or_else(|| {
            CliError::Input(format!("--kernel {kind}: this CPU does not support it"))
        })
    }
}

/// `--threads` may ask for this many threads per core at most (each
/// command may start more of its own, as an Oware generation's encoder).
const MAX_THREADS_PER_CORE: usize = 8;

/// Sets the number of worker threads (all cores when `None`).
fn configure_threads(threads: Option<usize>) -> Result<usize, CliError> {
    if let Some(threads) = threads {
        if threads == 0 {
            return Err(CliError::Input("--threads must be at least 1".into()));
        }
        let cores = cores();
        let most = MAX_THREADS_PER_CORE * cores.max(2);
        if threads > most {
            return Err(CliError::Input(format!(
                "--threads {threads}: at most {most} on this machine ({cores} cores; more threads than {MAX_THREADS_PER_CORE} a core only slow a run down)"
            )));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| {
                CliError::Failure(format!(
                    "cannot start {}: {e}",
                    counted(threads as u64, "thread")
                ))
            })?;
    }
    Ok(rayon::current_num_threads())
}

/// The cores this process may run on (1 where that cannot be told).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Says on stderr, as a generation or an export starts, that it will
/// replace the book (or other file) already at `out`: their output is
/// written under another name and renamed over it only once complete.
fn note_replacing(out: &Path) {
    if let Ok(meta) = std::fs::metadata(out) {
        note!(
            "note: {} ({}) exists: it is replaced once this run is complete",
            out.display(),
            human_bytes(meta.len())
        );
    }
}

/// The most bytes a file name may have on the file systems the project
/// runs on (ext4, xfs, btrfs, tmpfs).
const NAME_MAX: usize = 255;

/// The longest ending added to an output's name for a file beside it: an
/// Oware generation's checkpoint, copied under a temporary name.
const LONGEST_SUFFIX: &str = ".checkpoint.partial";

/// Checks, before any work (a dry run included), that `path` names a file
/// in a folder that exists: not a folder, not a name ending in a separator,
/// not empty, not `-`, and not something other than a regular file (a
/// named pipe, a device: the output is written under a temporary name and
/// renamed into place, which would replace it). Returns the path to write:
/// `path`, or the file a symbolic link there points to, so that the link
/// stays and its target gets the output. (Whether its folder may be
/// written, [`check_folder_writable`] finds, for a run that will write.)
/// `elsewhere`: what to say of a pipe or a device, where the command has
/// another way to write to one (`export --out -`).
fn writable_output(path: &Path, elsewhere: Option<&str>) -> Result<PathBuf, CliError> {
    let raw = path.as_os_str().to_string_lossy();
    if raw.is_empty() {
        return Err(CliError::Input(
            "--out is empty: it names the file to write".into(),
        ));
    }
    if raw == "-" {
        return Err(CliError::Input(
            "--out - : this output goes to a named file (written under a temporary name, then renamed), not to standard output".into(),
        ));
    }
    if path.is_dir() {
        return Err(CliError::Input(format!(
            "{} names a folder: --out names the file to write",
            path.display()
        )));
    }
    if raw.ends_with(std::path::is_separator) {
        return Err(CliError::Input(format!(
            "{} ends in a separator, as a folder's name: --out names the file to write",
            path.display()
        )));
    }
    let path = &match endbook::book::output_path(path) {
        Ok(target) => target,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::Input(format!(
                "{} is a symbolic link to nothing: name the file to write",
                path.display()
            )))
        }
        Err(e) if e.kind() != std::io::ErrorKind::InvalidInput => {
            return Err(CliError::Input(format!("{}: {e}", path.display())))
        }
        Err(_) => {
            return Err(CliError::Input(format!(
                "{} is not a regular file (a pipe or a device?): --out names a file, written under a temporary name and renamed into place{}",
                path.display(),
                elsewhere.map_or(String::new(), |hint| format!("; {hint}"))
            )))
        }
    };
    // Room for the longest name written beside it (a generation's
    // checkpoint, copied under a temporary name), within the 255 bytes most
    // file systems allow a name: else the run would fail at its end.
    let name = path.file_name().map_or(0, |name| name.len());
    if name + LONGEST_SUFFIX.len() > NAME_MAX {
        return Err(CliError::Input(format!(
            "{}: a file name of {name} bytes leaves no room for the names written beside it \
             (up to '{LONGEST_SUFFIX}' added, {NAME_MAX} bytes in all): at most {} bytes",
            excerpt(&path.display().to_string()),
            NAME_MAX - LONGEST_SUFFIX.len()
        )));
    }
    match path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty() && !folder.is_dir())
    {
        Some(folder) if folder.exists() => Err(CliError::Input(format!(
            "cannot write {}: {} is not a folder",
            path.display(),
            folder.display()
        ))),
        Some(folder) => Err(CliError::Input(format!(
            "cannot write {}: there is no folder {}",
            path.display(),
            folder.display()
        ))),
        None => Ok(path.to_path_buf()),
    }
}

/// The folder a file at `path` goes in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    }
}

/// Creates and removes a file beside `path`: a folder this user may not
/// write, or a file system that takes no files (`/proc`), is found before
/// any work, and named.
pub(crate) fn check_folder_writable(path: &Path) -> Result<(), CliError> {
    let folder = folder_of(path);
    // A name no other process uses at the same moment (process ids repeat
    // across containers sharing a folder): another try if it is taken.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for attempt in 0..8u32 {
        let probe = folder.join(format!(
            ".endbook-write-check-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
        {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
                return Ok(());
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => {
                last = Some(error);
                break;
            }
        }
    }
    let error = last.expect("a try was made");
    Err(CliError::Input(format!(
        "cannot write {}: no file can be created in {} ({error})",
        path.display(),
        folder.display()
    )))
}

/// Why `--batch` stopped at a line.
enum LineError {
    /// The line is malformed or asks what the book cannot answer: named
    /// with its number and the format expected.
    Bad(String),
    /// The book failed (a corrupt record): the command's error, with the
    /// number of the line it was answering.
    Fatal(CliError),
}

/// Answers `--batch`: each line of standard input but blank ones and those
/// starting with '#', by `answer`, one line of output each, flushed at the
/// end; stops at the first bad line (or one that is not UTF-8), naming it
/// and the `format` expected (exit code 2), or at a failure of the book,
/// naming the line it was answering. A reader that stops early ends
/// the process ([`end_by_broken_pipe`]).
fn answer_lines(
    format: &str,
    mut answer: impl FnMut(&str) -> Result<String, LineError>,
) -> Result<(), CliError> {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let write_failed = |e: std::io::Error| {
        CliError::Failure(format!("writing to stdout: {}", unless_reader_gone(e)))
    };
    for (number, line) in stdin.lines().enumerate() {
        let number = number + 1;
        let line = line.map_err(|e| {
            CliError::Input(format!("stdin line {number}: {e} (expected \"{format}\")"))
        })?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let answered = answer(line).map_err(|e| match e {
            LineError::Bad(reason) => CliError::Input(format!(
                "stdin line {number}: {reason} (expected \"{format}\")"
            )),
            // (The values printed before it answer the lines before it.)
            LineError::Fatal(CliError::Input(m)) => {
                CliError::Input(format!("{m} (answering stdin line {number})"))
            }
            LineError::Fatal(CliError::Failure(m)) => {
                CliError::Failure(format!("{m} (answering stdin line {number})"))
            }
        })?;
        writeln!(out, "{answered}").map_err(write_failed)?;
    }
    out.flush().map_err(write_failed)
}

/// A book that could not be opened, as bad input; a book of the other game
/// says which command reads it.
fn unreadable_book(error: BookError) -> CliError {
    let hint = match &error {
        BookError::WrongGame { found, .. } => game_of(*found).map(|game| {
            format!(
                " ({}: read it with `endbook {} ...`)",
                game.books, game.command
            )
        }),
        // Said instead of the magic it lacks.
        BookError::NotABook { path } if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) => {
            return CliError::Input(format!(
                "{}: not an endbook book (the file is empty)",
                path.display()
            ));
        }
        _ => None,
    };
    CliError::Input(format!("{error}{}", hint.unwrap_or_default()))
}

/// Whether `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

/// Runs `f` on a worker thread of the pool, so that the parallel work it
/// starts is shared from there rather than handed over and waited for by
/// this thread, once per parallel step.
pub(crate) fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // `scope` runs its closure on a worker, moving there from outside the pool.
    rayon::scope(|_| f())
}

/// A dry run's time line: `serial_seconds`, and `seconds_2_threads` (the
/// parallel work's time on two threads) spread over `threads`, or over as
/// many as the machine has cores where `threads` is more (threads beyond
/// the cores share them: no faster).
fn print_time_estimate(serial_seconds: f64, seconds_2_threads: f64, threads: usize) {
    let cores = cores();
    let working = threads.min(cores);
    let seconds = serial_seconds + seconds_2_threads * 2.0 / working as f64;
    let beyond = if threads > working {
        format!(
            " ({} busy at a time on {})",
            working,
            counted(cores as u64, "core")
        )
    } else {
        String::new()
    };
    println!(
        "time          {} on {}{beyond}",
        human_seconds(seconds),
        counted(threads as u64, "thread")
    );
}

/// `n` and `noun` (singular), with an "s" unless `n` is 1, digits grouped:
/// "1 seed", "2,048 seeds".
fn counted(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// Groups digits in threes: 2704156 -> "2,704,156".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for people: "523.4 MB".
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// An expected duration for people, to about two figures: "about 0.12 s",
/// "about 4.3 s", "about 73 s", "about 21 min", or "under 0.01 s".
fn human_seconds(seconds: f64) -> String {
    if seconds < 0.01 {
        "under 0.01 s".into()
    } else if seconds < 1.0 {
        format!("about {seconds:.2} s")
    } else if seconds < 10.0 {
        format!("about {seconds:.1} s")
    } else if seconds < 600.0 {
        format!("about {seconds:.0} s")
    } else {
        format!("about {:.0} min", seconds / 60.0)
    }
}

/// Memory the system can still give this process, from /proc/meminfo.
fn available_memory() -> Option<u64> {
    proc_bytes("/proc/meminfo", "MemAvailable:")
}

/// The share of the memory available a run may expect to take: above it,
/// the estimate's error or any other process's growth would push it into
/// swap or the OOM killer.
const MEMORY_HEADROOM: f64 = 0.9;

/// Why a run needing about `needed` bytes (the work named by `what`) must
/// not start with `available` bytes available, if it must not.
fn memory_shortfall(
    needed: u64,
    available: Option<u64>,
    what: impl FnOnce() -> String,
) -> Option<String> {
    let available = available?;
    (needed as f64 > available as f64 * MEMORY_HEADROOM).then(|| {
        format!(
            "{} needs about {} of memory, more than {:.0}% of the {} available (--ignore-memory-check to try anyway)",
            what(),
            human_bytes(needed),
            MEMORY_HEADROOM * 100.0,
            human_bytes(available)
        )
    })
}

/// `--dry-run`, for the commands that generate a book.
#[derive(Args)]
pub struct DryRun {
    /// Print the memory, disk and time the run is expected to take, and
    /// whether it would start (the run's own checks, in its order), and
    /// stop: exit code 0 where it would start, 2 (as the run's own refusal)
    /// where it would stop at once.
    #[arg(long)]
    pub dry_run: bool,
}

/// `--ignore-disk-check`, for the commands that write a book.
#[derive(Args)]
pub struct DiskCheck {
    /// Start even when the book expected is larger than the free space on
    /// the disk of --out.
    #[arg(long)]
    pub ignore_disk_check: bool,
}

impl DiskCheck {
    /// Why a book of about `book` bytes, `kept` of them already on the
    /// disk (a checkpoint resumed), must not be started at `out`, if it
    /// must not: the system tells the free space, it is less, and the
    /// check is not overridden.
    fn shortfall(&self, book: u64, kept: u64, out: &Path) -> Option<String> {
        disk_shortfall(book, kept, free_disk(out), self.ignore_disk_check, out)
    }

    /// Refuses a run whose book would not fit (see [`DiskCheck::shortfall`]).
    fn check(&self, book: u64, kept: u64, out: &Path) -> Result<(), CliError> {
        self.shortfall(book, kept, out)
            .map_or(Ok(()), |why| Err(CliError::Input(why)))
    }
}

/// [`DiskCheck::shortfall`] with `free` bytes free (where the system tells).
fn disk_shortfall(
    book: u64,
    kept: u64,
    free: Option<u64>,
    ignore: bool,
    out: &Path,
) -> Option<String> {
    let needed = book.saturating_sub(kept);
    let free = free?;
    (needed > free && !ignore).then(|| {
        format!(
            "the book needs about {}{} on the disk of {}, which has {} free (--ignore-disk-check to try anyway)",
            human_bytes(needed),
            if kept > 0 { " more" } else { "" },
            out.display(),
            human_bytes(free)
        )
    })
}

/// A dry run's line on whether the run itself would start, from the run's
/// own checks in its order: `first` (the reason the checks before the
/// memory's would stop it, if one would), the memory check (of the work
/// `what` names, worded as the run's), then `after` (the checks after it,
/// run only when those before pass). Returns the reason the run would
/// stop, if it would.
fn print_verdict(
    first: Option<String>,
    needed: u64,
    available: Option<u64>,
    ignore: bool,
    what: impl FnOnce() -> String,
    after: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let (stop, memory_ignored) = match first {
        Some(why) => (Some(why), false),
        None => match memory_shortfall(needed, available, what) {
            Some(why) if !ignore => (Some(why), false),
            short => (after(), short.is_some()),
        },
    };
    match &stop {
        Some(why) => println!("verdict       would stop at once: {why}"),
        None if memory_ignored => println!(
            "verdict       would start (--ignore-memory-check), though it needs more than {:.0}% of the memory available",
            MEMORY_HEADROOM * 100.0
        ),
        None => println!("verdict       would start"),
    }
    stop
}

/// What a dry run returns: exit code 0 where the run would start, and where
/// it would stop at once, exit code 2 as that run's, with its reason.
fn dry_run_outcome(stop: Option<String>) -> Result<(), CliError> {
    match stop {
        Some(why) => Err(CliError::Input(format!(
            "the run would stop at once: {why}"
        ))),
        None => Ok(()),
    }
}

/// The bytes free for this user on the file system that will hold `out`
/// (where the system tells).
#[cfg(target_os = "linux")]
fn free_disk(out: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let folder = folder_of(out);
    let name = std::ffi::CString::new(folder.as_os_str().as_bytes()).ok()?;
    // SAFETY: `stats` is a valid, writable statvfs and `name` a
    // NUL-terminated path; statvfs writes only into `stats`.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    let status = unsafe { libc::statvfs(name.as_ptr(), &mut stats) };
    (status == 0).then(|| stats.f_bavail as u64 * stats.f_frsize as u64)
}

#[cfg(not(target_os = "linux"))]
fn free_disk(_: &Path) -> Option<u64> {
    None
}

/// A dry run's line on the book's size and the disk space free for it
/// (`kept` bytes of it already there: a checkpoint resumed).
fn print_book_size(book: u64, kept: u64, about: &str, out: &Path) {
    let free = free_disk(out);
    let note = match free {
        Some(free) if book.saturating_sub(kept) > free => format!(
            " (only {} free on the disk of {}: it would not fit)",
            human_bytes(free),
            out.display()
        ),
        Some(free) => format!(" ({} free on its disk)", human_bytes(free)),
        None => String::new(),
    };
    println!("book          {about}{}{note}", human_bytes(book));
}

/// The most memory this process has held resident, from /proc/self/status.
fn peak_memory() -> Option<u64> {
    proc_bytes("/proc/self/status", "VmHWM:")
}

/// The value of the line `key  N kB` of a /proc file, in bytes.
fn proc_bytes(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A generation's last line: the book written and its size, and the peak
/// memory against the estimate the run started with (where the system
/// tells the peak).
fn print_written(out: &Path, estimate: u64) {
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    match peak_memory() {
        Some(peak) => println!(
            "wrote {} ({}); peak memory {} (estimated {})",
            out.display(),
            human_bytes(size),
            human_bytes(peak),
            human_bytes(estimate)
        ),
        None => println!("wrote {} ({})", out.display(), human_bytes(size)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_to_about_two_figures() {
        assert_eq!(human_seconds(0.004), "under 0.01 s");
        assert_eq!(human_seconds(0.123), "about 0.12 s");
        assert_eq!(human_seconds(4.26), "about 4.3 s");
        assert_eq!(human_seconds(73.4), "about 73 s");
        assert_eq!(human_seconds(1260.0), "about 21 min");
    }

    #[test]
    fn sizes_parse_in_decimal_and_binary_units() {
        assert_eq!(parse_size("123456"), Ok(123_456));
        assert_eq!(parse_size("8G"), Ok(8_000_000_000));
        assert_eq!(parse_size("8 GB"), Ok(8_000_000_000));
        assert_eq!(parse_size("1.5Gi"), Ok(1_610_612_736));
        assert_eq!(parse_size("500m"), Ok(500_000_000));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        for bad in ["", "G", "8X", "0", "-1G", "1.2.3M", "0.1", "20000000T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn books_larger_than_the_free_disk_are_refused_unless_told() {
        let out = Path::new("x.book");
        let refused = disk_shortfall(77_000, 0, Some(65_536), false, out).unwrap();
        assert!(
            refused.starts_with(
                "the book needs about 77.0 KB on the disk of x.book, which has 65.5 KB free"
            ),
            "{refused}"
        );
        assert_eq!(disk_shortfall(77_000, 0, Some(65_536), true, out), None);
        assert_eq!(disk_shortfall(77_000, 0, Some(77_000), false, out), None);
        assert_eq!(disk_shortfall(77_000, 0, None, false, out), None);
        // A checkpoint resumed is part of the book already.
        assert_eq!(
            disk_shortfall(77_000, 20_000, Some(65_536), false, out),
            None
        );
        let refused = disk_shortfall(77_000, 1_000, Some(65_536), false, out).unwrap();
        assert!(refused.contains("76.0 KB more"), "{refused}");
    }

    #[test]
    fn counts_and_sizes_read_grouped() {
        assert_eq!(grouped(2_704_156), "2,704,156");
        assert_eq!(grouped(999), "999");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(23_900_000), "23.9 MB");
    }
}
