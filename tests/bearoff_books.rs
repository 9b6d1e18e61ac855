//! Bear-off books: the 16-bit encoding's stated precision, round trips through
//! memory and files, and rejection of corrupt or foreign files.

mod common;

use common::Rng;
use endbook::book::{self, BookError, SectionData};
use endbook::games::bearoff::book::{
    decode_equity, decode_probability, encode_equity, encode_fixed, encode_probability, GAME_TAG,
};
use endbook::games::bearoff::{
    generate, BearoffBook, Entry, GenerateOptions, Kernel, Lookup, OptionsError, ProbeError,
    RuleBreak, Side, Universe, MAX_CHECKERS, ONE,
};

/// Checker counts no table is made of are refused by `check` and by
/// `generate`, before any work; the bounds themselves pass `check`.
#[test]
fn generating_checker_counts_outside_the_tables_is_refused() {
    for checkers in [0, MAX_CHECKERS + 1] {
        let options = GenerateOptions::new(checkers, false);
        let message = format!("{checkers} checkers: generate takes 1 to 15 per side");
        assert_eq!(options.check(), Err(OptionsError::Checkers(checkers)));
        assert_eq!(OptionsError::Checkers(checkers).to_string(), message);
        let outcome = std::panic::catch_unwind(|| generate(options, |_| {}));
        let error = outcome.expect_err("no table");
        assert_eq!(*error.downcast::<String>().unwrap(), message);
    }
    for checkers in [1, MAX_CHECKERS] {
        assert_eq!(GenerateOptions::new(checkers, true).check(), Ok(()));
    }
}

/// Largest error of a decoded probability, as the book module states.
const PROBABILITY_PRECISION: f64 = 0.5 / 65535.0;
/// Largest error of a decoded equity.
const EQUITY_PRECISION: f64 = 1.0 / 65535.0;

#[test]
fn sixteen_bit_codes_are_within_the_stated_precision() {
    assert_eq!(encode_fixed(ONE), 65535);
    assert_eq!(encode_fixed(0), 0);
    assert_eq!(encode_probability(1.0), 65535);
    assert_eq!(encode_equity(-1.0), 0);
    assert_eq!(encode_equity(1.0), 65535);
    let mut rng = Rng(16);
    for _ in 0..100_000 {
        let v = rng.next() as u32;
        let exact = f64::from(v) / f64::from(ONE);
        let error = (decode_probability(encode_fixed(v)) - exact).abs();
        assert!(error <= PROBABILITY_PRECISION + 1e-15, "{v}: {error:e}");
        let p = rng.below(1 << 53) as f64 / (1u64 << 53) as f64;
        assert!(
            (decode_probability(encode_probability(p)) - p).abs() <= PROBABILITY_PRECISION + 1e-15
        );
        let e = 2.0 * p - 1.0;
        assert!((decode_equity(encode_equity(e)) - e).abs() <= EQUITY_PRECISION + 1e-15);
    }
}

/// Every side with at most `max` checkers: C(max + 6, 6) of them.
fn sides(max: usize) -> Vec<Side> {
    let universe = Universe::full_layout(max);
    let sides: Vec<Side> = (0..universe.slots())
        .filter_map(|s| universe.side(s))
        .collect();
    let expected = (1..=6).fold(1, |c, k| c * (max + k) / k);
    assert_eq!(sides.len(), expected, "sides of up to {max} checkers");
    sides
}

#[test]
fn books_hold_every_pair_within_the_stated_precision() {
    for (checkers, cube) in [(4, true), (5, false)] {
        let full = generate(GenerateOptions::new(checkers, cube), |_| {});
        let book = BearoffBook::from_bytes(
            generate(GenerateOptions::new(checkers, cube), |_| {}).into_book_bytes(),
        )
        .unwrap();
        assert_eq!(book.checkers(), checkers);
        assert_eq!(book.has_cube(), cube);
        let sides = sides(checkers);
        let (mut worst_win, mut worst_equity) = (0.0f64, 0.0f64);
        for x in &sides {
            for o in &sides {
                let (exact, stored) = (full.entry(x, o).unwrap(), book.entry(x, o).unwrap());
                worst_win = worst_win.max(common::error(exact.win, stored.win));
                if let (Some(e), Some(s)) = (exact.cube, stored.cube) {
                    for (a, b) in [
                        (e.owned, s.owned),
                        (e.centred, s.centred),
                        (e.opponent_owns, s.opponent_owns),
                    ] {
                        worst_equity = worst_equity.max(common::error(a, b));
                    }
                } else {
                    assert!(!cube, "a cubeful book without equities");
                    assert!(exact.cube.is_none() && stored.cube.is_none());
                }
            }
        }
        eprintln!("{checkers} checkers, cube {cube}: largest book error P(win) {worst_win:.2e}, equities {worst_equity:.2e}");
        assert!(worst_win <= PROBABILITY_PRECISION + 1e-12);
        assert!(worst_equity <= EQUITY_PRECISION + 1e-12);
    }
}

