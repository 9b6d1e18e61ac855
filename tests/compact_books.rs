//! The compact encoding: exact round-trips, identical answers to the layer
//! encoding, and malformed sections refused even under valid checksums.

use endbook::book::{self, Container, SectionData};
use endbook::games::oware::book::GAME_TAG;
use endbook::games::oware::compact::{self, Level};
use endbook::games::oware::{generate, BoardIndex, Encoding, GenerateOptions, OwareBook};

mod common;
use common::Rng;

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
    for boards in [1, 7, 8, 9, 100, 1000] {
        let last_change = 200;
        let lists = random_changes(&mut rng, boards, last_change);
        let section = compact::encode(boards, |board| lists[board].clone());
        let level = Level::parse(&section, boards, last_change, 63).expect("a valid encoding");
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
        let latest = lists.iter().filter_map(|l| l.last()).map(|&(t, _)| t).max();
        if let Some(latest) = latest.filter(|&t| t > 1) {
            assert!(Level::parse(&section, boards, latest - 1, 63).is_err());
        }
        // A tighter bound than the data is refused.
        let widest = lists.iter().flatten().map(|&(_, v)| v.unsigned_abs()).max();
        if let Some(widest) = widest.filter(|&w| w > 0) {
            assert!(Level::parse(&section, boards, last_change, widest as i8 - 1).is_err());
        }
    }
}

#[test]
fn compact_and_layer_books_answer_alike() {
    let generated = generate(GenerateOptions::new(10), |_| {});
    let compact = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    let layers =
        OwareBook::from_bytes(OwareBook::to_bytes_with(&generated, Encoding::Layers)).unwrap();
    assert_eq!(compact.encoding(), Encoding::Changes);
    assert_eq!(layers.encoding(), Encoding::Layers);
    assert!(
        compact.file_len() * 10 < layers.file_len(),
        "compact is far smaller"
    );
    let (mut from_compact, mut from_layers) = (Vec::new(), Vec::new());
    compact.export_flat(200, &mut from_compact).unwrap();
    layers.export_flat(200, &mut from_layers).unwrap();
    assert!(from_compact == from_layers, "flat exports differ");
    // Direct lookups, every board of two levels at a spread of turns.
    let index = BoardIndex::new(10);
    let start = index.level_starts()[7];
    for (board, _) in index
        .boards_from(start)
        .take(index.level_starts()[9] - start)
    {
        for turns in [1, 2, 5, 17, 64, 99, 145, 146, 200] {
            assert_eq!(compact.value(&board, turns), layers.value(&board, turns));
        }
    }
}

/// A section's meta numbers and bytes.
type Section = ([u64; 2], Vec<u8>);

/// A 3-seed compact book's params and sections, to tamper with.
fn parts() -> (Vec<u64>, Vec<Section>) {
    let bytes = OwareBook::to_bytes(&generate(GenerateOptions::new(3), |_| {}));
    let container = Container::from_bytes("parts", bytes, GAME_TAG).unwrap();
    let sections = (0..container.sections().len())
        .map(|i| (container.sections()[i].meta, container.section(i).to_vec()))
        .collect();
    (container.params().to_vec(), sections)
}

/// The book with level `level`'s section replaced, checksums recomputed.
fn with_section(level: usize, section: Vec<u8>) -> Vec<u8> {
    let (params, mut sections) = parts();
    sections[level].1 = section;
    let data: Vec<SectionData<'_>> = sections
        .iter()
        .map(|(meta, bytes)| SectionData { meta: *meta, bytes })
        .collect();
    book::to_bytes(GAME_TAG, &params, &data)
}

fn assert_corrupt(bytes: Vec<u8>, what: &str) {
    match OwareBook::from_bytes(bytes) {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => assert!(e.to_string().contains("corrupt"), "{what}: {e}"),
    }
}

#[test]
fn malformed_compact_sections_are_corrupt() {
    let (_, sections) = parts();
    let level = 3;
    let original = sections[level].1.clone();
    let boards = BoardIndex::level_size(3);
    let index_len = (boards.div_ceil(compact::BLOCK) + 1) * 4;
    let records_len = original.len() - index_len;
    let tamper = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut section = original.clone();
        f(&mut section);
        with_section(level, section)
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
    assert_corrupt(tamper(&|s| s[index_len] = 0), "an empty first record");
    assert_corrupt(tamper(&|s| s[index_len] = 0x80), "an unterminated length");
    // A synthetic level where every board changes once, at turn 2: records
    // are [len 2][value 1][code 0x01]. Then break the first record's change.
    let synthetic = compact::encode(boards, |_| vec![(1, 1), (2, 2)]);
    assert!(OwareBook::from_bytes(with_section(level, synthetic.clone())).is_ok());
    let broken = |at: usize, byte: u8| {
        let mut section = synthetic.clone();
        section[index_len + at] = byte;
        with_section(level, section)
    };
    assert_corrupt(broken(2, 0x00), "a change of zero");
    assert_corrupt(broken(2, 0xff), "an escape cut short by its record");
    assert_corrupt(broken(0, 100), "a record running past its block");
    assert_corrupt(broken(1, 0x80), "a value of -128");
    assert_corrupt(broken(1, 4), "a value beyond the level's seeds");
    // Sections of the wrong level sizes.
    let (_, sections) = parts();
    assert_corrupt(
        with_section(2, sections[3].1.clone()),
        "level 3's section as level 2",
    );
}

#[test]
fn random_mutations_under_valid_checksums_never_panic() {
    let (_, sections) = parts();
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
        if let Ok(book) = OwareBook::from_bytes(with_section(level, section)) {
            accepted += 1;
            for (board, _) in index.boards_from(0) {
                for turns in [1, 2, 30, 200] {
                    book.value(&board, turns).unwrap();
                }
            }
            book.export_flat(50, &mut Vec::new()).unwrap();
        }
    }
    // Some flips land on values and stay well-formed: those are accepted.
    assert!(accepted < 3000);
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
