//! `verify` proves every value of a sound book and finds the first wrong
//! one of a book altered with its checksums recomputed, which opening it
//! cannot see.

use endbook::book::compact::{self, Codec};
use endbook::games::oware::{
    generate, verify, verify_sample, BoardIndex, Encoding, GenerateOptions, Mismatch, OwareBook,
    SampleError,
};

mod common;
use common::{rebuilt, sections_of};

/// The books the generator writes verify, every value of every level up to
/// the layer after the last change of it and the levels below (or the
/// turn limit) compared: 200 turns in the compact encoding (at 10 seeds,
/// level 10 stops changing at turn 119 and level 9 at 145), 30 (levels
/// not yet converged) and 300 turns (the layer encoding).
/// A sample of their values passes too.
#[test]
fn generated_books_verify() {
    for (seeds, turn_limit) in [(10, 200), (6, 30), (6, 300)] {
        let generated = generate(
            GenerateOptions {
                turn_limit,
                ..GenerateOptions::new(seeds)
            },
            |_| {},
        );
        let book = OwareBook::from_generated(&generated);
        let mut layers = 0;
        let verified = verify(&book, |_| layers += 1).expect("a sound book");
        let mut settled = 0;
        let expected: u64 = book
            .levels()
            .iter()
            .map(|level| {
                settled = settled.max(level.last_change);
                level.states * u64::from((settled + 1).min(turn_limit))
            })
            .sum();
        let last_changes: Vec<u32> = book.levels().iter().map(|l| l.last_change).collect();
        if seeds == 10 {
            assert_eq!(last_changes[9..], [145, 119], "a level settling first");
        }
        assert_eq!(
            verified.values, expected,
            "{seeds} seeds, {turn_limit} turns"
        );
        assert_eq!(verified.boards, BoardIndex::new(seeds).states() as u64);
        assert!(layers > 0);
        // Values drawn at random, from every level or the top one alone,
        // each follow from their moves; the observer sees the count grow
        // to the samples asked for.
        for min_seeds in [0, seeds] {
            let mut seen = Vec::new();
            let checked = verify_sample(&book, 40_000, min_seeds, 3, |done| seen.push(done))
                .expect("a sound book");
            assert_eq!(checked, 40_000);
            assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
            assert_eq!(seen.last(), Some(&40_000));
        }
    }
}

/// The bytes of the `seeds`-seed book in the `changes` encoding.
fn compact_book(seeds: u32) -> Vec<u8> {
    OwareBook::to_bytes_with(
        &generate(GenerateOptions::new(seeds), |_| {}),
        Encoding::Changes,
    )
}

/// Level `level` of `book`, board by board: each board's changes (turn, value).
fn board_changes(book: &OwareBook, level: usize) -> Vec<Vec<(u32, i8)>> {
    let starts = BoardIndex::new(book.max_seeds()).level_starts().to_vec();
    let (start, end) = (starts[level], starts[level + 1]);
    let mut boards = vec![Vec::new(); end - start];
    for (turn, changes) in (1..).zip(&book.solution().changes) {
        for (state, value) in changes.within(start, end) {
            boards[state as usize - start].push((turn, value));
        }
    }
    boards
}

/// The 7-seed book with level `level` stored from `boards`' changes, its
/// last change set to `last_change`, and every checksum recomputed.
fn altered(bytes: &[u8], level: usize, boards: &[Vec<(u32, i8)>], last_change: u32) -> OwareBook {
    OwareBook::from_bytes(altered_bytes(bytes, level, boards, last_change))
        .expect("a book that opens")
}

/// The bytes of [`altered`]'s book.
fn altered_bytes(
    bytes: &[u8],
    level: usize,
    boards: &[Vec<(u32, i8)>],
    last_change: u32,
) -> Vec<u8> {
    let (params, mut sections) = sections_of(bytes.to_vec());
    let section = compact::encode(Codec::V2, boards.len(), |board| boards[board].clone());
    sections[level] = ([boards.len() as u64, u64::from(last_change)], section);
    rebuilt(&params, &sections)
}