#[test]
fn files_round_trip_and_sides_beyond_the_book_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("three.book");
    generate(GenerateOptions::new(3, true), |_| {})
        .write(&path)
        .unwrap();
    assert!(!book::temporary_path(&path).exists());
    // The file holds the bytes of the book built in memory.
    let bytes = generate(GenerateOptions::new(3, true), |_| {}).into_book_bytes();
    assert!(std::fs::read(&path).unwrap() == bytes);
    let from_file = BearoffBook::open(&path).unwrap();
    let in_memory = BearoffBook::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    for x in sides(3) {
        for o in sides(3) {
            assert_eq!(from_file.entry(&x, &o), in_memory.entry(&x, &o));
        }
    }
    let four: Side = "0 0 0 0 0 4".parse().unwrap();
    assert!(matches!(
        from_file.entry(&four, &Side::EMPTY),
        Err(ProbeError::NotCovered {
            checkers: 4,
            max: 3,
            ..
        })
    ));
}

#[test]
fn corrupt_truncated_and_foreign_files_are_rejected() {
    let bytes = generate(GenerateOptions::new(2, false), |_| {}).into_book_bytes();
    assert!(BearoffBook::from_bytes(bytes.clone()).is_ok());

    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert!(matches!(
        BearoffBook::from_bytes(flipped),
        Err(BookError::ChecksumMismatch { .. })
    ));

    let truncated = bytes[..bytes.len() - 10].to_vec();
    assert!(matches!(
        BearoffBook::from_bytes(truncated),
        Err(BookError::Truncated { .. })
    ));

    let mut foreign = bytes.clone();
    foreign[12..16].copy_from_slice(b"OWAR");
    assert!(matches!(
        BearoffBook::from_bytes(foreign),
        Err(BookError::WrongGame { .. })
    ));

    assert!(matches!(
        BearoffBook::from_bytes(b"not a book".to_vec()),
        Err(BookError::NotABook { .. })
    ));

    // Well-formed containers whose parameters or section do not fit.
    // One checker: 7 sides, one per pip class 0..=6, each class padded to 8 slots.
    let slots = Universe::full_layout(1).slots() as u64;
    assert_eq!(slots, 7 * 8);
    let section = vec![0u8; (2 * slots * slots) as usize];
    let fits = vec![1, 0, slots, 1, 1];
    // No checker: the empty side alone, padded to 8 slots, its section sized
    // to fit.
    let empty_slots = Universe::full_layout(0).slots() as u64;
    assert_eq!(empty_slots, 8);
    let cases: [(&str, Vec<u64>, usize, [u64; 2]); 8] = [
        ("parameters", vec![1, 0, slots, 1], section.len(), [0, 0]),
        ("checkers", vec![16, 0, slots, 1, 1], section.len(), [0, 0]),
        (
            "no checkers",
            vec![0, 0, empty_slots, 1, 1],
            (2 * empty_slots * empty_slots) as usize,
            [0, 0],
        ),
        ("encoding", vec![1, 0, slots, 7, 1], section.len(), [0, 0]),
        ("values", vec![1, 1, slots, 1, 1], section.len(), [0, 0]),
        ("section length", fits.clone(), section.len() - 2, [0, 0]),
        ("section field 0", fits.clone(), section.len(), [1, 0]),
        (
            "section field 1",
            fits.clone(),
            section.len(),
            [0, u64::MAX],
        ),
    ];
    let fitting = book::to_bytes(
        GAME_TAG,
        &fits,
        &[SectionData {
            meta: [0, 0],
            bytes: &section,
        }],
    );
    assert!(BearoffBook::from_bytes(fitting).is_ok(), "the control");
    for (what, params, len, meta) in cases {
        let bytes = book::to_bytes(
            GAME_TAG,
            &params,
            &[SectionData {
                meta,
                bytes: &section[..len],
            }],
        );
        assert!(
            matches!(
                BearoffBook::from_bytes(bytes),
                Err(BookError::Corrupt { .. })
            ),
            "{what}"
        );
    }
}

