//! The compact encoding: exact round-trips, identical answers to the layer
//! encoding, and malformed sections refused even under valid checksums.

use endbook::book::compact::{self, Codec, Level};
use endbook::games::oware::{
    generate, Board, BoardIndex, Encoding, GenerateOptions, OwareBook, ProbeError,
};

mod common;
use common::{rebuilt, sections_of, Rng, Section};

/// Random change lists: turn 1 first (or not), ascending turns, each value
/// different from the one before, small and large jumps.
fn random_changes(rng: &mut Rng, boards: usize, last_change: u32) -> Vec<Vec<(u32, i8)>> {
    (0..boards)
        .map(|_| {
            let mut list = Vec::new();
            let mut value = 0i8;
            let mut turn = 0u32;
            // Some long records, for multi-byte lengths.
            let most = if rng.below(10) == 0 { 150 } else { 12 };
            let count = rng.below(most);
            for _ in 0..count {
                let step = if rng.below(8) == 0 {
                    1 + rng.below(40)
                } else {
                    1 + rng.below(4)
                };
                turn += step as u32;
                if turn > last_change {
                    break;
                }
                let mut new = value;
                while new == value {
                    new = if rng.below(6) == 0 {
                        rng.below(101) as i8 - 50
                    } else {
                        (value + rng.below(9) as i8 - 4).clamp(-60, 60)
                    };
                }
                list.push((turn, new));
                value = new;
            }
            list
        })
        .collect()
}

/// The value a change list gives with `turns` turns left.
fn replay(list: &[(u32, i8)], turns: u32) -> i8 {
    list.iter()
        .take_while(|&&(turn, _)| turn <= turns)
        .last()
        .map_or(0, |&(_, v)| v)
}

#[test]
fn encoding_round_trips_random_change_lists() {
    let mut rng = Rng(0x5eed);
    for (codec, boards) in [Codec::V1, Codec::V2]
        .into_iter()
        .flat_map(|codec| [1, 7, 8, 9, 100, 1000].map(|boards| (codec, boards)))
    {
        let last_change = 200;
        let lists = random_changes(&mut rng, boards, last_change);
        let section = compact::encode(codec, boards, |board| lists[board].clone());
        let (level, parsed_latest) =
            Level::parse(&section, codec, boards, last_change, 63).expect("a valid encoding");
        let latest = lists.iter().filter_map(|l| l.last()).map(|&(t, _)| t).max();
        assert_eq!(
            parsed_latest,
            latest.unwrap_or(0),
            "{codec:?}, {boards} boards"
        );
        let layers = level.layers(last_change);
        for (board, list) in lists.iter().enumerate() {
            for turns in 1..=last_change {
                let expected = replay(list, turns);
                assert_eq!(
                    level.value(board, turns),
                    expected,
                    "board {board}, {turns} turns"
                );
                assert_eq!(layers[(turns as usize - 1) * boards + board], expected);
            }
        }
        // A tighter last change than the data is refused.
        if let Some(latest) = latest.filter(|&t| t > 1) {
            assert!(Level::parse(&section, codec, boards, latest - 1, 63).is_err());
        }
        // A tighter bound than the data is refused.
        let widest = lists.iter().flatten().map(|&(_, v)| v.unsigned_abs()).max();
        if let Some(widest) = widest.filter(|&w| w > 0) {
            assert!(Level::parse(&section, codec, boards, last_change, widest as i8 - 1).is_err());
        }
    }
}

/// Replaying a window of layers at a time, over pieces of the boards, gives
/// every layer, whatever the windows and pieces.
#[test]
fn layers_replayed_window_by_window_are_every_layer() {
    let mut rng = Rng(0x3e91a);
    for codec in [Codec::V1, Codec::V2] {
        let (boards, last_change) = (203, 200);
        let lists = random_changes(&mut rng, boards, last_change);
        let section = compact::encode(codec, boards, |board| lists[board].clone());
        let (level, _) =
            Level::parse(&section, codec, boards, last_change, 63).expect("a valid encoding");
        for (window, piece) in [(1, 8), (3, 64), (7, 200), (64, 16), (220, 203)] {
            let mut resume = vec![compact::Resume::default(); boards];
            let mut first = 1;
            while first <= 220 {
                let rows = window.min(221 - first);
                let mut values = vec![0i8; rows as usize * boards];
                let mut start = 0;
                while start < boards {
                    let end = (start + piece).min(boards);
                    let mut pieces: Vec<&mut [i8]> = values
                        .chunks_mut(boards)
                        .map(|row| &mut row[start..end])
                        .collect();
                    level.replay(start..end, first, &mut pieces, &mut resume[start..end]);
                    start = end;
                }
                for (k, row) in values.chunks(boards).enumerate() {
                    let turns = first + k as u32;
                    for (board, &value) in row.iter().enumerate() {
                        assert_eq!(
                            value,
                            replay(&lists[board], turns),
                            "{codec:?}, windows of {window}, board {board}, {turns} turns"
                        );
                    }
                }
                first += rows;
            }
        }
    }
}