/// [`verify_sample`] of `book` on `threads` threads.
fn sample_on(
    threads: usize,
    book: &OwareBook,
    samples: u64,
    min_seeds: u32,
    seed: u64,
) -> Result<u64, SampleError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| verify_sample(book, samples, min_seeds, seed, |_| {}))
}

/// The book of `bytes` with every board of level `level` stripped of its
/// last change, the level's last change and every checksum made to match.
fn last_changes_dropped(bytes: &[u8], level: usize) -> Vec<u8> {
    let book = OwareBook::from_bytes(bytes.to_vec()).unwrap();
    let mut boards = board_changes(&book, level);
    for list in &mut boards {
        list.pop();
    }
    let latest = boards.iter().filter_map(|l| l.last()).map(|c| c.0).max();
    altered_bytes(bytes, level, &boards, latest.expect("a level that changes"))
}

/// Values changed in a book whose checksums were then recomputed open
/// without complaint; `verify` names the first (by level, turns, board),
/// with the value the book answers for it.
#[test]
fn altered_values_are_found() {
    let bytes = compact_book(7);
    let book = OwareBook::from_bytes(bytes.clone()).unwrap();
    let level = 5;
    let last_change = book.levels()[level].last_change;
    let boards = board_changes(&book, level);
    let busy = (0..boards.len())
        .filter(|&b| boards[b].len() >= 3)
        .step_by(11)
        .take(16);
    let mut checked = 0;
    for board in busy {
        // The board's second change dropped, or its value there another
        // (each change still a change, values within the level's seeds).
        for bent in 0..2 {
            let mut changed = boards.clone();
            let list = &mut changed[board];
            let (turn, value) = list[1];
            let (before, after) = (list[0].1, list[2].1);
            if bent == 0 {
                if before == after {
                    continue;
                }
                list.remove(1);
            } else {
                let Some(other) = [value + 1, value - 1, value + 2, value - 2]
                    .into_iter()
                    .find(|&v| v.abs() <= 5 && v != before && v != after)
                else {
                    continue;
                };
                list[1].1 = other;
            }
            let wrong = altered(&bytes, level, &changed, last_change);
            let mismatch: Mismatch = verify(&wrong, |_| {}).expect_err("a wrong value");
            let index = BoardIndex::new(7);
            let first = index.level_starts()[level];
            // Nothing differs before that board's altered turn; where the
            // first mismatch lies, the book answers what it says it holds.
            assert!(mismatch.turns_left <= turn + 1, "{mismatch}");
            assert_eq!(
                wrong.value(&mismatch.board, mismatch.turns_left).unwrap(),
                i32::from(mismatch.stored),
                "{mismatch}"
            );
            assert_ne!(mismatch.stored, mismatch.recomputed);
            assert!(index.index(&mismatch.board) >= first, "{mismatch}");
            checked += 1;
        }
    }
    assert!(checked >= 16, "{checked} altered books");
}

/// A level cut short, its last change dropped and its last change set one
/// earlier, claims to repeat a layer the rules do not repeat: the check of
/// the layer after the claimed last change finds it.
#[test]
fn a_level_said_to_converge_too_early_is_found() {
    let bytes = compact_book(7);
    let book = OwareBook::from_bytes(bytes.clone()).unwrap();
    let level = 7;
    let last_change = book.levels()[level].last_change;
    let mut boards = board_changes(&book, level);
    for list in &mut boards {
        list.retain(|&(turn, _)| turn < last_change);
    }
    let cut = altered(&bytes, level, &boards, last_change - 1);
    let mismatch = verify(&cut, |_| {}).expect_err("a level that had not converged");
    assert_eq!(mismatch.turns_left, last_change, "{mismatch}");
    assert_eq!(
        mismatch.to_string(),
        format!(
            "board {} with {last_change} turns left: the book holds {:+}, its moves give {:+}",
            mismatch.board, mismatch.stored, mismatch.recomputed
        )
    );
}