/// A bear-off table written to a path of any type, opened, and each of the
/// game's values printed as a summary with `{:?}`.
#[test]
fn bearoff_books_take_any_path_and_print_a_summary() {
    use endbook::games::bearoff::{Evaluation, Kernel, Plan};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2.book");
    let generated = generate(GenerateOptions::new(2, true), |_| {});
    assert!(
        format!("{generated:?}").contains("Cubeful("),
        "{generated:?}"
    );
    generated.write(path.to_str().unwrap()).unwrap();
    let book = BearoffBook::open(&path).unwrap();
    assert!(format!("{book:?}").contains("checkers: 2"), "{book:?}");
    let (x, o): (Side, Side) = (
        "0 1 0 0 0 1".parse().unwrap(),
        "1 0 0 0 0 0".parse().unwrap(),
    );
    let plan = Plan::new(&x, &o);
    let pairs = format!("pairs: {}", plan.pairs());
    assert!(format!("{plan:?}").contains(&pairs), "{plan:?}");
    let kernel = Kernel::scalar();
    let first = plan.sides().0.len();
    let evaluation = Evaluation::solve(plan, true, kernel, |_| {});
    let positions = format!("first: Universe {{ positions: {first}");
    assert!(
        format!("{evaluation:?}").contains(&positions),
        "{evaluation:?}"
    );
}

/// `verify` passes the books the generator writes, and names the first
/// code of an altered book (checksums recomputed, so it opens) that the
/// generator does not give: a pair's value by its sides, or a padding
/// slot's.
#[test]
fn verify_names_the_first_value_the_generator_does_not_give() {
    use endbook::book::Container;
    for cube in [false, true] {
        let bytes = generate(GenerateOptions::new(3, cube), |_| {}).into_book_bytes();
        let book = BearoffBook::from_bytes(bytes.clone()).unwrap();
        let slots = Universe::full_layout(3).slots() as u64;
        assert_eq!(book.verify(Kernel::scalar(), |_| {}), Ok(slots * slots));
        let container = Container::from_bytes("sound", bytes.clone(), GAME_TAG).unwrap();
        let section = container.section(0).to_vec();
        // One code in the middle of the table, and the last, in the last
        // slot: padding (each pip class is padded to whole vectors).
        let middle = (section.len() / 2) & !1;
        for at in [middle, section.len() - 2] {
            let mut altered = section.clone();
            altered[at] ^= 0x40;
            let wrong = rewritten(&bytes, &altered);
            let mismatch = wrong.verify(Kernel::scalar(), |_| {}).unwrap_err();
            assert_ne!(mismatch.stored, mismatch.generated);
            match mismatch.sides {
                Some((mover, opponent)) => {
                    assert_eq!(at, middle, "{mismatch}");
                    let entry = wrong.entry(&mover, &opponent).unwrap();
                    let stored = value_named(&entry, mismatch.value);
                    assert_eq!(stored, mismatch.stored, "{mismatch}");
                    assert!(mismatch.to_string().starts_with(&format!(
                        "{mover} against {opponent}: the book holds {}",
                        mismatch.value
                    )));
                }
                None => {
                    assert_eq!(at, section.len() - 2, "{mismatch}");
                    assert_eq!(mismatch.slots, (slots as usize - 1, slots as usize - 1));
                }
            }
        }
    }
}

/// The names `verify_rules` gives a pair's values, in the table's order.
const VALUE_NAMES: [&str; 4] = [
    "P(win)",
    "the equity with the cube owned",
    "the equity with the cube centred",
    "the equity with the cube owned by the opponent",
];

/// The value of `entry` that `verify` and `verify_rules` call `name`.
fn value_named(entry: &Entry, name: &str) -> f64 {
    let cube = || entry.cube.expect("a cubeful entry");
    match VALUE_NAMES.iter().position(|&named| named == name) {
        Some(0) => entry.win,
        Some(1) => cube().owned,
        Some(2) => cube().centred,
        Some(3) => cube().opponent_owns,
        _ => panic!("no value is named {name:?}"),
    }
}