#[test]
fn chunks_encoded_into_reused_buffers_round_trip() {
    // More chunks than a wave of one thread: the later waves are encoded
    // into the buffers the first gave back.
    let boards = 6 * (1 << 18) + 5;
    let changes = |board: usize| match board % 97 {
        0 => vec![(1, 1), (3, -2), (40, 5)],
        13 => vec![(2, -1)],
        _ => Vec::new(),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for codec in [Codec::V1, Codec::V2] {
        let section = pool.install(|| compact::encode(codec, boards, changes));
        let (level, latest) =
            Level::parse(&section, codec, boards, 200, 63).expect("a valid encoding");
        assert_eq!(latest, 40);
        for board in (0..boards).step_by(13).chain(boards - 8..boards) {
            let list = changes(board);
            for turns in [1, 2, 3, 39, 40, 200] {
                assert_eq!(
                    level.value(board, turns),
                    replay(&list, turns),
                    "board {board}"
                );
            }
        }
    }
}

/// The section of one board's level with `changes`, in `codec`.
fn one_board(codec: Codec, changes: &[(u32, i8)]) -> Vec<u8> {
    let section = compact::encode(codec, 1, |_| changes.to_vec());
    Level::parse(&section, codec, 1, 255, 100).expect("a valid encoding");
    section
}

#[test]
fn version_2_spends_the_fewest_bytes_its_codes_allow() {
    // Offsets 0 and the record's length, then the record: length, body.
    let record = |body: &[u8]| {
        let mut section = [0u32.to_le_bytes(), (body.len() as u32 + 1).to_le_bytes()].concat();
        section.push(body.len() as u8);
        section.extend_from_slice(body);
        section
    };
    type Case<'a> = (&'a [(u32, i8)], &'a [u8]);
    let cases: [Case; 8] = [
        // Worth 0 throughout: an empty body.
        (&[], &[]),
        // One byte: 0b0ddttttt, d = 0..=3 for -2, -1, +1, +2, dt = t + 1.
        (&[(1, 2)], &[0x60]),
        (&[(1, -1), (33, -3)], &[0x20, 0x1f]),
        (&[(5, 1), (6, -1)], &[0x44, 0x00]),
        // Two bytes: a delay beyond 32 turns or a step beyond 2.
        (&[(34, 1)], &[0x81, 33]),
        (&[(1, 3), (2, -29)], &[0x83, 0, 0xa0, 0]),
        (&[(200, -32)], &[0xa0, 199]),
        // Three: a step beyond -32..=31.
        (&[(3, 40), (4, 39)], &[0xc0, 3, 40, 0x20]),
    ];
    for (changes, body) in cases {
        assert_eq!(one_board(Codec::V2, changes), record(body), "{changes:?}");
    }
    // Version 1 for comparison: the value at turn 1, then a byte per change.
    assert_eq!(one_board(Codec::V1, &[]), record(&[0]));
    assert_eq!(one_board(Codec::V1, &[(1, 2), (17, 9)]), record(&[2, 0xf7]));
    assert_eq!(
        one_board(Codec::V1, &[(2, 2), (20, 1)]),
        record(&[0, 0x02, 0xff, 18, 0xff])
    );
}

#[test]
fn compact_and_layer_books_answer_alike() {
    let generated = generate(GenerateOptions::new(10), |_| {});
    let compact = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    let version_1 =
        OwareBook::from_bytes(OwareBook::to_bytes_with(&generated, Encoding::ChangesV1)).unwrap();
    let layers =
        OwareBook::from_bytes(OwareBook::to_bytes_with(&generated, Encoding::Layers)).unwrap();
    assert_eq!(compact.encoding(), Encoding::Changes);
    assert_eq!(version_1.encoding(), Encoding::ChangesV1);
    assert_eq!(layers.encoding(), Encoding::Layers);
    assert!(
        compact.file_len() * 10 < layers.file_len(),
        "compact is far smaller"
    );
    assert!(
        compact.file_len() * 10 < version_1.file_len() * 9,
        "version 2 is smaller than version 1: {} and {} bytes",
        compact.file_len(),
        version_1.file_len()
    );
    let mut from_layers = Vec::new();
    layers.export_flat(200, &mut from_layers).unwrap();
    for book in [&compact, &version_1] {
        let mut flat = Vec::new();
        book.export_flat(200, &mut flat).unwrap();
        assert!(flat == from_layers, "flat exports differ");
        // A window of 1, 2, 3 or 7 layers at a time (a large book's export
        // takes several): each window's replay starts at its first layer.
        for window in [1, 2, 3, 7] {
            let mut windowed = Vec::new();
            let bytes = window * book.flat_len(1);
            book.export_flat_in_windows(200, bytes, &mut windowed)
                .unwrap();
            assert!(windowed == from_layers, "windows of {window} layers");
        }
        for seeds in 0..=10 {
            assert_eq!(book.level_stats(seeds), layers.level_stats(seeds));
        }
    }
    // Direct lookups, every board of two levels at a spread of turns.
    let index = BoardIndex::new(10);
    let start = index.level_starts()[7];
    for (board, _) in index
        .boards_from(start)
        .take(index.level_starts()[9] - start)
    {
        for turns in [1, 2, 5, 17, 64, 99, 145, 146, 200] {
            let expected = layers.value(&board, turns);
            assert_eq!(compact.value(&board, turns), expected);
            assert_eq!(version_1.value(&board, turns), expected);
        }
    }
}

/// A 3-seed book's params and sections in `encoding`, to tamper with.
fn parts(encoding: Encoding) -> (Vec<u64>, Vec<Section>) {
    let generated = generate(GenerateOptions::new(3), |_| {});
    sections_of(OwareBook::to_bytes_with(&generated, encoding))
}

/// The book in `encoding` with level `level`'s section replaced, checksums
/// recomputed.
fn with_section(encoding: Encoding, level: usize, section: Vec<u8>) -> Vec<u8> {
    let (params, mut sections) = parts(encoding);
    sections[level].1 = section;
    rebuilt(&params, &sections)
}

/// [`with_section`], the level's last change set to `last_change`.
fn with_level(encoding: Encoding, level: usize, section: Vec<u8>, last_change: u64) -> Vec<u8> {
    let (params, mut sections) = parts(encoding);
    sections[level] = ([sections[level].0[0], last_change], section);
    rebuilt(&params, &sections)
}

fn assert_corrupt(bytes: Vec<u8>, what: &str) {
    match OwareBook::from_bytes(bytes) {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => assert!(e.to_string().contains("corrupt"), "{what}: {e}"),
    }
}

#[test]
fn malformed_compact_sections_are_corrupt() {
    let level = 3;
    let boards = BoardIndex::level_size(3);
    let index_len = (boards.div_ceil(compact::BLOCK) + 1) * 4;
    for (encoding, codec) in [
        (Encoding::Changes, Codec::V2),
        (Encoding::ChangesV1, Codec::V1),
    ] {
        let (_, sections) = parts(encoding);
        let original = sections[level].1.clone();
        let records_len = original.len() - index_len;
        let tamper = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut section = original.clone();
            f(&mut section);
            with_section(encoding, level, section)
        };
        assert!(OwareBook::from_bytes(tamper(&|_| {})).is_ok(), "control");
        assert_corrupt(tamper(&|s| s.truncate(10)), "offsets cut short");
        assert_corrupt(tamper(&|s| s.truncate(s.len() - 1)), "records cut short");
        assert_corrupt(tamper(&|s| s.push(0)), "a byte after the records");
        assert_corrupt(tamper(&|s| s[0] = 1), "first offset not zero");
        assert_corrupt(
            tamper(&|s| {
                s[index_len - 4..index_len].copy_from_slice(&(records_len as u32 + 1).to_le_bytes())
            }),
            "last offset past the records",
        );
        assert_corrupt(
            tamper(&|s| s[4..8].copy_from_slice(&1u32.to_le_bytes())),
            "a block ends early",
        );
        assert_corrupt(tamper(&|s| s[index_len] = 0x80), "an unterminated length");
        assert_corrupt(
            tamper(&|s| s[index_len] = 100),
            "a record running past its block",
        );
        // Sections of the wrong level sizes.
        assert_corrupt(
            with_section(encoding, 2, sections[3].1.clone()),
            "level 3's section as level 2",
        );
        // A synthetic level where every board changes twice, to 1 at turn 1
        // and to 2 at turn 2 (its last change); then break the first
        // record's changes.
        let synthetic = compact::encode(codec, boards, |_| vec![(1, 1), (2, 2)]);
        let book =
            OwareBook::from_bytes(with_level(encoding, level, synthetic.clone(), 2)).unwrap();
        for board in [
            "3 0 0 0 0 0 0 0 0 0 0 0",
            "0 1 0 0 0 0 1 0 0 0 0 1",
            "0 0 0 0 0 0 0 0 0 0 0 3",
        ] {
            let board: Board = board.parse().unwrap();
            let values: Vec<i32> = [1, 2, 3, 200]
                .map(|t| book.value(&board, t).unwrap())
                .to_vec();
            assert_eq!(values, [1, 2, 2, 2], "{board} in the synthetic level");
        }
        // Well formed but not the game's values: a line of perfect play
        // finds no move reaching the value and says the book is corrupt.
        // The same where the player to move has no move (and the book says
        // 2, not their 3 seeds).
        for (board, why) in [
            ("0 0 0 0 0 1 1 1 0 0 0 0", "reaches its value 2"),
            ("3 0 0 0 0 0 0 0 0 0 0 0", "its value is its 3 seeds, not 2"),
        ] {
            let board: Board = board.parse().unwrap();
            match book.best_line(&board, 2) {
                Err(ProbeError::Corrupt {
                    seeds: 3, reason, ..
                }) => {
                    assert!(reason.contains(why), "{reason}")
                }
                other => panic!("{board}: {other:?}"),
            }
            // A probe's analysis checks the same.
            assert!(matches!(
                book.analyse(&board, 2),
                Err(ProbeError::Corrupt { reason, .. }) if reason.contains(why)
            ));
        }
        // And the other way: a move scoring more than the value (a capture
        // of 2 with 1 turn left, where the level says 1).
        let board: Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
        match book.analyse(&board, 1) {
            Err(ProbeError::Corrupt { reason, .. }) => assert!(
                reason.contains("scores 2, more than its value 1, with 1 turn left"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        let broken = |bytes: &[(usize, u8)]| {
            let mut section = synthetic.clone();
            for &(at, byte) in bytes {
                section[index_len + at] = byte;
            }
            with_level(encoding, level, section, 2)
        };
        assert!(OwareBook::from_bytes(broken(&[])).is_ok(), "control");
        match codec {
            // Records: [len 2][value 1][code 0x01].
            Codec::V1 => {
                assert_corrupt(broken(&[(0, 0)]), "an empty record");
                assert_corrupt(broken(&[(2, 0x00)]), "a change of zero");
                assert_corrupt(broken(&[(2, 0xff)]), "an escape cut short by its record");
                assert_corrupt(broken(&[(1, 0x80)]), "a value of -128");
                assert_corrupt(broken(&[(1, 4)]), "a value beyond the level's seeds");
            }
            // Records: [len 2][code 0x40][code 0x40].
            Codec::V2 => {
                assert_corrupt(broken(&[(1, 0xc1)]), "an unassigned code");
                assert_corrupt(broken(&[(2, 0xc0)]), "an escape cut short by its record");
                assert_corrupt(broken(&[(2, 0x80)]), "a long code cut short by its record");
                assert_corrupt(broken(&[(1, 0x80)]), "a long change of zero");
                assert_corrupt(
                    broken(&[(1, 0x84), (2, 0)]),
                    "a value beyond the level's seeds",
                );
                assert_corrupt(broken(&[(2, 0x5f)]), "a change after the last change");
                // Escapes need three bytes: every board changes to 1, 2
                // and 3 at turns 1 to 3, [len 3][0x40][0x40][0x40], and the
                // first record's codes become one escape.
                let three = compact::encode(codec, boards, |_| vec![(1, 1), (2, 2), (3, 3)]);
                let escaped = |dt: u8, dv: u8| {
                    let mut section = three.clone();
                    section[index_len + 1..index_len + 4].copy_from_slice(&[0xc0, dt, dv]);
                    with_level(encoding, level, section, 3)
                };
                // An escape of 1 turn and +1 reads as the short code would.
                let book = OwareBook::from_bytes(escaped(1, 1)).unwrap();
                let index = BoardIndex::new(3);
                let first = index.board(index.level_starts()[level]);
                assert_eq!([1, 3].map(|t| book.value(&first, t).unwrap()), [1, 1]);
                // One of no turns at all is refused when the book is opened,
                // and by the lookup that reads it in a book opened for
                // lookups (not left to a later read to trip over).
                assert_corrupt(escaped(0, 1), "an escape of zero turns");
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("escape.book");
                std::fs::write(&path, escaped(0, 1)).unwrap();
                let lazy = OwareBook::open_for_lookups(&path).unwrap();
                assert!(
                    matches!(
                        lazy.value(&first, 2),
                        Err(ProbeError::Corrupt { seeds: 3, .. })
                    ),
                    "an escape of zero turns, looked up"
                );
            }
        }
    }
}

/// The metadata a book's records imply: each level's last change is its
/// records' latest (1 where none changes), and a run that stopped before
/// the turn limit did so after a layer that changed nothing.
#[test]
fn metadata_the_records_contradict_is_corrupt() {
    for encoding in [Encoding::Changes, Encoding::ChangesV1, Encoding::Layers] {
        let (params, sections) = parts(encoding);
        let swept = params[3];
        assert!(
            params[1] == 200 && swept < 200,
            "the 3-seed book converges early"
        );
        assert!(OwareBook::from_bytes(rebuilt(&params, &sections)).is_ok());
        let what = |why: &str| format!("{encoding:?}: {why}");
        for level in 0..sections.len() {
            let last_change = sections[level].0[1];
            // One turn later than its records say (level 2: turn 11 for
            // 10). Where the section holds layers, the added one repeats
            // the last.
            let mut later = sections.clone();
            later[level].0[1] += 1;
            if encoding == Encoding::Layers {
                let states = later[level].0[0] as usize;
                let last = later[level].1[later[level].1.len() - states..].to_vec();
                later[level].1.extend_from_slice(&last);
            }
            let error = OwareBook::from_bytes(rebuilt(&params, &later)).err();
            let expected = format!(
                "last changes at turn {}, its values at turn {last_change}",
                last_change + 1
            );
            match error {
                Some(e) => assert!(e.to_string().contains(&expected), "{e}"),
                None => panic!("{}", what(&format!("level {level} one turn later"))),
            }
        }
        // Fewer layers swept, down to the last change of level 3: the
        // run would not have stopped there.
        let mut fewer = params.clone();
        fewer[3] = sections[3].0[1];
        match OwareBook::from_bytes(rebuilt(&fewer, &sections)) {
            Err(e) => assert!(
                e.to_string().contains("a run stops early only after"),
                "{e}"
            ),
            Ok(_) => panic!(
                "{}",
                what("the top level's last change as the last layer swept")
            ),
        }
        // Where it ran to the turn limit, a level may change at the last turn.
        let mut limit = fewer.clone();
        limit[1] = limit[3];
        assert!(OwareBook::from_bytes(rebuilt(&limit, &sections)).is_ok());
        // Turn limits past what a change byte spans, in a compact encoding.
        let mut beyond = params.clone();
        beyond[1] = 256;
        match (encoding, OwareBook::from_bytes(rebuilt(&beyond, &sections))) {
            (Encoding::Layers, result) => assert!(result.is_ok(), "{:?}", result.err()),
            (_, Err(e)) => assert!(e.to_string().contains("covers at most 255"), "{e}"),
            (_, Ok(_)) => panic!("{}", what("turn limit 256")),
        }
    }
}

#[test]
fn random_mutations_under_valid_checksums_never_panic() {
    let (_, sections) = parts(Encoding::Changes);
    let mut rng = Rng(42);
    let index = BoardIndex::new(3);
    let mut accepted = 0;
    for _ in 0..3000 {
        let level = 1 + rng.below(3) as usize;
        let mut section = sections[level].1.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(section.len() as u64) as usize;
            section[at] ^= 1 << rng.below(8);
        }
        // Either refused, or every lookup and export still works.
        if let Ok(book) = OwareBook::from_bytes(with_section(Encoding::Changes, level, section)) {
            accepted += 1;
            for (board, _) in index.boards_from(0) {
                for turns in [1, 2, 30, 200] {
                    book.value(&board, turns).unwrap();
                }
            }
            book.export_flat(50, &mut Vec::new()).unwrap();
        }
    }
    // Some flips land on values and stay well-formed: those are accepted
    // (and were looked up and exported above); the others are refused.
    assert!(accepted > 0 && accepted < 3000, "{accepted} accepted");
}

/// A book opened for lookups checks the records each lookup reads: where
/// `open` accepts the book, every lookup answers as on the fully checked
/// book; where `open` refuses it for a malformed record, some lookup says
/// so, and none panics.
#[test]
fn lookups_check_the_records_they_read_when_opened_for_lookups() {
    let (_, sections) = parts(Encoding::Changes);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutated.book");
    let mut rng = Rng(7);
    let index = BoardIndex::new(3);
    let (mut refused, mut accepted, mut inconsistent) = (0, 0, 0);
    for _ in 0..600 {
        let level = 1 + rng.below(3) as usize;
        let mut section = sections[level].1.clone();
        let at = rng.below(section.len() as u64) as usize;
        section[at] ^= 1 << rng.below(8);
        let bytes = with_section(Encoding::Changes, level, section);
        std::fs::write(&path, &bytes).unwrap();
        let full = OwareBook::from_bytes(bytes);
        // Opening for lookups reads the header alone: a bad frame too is
        // found by the lookups below, in its level.
        let lazy = OwareBook::open_for_lookups(&path).unwrap();
        let mut corrupt = 0;
        for (board, _) in index.boards_from(0) {
            for turns in [1, 2, 30, 200] {
                match (&full, lazy.analyse(&board, turns)) {
                    // Answers alike, both refusing a value no move makes
                    // (a flip that changed a value but left its record
                    // well formed).
                    (Ok(full), lazy) => match (full.analyse(&board, turns), lazy) {
                        (Ok(full), Ok(lazy)) => assert_eq!(lazy, full),
                        (
                            Err(ProbeError::Corrupt { reason: full, .. }),
                            Err(ProbeError::Corrupt { reason: lazy, .. }),
                        ) => {
                            assert_eq!(lazy, full);
                            inconsistent += 1;
                        }
                        (full, lazy) => panic!("{full:?} / {lazy:?} where open accepts the book"),
                    },
                    (Err(_), Ok(_)) => {}
                    (Err(_), Err(ProbeError::Corrupt { seeds, .. })) => {
                        assert_eq!(seeds as usize, level);
                        corrupt += 1;
                    }
                    (Err(_), Err(e)) => panic!("{e}"),
                }
            }
        }
        if full.is_err() {
            refused += 1;
            assert!(corrupt > 0, "open refuses the book, no lookup found why");
        } else {
            accepted += 1;
            assert_eq!(corrupt, 0);
        }
    }
    // Both sides of the comparison occur: books `open` refuses, and books
    // it accepts, whose lookups were compared one by one above.
    assert!(refused > 100, "{refused} refused");
    assert!(accepted > 0, "no mutated book was accepted");
    // Some accepted books hold values no move makes: analyses say so.
    assert!(inconsistent > 0, "no analysis found a value no move makes");
}

/// The whole-book readers need every record checked.
#[test]
#[should_panic(expected = "is for lookups")]
fn whole_book_readers_refuse_a_book_opened_for_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("3.book");
    let generated = generate(GenerateOptions::new(3), |_| {});
    OwareBook::write(&path, &generated).unwrap();
    let book = OwareBook::open_for_lookups(&path).unwrap();
    book.export_flat(1, &mut Vec::new()).unwrap();
}

#[test]
fn level_stats_agree_between_encodings() {
    let generated = generate(GenerateOptions::new(8), |_| {});
    let compact = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    let layers =
        OwareBook::from_bytes(OwareBook::to_bytes_with(&generated, Encoding::Layers)).unwrap();
    for seeds in 0..=8 {
        let stats = compact.level_stats(seeds);
        assert_eq!(stats, layers.level_stats(seeds), "level {seeds}");
        // Observed, the same, every board told done once (in stretches:
        // level 8's 75,582 boards in two).
        for book in [&compact, &layers] {
            let told = std::sync::Mutex::new(Vec::new());
            let observed =
                book.level_stats_observed(seeds, |boards| told.lock().unwrap().push(boards));
            assert_eq!(observed, stats);
            let told = told.into_inner().unwrap();
            assert_eq!(
                told.iter().sum::<u64>(),
                stats.level.states,
                "level {seeds}"
            );
            assert_eq!(told.len(), (stats.level.states as usize).div_ceil(1 << 16));
        }
        // Every board counted once; the changes are those the engine recorded.
        assert_eq!(stats.converged.iter().sum::<u64>(), stats.level.states);
        let (start, end) = (
            generated.solution.level_starts[seeds as usize],
            generated.solution.level_starts[seeds as usize + 1],
        );
        let recorded: usize = generated.solution.changes[1..]
            .iter()
            .map(|c| c.within(start, end).count())
            .sum();
        assert_eq!(stats.changes, recorded as u64, "level {seeds}");
    }
}

/// `encode_level` stores a level of any game the engine solved (here rings
/// of states, one a level) as `encode` does from each board's own changes,
/// read back value by value.
#[test]
fn any_solved_games_levels_encode_as_their_boards_changes() {
    use endbook::engine::{solve, MoveCache, Solution, SolveOptions, SweepMode};
    use endbook::kernels::KernelChoice;
    const TURNS: u32 = 40;
    // 64 states in 8 levels of 8, in a ring within each level: a move to
    // the next state of the ring scores -2 to 2 by the state, and one to
    // the same place a level down scores 3 (values then keep changing for
    // many turns).
    let states = 64;
    let cache = MoveCache::<2>::build(states, |range, emitter| {
        for n in range {
            let (level, place) = (n / 8, n % 8);
            let mut moves = vec![((level * 8 + (place + 1) % 8) as u32, (n * 7 % 5) as i8 - 2)];
            if level > 0 {
                moves.push(((n - 8) as u32, 3));
            }
            emitter.push(&moves, 0);
        }
    });
    let level_starts: Vec<usize> = (0..=states).step_by(8).collect();
    let options = SolveOptions {
        turn_limit: TURNS,
        kernel: KernelChoice::Auto,
        mode: SweepMode::Dense,
    };
    let solution = solve(&cache, &level_starts, Solution::empty(), options, |_| {});
    let changes: usize = solution.changes.iter().map(|turn| turn.len()).sum();
    assert!(changes > 4 * states, "{changes} changes: values that move");
    for codec in [Codec::V1, Codec::V2] {
        for (level, &start) in level_starts[..level_starts.len() - 1].iter().enumerate() {
            let changes = |board: usize| {
                let mut list = Vec::new();
                let mut value = 0;
                for turn in 1..=TURNS {
                    let now = solution.value(start + board, turn);
                    if now != value {
                        list.push((turn, now));
                    }
                    value = now;
                }
                list
            };
            let expected = compact::encode(codec, 8, changes);
            assert_eq!(
                compact::encode_level(codec, &solution, level),
                expected,
                "level {level}, {codec:?}"
            );
        }
    }
}

/// A level whose values change past turn 255 is refused by the encoders
/// (a change's turn is a byte): it had been encoded without a word, and
/// read back wrong.
#[test]
fn levels_changing_past_the_compact_turns_are_refused() {
    use endbook::engine::{solve, MoveCache, Solution, SolveOptions, SweepMode};
    use endbook::kernels::KernelChoice;
    // One state moving to itself, scoring 1: worth 1, 0, 1, 0, ...
    let cache = MoveCache::<1>::build(1, |range, emitter| {
        range.for_each(|_| emitter.push(&[(0, 1)], 0))
    });
    for turn_limit in [compact::MAX_TURNS, compact::MAX_TURNS + 1] {
        let options = SolveOptions {
            turn_limit,
            kernel: KernelChoice::Auto,
            mode: SweepMode::Dense,
        };
        let solution = solve(&cache, &[0, 1], Solution::empty(), options, |_| {});
        assert_eq!(solution.levels[0].last_change, turn_limit);
        let encoded = std::panic::catch_unwind(|| compact::encode_level(Codec::V2, &solution, 0));
        assert_eq!(
            encoded.is_ok(),
            turn_limit <= compact::MAX_TURNS,
            "{turn_limit} turns"
        );
    }
}

/// The message of the panic `f` ends in.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("a panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map_or_else(|_| "<not a string>".into(), |message| message.to_string()),
    }
}

