//! The `endbook` binary: commands, output, and exit code 2 with one clear
//! message (and nothing written) on bad input.

use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

mod common;
use common::{
    endbook, endbook_with_stdin, generate_args, hex, rebuilt, sections_of, text,
    ARTICLE_FLAT_9_SHA256,
};
use endbook::games::oware::{generate, GenerateOptions, OwareBook};
use sha2::{Digest, Sha256};

/// A 6-seed book generated once by the binary, in a directory kept for the whole run.
fn book() -> &'static Path {
    static BOOK: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BOOK.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("six.book");
        let out = endbook(&generate_args("6", &path, &[]));
        assert!(out.status.success(), "{}", text(&out.stderr));
        (dir, path)
    });
    path
}

fn book_arg() -> &'static str {
    book().to_str().unwrap()
}

/// `endbook oware probe` of `board` with `turns` left in the 6-seed book.
fn probe(turns: &str, board: &str) -> Output {
    endbook(&[
        "oware",
        "probe",
        "--book",
        book_arg(),
        "--turns",
        turns,
        board,
    ])
}

/// Asserts exit code 2 and a single `endbook:` line on stderr containing `needle`.
fn assert_input_error(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains(needle), "expected '{needle}' in: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        text(&out.stdout)
    );
}

/// A dry run that says the run would stop at once, and why (its reason
/// holding `why`), on stdout with its estimates and as its one line on
/// stderr, and exits 2 as the run would.
fn assert_dry_run_stops(out: &Output, why: &str) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stdout.contains("memory        about"), "{stdout}");
    let verdict = stdout.lines().find(|l| l.starts_with("verdict ")).unwrap();
    assert!(
        verdict.starts_with("verdict       would stop at once: ") && verdict.contains(why),
        "{stdout}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("endbook: the run would stop at once: ") && stderr.contains(why),
        "{stderr}"
    );
}

#[test]
fn generate_prints_a_table_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("three.book");
    let out = endbook(&generate_args(
        "3",
        &path,
        &["--turn-limit", "50", "--threads", "1"],
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("last change"), "{stdout}");
    // One row per level 0..=3, with the article's board counts.
    for (seeds, boards) in [(0, "1"), (1, "12"), (2, "78"), (3, "364")] {
        assert!(
            stdout.lines().any(|l| l
                .split_whitespace()
                .take(2)
                .eq([&seeds.to_string()[..], boards])),
            "level {seeds}: {stdout}"
        );
    }
    assert!(stdout.contains("state updates/s"), "{stdout}");
    assert!(path.exists());
    // Each level's row names the kernel that swept it.
    let forced = dir.path().join("forced.book");
    let out = endbook(&generate_args(
        "3",
        &forced,
        &["--turn-limit", "50", "--kernel", "portable"],
    ));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("kernel portable (forced)"), "{stdout}");
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("seeds"))
        .skip(1)
        .take(4)
        .collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    assert!(
        rows.iter().all(|row| row.ends_with("  portable")),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(&forced).unwrap(),
        std::fs::read(&path).unwrap()
    );
    let info = text(&endbook(&["oware", "info", "--book", path.to_str().unwrap()]).stdout);
    assert!(info.contains("turn limit    50"), "{info}");
    assert!(info.contains("max seeds     3"), "{info}");
    assert!(info.contains("records       all well formed"), "{info}");
}

/// Asserts that probing `board` with `turns` left succeeds and prints each of `lines`.
fn assert_probe_says(turns: &str, board: &str, lines: &[&str]) {
    let out = probe(turns, board);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for line in lines {
        assert!(stdout.contains(line), "expected '{line}' in: {stdout}");
    }
}

#[test]
fn probe_shows_value_moves_and_best_move() {
    // Sowing house 5 makes house 6 hold 2 and captures it; house 7 keeps the opponent alive.
    assert_probe_says(
        "1",
        "0 0 0 0 0 1 1 1 0 0 0 0",
        &["value       +2", "best move: 5"],
    );
}

#[test]
fn probe_reports_the_end_of_the_game() {
    // The opponent is empty and one seed in house 0 cannot reach them.
    assert_probe_says(
        "7",
        "1,0,0,0,0,0,0,0,0,0,0,0",
        &["value       +1", "no legal move"],
    );
}