/// A book with `section` for its table, its checksums recomputed.
fn rewritten(bytes: &[u8], section: &[u8]) -> BearoffBook {
    use endbook::book::Container;
    let container = Container::from_bytes("sound", bytes.to_vec(), GAME_TAG).unwrap();
    let bytes = book::to_bytes(
        GAME_TAG,
        container.params(),
        &[SectionData {
            meta: [0, 0],
            bytes: section,
        }],
    );
    BearoffBook::from_bytes(bytes).expect("it opens")
}

/// A generated book and what tests altering it need.
struct Sound {
    bytes: Vec<u8>,
    book: BearoffBook,
    /// Its layout.
    universe: Universe,
    /// Values per pair: 4 with the cube, 1 without.
    values: usize,
    /// Its table's bytes.
    section: Vec<u8>,
}

impl Sound {
    fn generate(checkers: usize, cube: bool) -> Sound {
        use endbook::book::Container;
        let bytes = generate(GenerateOptions::new(checkers, cube), |_| {}).into_book_bytes();
        let section = Container::from_bytes("sound", bytes.clone(), GAME_TAG)
            .unwrap()
            .section(0)
            .to_vec();
        Sound {
            book: BearoffBook::from_bytes(bytes.clone()).unwrap(),
            bytes,
            universe: Universe::full_layout(checkers),
            values: if cube { 4 } else { 1 },
            section,
        }
    }
}

/// `broken` is past its tolerance, at the pair `x` against `o` whose code
/// was altered or at a pair that reads it one roll ahead.
fn assert_breaks_at(broken: &RuleBreak, x: Side, o: Side) {
    use endbook::games::bearoff::{results, ROLLS};
    assert!(
        (broken.stored - broken.recomputed).abs() > broken.tolerance,
        "{broken}"
    );
    let is_the_pair = (broken.mover, broken.opponent) == (x, o);
    let reads_it = broken.opponent == x
        && ROLLS
            .iter()
            .any(|&roll| results(&broken.mover, roll).contains(&o));
    assert!(is_the_pair || reads_it, "{x} against {o}: {broken}");
}

/// `verify_rules` passes generated books, every pair checked and every
/// difference within its tolerance, and those differences not all zero
/// (the codes' rounding is what the tolerance is for); at 6 checkers with
/// the cube, each tolerance is within half a unit of 1/65535 of the largest
/// difference seen, so none is looser than the codes need.
#[test]
fn generated_books_follow_from_their_rolls() {
    use endbook::games::bearoff::verify::tolerance;
    for (checkers, cube) in [(1, false), (4, false), (4, true), (6, true)] {
        let book = BearoffBook::from_bytes(
            generate(GenerateOptions::new(checkers, cube), |_| {}).into_book_bytes(),
        )
        .unwrap();
        let mut reported = (0, 0);
        let checked = book
            .verify_rules(|done, pairs| reported = (done, pairs))
            .unwrap();
        let positions = book.positions() as u64;
        assert_eq!(checked.pairs, positions * positions);
        assert_eq!(reported, (checked.pairs, checked.pairs));
        let values = if cube { 4 } else { 1 };
        for (k, largest) in checked.largest.iter().enumerate() {
            if k < values {
                assert!(*largest <= tolerance(k), "{checkers} {cube} {k} {largest}");
                if checkers > 1 {
                    assert!(*largest > 0.0, "{checkers} {cube} {k}");
                }
                if checkers == 6 {
                    assert!(
                        *largest > tolerance(k) - 0.5 / 65535.0,
                        "{k}: {largest} against {}",
                        tolerance(k)
                    );
                }
            } else {
                assert_eq!(*largest, 0.0);
            }
        }
    }
}