/// Lists that break the encoder's rules are refused, whichever the codec,
/// not stored as some other list (a repeated value was stored as a change
/// by -1 before it was checked).
#[test]
fn lists_that_are_not_changes_are_refused() {
    let refused: [(&[(u32, i8)], &str); 8] = [
        (
            &[(1, 3), (5, 3), (9, 4)],
            "board 1: (turn 5, value 3) is not a change after (turn 1, value 3)",
        ),
        (
            &[(2, 0)],
            "board 1: (turn 2, value 0) is not a change after (turn 0, value 0)",
        ),
        (
            &[(1, 0), (2, 1)],
            "board 1: (turn 1, value 0) is not a change after (turn 0, value 0)",
        ),
        (
            &[(4, 1), (4, 2)],
            "board 1: (turn 4, value 2) is not a change after turn 4",
        ),
        (
            &[(4, 1), (3, 2)],
            "board 1: (turn 3, value 2) is not a change after turn 4",
        ),
        (
            &[(1, -128)],
            "board 1: value -128 at turn 1, outside -127..=127",
        ),
        (
            &[(7, 1), (256, 2)],
            "board 1: a change at turn 256, past the 255 turns",
        ),
        (&[(1, -100), (2, 100)], "a change of a value by at most 127"),
    ];
    for codec in [Codec::V1, Codec::V2] {
        for (list, expected) in refused {
            let message = panic_message(|| {
                compact::encode(codec, 3, |board| {
                    if board == 1 {
                        list.to_vec()
                    } else {
                        Vec::new()
                    }
                });
            });
            assert!(
                message.contains(expected),
                "{codec:?} {list:?}: {message:?}"
            );
        }
        // A reader giving a board's turns out of order, as `encode`'s
        // own cannot.
        struct Backwards(bool);
        impl compact::TurnOrder for Backwards {
            fn take_below(&mut self, _: usize, mut f: impl FnMut(u32, usize, i8)) {
                if !std::mem::replace(&mut self.0, true) {
                    f(5, 1, 1);
                    f(3, 1, 2);
                }
            }
        }
        let message = panic_message(|| {
            let buffers = compact::Buffers::default();
            let streaming = compact::Streaming::new(codec, 3);
            compact::encode_streaming(streaming, |_| Backwards(false), &buffers, |_| {});
        });
        assert!(
            message.contains("board 1: (turn 3, value 2) is not a change after (turn 5, value 1)"),
            "{codec:?}: {message:?}"
        );
        // Their neighbours in bounds are encoded and read back.
        for list in [
            &[(1, 3), (5, 2), (9, 4)][..],
            &[(1, -127), (2, 0), (255, 127)],
            &[(1, -100), (2, 27)],
        ] {
            let section = compact::encode(codec, 1, |_| list.to_vec());
            let (level, _) = Level::parse(&section, codec, 1, 255, 127).expect("a valid encoding");
            for turns in 1..=255 {
                assert_eq!(level.value(0, turns), replay(list, turns), "{list:?}");
            }
        }
    }
}