/// `endbook oware probe --line` of `board` with `turns` left in the 6-seed
/// book: its standard output, the command having succeeded.
fn probe_line(turns: &str, board: &str) -> String {
    let out = endbook(&[
        "oware",
        "probe",
        "--book",
        book_arg(),
        "--turns",
        turns,
        "--line",
        board,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_line_ending_at_the_turn_limit_counts_the_seeds_left_after_the_capture() {
    // With 1 turn left, house 5's seed makes the opponent's house 0 hold 2
    // and captures them: of the 3 seeds, 1 is left, scoring nothing.
    let stdout = probe_line("1", "0 0 0 0 0 1 1 1 0 0 0 0");
    assert!(
        stdout.contains("end: no turns left, and the seeds left on the board (1) score nothing"),
        "{stdout}"
    );
}

#[test]
fn probe_line_plays_a_best_move_of_each_board_it_shows() {
    let board = "2 1 0 0 0 1 1 0 1 0 0 0";
    let stdout = probe_line("12", board);
    let value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("value       "))
        .unwrap()
        .to_string();
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("ply"))
        .skip(1)
        .take_while(|l| !l.starts_with("end: "))
        .collect();
    assert!(rows.len() >= 2, "{stdout}");
    let mut net = 0;
    for (ply, row) in rows.iter().enumerate() {
        // ply, turns, mover, six houses, '|', six houses, house, capture, net
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), 19, "{row}");
        assert_eq!(cells[0], (ply + 1).to_string());
        let turns = (12 - ply).to_string();
        assert_eq!(cells[1], turns, "{row}");
        assert_eq!(cells[2], if ply.is_multiple_of(2) { "A" } else { "B" });
        let shown = [&cells[3..9], &cells[10..16]].concat().join(" ");
        if ply == 0 {
            assert_eq!(shown, board);
        }
        // The house played is the first best move a probe of the board names,
        // with the capture its table gives.
        let single = text(&probe(&turns, &shown).stdout);
        let best = single
            .lines()
            .find_map(|l| {
                l.split_once(": ")
                    .filter(|(k, _)| k.starts_with("best move"))
            })
            .unwrap()
            .1;
        assert_eq!(
            cells[16],
            best.split(' ').next().unwrap(),
            "{row}\n{single}"
        );
        let capture = single
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|c| c.len() >= 4 && c[0] == cells[16] && c.last() == Some(&"best"))
            .unwrap()[2]
            .to_string();
        assert_eq!(cells[17], capture, "{row}");
        net += if ply.is_multiple_of(2) { 1 } else { -1 } * capture.parse::<i32>().unwrap();
        assert_eq!(cells[18], format!("{net:+}"), "{row}");
    }
    assert!(
        stdout.contains(&format!("net {value} for A, the value")),
        "{stdout}"
    );
    let out = endbook_with_stdin(
        &["oware", "probe", "--book", book_arg(), "--batch", "--line"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn batch_prints_one_value_per_line_matching_single_probes() {
    let queries = [
        "1 0 0 0 0 0 1 1 1 0 0 0 0",
        "200 0 0 0 0 0 1 1 1 0 0 0 0",
        "12 1 2 0 0 0 0 0 0 3 0 0 0",
        "3 0 0 0 0 0 0 0 0 0 0 0 0",
    ];
    let input = format!(
        "# comment\n{}\n\n{}\n",
        queries[..2].join("\n"),
        queries[2..].join("\n")
    );
    let out = endbook_with_stdin(&["oware", "probe", "--book", book_arg(), "--batch"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let values: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(values.len(), queries.len());
    for (query, value) in queries.iter().zip(&values) {
        let (turns, board) = query.split_once(' ').unwrap();
        let single = probe(turns, board);
        let expected = format!("value       {:+}", value.parse::<i32>().unwrap());
        assert!(text(&single.stdout).contains(&expected), "{query}: {value}");
    }
    // Commas separate the numbers as well as spaces.
    let commas: Vec<String> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| match i % 2 {
            0 => q.replace(' ', ","),
            _ => q.replace(' ', ", "),
        })
        .collect();
    let out = endbook_with_stdin(
        &["oware", "probe", "--book", book_arg(), "--batch"],
        &commas.join("\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let again: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(again, values);
}

#[test]
fn batch_names_the_bad_line_and_fails() {
    let input = "5 0 0 0 0 0 1 1 1 0 0 0 0\n5 0 0 0 0 0 1 1 1 0 0 0\n5 0 0 0 0 0 1 1 1 0 0 0 0\n";
    let out = endbook_with_stdin(&["oware", "probe", "--book", book_arg(), "--batch"], input);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("line 2"), "{stderr}");
    assert!(stderr.contains("found 11"), "{stderr}");
    // Lines before the bad one are answered, none after it.
    assert_eq!(text(&out.stdout).lines().count(), 1);
    // A token of a megabyte is quoted by its start and length.
    let long = "7".repeat(1 << 20);
    for input in [
        format!("5 0 0 0 0 {long} 1 1 1 0 0 0 0\n"),
        format!("{long} 0 0 0 0 0 1 1 1 0 0 0 0\n"),
    ] {
        let out = endbook_with_stdin(&["oware", "probe", "--book", book_arg(), "--batch"], &input);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            &stderr[..200.min(stderr.len())]
        );
        assert!(
            stderr.len() < 200,
            "{} bytes: {}",
            stderr.len(),
            &stderr[..200]
        );
        assert!(
            stderr.contains("'77777777777777777777... (1048576 characters)'"),
            "{stderr}"
        );
    }
}

#[test]
fn malformed_boards_and_turns_exit_2() {
    assert_input_error(&probe("3", "1 2 3"), "found 3");
    assert_input_error(&probe("3", "1 0 0 0 0 0 0 0 0 0 0 0 0"), "found 13");
    assert_input_error(&probe("3", "1 0 0 0 x 0 0 0 0 0 0 0"), "house 4: 'x'");
    assert_input_error(&probe("3", "1 0 0 0 0 0 0 0 0 0 0 -1"), "house 11: '-1'");
    assert_input_error(&probe("3", "1 0 0 0 0 0 0 0 0 0 0 999"), "house 11: '999'");
    assert_input_error(&probe("3", "7 0 0 0 0 0 0 0 0 0 0 0"), "at most 6");
    assert_input_error(&probe("0", "1 0 0 0 0 0 0 0 0 0 0 0"), "got 0");
    assert_input_error(&probe("201", "1 0 0 0 0 0 0 0 0 0 0 0"), "got 201");
    let negative_turns = probe("-3", "1 0 0 0 0 0 0 0 0 0 0 0");
    assert_input_error(&negative_turns, "'-3' for --turns: it cannot be negative");
}

#[test]
fn outputs_in_a_missing_folder_or_naming_a_folder_exit_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let inside = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    // A folder, and a file where a folder is expected, inside `work`, so
    // that anything written beside them would show.
    std::fs::create_dir_all(inside("work/folder")).unwrap();
    std::fs::write(inside("work/file"), b"not a folder").unwrap();
    let cases = [
        (inside("work/no-such-folder/out.book"), "there is no folder"),
        (inside("work/folder"), "names a folder"),
        (inside("work/new-folder/"), "ends in a separator"),
        (inside("work/file/out.book"), "is not a folder"),
    ];
    for (out, needle) in &cases {
        let out = out.as_str();
        let generate = ["oware", "generate", "--max-seeds", "2", "--out", out];
        assert_input_error(&endbook(&generate), needle);
        assert_input_error(&endbook(&[&generate[..], &["--dry-run"]].concat()), needle);
        let bearoff = ["bearoff", "generate", "--checkers", "2", "--out", out];
        assert_input_error(&endbook(&bearoff), needle);
        let export = ["oware", "export", "--book", book_arg(), "--out", out];
        assert_input_error(&endbook(&export), needle);
    }
    // Nothing was written: `work` holds what it held.
    let mut names: Vec<_> = std::fs::read_dir(inside("work"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["file", "folder"]);
    assert_eq!(std::fs::read_dir(inside("work/folder")).unwrap().count(), 0);
    // A folder no file can be created in (`/proc`, even for root), found
    // before any work by every command that writes one.
    #[cfg(target_os = "linux")]
    {
        let out = "/proc/endbook-test.book";
        let needle = "no file can be created in /proc";
        assert_input_error(&endbook(&generate_args("4", Path::new(out), &[])), needle);
        let bearoff = ["bearoff", "generate", "--checkers", "2", "--out", out];
        assert_input_error(&endbook(&bearoff), needle);
        // Dry runs say the run would stop.
        let dry = generate_args("4", Path::new(out), &["--dry-run"]);
        assert_dry_run_stops(&endbook(&dry), needle);
        let dry = [&bearoff[..], &["--dry-run"]].concat();
        assert_dry_run_stops(&endbook(&dry), needle);
        let export = ["oware", "export", "--book", book_arg(), "--out", out];
        assert_input_error(&endbook(&export), needle);
    }
}

/// Errors in the arguments themselves (clap's) are one line too, with their
/// details, and exit code 2; a flag given twice is refused.
#[test]
fn argument_errors_are_one_line() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["oware", "generate", "--kernel", "foo"],
            "possible values: auto",
        ),
        (&["oware", "generate", "--max-seeds"], "a value is required"),
        (&["bearoff", "eval", "--x", "1 0 0 0 0 0"], "--o"),
        (
            &[
                "bearoff", "probe", "--book", "b", "--x", "1", "--o", "1", "--roll", "6", "2",
                "--roll", "1", "1",
            ],
            "cannot be used multiple times",
        ),
    ];
    for (args, needle) in cases {
        assert_input_error(&endbook(args), needle);
    }
    // A negative number is named as such, not as an unknown flag; no usage
    // line (probe's runs over two) is repeated.
    // Named by its option where it has one.
    let negative = "counts, sizes and turns cannot be negative";
    assert_input_error(
        &endbook(&["oware", "generate", "--max-seeds", "-1"]),
        "'-1' for --max-seeds: it cannot be negative",
    );
    assert_input_error(
        &endbook(&[
            "oware",
            "verify",
            "--book",
            "x",
            "--sample",
            "5",
            "--draw-seed",
            "-1",
        ]),
        "'-1' for --draw-seed: it cannot be negative",
    );
    assert_input_error(&probe("5", "-1 1 0 0 0 0 0 0 0 0 0 0"), negative);
    // Zero with a sign is not called negative.
    let unsigned = "counts, sizes and turns are written without a sign";
    for zero in ["-0", "-00"] {
        assert_input_error(
            &endbook(&["oware", "generate", "--max-seeds", zero]),
            &format!("'{zero}' for --max-seeds: write it without a sign"),
        );
    }
    for size in ["-0G", "-0.0G"] {
        assert_input_error(
            &endbook(&["oware", "generate", "--dry-run", "--memory-limit", size]),
            &format!("'{size}' for --memory-limit: write it without a sign"),
        );
    }
    assert_input_error(&probe("5", "-0 1 0 0 0 0 0 0 0 0 0 0"), unsigned);
    assert_input_error(&probe("5", "-0 -1 0 0 0 0 0 0 0 0 0 0"), negative);
    // Past a 32-bit count: too large (not "not in 0..=4294967295").
    assert_input_error(
        &probe("4294967296", "1 1 0 0 0 0 0 0 0 0 0 0"),
        "'4294967296' is too large for --turns <T>",
    );
    assert_input_error(
        &endbook(&["oware", "generate", "--max-seeds", "99999999999"]),
        "'99999999999' is too large for --max-seeds <N>",
    );
    // An argument that is a bare newline is quoted as such, not taken for
    // every line break of clap's text (which then ran into the message).
    let out = endbook(&["oware", "stats", "--book", "\n", "stray"]);
    assert_input_error(&out, "unexpected argument 'stray' found (see --help)");
    assert!(
        !text(&out.stderr).contains("Usage"),
        "{}",
        text(&out.stderr)
    );
    // A path with control characters in it is quoted on one line, escaped.
    let out = endbook(&["oware", "info", "--book", "o6.book\n\x1b[2J"]);
    assert_input_error(&out, "endbook: o6.book\\n\\u{1b}[2J: No such file");
    // Quoted whole, given as a separate value or after '='.
    for args in [
        ["--memory-limit", "-5.5Gi"],
        ["--memory-limit=-5.5Gi", "--dry-run"],
    ] {
        let out = endbook(&[&["oware", "generate"][..], &args].concat());
        assert_input_error(&out, "'-5.5Gi' for --memory-limit: it cannot be negative");
    }
    // A long value is quoted by an excerpt, by clap's messages and ours,
    // control characters escaped.
    let long = format!("--memory-limit=5X{}", "7".repeat(1000));
    let kernel = format!("--kernel={}", "x".repeat(1000));
    for (arg, needle) in [
        (
            &long[..],
            "invalid value '5X777777777777777777... (1002 characters)'",
        ),
        (
            &kernel,
            "invalid value 'xxxxxxxxxxxxxxxxxxxx... (1000 characters)'",
        ),
        (
            "--max-seeds=1\n2",
            "invalid value '1\\n2' for '--max-seeds <N>'",
        ),
        ("--memory-limit=-.5G", "sizes cannot be negative"),
    ] {
        let out = endbook(&["oware", "generate", "--dry-run", arg]);
        assert_input_error(&out, needle);
        assert!(out.stderr.len() < 300, "{}", text(&out.stderr));
    }
    // A value starting with '-' for an option that takes no number.
    assert_input_error(
        &endbook(&["oware", "generate", "--out", "-1.book"]),
        "'-1.book': a value starting with '-' goes after '=' (--out=-1.book)",
    );
    // An argument that is not UTF-8 before a bad one.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let out = Command::new(env!("CARGO_BIN_EXE_endbook"))
            .args(["oware", "info", "--book"])
            .arg(std::ffi::OsStr::from_bytes(b"\xff.book"))
            .arg("--bogus")
            .output()
            .unwrap();
        assert_input_error(&out, "unexpected argument '--bogus'");
    }
    let missing_turns = endbook(&[
        "oware",
        "probe",
        "--book",
        book_arg(),
        "0 1 0 0 0 0 0 0 0 0 0 1",
    ]);
    assert_input_error(&missing_turns, "--turns");
    assert!(
        !text(&missing_turns.stderr).contains("--batch <"),
        "{}",
        text(&missing_turns.stderr)
    );
    // The board quoted as one argument, or given as twelve.
    let one = probe("5", "0 1 0 0 0 0 0 0 0 0 0 1");
    let mut twelve = vec!["oware", "probe", "--book", book_arg(), "--turns", "5"];
    twelve.extend("0 1 0 0 0 0 0 0 0 0 0 1".split(' '));
    let twelve = endbook(&twelve);
    assert!(
        one.status.success() && twelve.status.success(),
        "{}",
        text(&twelve.stderr)
    );
    assert_eq!(text(&one.stdout), text(&twelve.stdout));
    let help = endbook(&["oware", "generate", "--help"]);
    assert!(help.status.success() && text(&help.stdout).contains("--max-seeds"));
}

/// `export` of the 6-seed book, flat, to standard output.
fn flat_export_to_stdout() -> [&'static str; 8] {
    [
        "oware",
        "export",
        "--book",
        book_arg(),
        "--format",
        "flat",
        "--out",
        "-",
    ]
}