/// A value moved by more than its tolerance (checksums recomputed) breaks
/// the rules where it is stored or where a pair reads it one roll ahead:
/// `verify_rules` names that pair, with the value the book answers for it.
#[test]
fn verify_rules_names_a_value_its_rolls_do_not_give() {
    use endbook::games::bearoff::solve::table_index;
    use endbook::games::bearoff::verify::tolerance;
    let mut rng = Rng(0xb0ff);
    for cube in [false, true] {
        let checkers = 4;
        let sound = Sound::generate(checkers, cube);
        let sides = sides(checkers);
        for _ in 0..12 {
            let x = sides[rng.below(sides.len() as u64) as usize];
            let o = sides[rng.below(sides.len() as u64) as usize];
            let k = rng.below(sound.values as u64) as usize;
            let (m, s) = (
                sound.universe.slot(&x).unwrap(),
                sound.universe.slot(&o).unwrap(),
            );
            let at = 2 * table_index(sound.universe.slots(), sound.values, m, s, k);
            let code = u16::from_le_bytes([sound.section[at], sound.section[at + 1]]);
            // The fewest code steps sure to break the pair's own rule: past
            // twice its tolerance (the stored code may already sit a
            // tolerance from its recomputation), so 3 steps of 1/65535 for
            // P(win) (tolerance 1/65535), 3 of 2/65535 for the owned equity
            // (2/65535), 4 of 2/65535 for the others (3/65535).
            let steps = if k <= 1 { 3 } else { 4 };
            let moved = if code >= 32768 {
                code - steps
            } else {
                code + steps
            };
            let mut section = sound.section.clone();
            section[at..at + 2].copy_from_slice(&moved.to_le_bytes());
            let altered = rewritten(&sound.bytes, &section);
            let broken = altered.verify_rules(|_, _| {}).unwrap_err();
            let named = VALUE_NAMES.iter().position(|&name| name == broken.value);
            assert_eq!(Some(broken.tolerance), named.map(tolerance), "{broken}");
            assert_breaks_at(&broken, x, o);
            let entry = altered.entry(&broken.mover, &broken.opponent).unwrap();
            assert_eq!(value_named(&entry, broken.value), broken.stored, "{broken}");
            assert!(broken.to_string().starts_with(&format!(
                "{} against {}: the book holds ",
                broken.mover, broken.opponent
            )));
        }
        // The book itself passes.
        assert!(sound.book.verify_rules(|_, _| {}).is_ok());
    }
}

/// A `P(win)` code set 1.5 to 2 steps of 1/65535 from what its rolls give
/// (the book's own values one roll ahead, recomputed here), past the
/// tolerance of 1 step but within twice it, is caught: a check that let
/// values drift to twice its tolerance would pass it.
#[test]
fn verify_rules_catches_a_code_just_past_its_tolerance() {
    use endbook::games::bearoff::verify::tolerance;
    use endbook::games::bearoff::{results, solve::table_index, ROLLS};
    let mut rng = Rng(0x70e5);
    let checkers = 4;
    for cube in [false, true] {
        let sound = Sound::generate(checkers, cube);
        let sides: Vec<Side> = sides(checkers)
            .into_iter()
            .filter(|side| !side.is_empty())
            .collect();
        for _ in 0..8 {
            let x = sides[rng.below(sides.len() as u64) as usize];
            let o = sides[rng.below(sides.len() as u64) as usize];
            // P(X, O) from the book's sound.values one roll ahead.
            let recomputed: f64 = ROLLS
                .iter()
                .map(|&roll| {
                    let after = results(&x, roll);
                    let value = if after.iter().any(Side::is_empty) {
                        1.0
                    } else {
                        let least = after
                            .iter()
                            .map(|x2| sound.book.entry(&o, x2).unwrap().win)
                            .fold(f64::INFINITY, f64::min);
                        1.0 - least
                    };
                    f64::from(roll.weight()) * value
                })
                .sum::<f64>()
                / 36.0;
            let units = recomputed * 65535.0;
            let nearest = units.round();
            let code = if units >= nearest {
                nearest + 2.0
            } else {
                nearest - 2.0
            };
            let off = (code - units).abs() / 65535.0;
            assert!(off > tolerance(0) && off <= 2.0 * tolerance(0), "{off}");
            let (m, s) = (
                sound.universe.slot(&x).unwrap(),
                sound.universe.slot(&o).unwrap(),
            );
            let at = 2 * table_index(sound.universe.slots(), sound.values, m, s, 0);
            let mut section = sound.section.clone();
            section[at..at + 2].copy_from_slice(&(code as u16).to_le_bytes());
            let broken = rewritten(&sound.bytes, &section)
                .verify_rules(|_, _| {})
                .expect_err("a code past its tolerance");
            assert_breaks_at(&broken, x, o);
            if (broken.mover, broken.opponent) == (x, o) {
                assert_eq!(broken.value, "P(win)");
                assert!((broken.recomputed - recomputed).abs() < 1e-9, "{broken}");
            }
        }
    }
}

