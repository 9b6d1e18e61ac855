//! `endbook bearoff ...`: output, and exit code 2 with one clear message on bad input.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

mod common;
use common::{endbook, endbook_with_stdin, generate_args, text};

/// A 4-checker cubeful book generated once by the binary.
fn book() -> &'static Path {
    static BOOK: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BOOK.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("four.book");
        let out = endbook(&[
            "bearoff",
            "generate",
            "--checkers",
            "4",
            "--cube",
            "--out",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("wrote"));
        (dir, path)
    });
    path
}

fn book_arg() -> &'static str {
    book().to_str().unwrap()
}

/// A 2-checker cubeless book generated once by the binary.
fn cubeless_book() -> &'static str {
    static BOOK: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BOOK.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.book");
        let args = [
            "bearoff",
            "generate",
            "--checkers",
            "2",
            "--out",
            path.to_str().unwrap(),
        ];
        let out = endbook(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (dir, path)
    });
    path.to_str().unwrap()
}

/// Runs a command that must fail with exit code 2 and one `endbook:` line
/// containing `needle`.
fn bad_input(args: &[&str], needle: &str) {
    let out = endbook(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn probe_prints_values_and_cube_action() {
    let out = endbook(&[
        "bearoff",
        "probe",
        "--book",
        book_arg(),
        "--x",
        "0 0 0 0 0 1",
        "--o",
        "0 0 0 0 0 1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("P(X wins)   0.812497"), "{stdout}");
    assert!(stdout.contains("X owns the cube     +0.624994"), "{stdout}");
    assert!(stdout.contains("cube centred        +0.499992"), "{stdout}");
    assert!(stdout.contains("cube action, centred:"), "{stdout}");
}

#[test]
fn probe_with_a_roll_ranks_every_play() {
    let probe = |book: &str| {
        let position = [
            "--x",
            "0 1 0 0 0 1",
            "--o",
            "0 0 0 0 0 2",
            "--roll",
            "1",
            "6",
        ];
        let out = endbook(&[&["bearoff", "probe", "--book", book][..], &position].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let stdout = probe(book_arg());
    assert!(
        stdout
            .contains("roll 6-1: 2 distinct plays, best first by X's equity with the cube centred"),
        "{stdout}"
    );
    assert!(stdout.contains("6/off 2/1"), "{stdout}");
    assert!(stdout.contains("6/5 5/off"), "{stdout}");
    // A cubeless book ranks by P(win).
    let stdout = probe(cubeless_book());
    assert!(
        stdout.contains("roll 6-1: 2 distinct plays, best first by P(win)\n"),
        "{stdout}"
    );
    // A side with no checker left: its values, and no play, by the book or
    // evaluated.
    let over = [
        "--x",
        "0 0 0 0 0 0",
        "--o",
        "0 0 0 0 0 1",
        "--roll",
        "3",
        "1",
    ];
    let probe = [&["bearoff", "probe", "--book", book_arg()][..], &over].concat();
    let eval = [&["bearoff", "eval"][..], &over].concat();
    for args in [probe, eval] {
        let out = endbook(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.ends_with("roll 3-1: no play, the game is over\n"),
            "{stdout}"
        );
        // No cube advice: there is no game left to double in.
        assert!(
            stdout.contains("the game is over: X has borne off every checker\n"),
            "{stdout}"
        );
        assert!(
            !stdout.contains("cube action") && !stdout.contains("X owns the cube"),
            "{stdout}"
        );
    }
}

#[test]
fn eval_agrees_with_the_book() {
    let position = ["--x", "0 0 2 0 0 1", "--o", "1 0 0 1 0 2"];
    let probe = endbook(&[&["bearoff", "probe", "--book", book_arg()][..], &position].concat());
    let eval = endbook(&[&["bearoff", "eval"][..], &position].concat());
    assert!((headline(&probe) - headline(&eval)).abs() < 1e-5);
}

/// `P(X wins)` as `eval` or `probe` print it.
fn headline(out: &Output) -> f64 {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .find(|l| l.starts_with("P(X wins)"))
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn eval_ranks_plays_of_uneven_sides_by_the_opponents_own_evaluation() {
    // Few checkers against many: the evaluator solves two universes, and
    // each play's P(win) comes from the second (O to move against what the
    // play leaves). Each must be 1 - P(O wins) from an evaluation of that
    // position of its own.
    let (x, o) = ("1 0 0 0 0 2", "0 0 0 2 2 3");
    for roll in [["2", "1"], ["6", "5"], ["3", "3"]] {
        let out = endbook(&[
            "bearoff", "eval", "--x", x, "--o", o, "--roll", roll[0], roll[1],
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let rows: Vec<Vec<&str>> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("rank"))
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(!rows.is_empty(), "{stdout}");
        for row in rows {
            // rank, the play's moves, the six counts it leaves, P(win), three equities.
            let leaves = row[row.len() - 10..row.len() - 4].join(" ");
            let p_win: f64 = row[row.len() - 4].parse().unwrap();
            let reply = if leaves == "0 0 0 0 0 0" {
                0.0
            } else {
                headline(&endbook(&["bearoff", "eval", "--x", o, "--o", &leaves]))
            };
            assert!(
                (p_win - (1.0 - reply)).abs() < 2e-6,
                "roll {roll:?}, {row:?}: O's own evaluation gives P(O wins) {reply}"
            );
        }
    }
}

#[test]
fn info_describes_the_book() {
    let out = endbook(&["bearoff", "info", "--book", book_arg()]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("at most 4 per side"), "{stdout}");
    assert!(stdout.contains("210 per player"), "{stdout}");
}

/// A dry run estimates and writes nothing; it exits 0 where the run would
/// start and 2 where it would stop at once (whatever the host has: the
/// checks are overridden, or the memory limited).
#[test]
fn dry_run_estimates_without_generating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.book");
    let dry_run = |extra: &[&str]| {
        let args = ["bearoff", "generate", "--checkers", "15", "--dry-run"];
        let out = ["--out", path.to_str().unwrap()];
        endbook(&[&args[..], &out, extra].concat())
    };
    let out = dry_run(&["--ignore-memory-check", "--ignore-disk-check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("54,264 per player"), "{stdout}");
    assert!(stdout.contains("memory        about 12.0 GB"), "{stdout}");
    assert!(stdout.contains("verdict       would start"), "{stdout}");
    // Past the limit with the check ignored: it would start, and says why.
    let args = [
        "--memory-limit",
        "1G",
        "--ignore-memory-check",
        "--ignore-disk-check",
    ];
    let out = dry_run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "verdict       would start (--ignore-memory-check), though it needs more than 90%"
        ),
        "{stdout}"
    );

    let out = dry_run(&["--memory-limit", "1G", "--ignore-disk-check"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // Worded as the run's own refusal.
    let why = "15 checkers per side (P(win)) needs about 12.0 GB of memory, more than 90% of the 1.0 GB available (--ignore-memory-check to try anyway)";
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("verdict       would stop at once: {why}\n")),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [format!("endbook: the run would stop at once: {why}")]
    );
    let run = endbook(&[
        "bearoff",
        "generate",
        "--checkers",
        "15",
        "--memory-limit",
        "1G",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(text(&run.stderr), format!("endbook: {why}\n"));
    assert!(!path.exists());
}

#[test]
fn bad_input_exits_with_code_2() {
    let book = book_arg();
    let probe = |x: &str, o: &str| -> Vec<String> {
        ["bearoff", "probe", "--book", book, "--x", x, "--o", o]
            .map(String::from)
            .to_vec()
    };
    let run = |args: Vec<String>, needle: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        bad_input(&args, needle);
    };
    run(probe("5 5 5 1 0 0", "0 0 0 0 0 1"), "at most 15 checkers");
    run(probe("0 0 0 0 0 -1", "0 0 0 0 0 1"), "cannot be negative");
    run(probe("0 0 0 0 1", "0 0 0 0 0 1"), "6 checker counts");
    // A side past the book is named by its option.
    let past = ": 5 checkers; the book covers at most 4 per side";
    run(
        probe("0 0 0 0 0 5", "0 0 0 0 0 1"),
        &format!("--x \"0 0 0 0 0 5\"{past}"),
    );
    run(
        probe("0 0 0 0 0 1", "0 0 0 0 0 5"),
        &format!("--o \"0 0 0 0 0 5\"{past}"),
    );
    // A side's counts as separate arguments: told to quote them; an
    // unknown flag is not.
    let hint = "a side's six counts go in quotes, as one value";
    for args in [
        &["bearoff", "eval", "--x", "0", "0", "0", "0", "0", "1"][..],
        &[
            "bearoff", "probe", "--book", book, "--o=1", "0", "0", "0", "0", "1",
        ],
    ] {
        bad_input(args, "unexpected argument '0' found");
        bad_input(args, hint);
    }
    // Nor an unknown flag, nor a third die.
    let eval_ones = [
        "bearoff",
        "eval",
        "--x",
        "0 0 0 0 0 1",
        "--o",
        "0 0 0 0 0 1",
    ];
    let third_die = [&eval_ones[..], &["--roll", "1", "6", "3"]].concat();
    for (args, unexpected) in [
        (
            &["bearoff", "eval", "--x", "0 0 0 0 0 1", "--y", "1"][..],
            "--y",
        ),
        (&third_die, "3"),
    ] {
        bad_input(args, &format!("unexpected argument '{unexpected}' found"));
        assert!(!text(&endbook(args).stderr).contains(hint), "{args:?}");
    }
    run(
        probe("0 0 0 0 0 0", "0 0 0 0 0 0"),
        "no position has both sides empty",
    );
    let mut with_roll = probe("0 0 0 0 0 1", "0 0 0 0 0 1");
    with_roll.extend(["--roll", "7", "1"].map(String::from));
    run(with_roll, "a die shows 1 to 6");
    let mut with_roll = probe("0 0 0 0 0 1", "0 0 0 0 0 1");
    with_roll.extend(["--roll", "0", "1"].map(String::from));
    run(with_roll, "a die shows 1 to 6");
    bad_input(
        &[
            "bearoff",
            "probe",
            "--book",
            "/nonexistent.book",
            "--x",
            "0 0 0 0 0 1",
            "--o",
            "0 0 0 0 0 1",
        ],
        "/nonexistent.book",
    );
    bad_input(
        &["bearoff", "generate", "--checkers", "16", "--dry-run"],
        "between 1 and 15",
    );
    bad_input(
        &[
            "bearoff",
            "eval",
            "--x",
            "0 0 0 0 0 16",
            "--o",
            "0 0 0 0 0 1",
        ],
        "at most 15 checkers",
    );
    // Beyond the memory allowed: refused before any work, nothing written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("refused.book");
    let out_arg = out.to_str().unwrap();
    bad_input(
        &[
            "bearoff",
            "generate",
            "--checkers",
            "4",
            "--out",
            out_arg,
            "--memory-limit",
            "1K",
        ],
        "of memory, more than 90% of the 1.0 KB available (--ignore-memory-check",
    );
    assert!(!out.exists());
    bad_input(
        &[&eval_ones[..], &["--memory-limit", "1K"]].concat(),
        "of memory, more than 90% of the 1.0 KB available",
    );
}

#[test]
fn an_oware_book_is_not_a_bearoff_book() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oware.book");
    let out = endbook(&generate_args("2", &path, &[]));
    assert!(out.status.success());
    bad_input(
        &[
            "bearoff",
            "probe",
            "--book",
            path.to_str().unwrap(),
            "--x",
            "0 0 0 0 0 1",
            "--o",
            "0 0 0 0 0 1",
        ],
        "expected 'BOFF' (an Oware book: read it with `endbook oware ...`)",
    );
}

/// Without cube values (a cubeless book, `eval --cubeless`), the plays of a
/// roll get no cube columns, even where every play ends the game (and so
/// has cubeful equities of its own).
#[test]
fn cubeless_lookups_print_no_cube_columns() {
    let position = [
        "--x",
        "1 0 0 0 0 0",
        "--o",
        "1 0 0 0 0 0",
        "--roll",
        "2",
        "1",
    ];
    let probe = [
        &["bearoff", "probe", "--book", cubeless_book()][..],
        &position,
    ]
    .concat();
    let eval = [&["bearoff", "eval", "--cubeless"][..], &position].concat();
    for args in [probe, eval] {
        let out = endbook(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let play = stdout.lines().find(|l| l.contains("1/off")).unwrap();
        assert_eq!(
            play.split_whitespace().count(),
            9,
            "rank, play, 6 counts, P(win): {play}"
        );
        assert!(!stdout.contains("centred"), "{args:?}: {stdout}");
        assert!(stdout.contains("(1 checker, 1 pip)"), "{stdout}");
    }
    // A cubeful book shows them.
    let cubeful = [&["bearoff", "probe", "--book", book_arg()][..], &position].concat();
    let stdout = text(&endbook(&cubeful).stdout);
    assert!(stdout.contains("centred"), "{stdout}");
}

/// Each kernel this CPU has, forced, writes the book `auto` writes, with
/// and without the cube, on one thread and on two.
#[test]
fn forced_kernels_write_the_same_book() {
    let dir = tempfile::tempdir().unwrap();
    let mut kernels = vec!["scalar", "portable"];
    if endbook::kernels::KernelKind::Avx2.is_supported() {
        kernels.push("avx2");
    } else {
        endbook::kernels::skip_unsupported("avx2", "bearoff generate --kernel");
    }
    for cube in [false, true] {
        let write = |name: &str, extra: &[&str]| -> Vec<u8> {
            let path = dir.path().join(format!("{name}-{cube}.book"));
            let mut args = vec!["bearoff", "generate", "--checkers", "5"];
            args.extend(["--out", path.to_str().unwrap()]);
            if cube {
                args.push("--cube");
            }
            args.extend(extra);
            let out = endbook(&args);
            assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
            std::fs::read(&path).unwrap()
        };
        let expected = write("auto", &[]);
        for kernel in &kernels {
            for threads in ["1", "2"] {
                let name = format!("{kernel}-{threads}");
                let args = ["--kernel", kernel, "--threads", threads];
                assert!(write(&name, &args) == expected, "{name}, cube {cube}");
            }
        }
    }
}

/// `probe --batch`: a line of values per position, those of a single probe
/// (P(win), then the three equities of a cubeful book; P(win) alone from a
/// cubeless one), blank and '#' lines skipped, commas as separators, a '|'
/// between the sides.
#[test]
fn batch_answers_each_position_as_a_single_probe() {
    let positions = [
        ("0 0 0 0 0 1", "0 0 0 0 0 1"),
        ("1 1 0 0 0 0", "0 0 0 2 0 0"),
        ("0 0 0 0 0 4", "4 0 0 0 0 0"),
        ("2 0 1 0 0 0", "0 0 0 0 0 0"),
    ];
    let lines: Vec<String> = positions
        .iter()
        .enumerate()
        .map(|(i, (x, o))| match i % 3 {
            0 => format!("{x} {o}"),
            1 => format!("{x} {o}").replace(' ', ", "),
            _ => format!("{x} | {o}"),
        })
        .collect();
    let input = format!(
        "# X then O\n{}\n\n{}\n",
        lines[..2].join("\n"),
        lines[2..].join("\n")
    );
    let out = endbook_with_stdin(
        &["bearoff", "probe", "--book", book_arg(), "--batch"],
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answers: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(answers.len(), positions.len());
    for ((x, o), answer) in positions.iter().zip(&answers) {
        let single =
            text(&endbook(&["bearoff", "probe", "--book", book_arg(), "--x", x, "--o", o]).stdout);
        let values: Vec<&str> = answer.split(' ').collect();
        assert_eq!(values.len(), 4, "{answer}");
        assert!(
            single.contains(&format!("P(X wins)   {}", values[0])),
            "{x} / {o}: {answer}\n{single}"
        );
        // (A finished game's single probe shows no cube: its equities are
        // asserted below.)
        let over = [x, o].iter().any(|side| side.split(' ').all(|c| c == "0"));
        for (label, value) in [
            "X owns the cube     ",
            "cube centred        ",
            "O owns the cube     ",
        ]
        .iter()
        .zip(&values[1..])
        .filter(|_| !over)
        {
            assert!(
                single.contains(&format!("{label}{value}")),
                "{x} / {o}: {answer}\n{single}"
            );
        }
    }
    // The opponent has borne off: X has lost.
    assert_eq!(answers[3], "0.000000 -1.000000 -1.000000 -1.000000");

    // A cubeless book: P(win) alone.
    let out = endbook_with_stdin(
        &["bearoff", "probe", "--book", cubeless_book(), "--batch"],
        "0 0 0 0 0 1 0 0 0 0 0 1\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}\n", answers[0].split(' ').next().unwrap())
    );
}

/// A bad line stops `probe --batch` with exit code 2, naming it; the lines
/// before it are answered. `--batch` takes no position of its own.
#[test]
fn batch_names_the_bad_line_and_fails() {
    let good = "0 0 0 0 0 1 0 0 0 0 0 1";
    for (bad, needle) in [
        ("0 0 0 0 0 1 0 0 0 0 0", "expected 12 counts, found 11"),
        (
            "0 0 0 0 0 0 0 0 0 0 0 0",
            "X and O both have no checkers left",
        ),
        (
            "5 0 0 0 0 0 0 0 0 0 0 1",
            "the book covers at most 4 per side",
        ),
        ("0 0 0 0 0 1 0 0 x 0 0 1", "O: "),
        ("0 0 0 0 1 | 0 0 0 0 0 0 1", "X: "),
        ("0 0 0 0 0 1 | 0 0 0 0 1 | 0", "at most one '|'"),
    ] {
        let input = format!("{good}\n{bad}\n{good}\n");
        let out = endbook_with_stdin(
            &["bearoff", "probe", "--book", book_arg(), "--batch"],
            &input,
        );
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("endbook: stdin line 2: "), "{stderr}");
        assert!(stderr.contains(needle), "{bad}: {stderr}");
        assert!(
            stderr.contains("(expected \"x1 .. x6 o1 .. o6\")"),
            "{stderr}"
        );
        assert_eq!(text(&out.stdout).lines().count(), 1, "{bad}");
    }
    bad_input(
        &[
            "bearoff",
            "probe",
            "--book",
            book_arg(),
            "--batch",
            "--x",
            good,
        ],
        "cannot be used with",
    );
    bad_input(&["bearoff", "probe", "--book", book_arg()], "--x");
}

/// `bearoff verify` passes a book the binary wrote (exit 0), against the
/// generator and against the rules; names a value of an altered copy
/// (checksums recomputed) by its sides, by either check alone and by both
/// (exit 1); and cannot verify what it cannot read (exit 2).
#[test]
fn verify_passes_written_books_and_names_an_altered_value() {
    use endbook::book::{self, Container, SectionData};
    use endbook::games::bearoff::book::GAME_TAG;
    use endbook::games::bearoff::{solve::table_index, Side, Universe};
    let out = endbook(&["bearoff", "verify", "--book", book_arg()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("is the one this build generates")
            && stdout.contains(" against the rules: each of its 44,100 pairs ")
            && stdout.contains("within the 16-bit codes' precision (largest differences: P(win) "),
        "{stdout}"
    );
    // P(win) of 2 checkers on the 6-point to move against 1 on the 1-point.
    let (mover, opponent): (Side, Side) = (
        "0 0 0 0 0 2".parse().unwrap(),
        "1 0 0 0 0 0".parse().unwrap(),
    );
    let universe = Universe::full_layout(4);
    let at = 2 * table_index(
        universe.slots(),
        4,
        universe.slot(&mover).unwrap(),
        universe.slot(&opponent).unwrap(),
        0,
    );
    let container = Container::open(book(), GAME_TAG).unwrap();
    let mut section = container.section(0).to_vec();
    section[at + 1] ^= 0x10;
    let bytes = book::to_bytes(
        GAME_TAG,
        container.params(),
        &[SectionData {
            meta: [0, 0],
            bytes: &section,
        }],
    );
    let dir = tempfile::tempdir().unwrap();
    let altered = dir.path().join("altered.book");
    std::fs::write(&altered, bytes).unwrap();
    let pair = format!("{mover} against {opponent}: the book holds P(win) ");
    for check in [None, Some("generator"), Some("rules")] {
        let mut args = vec!["bearoff", "verify", "--book", altered.to_str().unwrap()];
        args.extend(check.iter().flat_map(|check| ["--check", check]));
        let out = endbook(&args);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        let expected = match check {
            Some("rules") => "altered.book holds a value its rolls do not give: ",
            _ => "altered.book holds a value this build does not generate: ",
        };
        assert!(
            stderr.contains(&format!("{expected}{pair}")),
            "{check:?}: {stderr}"
        );
    }
    let missing = dir.path().join("missing.book");
    let out = endbook(&["bearoff", "verify", "--book", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // The rules' check runs no kernel: naming one is refused, before any work.
    let args = ["--check", "rules", "--kernel", "scalar"];
    let out = endbook(&[&["bearoff", "verify", "--book", book_arg()][..], &args].concat());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--check rules runs none") && out.stdout.is_empty(),
        "{}",
        text(&out.stderr)
    );
}

/// Output whose reader has gone ends a bear-off command by SIGPIPE, with
/// nothing on stderr, as it does an Oware one.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_output_pipe_ends_quietly() {
    let lines = "0 0 0 0 0 1 | 0 0 0 0 0 1\n".repeat(1000);
    for (args, stdin) in [
        (&["bearoff", "info", "--book", book_arg()][..], ""),
        (
            &["bearoff", "probe", "--book", book_arg(), "--batch"][..],
            &lines[..],
        ),
    ] {
        common::assert_ends_by_sigpipe(args, stdin);
    }
}

/// `probe` opens the book for lookups and checks what it reads: on a copy
/// of the book with a byte of its table changed, a probe and a batch each
/// exit 2 saying the book is corrupt and where (the batch as the book's
/// fault, naming the line it was answering); `info`, which opens it whole,
/// refuses it too.
#[test]
fn a_probe_of_a_damaged_book_says_it_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("damaged.book");
    let mut bytes = std::fs::read(book()).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&copy, &bytes).unwrap();
    let copy = copy.to_str().unwrap();
    let probe = ["bearoff", "probe", "--book", copy];
    for (out, batch) in [
        (
            endbook(&[&probe[..], &["--x", "0 0 1 0 0 1", "--o", "1 0 0 0 0 0"]].concat()),
            false,
        ),
        (
            endbook_with_stdin(
                &[&probe[..], &["--batch"]].concat(),
                "0 0 1 0 0 1 | 1 0 0 0 0 0\n",
            ),
            true,
        ),
        (endbook(&["bearoff", "info", "--book", copy]), false),
    ] {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("damaged.book") && stderr.contains("checksum mismatch in section 0"),
            "{stderr}"
        );
        // A batch names the line it was answering.
        assert_eq!(
            stderr.contains("(answering stdin line 1)"),
            batch,
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
}

/// A probe with a roll looks every play up before it prints: where a play
/// reads a damaged chunk of the book (its position's own values sound), it
/// exits 2 with nothing on stdout, not a partial answer.
#[test]
fn a_probe_whose_plays_read_a_damaged_chunk_prints_nothing() {
    use endbook::games::bearoff::book::GAME_TAG;
    use endbook::games::bearoff::{
        generate, ranked_plays, BearoffBook, GenerateOptions, Lookup, ProbeError, Roll, Side,
        Universe,
    };
    let bytes = generate(GenerateOptions::new(6, true), |_| {}).into_book_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = common::damaged_in_a_chunk(bytes, GAME_TAG, 0, 0x08, dir.path());
    let book = BearoffBook::open_for_lookups(&path).unwrap();
    // A position whose values read well and one of whose plays' do not.
    let universe = Universe::full_layout(6);
    let sides: Vec<Side> = (0..universe.slots())
        .filter_map(|s| universe.side(s))
        .collect();
    let roll = Roll::new(6, 5).unwrap();
    let (x, o) = sides
        .iter()
        .flat_map(|x| sides.iter().map(move |o| (x, o)))
        .find(|(x, o)| {
            book.entry(x, o).is_ok()
                && matches!(
                    ranked_plays(&book, x, o, roll),
                    Err(ProbeError::Corrupt { .. })
                )
        })
        .expect("a position whose plays read the damaged chunk");
    let (x, o) = (x.to_string(), o.to_string());
    let out = endbook(&[
        "bearoff",
        "probe",
        "--book",
        path.to_str().unwrap(),
        "--x",
        &x,
        "--o",
        &o,
        "--roll",
        "6",
        "5",
    ]);
    common::assert_refused_as_corrupt(&out);
}