/// Output whose reader has gone (`| head`) ends the process by SIGPIPE,
/// with nothing on stderr: no panic at a failed print, no exit code of its
/// own. The pipe's read end is closed before the command starts, so its
/// first print finds it gone.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_output_pipe_ends_quietly() {
    let lines = "20 0 0 0 0 0 1 0 0 0 0 0 1\n".repeat(5000);
    for (args, stdin) in [
        (&["oware", "info", "--book", book_arg()][..], ""),
        (&["oware", "stats", "--book", book_arg()][..], ""),
        (&flat_export_to_stdout()[..], ""),
        (
            &["oware", "probe", "--book", book_arg(), "--batch"][..],
            &lines[..],
        ),
        (&["oware", "generate", "--help"][..], ""),
    ] {
        common::assert_ends_by_sigpipe(args, stdin);
    }
}

/// A generation whose stderr reader has gone (a log pipe closed, the pipe's
/// read end closed here before the command starts) goes on to its book:
/// notes and progress that cannot be written are dropped, and the book is
/// the library's, byte for byte.
#[cfg(target_os = "linux")]
#[test]
fn a_generation_outlives_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("8.book");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let run = Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(generate_args("8", &out, &[]))
        .stdout(Stdio::piped())
        .stderr(writer)
        .output()
        .unwrap();
    assert!(run.status.success(), "{:?}", run.status);
    assert!(
        text(&run.stdout).contains("seeds        boards"),
        "{}",
        text(&run.stdout)
    );
    let library = OwareBook::to_bytes(&generate(GenerateOptions::new(8), |_| {}));
    assert!(
        std::fs::read(&out).unwrap() == library,
        "the book differs from the library's"
    );
}

/// `export --out -` into /dev/null (where a closed standard output ends up
/// too) says its export goes nowhere; into a pipe it says nothing of it.
#[cfg(target_os = "linux")]
#[test]
fn an_export_to_dev_null_says_so() {
    let export = flat_export_to_stdout();
    let note = "standard output is /dev/null (or was closed when endbook started)";
    let nowhere = Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(export)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(nowhere.status.success());
    assert!(
        text(&nowhere.stderr).contains(note),
        "{}",
        text(&nowhere.stderr)
    );
    let piped = endbook(&export);
    assert!(piped.status.success() && !piped.stdout.is_empty());
    assert!(
        !text(&piped.stderr).contains(note),
        "{}",
        text(&piped.stderr)
    );
}

#[test]
fn missing_and_foreign_books_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.book");
    let foreign = dir.path().join("foreign.book");
    std::fs::write(&foreign, b"#!/bin/sh\necho not a book\n").unwrap();
    // A folder, and a named pipe (opening it would wait for a writer).
    let folder = dir.path().join("folder.book");
    std::fs::create_dir(&folder).unwrap();
    let pipe = dir.path().join("pipe.book");
    let made = Command::new("mkfifo").arg(&pipe).status();
    let mut books = vec![&missing, &foreign, &folder];
    if made.is_ok_and(|status| status.success()) {
        books.push(&pipe);
    } else {
        writeln!(
            std::io::stderr(),
            "no mkfifo here: a named pipe as the book is not checked"
        )
        .unwrap();
    }
    // An empty file is named as one.
    let empty = dir.path().join("empty.book");
    std::fs::write(&empty, b"").unwrap();
    let info = endbook(&["oware", "info", "--book", empty.to_str().unwrap()]);
    assert_input_error(&info, "not an endbook book (the file is empty)");
    let out_path = dir.path().join("out.bin");
    for book in books {
        let book = book.to_str().unwrap();
        assert_input_error(
            &endbook(&[
                "oware",
                "probe",
                "--book",
                book,
                "--turns",
                "3",
                "1 0 0 0 0 0 0 0 0 0 0 0",
            ]),
            book,
        );
        assert_input_error(&endbook(&["oware", "info", "--book", book]), book);
        let export = endbook(&[
            "oware",
            "export",
            "--book",
            book,
            "--out",
            out_path.to_str().unwrap(),
        ]);
        assert_input_error(&export, book);
    }
    assert_input_error(
        &endbook(&[
            "oware",
            "export",
            "--book",
            book_arg(),
            "--layers",
            "0",
            "--out",
            out_path.to_str().unwrap(),
        ]),
        "--layers",
    );
    // `-` is no book: books are mapped, not read from standard input.
    for args in [
        &["oware", "info", "--book", "-"][..],
        &["bearoff", "info", "--book", "-"],
    ] {
        assert_input_error(&endbook(args), "-: a book is read from a named file");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names.len() <= 4 && !names.iter().any(|n| n == "out.bin"),
        "only the foreign and empty files, the folder and the pipe: {names:?}"
    );
}

#[test]
fn whole_book_readers_note_the_record_check_from_500_mb() {
    // Sparse files: no disk used. Neither is a book, so each reader stops
    // at the header, after its note where the file is large.
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.bin");
    for (len, noted) in [(500_000_000, true), (499_999_999, false)] {
        let path = dir.path().join(format!("{len}.book"));
        std::fs::File::create(&path).unwrap().set_len(len).unwrap();
        let book = path.to_str().unwrap();
        let out = out_path.to_str().unwrap();
        for args in [
            &["oware", "info", "--book", book][..],
            &["oware", "stats", "--book", book],
            &["oware", "export", "--book", book, "--out", out],
        ] {
            let run = endbook(args);
            let stderr = text(&run.stderr);
            assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
            let note = format!("note: checking every record of {book} (500.0 MB)...\n");
            if noted {
                assert!(stderr.starts_with(&note), "{args:?}: {stderr}");
                assert_eq!(stderr.lines().count(), 2, "the note, the error: {stderr}");
            } else {
                assert!(!stderr.contains("note:"), "{args:?}: {stderr}");
                assert_eq!(stderr.lines().count(), 1, "the error: {stderr}");
            }
            assert!(stderr.contains(&format!("endbook: {book}")), "{stderr}");
        }
    }
    assert!(!out_path.exists(), "no export written");
}

/// An output name too long for the names written beside it (`.partial`,
/// `.checkpoint.partial`) is refused before any work, not after it.
#[test]
fn output_names_leave_room_for_the_files_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let name = |len: usize| dir.path().join("n".repeat(len));
    let path = name(237);
    let out = path.to_str().unwrap();
    let refusal = "a file name of 237 bytes leaves no room for the names written beside it";
    for args in [
        &["oware", "generate", "--max-seeds", "3", "--out", out][..],
        &[
            "oware",
            "generate",
            "--max-seeds",
            "3",
            "--out",
            out,
            "--dry-run",
        ],
        &["oware", "export", "--book", book_arg(), "--out", out],
        &["bearoff", "generate", "--checkers", "1", "--out", out],
    ] {
        assert_input_error(&endbook(args), refusal);
    }
    assert!(!path.exists());
    // One byte shorter: written.
    let path = name(236);
    let out = endbook(&[
        "bearoff",
        "generate",
        "--checkers",
        "1",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(path.exists());
}

#[test]
fn generate_rejects_bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.book");
    let out = out.to_str().unwrap();
    assert_input_error(
        &endbook(&["oware", "generate", "--max-seeds", "0", "--out", out]),
        "--max-seeds",
    );
    assert_input_error(
        &endbook(&["oware", "generate", "--max-seeds", "99", "--out", out]),
        "--max-seeds",
    );
    assert_input_error(
        &endbook(&[
            "oware",
            "generate",
            "--max-seeds",
            "3",
            "--turn-limit",
            "0",
            "--out",
            out,
        ]),
        "--turn-limit",
    );
    assert_input_error(
        &endbook(&[
            "oware",
            "generate",
            "--max-seeds",
            "3",
            "--threads",
            "0",
            "--out",
            out,
        ]),
        "--threads",
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn export_flat_matches_the_library_and_repeats_converged_layers() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("flat.bin");
    // A file there is replaced, and the export says so.
    std::fs::write(&out_path, b"an older export").unwrap();
    let layers = 150;
    let out = endbook(&[
        "oware",
        "export",
        "--book",
        book_arg(),
        "--format",
        "flat",
        "--layers",
        &layers.to_string(),
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "note: {} (15 B) exists: it is replaced once this run is complete",
            out_path.display()
        )),
        "{}",
        text(&out.stderr)
    );
    let flat = std::fs::read(&out_path).unwrap();
    let book = endbook::games::oware::OwareBook::open(book()).unwrap();
    let boards = book.flat_len(1) as usize;
    assert_eq!(boards, 18563, "the article's cumulative count for 6 seeds");
    assert_eq!(flat.len(), boards * layers);
    let mut expected = Vec::new();
    book.export_flat(layers as u32, &mut expected).unwrap();
    assert!(flat == expected);
    // Six-seed values last change well before 150 turns: the last layers repeat.
    let last_change = book.levels().iter().map(|l| l.last_change).max().unwrap() as usize;
    assert!(last_change < layers);
    assert_eq!(
        flat[(layers - 1) * boards..],
        flat[(last_change - 1) * boards..last_change * boards]
    );
    assert!(!dir.path().join("flat.bin.partial").exists());
}

/// What the command line writes (level by level, through the streaming
/// encoder and its checkpoints) against the library's book of the same
/// size, and its flat export, streamed to a pipe, against the article's
/// program: the other tests compare command-line books with each other.
#[test]
fn the_command_lines_nine_seed_book_is_the_librarys_and_exports_the_articles_array() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = written_as_the_library_writes(9, dir.path());
    let out = endbook(&[
        "oware",
        "export",
        "--book",
        path.to_str().unwrap(),
        "--format",
        "flat",
        "--layers",
        "146",
        "--out",
        "-",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout.len(), 42_913_634);
    assert_eq!(hex(&Sha256::digest(&out.stdout)), ARTICLE_FLAT_9_SHA256);
}