/// A replay of no layers reads nothing: the next picks up where it would
/// have (a V1 record's value with 1 turn left was lost before).
#[test]
fn replaying_no_layers_leaves_the_records_unread() {
    let mut rng = Rng(0x0e4a);
    for codec in [Codec::V1, Codec::V2] {
        let boards = 40;
        let mut lists = random_changes(&mut rng, boards, 200);
        lists[0] = vec![(1, 5), (3, 7)];
        let section = compact::encode(codec, boards, |board| lists[board].clone());
        let (level, _) = Level::parse(&section, codec, boards, 200, 63).expect("a valid encoding");
        let mut resume = vec![compact::Resume::default(); boards];
        let mut values = vec![0i8; 3 * boards];
        let mut first = 1;
        for rows in [0, 3, 0, 0, 3] {
            let mut window: Vec<&mut [i8]> = values[..rows * boards].chunks_mut(boards).collect();
            level.replay(0..boards, first, &mut window, &mut resume);
            for (k, row) in values[..rows * boards].chunks(boards).enumerate() {
                let turns = first + k as u32;
                for (board, &value) in row.iter().enumerate() {
                    assert_eq!(
                        value,
                        replay(&lists[board], turns),
                        "{codec:?}, board {board}, {turns} turns"
                    );
                }
            }
            first += rows as u32;
        }
    }
}