/// `oware verify` says a sound book's values follow from the rules (exit
/// 0), names the first wrong value of an altered one (exit 1), and cannot
/// verify what it cannot read (exit 2).
#[cfg(feature = "cli")] // (the binary is built with it)
#[test]
fn the_command_line_verifies_and_names_the_first_wrong_value() {
    use common::{endbook, text};
    let dir = tempfile::tempdir().unwrap();
    let bytes = compact_book(6);
    let sound = dir.path().join("sound.book");
    std::fs::write(&sound, &bytes).unwrap();
    let out = endbook(&["oware", "verify", "--book", sound.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("every value of its 18,564 boards follows from the rules"),
        "{}",
        text(&out.stdout)
    );
    // A board of level 4 worth one more with 1 turn left than it is.
    let book = OwareBook::from_bytes(bytes.clone()).unwrap();
    let mut boards = board_changes(&book, 4);
    let board = boards.iter().position(|list| list.is_empty()).unwrap();
    boards[board] = vec![(1, 1), (2, 0)];
    let wrong = dir.path().join("wrong.book");
    let last_change = book.levels()[4].last_change;
    let (params, mut sections) = sections_of(bytes);
    let section = compact::encode(Codec::V2, boards.len(), |b| boards[b].clone());
    sections[4] = ([boards.len() as u64, u64::from(last_change)], section);
    std::fs::write(&wrong, rebuilt(&params, &sections)).unwrap();
    let out = endbook(&["oware", "verify", "--book", wrong.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let index = BoardIndex::new(6);
    let named = index.board(index.level_starts()[4] + board);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "wrong.book holds a wrong value: board {named} with 1 turn left: the book holds +1, its moves give"
        )),
        "{stderr}"
    );
    let missing = dir.path().join("missing.book");
    let out = endbook(&["oware", "verify", "--book", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// A level whose boards each lost their last change (the book's header and
/// checksums made to match) opens without complaint; a sample of its level
/// finds a wrong value there, the same one on any number of threads, and
/// names what the book holds for it.
#[test]
fn a_widely_altered_level_is_found_by_sample() {
    let bytes = compact_book(7);
    let book = OwareBook::from_bytes(bytes.clone()).unwrap();
    let level = 7;
    let wrong = OwareBook::from_bytes(last_changes_dropped(&bytes, level)).unwrap();
    let draw = |threads| sample_on(threads, &wrong, 5_000, 7, 11);
    let Err(SampleError::Mismatch(mismatch)) = draw(1) else {
        panic!("a level of wrong values passed a sample of 5,000");
    };
    assert_eq!(mismatch.board.seeds(), 7, "{mismatch}");
    assert_ne!(mismatch.stored, mismatch.recomputed);
    assert_eq!(
        wrong.value(&mismatch.board, mismatch.turns_left).unwrap(),
        i32::from(mismatch.stored)
    );
    // The full check finds a wrong value too; the sound book passes.
    assert!(verify(&wrong, |_| {}).is_err());
    assert!(verify_sample(&book, 5_000, 7, 11, |_| {}).is_ok());
    let Err(SampleError::Mismatch(again)) = draw(3) else {
        panic!("another draw on 3 threads");
    };
    assert_eq!(again, mismatch);
}

/// `oware verify --sample` passes a sound book (exit 0, saying it was a
/// sample), names a wrong value drawn from a widely altered level (exit 1),
/// and its options stand only with `--sample`.
#[cfg(feature = "cli")] // (the binary is built with it)
#[test]
fn the_command_line_verifies_by_sample() {
    use common::{endbook, text};
    let dir = tempfile::tempdir().unwrap();
    let bytes = compact_book(6);
    let sound = dir.path().join("sound.book");
    std::fs::write(&sound, &bytes).unwrap();
    let sound = sound.to_str().unwrap();
    let out = endbook(&["oware", "verify", "--book", sound, "--sample", "2000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "the values of 2,000 draws from levels 0-6 (draw seed 1) each follow from their board's moves"
        ) && text(&out.stdout).contains("a sample, not a proof"),
        "{}",
        text(&out.stdout)
    );
    let path = dir.path().join("wrong.book");
    std::fs::write(&path, last_changes_dropped(&bytes, 6)).unwrap();
    let path = path.to_str().unwrap();
    let args = [
        "oware",
        "verify",
        "--book",
        path,
        "--sample",
        "3000",
        "--min-seeds",
        "6",
    ];
    let out = endbook(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("wrong.book holds a wrong value: board"),
        "{}",
        text(&out.stderr)
    );
    // A malformed record (the first of level 2 said to run for 127 bytes,
    // the checksums made to match): the frame opens for lookups, and the
    // lookups that read it say the book is corrupt (exit 2, not a value).
    let tiny = compact_book(2);
    let (params, mut sections) = sections_of(tiny);
    let records = compact::table_len(78);
    sections[2].1[records] = 0x7f;
    let corrupt = dir.path().join("corrupt.book");
    std::fs::write(&corrupt, rebuilt(&params, &sections)).unwrap();
    let out = endbook(&[
        "oware",
        "verify",
        "--book",
        corrupt.to_str().unwrap(),
        "--sample",
        "20000",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is corrupt: level 2: "),
        "{}",
        text(&out.stderr)
    );
    for refused in [
        &["--min-seeds", "3"][..],
        &["--draw-seed", "3"],
        &["--sample", "10", "--seed", "3"],
        &["--sample", "10", "--memory-limit", "1G"],
        &["--sample", "10", "--min-seeds", "7"],
        &["--sample", "0"],
    ] {
        let out = endbook(&[&["oware", "verify", "--book", sound][..], refused].concat());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{refused:?}: {}",
            text(&out.stderr)
        );
    }
}

/// One value of a small book made higher, or lower, than its moves give (the
/// checksums made to match) is found by a sample that covers the book's
/// pairs many times over, in either direction, the same first wrong value
/// on 1, 3 and 8 threads.
#[test]
fn a_single_value_too_high_or_too_low_is_found_by_a_large_sample() {
    let bytes = compact_book(4);
    let book = OwareBook::from_bytes(bytes.clone()).unwrap();
    let (level, last_change) = (4, book.levels()[4].last_change);
    let boards = board_changes(&book, level);
    for step in [1i8, -1] {
        // The first board whose first change can move by `step` and stay a
        // change, within the level's bound.
        let (board, moved) = (0..boards.len())
            .find_map(|b| {
                let list = &boards[b];
                let moved = list.first()?.1 + step;
                let next = list.get(1).map_or(i8::MAX, |c| c.1);
                (moved != 0 && moved.abs() <= 4 && moved != next).then_some((b, moved))
            })
            .expect("a board to alter");
        let mut changed = boards.clone();
        changed[board][0].1 = moved;
        let wrong = altered(&bytes, level, &changed, last_change);
        let draw = |threads| sample_on(threads, &wrong, 300_000, 0, 9);
        let Err(SampleError::Mismatch(mismatch)) = draw(1) else {
            panic!("a value off by {step} passed a sample of 300,000");
        };
        assert_ne!(mismatch.stored, mismatch.recomputed);
        assert_eq!(
            wrong.value(&mismatch.board, mismatch.turns_left).unwrap(),
            i32::from(mismatch.stored)
        );
        for threads in [3, 8] {
            let Err(SampleError::Mismatch(again)) = draw(threads) else {
                panic!("another draw on {threads} threads");
            };
            assert_eq!(again, mismatch, "off by {step}, {threads} threads");
        }
    }
    assert!(verify_sample(&book, 300_000, 0, 9, |_| {}).is_ok());
}

/// `scored_moves` refuses what `value` refuses: a board past the book's
/// seeds, turns left outside 1 to the limit.
#[test]
fn scored_moves_refuses_what_a_lookup_refuses() {
    let book = OwareBook::from_generated(&generate(GenerateOptions::new(4), |_| {}));
    let board: endbook::games::oware::Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
    let moves = book.scored_moves(&board, 200).unwrap();
    assert_eq!(
        moves.iter().map(|m| m.score).max(),
        Some(book.value(&board, 200).unwrap())
    );
    let heavy: endbook::games::oware::Board = "0 0 0 0 0 5 0 0 0 0 0 0".parse().unwrap();
    for (board, turns) in [(heavy, 10), (board, 0), (board, 201)] {
        assert_eq!(
            book.scored_moves(&board, turns).unwrap_err().to_string(),
            book.value(&board, turns).unwrap_err().to_string()
        );
    }
}