/// The `seeds`-seed book the command line writes in `dir`, and its bytes,
/// checked to be byte for byte the library's book of the same size.
fn written_as_the_library_writes(seeds: u32, dir: &Path) -> (PathBuf, Vec<u8>) {
    let path = dir.join(format!("{seeds}.book"));
    let out = endbook(&generate_args(&seeds.to_string(), &path, &[]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read(&path).unwrap();
    let library = OwareBook::to_bytes(&generate(GenerateOptions::new(seeds), |_| {}));
    assert!(
        written == library,
        "the command line's {seeds}-seed book differs from the library's"
    );
    (path, written)
}

/// A 13-seed book, its levels 10 to 13 over 2 MiB: the command line writes it
/// level by level (an appender, each level's block table written last)
/// byte for byte as the library writes it whole, chunk tables included;
/// `info` says which levels are checked in chunks; a probe reads it, and
/// one of a copy with a flipped bit in level 13's chunk table exits 2
/// naming it.
#[test]
fn the_command_lines_chunked_book_is_the_librarys() {
    let dir = tempfile::tempdir().unwrap();
    let (path, written) = written_as_the_library_writes(13, dir.path());
    assert_eq!(written[8..12], 2u32.to_le_bytes(), "container version 2");
    let book = path.to_str().unwrap();
    let info = text(&endbook(&["oware", "info", "--book", book]).stdout);
    assert!(
        info.contains(
            "checksums     verified: CRC-32s of chunks of 64 KiB for levels 10-13 (lookups check \
             the chunks they read), of the whole section for the others"
        ),
        "{info}"
    );
    let board = "3 3 2 2 1 1 0 0 1 0 0 0";
    let probed = endbook(&["oware", "probe", "--book", book, "--turns", "200", board]);
    assert!(probed.status.success(), "{}", text(&probed.stderr));
    assert!(text(&probed.stdout).contains("best move"));
    // The chunk table ends the file: its last CRC-32's first byte flipped.
    let mut damaged = written;
    let at = damaged.len() - 4;
    damaged[at] ^= 1;
    let copy = dir.path().join("damaged.book");
    std::fs::write(&copy, &damaged).unwrap();
    let refused = endbook(&[
        "oware",
        "probe",
        "--book",
        copy.to_str().unwrap(),
        "--turns",
        "200",
        board,
    ]);
    assert_input_error(
        &refused,
        "checksum mismatch in the chunk table of section 13",
    );
}

#[test]
fn help_explains_the_notation() {
    let help = text(&endbook(&["oware", "probe", "--help"]).stdout);
    assert!(help.contains("houses 0-11"), "{help}");
    assert!(help.contains("--batch"), "{help}");
    let help = text(&endbook(&["oware", "generate", "--help"]).stdout);
    assert!(help.contains("--max-seeds"), "{help}");
    assert!(help.contains("--turn-limit"), "{help}");
}

#[test]
fn stats_count_every_board_once() {
    let out = endbook(&["oware", "stats", "--book", book_arg(), "--format", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("seeds,boards,last_change,value_changes,value_-6"));
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 6);
    for (row, boards) in rows.iter().zip([12, 78, 364, 1365, 4368, 12376]) {
        assert_eq!(row[1], boards);
        assert_eq!(
            row[4..].iter().sum::<u64>(),
            boards,
            "every board has one converged value"
        );
    }
    let table = text(&endbook(&["oware", "stats", "--book", book_arg()]).stdout);
    assert!(table.contains("value changes"), "{table}");
    let markdown = text(
        &endbook(&[
            "oware",
            "stats",
            "--book",
            book_arg(),
            "--format",
            "markdown",
        ])
        .stdout,
    );
    assert!(markdown.contains("| seeds | boards |"), "{markdown}");
}

#[test]
fn dry_run_estimates_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dry.book");
    let out = endbook(&generate_args("15", &path, &["--dry-run"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("17,383,860"),
        "the 0..=15-seed board count: {stdout}"
    );
    assert!(stdout
        .lines()
        .any(|l| l.starts_with("memory        about ")));
    assert!(stdout
        .lines()
        .any(|l| l.starts_with("book          about ")));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    // The time: seconds on the threads asked for, more on one than on two
    // (as much on a one-core machine), within reach of the 15-seed runs
    // measured (5 to 11 s on one or two threads).
    let time = |threads: &str| dry_run_seconds(&path, &["--threads", threads]);
    let (one, two) = (time("1"), time("2"));
    assert!(
        one >= two && (1.0..60.0).contains(&one) && (1.0..60.0).contains(&two),
        "{one} {two}"
    );
    // Threads beyond the cores share them: no faster.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let beyond = endbook(&generate_args(
        "15",
        &path,
        &["--dry-run", "--threads", &(cores + 1).to_string()],
    ));
    let beyond = text(&beyond.stdout);
    let line = beyond.lines().find(|l| l.starts_with("time")).unwrap();
    assert!(
        line.ends_with(&format!(
            "({cores} busy at a time on {cores} core{})",
            if cores == 1 { "" } else { "s" }
        )),
        "{line}"
    );
}

/// A generation whose stderr is a log (not a terminal) prints a progress
/// line at once, then at most one every 5 seconds, and a line for each level
/// when it is done: its boards and the last turn at which a value changed.
#[test]
fn generation_progress_on_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("7.book");
    let start = std::time::Instant::now();
    let out = endbook(&generate_args("7", &path, &[]));
    let elapsed = start.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let turns: Vec<&str> = stderr.lines().filter(|l| l.contains(": turn ")).collect();
    assert_eq!(
        turns.first(),
        Some(&"level 0: turn 1/200 (runs), changed 0"),
        "{stderr}"
    );
    assert!(turns.len() <= 1 + (elapsed / 5.0) as usize, "{stderr}");
    let done: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(", done after "))
        .collect();
    let levels = [
        ("1 board", 1),
        ("12 boards", 2),
        ("78 boards", 10),
        ("364 boards", 29),
        ("1,365 boards", 39),
        ("4,368 boards", 67),
        ("12,376 boards", 84),
        ("31,824 boards", 92),
    ];
    assert_eq!(done.len(), levels.len(), "{stderr}");
    for (seeds, ((boards, last), line)) in levels.iter().zip(&done).enumerate() {
        assert!(
            line.starts_with(&format!(
                "level {seeds}: {boards}, last change at turn {last}, done after "
            )),
            "{line}"
        );
    }
}

/// The seconds a 15-seed dry run with `options` expects, from its time line
/// ("time          about 22 s on 2 threads").
fn dry_run_seconds(path: &Path, options: &[&str]) -> f64 {
    let out = endbook(&generate_args(
        "15",
        path,
        &[&["--dry-run"], options].concat(),
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("time")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[..2], ["time", "about"], "{line}");
    assert_eq!(words[3..5], ["s", "on"], "{line}");
    let threads: usize = words[5].parse().unwrap();
    let noun = if threads == 1 { "thread" } else { "threads" };
    assert_eq!(words[6], noun, "{line}");
    if let Some(asked) = options.iter().position(|&o| o == "--threads") {
        assert_eq!(words[5], options[asked + 1], "{line}");
    }
    words[2].parse().unwrap()
}

/// Each sweep mode's dry run expects its own time, in the order the modes
/// were measured at 12 to 16 seeds: run sweeps the fastest, then hybrid
/// sweeps of all levels at once, hybrid, frontier and dense sweeps of one
/// level at a time.
#[test]
fn dry_runs_time_each_sweep_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dry.book");
    let seconds: Vec<f64> = [
        &["--sweep", "runs"][..],
        &["--sweep", "hybrid", "--all-levels-at-once"],
        &["--sweep", "hybrid"],
        &["--sweep", "frontier"],
        &["--sweep", "dense"],
    ]
    .iter()
    .map(|options| dry_run_seconds(&path, &[&["--threads", "2"], *options].concat()))
    .collect();
    assert!(seconds.windows(2).all(|w| w[0] < w[1]), "{seconds:?}");
}

/// The dry run's book size is that of the book the run then writes, within
/// 1%: at 200 turns (the `changes` encoding: up to 25 seeds, the levels'
/// measured sizes summed) and beyond 255, where a book stores every layer.
#[test]
fn dry_runs_size_the_book() {
    for limit in ["300", "200"] {
        dry_run_sizes_the_book(limit);
    }
    // Books too large to write in a test: the sizes the 24- and 25-seed
    // books were measured at (30,218,460,050 and 47,174,478,312 bytes).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.book");
    for (seeds, size) in [("24", "30.2 GB"), ("25", "47.2 GB")] {
        let dry = endbook(&generate_args(seeds, &path, &["--dry-run"]));
        let stdout = text(&dry.stdout);
        let line = stdout.lines().find(|l| l.starts_with("book")).unwrap();
        assert!(
            line.starts_with(&format!("book          about {size} (")),
            "{line}"
        );
    }
}

fn dry_run_sizes_the_book(turn_limit: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("8.book");
    let limit = ["--turn-limit", turn_limit];
    let dry = endbook(&generate_args(
        "8",
        &path,
        &[&limit[..], &["--dry-run"]].concat(),
    ));
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let stdout = text(&dry.stdout);
    let line = stdout.lines().find(|l| l.starts_with("book")).unwrap();
    assert!(line.contains(" free on its disk)"), "{line}");
    let estimate = match line.split_whitespace().take(4).collect::<Vec<_>>()[..] {
        ["book", "about", number, "MB"] => number.parse::<f64>().unwrap() * 1e6,
        ["book", "about", number, "KB"] => number.parse::<f64>().unwrap() * 1e3,
        _ => panic!("a book size in KB or MB: {line}"),
    };
    assert!(endbook(&generate_args("8", &path, &limit)).status.success());
    let written = std::fs::metadata(&path).unwrap().len() as f64;
    assert!(
        (estimate - written).abs() < 0.01 * written,
        "estimated {estimate} bytes, written {written}"
    );
}