/// A table every value of which is the same code, consistent with itself
/// but not with the game, breaks the rules at the first pair: the mover
/// with no checker left has won.
#[test]
fn verify_rules_rejects_a_table_of_one_value() {
    let bytes = generate(GenerateOptions::new(3, true), |_| {}).into_book_bytes();
    let section: Vec<u8> = {
        use endbook::book::Container;
        let len = Container::from_bytes("sound", bytes.clone(), GAME_TAG)
            .unwrap()
            .section(0)
            .len();
        32768u16.to_le_bytes().repeat(len / 2)
    };
    let broken = rewritten(&bytes, &section)
        .verify_rules(|_, _| {})
        .unwrap_err();
    assert!(broken.mover.is_empty(), "{broken}");
    assert_eq!(broken.recomputed, 1.0);
}

/// A book opened for lookups (6 checkers, cubeful: 6.9 MB, checked in
/// chunks of 64 KiB) answers every pair as a full open does; with a bit
/// flipped in its table, each lookup reading the damaged chunk fails as a
/// corrupt book naming the chunk's bytes, and every other answers as before.
/// `verify` refuses such a book.
#[test]
fn lookups_check_the_chunks_they_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("six.book");
    let bytes = generate(GenerateOptions::new(6, true), |_| {}).into_book_bytes();
    std::fs::write(&path, &bytes).unwrap();
    let full = BearoffBook::open(&path).unwrap();
    let lazy = BearoffBook::open_for_lookups(&path).unwrap();
    let sides = sides(6);
    for x in &sides {
        for o in sides.iter().step_by(5) {
            assert_eq!(lazy.entry(x, o), full.entry(x, o), "{x} / {o}");
        }
    }
    // The table is the one section: flip a bit in its middle.
    let section = book::Container::from_bytes("six", bytes.clone(), GAME_TAG)
        .unwrap()
        .sections()[0];
    assert_ne!(section.chunk_shift, 0, "a chunked table");
    let chunk = 1usize << section.chunk_shift;
    let at = section.len as usize / 2;
    let mut damaged = bytes;
    damaged[section.offset as usize + at] ^= 0x08;
    // Beside the sound book, which `full` maps (a file rewritten in place
    // would change what it reads).
    let path = dir.path().join("damaged.book");
    std::fs::write(&path, &damaged).unwrap();
    assert!(matches!(
        BearoffBook::open(&path),
        Err(BookError::ChecksumMismatch { .. })
    ));
    let lazy = BearoffBook::open_for_lookups(&path).unwrap();
    let named = format!(
        "bytes {}..{}",
        at / chunk * chunk,
        at / chunk * chunk + chunk
    );
    let (mut answered, mut refused) = (0, 0);
    for x in &sides {
        for o in &sides {
            match lazy.entry(x, o) {
                Ok(entry) => {
                    assert_eq!(Ok(entry), full.entry(x, o), "{x} / {o}");
                    answered += 1;
                }
                Err(ProbeError::Corrupt { path: p, reason }) => {
                    assert_eq!(p, path);
                    assert!(reason.contains(&named), "{reason}");
                    refused += 1;
                }
                Err(e) => panic!("{x} / {o}: {e}"),
            }
        }
    }
    assert!(
        refused > 0 && answered > 100 * refused,
        "{refused} refused, {answered} answered"
    );
}

/// `verify` reads the whole table: on a book opened for lookups it panics,
/// before generating anything (it generated the table first).
#[test]
#[should_panic(expected = "open it with BearoffBook::open to read it whole")]
fn verify_refuses_a_book_opened_for_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("three.book");
    let bytes = generate(GenerateOptions::new(3, false), |_| {}).into_book_bytes();
    std::fs::write(&path, bytes).unwrap();
    let book = BearoffBook::open_for_lookups(&path).unwrap();
    let _ = book.verify(Kernel::scalar(), |_| panic!("the table generated first"));
}

/// What a dry run says a book will take is the length of the book written,
/// header and checksums included (it said the values' bytes alone), and
/// what it says the working table takes is the generated table's size.
#[test]
fn book_bytes_are_the_length_of_the_book() {
    use endbook::games::bearoff::Table;
    for (checkers, cube) in [(1, false), (2, true), (3, false), (4, true)] {
        let options = GenerateOptions::new(checkers, cube);
        let generated = generate(options, |_| {});
        let table = match &generated.table {
            Table::Cubeless(values) => std::mem::size_of_val(values.as_slice()),
            Table::Cubeful(values) => std::mem::size_of_val(values.as_slice()),
        };
        assert_eq!(options.table_bytes(), table as u64, "{checkers} {cube}");
        let bytes = generated.into_book_bytes();
        assert_eq!(
            options.book_bytes(),
            bytes.len() as u64,
            "{checkers} checkers, cube {cube}"
        );
    }
}