#[test]
fn a_run_beyond_memory_stops_at_once_with_its_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.book");
    // At most 100 GB whatever the host has (the estimate is about 138.5 GB):
    // the run must never start.
    let out = endbook(&generate_args("27", &path, &["--memory-limit", "100G"]));
    assert_input_error(&out, "--ignore-memory-check");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("27 seeds (3,910,797,436 boards) needs about"),
        "{stderr}"
    );
    assert!(
        stderr.contains(" GB of memory, more than 90% of the "),
        "{stderr}"
    );
    assert!(!path.exists());
    // The dry run says so.
    let dry = endbook(&generate_args(
        "27",
        &path,
        &["--dry-run", "--memory-limit", "100G"],
    ));
    assert_dry_run_stops(
        &dry,
        "27 seeds (3,910,797,436 boards) needs about 138.5 GB of memory, more than 90% of the ",
    );
    // The limit is shown as such, beside what the system has.
    assert!(
        text(&dry.stdout).contains("(--memory-limit 100.0 GB, "),
        "{}",
        text(&dry.stdout)
    );
    let dry = endbook(&generate_args("9", &path, &["--dry-run"]));
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(text(&dry.stdout).contains("verdict       would start\n"));
    assert!(text(&dry.stdout).contains(" available)\n"));
    assert!(!text(&dry.stdout).contains("--memory-limit"));
    assert!(!path.exists());
    // A limit below the estimate stops a run the system has room for, and
    // the override starts it.
    let out = endbook(&generate_args("9", &path, &["--memory-limit", "10M"]));
    assert_input_error(
        &out,
        "needs about 28.7 MB of memory, more than 90% of the 10.0 MB",
    );
    assert!(!path.exists());
    let out = endbook(&generate_args(
        "9",
        &path,
        &["--memory-limit", "10M", "--ignore-memory-check"],
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(path.exists());
    let out = endbook(&generate_args("9", &path, &["--memory-limit", "10X"]));
    assert_input_error(&out, "unknown unit 'X'");
}

/// Without `--out`, a book's name carries a turn limit other than 200; an
/// extension without `--turn-limit` takes its book's; a run says it will
/// replace the book already at its output.
#[test]
fn default_names_carry_the_turn_limit_and_extensions_take_their_books() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_endbook"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let generate = ["oware", "generate", "--max-seeds"];
    let out = run(&[&generate[..], &["4", "--turn-limit", "60"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("note:"),
        "{}",
        text(&out.stderr)
    );
    // (With --threads: the book is opened before the pool is set up.)
    let extend = ["6", "--extend", "oware-4-t60.book"];
    let out = run(&[&generate[..], &extend, &["--threads", "1"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&[&generate[..], &extend, &["--dry-run", "--threads", "2"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&[
        &generate[..],
        &["6", "--turn-limit", "60", "--out", "fresh.book"],
    ]
    .concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert!(read("oware-6-t60.book") == read("fresh.book"));
    // Again: the book there is replaced, and the run says so first.
    let out = run(&[&generate[..], &["6", "--extend", "oware-4-t60.book"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("note: oware-6-t60.book (")
            && stderr.contains(") exists: it is replaced"),
        "{stderr}"
    );
    assert!(read("oware-6-t60.book") == read("fresh.book"));
    // No note where the run stops before it starts (a book to extend that
    // is none).
    std::fs::write(dir.path().join("bad.book"), "not a book").unwrap();
    let bad = ["6", "--extend", "bad.book", "--out", "fresh.book"];
    assert_input_error(&run(&[&generate[..], &bad].concat()), "bad.book");
    assert!(read("oware-6-t60.book") == read("fresh.book"));
    // The default turn limit keeps the plain name.
    let out = run(&[&generate[..], &["3"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("oware-3.book").exists());
    // An earlier build's checkpoint of this turn limit, under the plain
    // name: --resume points to it rather than start afresh.
    std::fs::copy(
        dir.path().join("oware-4-t60.book"),
        dir.path().join("oware-4.book.checkpoint"),
    )
    .unwrap();
    let resume = ["4", "--turn-limit", "60", "--resume"];
    let out = run(&[&generate[..], &resume].concat());
    assert_input_error(&out, "add --out oware-4.book to resume it");
    let out = run(&[&generate[..], &resume, &["--out", "oware-4.book"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(read("oware-4.book") == read("oware-4-t60.book"));
    // Not one of another turn limit.
    let out = run(&[&generate[..], &["4", "--turn-limit", "70", "--resume"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn extending_a_book_gives_the_book_generated_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (small, whole, extended) = (
        dir.path().join("5.book"),
        dir.path().join("8.book"),
        dir.path().join("8-extended.book"),
    );
    for (seeds, out, extra) in [
        ("5", &small, vec![]),
        ("8", &whole, vec!["--all-levels-at-once"]),
        ("8", &extended, vec!["--extend", small.to_str().unwrap()]),
    ] {
        let out = endbook(&generate_args(seeds, out, &extra));
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = endbook(&generate_args(
        "8",
        &extended,
        &["--extend", small.to_str().unwrap()],
    ));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("taken over").count(), 6, "{stdout}");
    assert!(std::fs::read(&whole).unwrap() == std::fs::read(&extended).unwrap());

    // An extension must add levels and keep the turn limit.
    let refused = dir.path().join("refused.book");
    let small_arg = small.to_str().unwrap();
    let out = endbook(&generate_args("5", &refused, &["--extend", small_arg]));
    assert_input_error(&out, "holds up to 5 seeds already");
    let out = endbook(&generate_args(
        "7",
        &refused,
        &["--extend", small_arg, "--turn-limit", "90"],
    ));
    assert_input_error(&out, "turn limit 200, this run 90");
    // Their dry runs say so.
    let dry = endbook(&generate_args(
        "5",
        &refused,
        &["--extend", small_arg, "--dry-run"],
    ));
    assert_dry_run_stops(&dry, "holds up to 5 seeds already");
    let dry = endbook(&generate_args(
        "7",
        &refused,
        &["--extend", small_arg, "--turn-limit", "90", "--dry-run"],
    ));
    assert_dry_run_stops(&dry, "turn limit 200, this run 90");
    let dry = endbook(&generate_args(
        "7",
        &refused,
        &["--extend", small_arg, "--dry-run"],
    ));
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(!refused.exists());
    // It counts the levels taken over, and the book it builds on in its
    // memory: more than a fresh run's.
    let stdout = text(&dry.stdout);
    assert!(
        stdout.contains("boards        50,388 (0..=7 seeds; levels 0..=5 taken over)\n"),
        "{stdout}"
    );
    let whole_arg = whole.to_str().unwrap();
    let extend = endbook(&generate_args(
        "9",
        &refused,
        &["--extend", whole_arg, "--dry-run"],
    ));
    let fresh = endbook(&generate_args("9", &refused, &["--dry-run"]));
    let memory = |dry: &Output| {
        let dry = text(&dry.stdout);
        let line = dry.lines().find(|l| l.starts_with("memory")).unwrap();
        let (mb, unit) = (
            line.split_whitespace().nth(2),
            line.split_whitespace().nth(3),
        );
        assert_eq!(unit, Some("MB"), "{line}");
        mb.unwrap().parse::<f64>().unwrap()
    };
    // The 8-seed book, about 0.8 MB, 2.5 times over.
    let more = memory(&extend) - memory(&fresh);
    let book = std::fs::metadata(&whole).unwrap().len() as f64 / 1e6;
    assert!(
        (more - 2.5 * book).abs() < 0.11,
        "{more} MB more for {book} MB"
    );
}

/// Kills a 13-seed generation once its checkpoint holds level 10, 11 or 12,
/// then resumes it: no half book is left at the output path, and the
/// resumed book equals one generated without interruption. (On one thread
/// the levels after the tenth take seconds: the window to see its
/// checkpoint in, polling every 2 ms, is that wide.)
#[test]
fn a_killed_generation_resumes_to_the_identical_book() {
    use endbook::games::oware::{BookWriter, OwareBook};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("13.book");
    let checkpoint = dir.path().join("13.book.checkpoint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(generate_args("13", &out, &["--threads", "1"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let killed_at = loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the generation ended ({status}) before a checkpoint of level 10 was seen");
        }
        // The checkpoint opens once its header is committed, except while a
        // level is being appended after it.
        if let Ok(book) = OwareBook::open(&checkpoint) {
            if book.max_seeds() >= 10 {
                child.kill().unwrap();
                child.wait().unwrap();
                break book.max_seeds();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    assert!(
        killed_at < 13,
        "the checkpoint of the last level is never written"
    );
    assert!(!out.exists(), "a killed run left a book at the output path");
    // Killed perhaps amid appending a level: reopening cuts that off, and
    // the levels committed remain (checked on a copy: `--resume` below gets
    // the checkpoint as the kill left it).
    let copy = dir.path().join("copy.book");
    std::fs::copy(&checkpoint, &copy).unwrap();
    drop(BookWriter::reopen(&copy).unwrap());
    assert!(OwareBook::open(&copy).unwrap().max_seeds() >= killed_at);

    let resumed = endbook(&generate_args("13", &out, &["--resume"]));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let stderr = text(&resumed.stderr);
    assert!(stderr.contains("taking over levels 0..="), "{stderr}");
    assert!(
        !checkpoint.exists(),
        "the checkpoint is removed once the book is written"
    );

    let fresh = dir.path().join("fresh.book");
    let out_fresh = endbook(&generate_args("13", &fresh, &[]));
    assert!(out_fresh.status.success());
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
}

/// A checkpoint in another encoding (the first compact one, as an earlier
/// build wrote) is taken over by copying its levels, encoded anew, into a new
/// book: the result equals a fresh run's.
#[test]
fn resume_takes_over_a_checkpoint_of_an_earlier_build() {
    use endbook::games::oware::{generate, Encoding, GenerateOptions, OwareBook};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("9.book");
    let checkpoint = dir.path().join("9.book.checkpoint");
    let old = generate(GenerateOptions::new(6), |_| {});
    OwareBook::write_with(&checkpoint, &old, Encoding::ChangesV1).unwrap();
    let resumed = endbook(&generate_args("9", &out, &["--resume"]));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("taking over levels 0..=6"));
    assert!(!checkpoint.exists());
    let fresh = dir.path().join("fresh.book");
    assert!(endbook(&generate_args("9", &fresh, &[])).status.success());
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
    // A checkpoint that never got its first level: started afresh.
    std::fs::write(&checkpoint, vec![0u8; 4096]).unwrap();
    let again = endbook(&generate_args("9", &out, &["--resume"]));
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("holds no finished level"));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
}

/// Books with more than 255 turns store every layer; their checkpoints are
/// appended to in place like compact ones.
#[test]
fn resume_appends_to_a_checkpoint_of_every_layer() {
    let dir = tempfile::tempdir().unwrap();
    let (low, out, fresh) = (
        dir.path().join("low.book"),
        dir.path().join("8.book"),
        dir.path().join("fresh.book"),
    );
    let checkpoint = dir.path().join("8.book.checkpoint");
    let limit = ["--turn-limit", "300"];
    assert!(endbook(&generate_args("6", &low, &limit)).status.success());
    std::fs::rename(&low, &checkpoint).unwrap();
    let resumed = endbook(&generate_args(
        "8",
        &out,
        &[&limit[..], &["--resume"]].concat(),
    ));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("taking over levels 0..=6"));
    assert!(endbook(&generate_args("8", &fresh, &limit))
        .status
        .success());
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
    assert!(!checkpoint.exists());
}

/// A checkpoint holding every level (a run stopped before renaming it):
/// the dry run counts it as taken over, and the run solves nothing and says
/// so, with no kernel or rate made up for the sweeps it did not make.
#[test]
fn resume_of_a_checkpoint_of_every_level_solves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (out, fresh) = (dir.path().join("7.book"), dir.path().join("fresh.book"));
    let checkpoint = dir.path().join("7.book.checkpoint");
    assert!(endbook(&generate_args("7", &fresh, &[])).status.success());
    std::fs::copy(&fresh, &checkpoint).unwrap();
    let dry = endbook(&generate_args("7", &out, &["--resume", "--dry-run"]));
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let plan = text(&dry.stdout);
    assert!(
        plan.contains("(0..=7 seeds; levels 0..=7 taken over)"),
        "{plan}"
    );
    // What copying the checkpoint takes (4 MB and three times its bytes),
    // not a fresh run's memory (25.8 MB at 7 seeds) and more.
    let copy = (4 << 20) + 3 * std::fs::metadata(&fresh).unwrap().len();
    let expected = format!("memory        about {:.1} MB", copy as f64 / 1e6);
    assert!(
        copy < 10_000_000 && plan.contains(&expected),
        "{expected}: {plan}"
    );
    // Level by level, and all at once (which had panicked: "nothing left to
    // solve"); the checkpoint, kept by the dry run, copied again for each.
    for extra in [&[][..], &["--all-levels-at-once"]] {
        std::fs::copy(&fresh, &checkpoint).unwrap();
        let resumed = endbook(&generate_args("7", &out, &[&["--resume"], extra].concat()));
        assert!(resumed.status.success(), "{}", text(&resumed.stderr));
        let report = text(&resumed.stdout);
        assert!(
            report.contains("every level taken over: nothing solved"),
            "{report}"
        );
        for made_up in ["NaN", "state updates", "(forced)"] {
            assert!(!report.contains(made_up), "{made_up}: {report}");
        }
        assert!(!report.lines().any(|l| l.starts_with("kernel")), "{report}");
        assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
        assert!(!checkpoint.exists());
    }
}

#[test]
fn resume_without_a_checkpoint_starts_from_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("4.book");
    let run = endbook(&generate_args("4", &out, &["--resume"]));
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("no checkpoint at"));
    assert!(out.exists());
}

/// A checkpoint that cannot be resumed (cut short here) is bad input: one
/// line, exit code 2, the checkpoint left as it is and nothing written.
#[test]
fn resume_refuses_a_damaged_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (low, out) = (dir.path().join("low.book"), dir.path().join("8.book"));
    let checkpoint = dir.path().join("8.book.checkpoint");
    assert!(endbook(&generate_args("6", &low, &[])).status.success());
    let bytes = std::fs::read(&low).unwrap();
    let cut = &bytes[..bytes.len() / 2];
    std::fs::write(&checkpoint, cut).unwrap();
    // Nor is --resume offered for it, nor for another game's book.
    let bearoff = endbook::games::bearoff::generate(
        endbook::games::bearoff::GenerateOptions::new(2, false),
        |_| {},
    )
    .into_book_bytes();
    for (held, why) in [
        (cut, "truncated"),
        (&bearoff[..], "a book for game 'BOFF', expected 'OWAR'"),
    ] {
        std::fs::write(&checkpoint, held).unwrap();
        for resume in [&["--resume"][..], &[]] {
            let run = endbook(&generate_args("8", &out, resume));
            assert_input_error(&run, "the checkpoint cannot be resumed");
            assert_input_error(&run, why);
            let dry = endbook(&generate_args(
                "8",
                &out,
                &[resume, &["--dry-run"]].concat(),
            ));
            assert_dry_run_stops(&dry, "the checkpoint cannot be resumed");
        }
        assert!(!out.exists());
        assert!(std::fs::read(&checkpoint).unwrap() == held);
    }
    // A whole one that does not fit the run: its dry run says so too, and
    // neither touches it (its room past the last commit, as a killed run
    // leaves, was cut off by a refused run).
    let padded = [&bytes[..], &[0u8; 4096]].concat();
    std::fs::write(&checkpoint, &padded).unwrap();
    for (seeds, extra, why) in [
        (
            "8",
            &["--turn-limit", "100"][..],
            "has turn limit 200, this run 100",
        ),
        ("5", &[][..], "holds up to 6 seeds already"),
    ] {
        let args = [&["--resume"][..], extra].concat();
        let run = endbook(&generate_args(seeds, &out, &args));
        assert_input_error(&run, why);
        let dry = endbook(&generate_args(
            seeds,
            &out,
            &[&args[..], &["--dry-run"]].concat(),
        ));
        assert_dry_run_stops(&dry, why);
        assert!(std::fs::read(&checkpoint).unwrap() == padded, "{why}");
    }
    let dry = endbook(&generate_args("8", &out, &["--resume", "--dry-run"]));
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(std::fs::read(&checkpoint).unwrap() == padded);
    std::fs::write(&checkpoint, &bytes[..bytes.len() - 1]).unwrap();
    // Without --resume the run does not write over it either; one it
    // could resume, --resume is offered for.
    let fresh = endbook(&generate_args("8", &out, &[]));
    assert_input_error(&fresh, "the checkpoint cannot be resumed");
    std::fs::write(&checkpoint, &bytes).unwrap();
    let fresh = endbook(&generate_args("8", &out, &[]));
    assert_input_error(&fresh, "add --resume to continue it, or remove it");
    assert!(std::fs::read(&checkpoint).unwrap() == bytes);
    // Removed, the run starts afresh.
    std::fs::remove_file(&checkpoint).unwrap();
    let fresh = endbook(&generate_args("8", &out, &[]));
    assert!(fresh.status.success(), "{}", text(&fresh.stderr));
    assert!(out.exists() && !checkpoint.exists());
}

/// Every way the command line can be told to generate gives the default
/// run's book: each sweep mode, kernel and move generator this CPU has,
/// threads 1 and 2, levels one at a time or all at once.
#[test]
fn every_generation_option_writes_the_default_book() {
    let dir = tempfile::tempdir().unwrap();
    let default = dir.path().join("default.book");
    let out = endbook(&generate_args("7", &default, &[]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = std::fs::read(&default).unwrap();
    let mut kernels = vec!["auto", "scalar", "portable"];
    if endbook::kernels::KernelKind::Avx2.is_supported() {
        kernels.push("avx2");
    } else {
        endbook::kernels::skip_unsupported("avx2", "oware generate --kernel");
    }
    let mut movegens = vec!["auto", "scalar"];
    if endbook::games::oware::MoveGenKind::Bmi2.is_supported() {
        movegens.push("bmi2");
    } else {
        endbook::kernels::skip_unsupported("bmi2", "oware generate --movegen");
    }
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for kernel in &kernels {
        for threads in ["1", "2"] {
            runs.push(vec!["--kernel", kernel, "--threads", threads]);
            for sweep in ["dense", "frontier", "hybrid"] {
                runs.push(vec![
                    "--kernel",
                    kernel,
                    "--threads",
                    threads,
                    "--sweep",
                    sweep,
                ]);
            }
        }
    }
    for movegen in &movegens {
        for sweep in ["dense", "frontier"] {
            runs.push(vec!["--movegen", movegen, "--sweep", sweep]);
            runs.push(vec![
                "--movegen",
                movegen,
                "--sweep",
                sweep,
                "--all-levels-at-once",
            ]);
        }
    }
    let path = dir.path().join("variant.book");
    for extra in runs {
        let out = endbook(&generate_args("7", &path, &extra));
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        assert!(
            std::fs::read(&path).unwrap() == expected,
            "{extra:?} wrote another book"
        );
    }
}

/// `--extend` names what is wrong with the book it is given, before any work.
#[test]
fn extend_refuses_a_missing_foreign_or_corrupt_book() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("8.book");
    let missing = dir.path().join("missing.book");
    let run = endbook(&generate_args(
        "8",
        &out,
        &["--extend", missing.to_str().unwrap()],
    ));
    assert_input_error(&run, &format!("--extend {}", missing.display()));
    let foreign = dir.path().join("foreign.book");
    std::fs::write(&foreign, b"not a book at all, just some text\n").unwrap();
    let run = endbook(&generate_args(
        "8",
        &out,
        &["--extend", foreign.to_str().unwrap()],
    ));
    assert_input_error(&run, "foreign.book");
    let small = dir.path().join("5.book");
    assert!(endbook(&generate_args("5", &small, &[])).status.success());
    let mut bytes = std::fs::read(&small).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    let corrupt = dir.path().join("corrupt.book");
    std::fs::write(&corrupt, &bytes).unwrap();
    let run = endbook(&generate_args(
        "8",
        &out,
        &["--extend", corrupt.to_str().unwrap()],
    ));
    assert_input_error(&run, "corrupt.book");
    // Their dry runs say the run would stop.
    for book in [&missing, &foreign, &corrupt] {
        let dry = endbook(&generate_args(
            "8",
            &out,
            &["--extend", book.to_str().unwrap(), "--dry-run"],
        ));
        let name = book.file_name().unwrap().to_str().unwrap();
        assert_dry_run_stops(&dry, name);
    }
    assert!(!out.exists());
    assert!(!dir.path().join("8.book.checkpoint").exists());
    // Damage in a chunk of a large level, away from its block offsets,
    // which opening for lookups does not read: the dry run checks every
    // checksum (it passed such a book).
    let large = dir.path().join("12.book");
    assert!(endbook(&generate_args("12", &large, &[])).status.success());
    let mut bytes = std::fs::read(&large).unwrap();
    let at = bytes.len() * 3 / 4;
    bytes[at] ^= 0x10;
    std::fs::write(&large, &bytes).unwrap();
    let out13 = dir.path().join("13.book");
    let dry = endbook(&generate_args(
        "13",
        &out13,
        &["--extend", large.to_str().unwrap(), "--dry-run"],
    ));
    assert_dry_run_stops(&dry, "checksum mismatch in section 12");
    assert!(!out13.exists());
}

/// A checkpoint with no finished level (a run killed before its first) is
/// no reason to stop: the next run starts afresh. One another run holds
/// locked is being written: refused, and left alone.
#[test]
fn empty_checkpoints_are_written_over_and_busy_ones_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("6.book");
    let checkpoint = dir.path().join("6.book.checkpoint");
    // Empty, or as long as a header but never committed (a run killed
    // while writing its first level leaves room it had not filled).
    for held in [&[][..], &[0u8; 4096]] {
        std::fs::write(&checkpoint, held).unwrap();
        let dry = endbook(&generate_args("6", &out, &["--dry-run"]));
        assert!(dry.status.success(), "{}", text(&dry.stderr));
        let run = endbook(&generate_args("6", &out, &[]));
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert!(text(&run.stderr).contains("holds no finished level"));
        assert!(out.exists() && !checkpoint.exists());
        std::fs::remove_file(&out).unwrap();
    }

    let busy = std::fs::File::create(&checkpoint).unwrap();
    busy.lock().unwrap();
    for extra in [&[][..], &["--resume"], &["--dry-run"]] {
        let run = endbook(&generate_args("6", &out, extra));
        if extra == ["--dry-run"] {
            assert_dry_run_stops(&run, "another run is writing");
        } else {
            assert_input_error(&run, "another run is writing");
        }
    }
    assert_eq!(std::fs::metadata(&checkpoint).unwrap().len(), 0);
    drop(busy);

    // Something other than a file where the checkpoint goes: refused, not
    // opened (a named pipe would wait for a writer for ever).
    std::fs::remove_file(&checkpoint).unwrap();
    std::fs::create_dir(&checkpoint).unwrap();
    for extra in [&[][..], &["--dry-run"]] {
        let run = endbook(&generate_args("6", &out, extra));
        assert_input_error(&run, "is not a regular file");
    }
    // Nor through a symbolic link: to a folder, or to a named pipe (the
    // run and its dry run waited for a writer for ever).
    std::fs::remove_dir(&checkpoint).unwrap();
    let pipe = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    for target in [dir.path(), pipe.as_path()] {
        std::os::unix::fs::symlink(target, &checkpoint).unwrap();
        for extra in [&[][..], &["--dry-run"]] {
            let run = endbook(&generate_args("6", &out, extra));
            assert_input_error(&run, "is not a regular file");
        }
        std::fs::remove_file(&checkpoint).unwrap();
    }
}

/// An export interrupted (SIGINT, as Ctrl-C sends, SIGTERM or SIGHUP)
/// while it writes its temporary file removes it and ends as the signal
/// ends a process.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_export_leaves_no_partial_file() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("11.book");
    assert!(endbook(&generate_args("11", &book, &[])).status.success());
    let out = dir.path().join("flat.bin");
    let partial = dir.path().join("flat.bin.partial");
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let status = export_signalled(None, &book, &out, &partial, signal);
        assert_eq!(status.signal(), Some(signal), "ended by {signal}: {status}");
        assert!(!partial.exists(), "the temporary file is left ({signal})");
        assert!(!out.exists());
    }

    // Started ignoring SIGHUP (`nohup`), it goes on ignoring it.
    let status = export_signalled(Some("nohup"), &book, &out, &partial, libc::SIGHUP);
    assert!(status.success(), "a nohup export survives SIGHUP: {status}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 200 * 1_352_077);
}

/// Exports 200 layers of the 11-seed `book` to `out` (270 MB, about a
/// second to write), run through `launcher` if given, sends it `signal`
/// once its temporary file `partial` has bytes, and returns how it ended.
/// The export starts with SIGINT, SIGTERM and SIGHUP at their default actions
/// whatever this test inherited: a test run started in the background by
/// a shell without job control ignores SIGINT, and the export would go on
/// ignoring it (as it does a SIGHUP it started ignoring).
#[cfg(target_os = "linux")]
fn export_signalled(
    launcher: Option<&str>,
    book: &Path,
    out: &Path,
    partial: &Path,
    signal: libc::c_int,
) -> std::process::ExitStatus {
    let endbook = env!("CARGO_BIN_EXE_endbook");
    let mut command = Command::new(launcher.unwrap_or(endbook));
    if launcher.is_some() {
        command.arg(endbook);
    }
    // SAFETY: between fork and exec the closure only calls `signal`, which
    // is async-signal-safe, and allocates nothing.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = command
        .args(["oware", "export", "--book", book.to_str().unwrap()])
        .args(["--layers", "200", "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the export ended ({status}) before its temporary file was seen");
        }
        if std::fs::metadata(partial).is_ok_and(|m| m.len() > 0) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: `kill` has no memory effects; the child is not yet waited
    // for, so its pid is still its own.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(
        sent,
        0,
        "kill({signal}): {}",
        std::io::Error::last_os_error()
    );
    child.wait().unwrap()
}

/// A run without --resume never writes over the checkpoint of an earlier,
/// interrupted one (its finished levels may have taken hours).
#[test]
fn a_run_without_resume_keeps_an_earlier_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (out, checkpoint) = (
        dir.path().join("7.book"),
        dir.path().join("7.book.checkpoint"),
    );
    assert!(endbook(&generate_args("5", &checkpoint, &[]))
        .status
        .success());
    let before = std::fs::read(&checkpoint).unwrap();
    let dry = endbook(&generate_args("7", &out, &["--dry-run"]));
    assert_dry_run_stops(&dry, "holds the levels an interrupted run finished");
    let run = endbook(&generate_args("7", &out, &[]));
    assert_input_error(&run, "holds the levels an interrupted run finished");
    assert!(!out.exists());
    assert_eq!(std::fs::read(&checkpoint).unwrap(), before);
    // --resume takes its levels over.
    let resumed = endbook(&generate_args("7", &out, &["--resume"]));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(out.exists() && !checkpoint.exists());
}

/// Outputs are written under a temporary name and renamed into place: an
/// output that is the input or a pipe is refused before any work, and a
/// symbolic link is written through (the link stays). `-` is standard
/// output for an export (streamed), refused for a book.
#[test]
fn outputs_that_renaming_would_break_are_refused_or_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("6.book");
    std::fs::copy(self::book(), &book).unwrap();
    let before = std::fs::read(&book).unwrap();
    let export = |out: &Path| {
        endbook(&[
            "oware",
            "export",
            "--book",
            book.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--layers",
            "3",
        ])
    };
    assert_input_error(&export(&book), "is the book being exported");
    assert_eq!(std::fs::read(&book).unwrap(), before);
    let generate_to_stdout = endbook(&generate_args("3", Path::new("-"), &[]));
    assert_input_error(&generate_to_stdout, "not to standard output");
    let target = dir.path().join("target.bin");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let through = export(&link);
    assert!(through.status.success(), "{}", text(&through.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let flat = std::fs::read(&target).unwrap();
    assert_eq!(flat.len(), 3 * 18_563, "3 layers of the 1..=6-seed boards");
    let streamed = export(Path::new("-"));
    assert!(streamed.status.success(), "{}", text(&streamed.stderr));
    assert!(
        streamed.stdout == flat,
        "the export to standard output differs"
    );
    assert!(text(&streamed.stderr).contains("wrote standard output (55,689 bytes"));
    let dangling = dir.path().join("dangling.bin");
    std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
    assert_input_error(&export(&dangling), "a symbolic link to nothing");
    let fifo = dir.path().join("fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        assert_input_error(&export(&fifo), "is not a regular file");
        assert_input_error(
            &export(&fifo),
            "--out - writes the export to standard output",
        );
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    } else {
        writeln!(
            std::io::stderr(),
            "no mkfifo here: the named-pipe output is not checked"
        )
        .unwrap();
    }
}

#[test]
fn movegen_is_refused_where_no_child_cache_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.book");
    // `auto` too, where it is named: it picks nothing here either.
    for movegen in ["scalar", "auto"] {
        let run = endbook(&generate_args("5", &out, &["--movegen", movegen]));
        assert_input_error(&run, "run sweeps (the default) build none");
    }
    assert!(!out.exists());
    let hybrid = endbook(&generate_args(
        "5",
        &out,
        &["--movegen", "scalar", "--sweep", "hybrid"],
    ));
    assert!(hybrid.status.success(), "{}", text(&hybrid.stderr));
}

#[test]
fn run_sweeps_refuse_all_levels_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.book");
    let result = endbook(&generate_args(
        "5",
        &out,
        &["--sweep", "runs", "--all-levels-at-once"],
    ));
    assert_eq!(result.status.code(), Some(2));
    assert!(text(&result.stderr).contains("one level at a time"));
    assert!(!out.exists());
    // Without --sweep, all levels at once sweeps by hybrid: the same book.
    let at_once = dir.path().join("at-once.book");
    let by_runs = dir.path().join("runs.book");
    for (path, extra) in [(&at_once, vec!["--all-levels-at-once"]), (&by_runs, vec![])] {
        let result = endbook(&generate_args("6", path, &extra));
        assert!(result.status.success(), "{}", text(&result.stderr));
    }
    assert_eq!(
        std::fs::read(at_once).unwrap(),
        std::fs::read(by_runs).unwrap()
    );
}

/// A checkpoint a crash left with bytes past its last committed level (a
/// level half appended) resumes to the book a fresh run writes; one whose
/// committed levels are damaged is refused and left as it is.
#[test]
fn resume_cuts_off_a_half_appended_level_and_refuses_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.book");
    assert!(endbook(&generate_args("8", &fresh, &[])).status.success());
    let (out, checkpoint) = (
        dir.path().join("8.book"),
        dir.path().join("8.book.checkpoint"),
    );
    // A complete 6-seed book is a checkpoint of levels 0-6.
    assert!(endbook(&generate_args("6", &checkpoint, &[]))
        .status
        .success());
    let committed = std::fs::read(&checkpoint).unwrap();
    let mut bytes = committed.clone();
    let mut x = 0x9e37_79b9u32;
    bytes.extend((0..5000).map(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    }));
    std::fs::write(&checkpoint, &bytes).unwrap();
    let resumed = endbook(&generate_args("8", &out, &["--resume"]));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
    assert!(!checkpoint.exists());
    // A bit flipped in the last committed level.
    std::fs::remove_file(&out).unwrap();
    let mut damaged = committed;
    let at = damaged.len() - 10;
    damaged[at] ^= 0x10;
    std::fs::write(&checkpoint, &damaged).unwrap();
    let refused = endbook(&generate_args("8", &out, &["--resume"]));
    assert_input_error(&refused, "checksum mismatch");
    assert!(!out.exists());
    assert!(std::fs::read(&checkpoint).unwrap() == damaged);
}

/// `probe` reads only the records it needs, checking them as it goes: a
/// malformed record under good checksums is reported by the probe that
/// reads it (exit code 2), while other boards are still answered; commands
/// that read the whole book refuse it on opening.
/// `probe --batch` on a book in each encoding (the compact ones opened for
/// lookups, the layers one whole) answers every board of up to 4 seeds
/// as the library's generation does, at turns 1, 7 and 200.
#[test]
fn probe_answers_from_every_encoding() {
    use endbook::games::oware::{generate, BoardIndex, Encoding, GenerateOptions, OwareBook};
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(GenerateOptions::new(4), |_| {});
    let index = BoardIndex::new(4);
    let mut queries = String::new();
    let mut expected = String::new();
    for (global, (board, _)) in (1..).zip(index.boards_from(1)) {
        for turns in [1, 7, 200] {
            let houses: Vec<String> = board.houses().iter().map(u8::to_string).collect();
            queries += &format!("{turns} {}\n", houses.join(" "));
            expected += &format!("{}\n", generated.solution.value(global, turns));
        }
    }
    assert_eq!(
        expected.lines().count(),
        3 * 1819,
        "every board of 1 to 4 seeds"
    );
    for encoding in [Encoding::Changes, Encoding::ChangesV1, Encoding::Layers] {
        let path = dir.path().join(format!("{}.book", encoding.name()));
        OwareBook::write_with(&path, &generated, encoding).unwrap();
        let out = endbook_with_stdin(
            &[
                "oware",
                "probe",
                "--book",
                path.to_str().unwrap(),
                "--batch",
            ],
            &queries,
        );
        assert!(
            out.status.success(),
            "{}: {}",
            encoding.name(),
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout) == expected,
            "{} answers differently",
            encoding.name()
        );
    }
}

#[test]
fn probe_checks_the_records_it_reads() {
    use endbook::games::oware::{generate, GenerateOptions, OwareBook};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.book");
    let generated = generate(GenerateOptions::new(3), |_| {});
    let (params, mut sections) = sections_of(OwareBook::to_bytes(&generated));
    // The last byte of level 3 ends the record of its last board, "3 0 0 0
    // 0 0 | 0 0 0 0 0 0" (rank order: house 0 most significant): 0xff is no
    // change code, nor a length that ends.
    *sections[3].1.last_mut().unwrap() = 0xff;
    std::fs::write(&path, rebuilt(&params, &sections)).unwrap();
    let book = path.to_str().unwrap();
    let probe = |board: &str| endbook(&["oware", "probe", "--book", book, "--turns", "5", board]);
    assert_input_error(&probe("3 0 0 0 0 0 0 0 0 0 0 0"), "is corrupt: level 3");
    let good = dir.path().join("good.book");
    OwareBook::write(&good, &generated).unwrap();
    let board = "0 0 0 0 0 1 1 0 0 0 0 0";
    let fine = probe(board);
    assert!(fine.status.success(), "{}", text(&fine.stderr));
    let good = good.to_str().unwrap();
    let expected = endbook(&["oware", "probe", "--book", good, "--turns", "5", board]);
    assert_eq!(text(&fine.stdout), text(&expected.stdout));
    assert!(text(&fine.stdout).contains("value       -2"));
    let batch = endbook_with_stdin(
        &["oware", "probe", "--book", book, "--batch"],
        "5 0 0 0 0 0 1 1 0 0 0 0 0\n5 3 0 0 0 0 0 0 0 0 0 0 0\n",
    );
    assert_eq!(batch.status.code(), Some(2));
    assert_eq!(text(&batch.stdout), "-2\n");
    assert!(text(&batch.stderr).contains("is corrupt: level 3"));
    assert!(text(&batch.stderr).contains("(answering stdin line 2)"));
    assert_input_error(&endbook(&["oware", "info", "--book", book]), "level 3: ");
}

/// `probe --line` looks the whole line up before it prints: where the line
/// reads a damaged chunk of the book (the board's own analysis sound), it
/// exits 2 with nothing on stdout, not a partial answer.
#[test]
fn a_probe_whose_line_reads_a_damaged_chunk_prints_nothing() {
    use endbook::games::oware::book::GAME_TAG;
    use endbook::games::oware::{BoardIndex, ProbeError};
    let seeds = 10;
    let bytes = OwareBook::to_bytes(&generate(GenerateOptions::new(seeds), |_| {}));
    let dir = tempfile::tempdir().unwrap();
    let path = common::damaged_in_a_chunk(bytes, GAME_TAG, seeds as usize, 0x04, dir.path());
    let book = OwareBook::open_for_lookups(&path).unwrap();
    let index = BoardIndex::new(seeds);
    let turns = 60;
    let board = index
        .boards_from(index.level_starts()[seeds as usize])
        .map(|(board, _)| board)
        .find(|board| {
            book.analyse(board, turns).is_ok()
                && matches!(
                    book.best_line(board, turns),
                    Err(ProbeError::Corrupt { .. })
                )
        })
        .expect("a board whose line reads the damaged chunk");
    let board = board.to_string();
    let out = endbook(&[
        "oware",
        "probe",
        "--book",
        path.to_str().unwrap(),
        "--turns",
        &turns.to_string(),
        "--line",
        &board,
    ]);
    common::assert_refused_as_corrupt(&out);
}

/// A generation whose writes fail (here a file-size limit, with SIGXFSZ
/// ignored so that the write reports it, as a full disk would) exits 1
/// naming the checkpoint it keeps and how to go on from it; `--resume`
/// then completes the book a fresh run writes.
#[test]
fn a_run_failing_to_write_names_the_checkpoint_it_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("10.book");
    let checkpoint = dir.path().join("10.book.checkpoint");
    let args = generate_args("10", &out, &[]);
    // (1,500 blocks of 1 KiB: levels up to 8 or so fit, level 10 not.)
    let failed = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1500; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_endbook"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = text(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("endbook: ")
            && last.contains("File too large")
            && last.contains(&format!(
                "finished are kept in {}: once that is mended, run again with --resume",
                checkpoint.display()
            )),
        "{stderr}"
    );
    assert!(!out.exists() && checkpoint.exists());
    let resumed = endbook(&generate_args("10", &out, &["--resume"]));
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("taking over levels 0..="));
    let fresh = dir.path().join("fresh.book");
    assert!(endbook(&generate_args("10", &fresh, &[])).status.success());
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&fresh).unwrap());
}

/// Output that cannot be written (`>/dev/full`) fails a command, help
/// included (clap's help was flushed only at the exit, unchecked): one
/// line on stderr, exit code 1.
#[test]
fn output_to_a_full_device_fails_every_command() {
    let Ok(_) = std::fs::metadata("/dev/full") else {
        eprintln!("skipped: no /dev/full here");
        return;
    };
    for args in [
        &["--help"][..],
        &["oware", "probe", "--help"],
        &["bearoff", "--help"],
        &["oware", "info", "--book", book_arg()],
    ] {
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_endbook"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            "endbook: failed printing to stdout: No space left on device (os error 28)",
            "{args:?}"
        );
    }
}
