//! Version 2 of the container: sections of at least `CHUNKED_FROM` bytes are
//! checked in chunks, each chunk's CRC-32 in a chunk table after the
//! section. Written alike whole and by an appender; every chunk and chunk
//! table checked on a full open; a container opened for lookups checks the
//! chunk tables at once and each chunk when first asked for it, so a
//! damaged chunk fails the lookups that read it, and no other.

use endbook::book::{
    self, Appender, BookError, Container, SectionData, CHUNKED_FROM, CHUNK_SHIFT, FORMAT_VERSION,
    SECTION_ALIGN,
};
use endbook::games::oware::{
    generate, Board, BoardIndex, GenerateOptions, OwareBook, ProbeError, DEFAULT_TURN_LIMIT,
};
use std::fs;
use std::ops::Range;

mod common;
use common::Rng;

const GAME: [u8; 4] = *b"TEST";
const CHUNK: usize = 1 << CHUNK_SHIFT;

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Rng(seed);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// Three sections: a small one, one just over the chunking threshold that
/// ends mid-chunk, and one exactly at it (whole chunks).
fn three_sections() -> Vec<Vec<u8>> {
    let from = CHUNKED_FROM as usize;
    vec![
        random_bytes(1, 1000),
        random_bytes(2, from + CHUNK / 2 + 17),
        random_bytes(3, from),
    ]
}

fn as_data(sections: &[Vec<u8>]) -> Vec<SectionData<'_>> {
    sections
        .iter()
        .enumerate()
        .map(|(i, bytes)| SectionData {
            meta: [i as u64, 9],
            bytes,
        })
        .collect()
}

/// Table entry `i` of a container with `params` parameters.
fn entry_at(params: usize, i: usize) -> usize {
    24 + 8 * params + 40 * i
}

fn kind(error: &BookError) -> &'static str {
    match error {
        BookError::ChecksumMismatch { .. } => "ChecksumMismatch",
        BookError::Corrupt { .. } => "Corrupt",
        BookError::UnsupportedVersion { .. } => "UnsupportedVersion",
        BookError::Truncated { .. } => "Truncated",
        _ => "other",
    }
}

/// A book's parameter and section counts, and where section `i`'s table
/// entry lies, and its bytes.
fn layout_of(bytes: &[u8]) -> (usize, usize, impl Fn(usize) -> (usize, Range<usize>) + '_) {
    let (params, sections) = (get_u32(bytes, 16) as usize, get_u32(bytes, 20) as usize);
    let section = move |i: usize| {
        let entry = entry_at(params, i);
        let offset = get_u64(bytes, entry) as usize;
        (entry, offset..offset + get_u64(bytes, entry + 8) as usize)
    };
    (params, sections, section)
}

/// The header's checksum recomputed after `change`.
fn resealed(
    bytes: &[u8],
    params: usize,
    sections: usize,
    change: impl FnOnce(&mut [u8]),
) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    change(&mut bytes);
    let end = entry_at(params, sections);
    let crc = crc32fast::hash(&bytes[..end]);
    bytes[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    bytes
}

#[test]
fn large_sections_are_laid_out_in_chunks_as_documented() {
    let sections = three_sections();
    let bytes = book::to_bytes(GAME, &[5], &as_data(&sections));
    assert_eq!(get_u32(&bytes, 8), FORMAT_VERSION);
    assert_eq!(FORMAT_VERSION, 2);
    let mut end = 0;
    for (i, data) in sections.iter().enumerate() {
        let entry = entry_at(1, i);
        let (offset, len) = (get_u64(&bytes, entry) as usize, get_u64(&bytes, entry + 8));
        let (crc, shift) = (get_u32(&bytes, entry + 32), get_u32(&bytes, entry + 36));
        assert_eq!(offset % SECTION_ALIGN as usize, 0);
        assert!(offset >= end, "section {i} after the one before");
        assert_eq!(len, data.len() as u64);
        assert_eq!(&bytes[offset..offset + data.len()], &data[..]);
        end = offset + data.len();
        if (data.len() as u64) < CHUNKED_FROM {
            assert_eq!(shift, 0, "section {i} checked whole");
            assert_eq!(crc, crc32fast::hash(data));
            continue;
        }
        assert_eq!(shift, CHUNK_SHIFT, "section {i} in chunks");
        let chunks = data.len().div_ceil(CHUNK);
        let table = &bytes[end..end + 4 * chunks];
        for (k, chunk) in data.chunks(CHUNK).enumerate() {
            assert_eq!(get_u32(table, 4 * k), crc32fast::hash(chunk), "chunk {k}");
        }
        assert_eq!(crc, crc32fast::hash(table), "the chunk table's checksum");
        end += table.len();
    }
    assert_eq!(end, bytes.len(), "the file ends with the last chunk table");
    let container = Container::from_bytes("three", bytes, GAME).unwrap();
    for (i, data) in sections.iter().enumerate() {
        assert_eq!(container.section(i), &data[..]);
        let expected_shift = if (data.len() as u64) < CHUNKED_FROM {
            0
        } else {
            CHUNK_SHIFT
        };
        assert_eq!(container.sections()[i].chunk_shift, expected_shift);
    }
}

/// An appender writes, commits and reopens chunked sections byte for byte
/// as `book::write` lays them out, whatever the pieces and with a table
/// (written last) across a chunk boundary.
#[test]
fn appended_chunked_sections_equal_written_ones() {
    let sections = three_sections();
    let dir = tempfile::tempdir().unwrap();
    let (growing, done) = (dir.path().join("growing"), dir.path().join("done"));
    let mut appender = Appender::create(&growing, GAME, 1).unwrap();
    appender.append(as_data(&sections).remove(0)).unwrap();
    // The second: a table of a chunk and a bit, written last, the rest in
    // pieces of odd sizes.
    let second = &sections[1];
    let table_len = CHUNK + 100;
    appender.begin_section([1, 9], table_len).unwrap();
    let mut at = table_len;
    for size in [1, 0, CHUNK - 1, 3 * CHUNK + 5, 1 << 20].iter().cycle() {
        let end = (at + size).min(second.len());
        appender.write_section(&second[at..end]).unwrap();
        at = end;
        if at == second.len() {
            break;
        }
    }
    appender.end_section(&second[..table_len]).unwrap();
    appender.commit(&[2]).unwrap();
    let two = book::to_bytes(GAME, &[2], &as_data(&sections[..2]));
    assert!(fs::read(&growing).unwrap() == two, "two sections");
    // The third appended, then the writer dies before committing: reopening
    // cuts it off after the second's chunk table.
    appender.append(as_data(&sections).remove(2)).unwrap();
    drop(appender);
    let (mut appender, params) = Appender::reopen(&growing, GAME).unwrap();
    assert_eq!(params, [2]);
    assert!(
        fs::read(&growing).unwrap() == two,
        "cut back to two sections"
    );
    appender.append(as_data(&sections).remove(2)).unwrap();
    appender.finish(&[3], &done).unwrap();
    let three = book::to_bytes(GAME, &[3], &as_data(&sections));
    assert!(fs::read(&done).unwrap() == three, "three sections");
    Container::open(&done, GAME).unwrap();
}

/// A full open checks every chunk and chunk table; one opened for lookups
/// checks the chunk tables at once and each chunk (or small section) on the
/// first `ensure` that reaches it.
#[test]
fn damaged_chunks_fail_the_reads_that_reach_them() {
    let sections = three_sections();
    let bytes = book::to_bytes(GAME, &[5], &as_data(&sections));
    let dir = tempfile::tempdir().unwrap();
    let offset = |i: usize| get_u64(&bytes, entry_at(1, i)) as usize;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        path
    };
    let good = write("good", &bytes);
    let lazy = Container::open_for_lookups(&good, GAME).unwrap();
    lazy.ensure(1, 0..sections[1].len()).unwrap();
    lazy.ensure(0, 10..11).unwrap();
    lazy.ensure(2, 5..5).unwrap();
    lazy.ensure(2, 0..usize::MAX).unwrap();

    // A bit flipped in chunk 7 of section 1.
    let at = 7 * CHUNK + 1234;
    let mut flipped = bytes.clone();
    flipped[offset(1) + at] ^= 0x10;
    let path = write("chunk", &flipped);
    let error = Container::open(&path, GAME).unwrap_err();
    assert_eq!(kind(&error), "ChecksumMismatch");
    let chunk = format!("section 1, bytes {}..{}", 7 * CHUNK, 8 * CHUNK);
    assert!(error.to_string().contains(&chunk), "{error}");
    let lazy = Container::open_for_lookups(&path, GAME).unwrap();
    let fails = |range: Range<usize>| lazy.ensure(1, range).is_err();
    assert!(!fails(0..7 * CHUNK), "the chunks before it");
    assert!(!fails(8 * CHUNK..sections[1].len()), "the chunks after it");
    assert!(fails(at..at + 1));
    assert!(
        fails(7 * CHUNK - 1..7 * CHUNK + 1),
        "a range across its start"
    );
    assert!(fails(0..sections[1].len()), "the whole section");
    let error = lazy.ensure(1, 8 * CHUNK - 1..8 * CHUNK).unwrap_err();
    assert!(error.to_string().contains(&chunk), "{error}");
    lazy.ensure(0, 0..1000).unwrap();
    lazy.ensure(2, 0..CHUNKED_FROM as usize).unwrap();

    // A bit flipped in the small section: it is checked whole.
    let mut flipped = bytes.clone();
    flipped[offset(0) + 999] ^= 1;
    let path = write("small", &flipped);
    assert_eq!(
        kind(&Container::open(&path, GAME).unwrap_err()),
        "ChecksumMismatch"
    );
    let lazy = Container::open_for_lookups(&path, GAME).unwrap();
    assert!(lazy.ensure(0, 0..1).is_err(), "any byte of it");
    lazy.ensure(1, 0..sections[1].len()).unwrap();

    // A bit flipped in a chunk table: refused on either open.
    let mut flipped = bytes.clone();
    flipped[offset(2) + sections[2].len() + 9] ^= 0x80;
    let path = write("table", &flipped);
    for error in [
        Container::open(&path, GAME).unwrap_err(),
        Container::open_for_lookups(&path, GAME).unwrap_err(),
    ] {
        assert_eq!(kind(&error), "ChecksumMismatch");
        assert!(
            error.to_string().contains("the chunk table of section 2"),
            "{error}"
        );
    }
}

/// The chunk shift is the table entry's last `u32`: in version 2 it must be
/// 0 or within the documented bounds (each resealed header is refused, not
/// misread); a version 1 header may not have one; and a chunk table cut
/// short is a truncated file.
#[test]
fn chunk_shifts_and_versions_are_checked() {
    let sections = three_sections();
    let bytes = book::to_bytes(GAME, &[5], &as_data(&sections));
    let shift_at = entry_at(1, 1) + 36;
    for shift in [1, 5, 41, 64, u32::MAX] {
        let bad = resealed(&bytes, 1, 3, |b| {
            b[shift_at..shift_at + 4].copy_from_slice(&shift.to_le_bytes())
        });
        let error = Container::from_bytes("bad", bad, GAME).unwrap_err();
        assert_eq!(kind(&error), "Corrupt", "shift {shift}: {error}");
    }
    let v1 = resealed(&bytes, 1, 3, |b| {
        b[8..12].copy_from_slice(&1u32.to_le_bytes())
    });
    let error = Container::from_bytes("v1", v1, GAME).unwrap_err();
    assert!(error.to_string().contains("version 1"), "{error}");
    // Another shift changes where the chunks and the table fall: a checksum
    // fails, or the file's length no longer fits.
    let other = resealed(&bytes, 1, 3, |b| {
        b[shift_at..shift_at + 4].copy_from_slice(&(CHUNK_SHIFT + 1).to_le_bytes())
    });
    assert!(Container::from_bytes("other", other, GAME).is_err());
    let cut = bytes[..bytes.len() - 4].to_vec();
    assert_eq!(
        kind(&Container::from_bytes("cut", cut, GAME).unwrap_err()),
        "Truncated"
    );
    // Version 3 is not read.
    let v3 = resealed(&bytes, 1, 3, |b| {
        b[8..12].copy_from_slice(&3u32.to_le_bytes())
    });
    assert_eq!(
        kind(&Container::from_bytes("v3", v3, GAME).unwrap_err()),
        "UnsupportedVersion"
    );
}

/// A section may not start inside the chunk table of the one before, even
/// where every checksum holds: here the second section is the first's
/// chunk table itself, read as a section of its own.
#[test]
fn a_section_within_the_chunk_table_before_it_is_refused() {
    let sections = vec![random_bytes(4, CHUNKED_FROM as usize), random_bytes(5, 100)];
    let bytes = book::to_bytes(GAME, &[5], &as_data(&sections));
    let (params, count, section) = layout_of(&bytes);
    let (_, first) = section(0);
    let (second_entry, _) = section(1);
    let table = first.end..first.end + 4 * sections[0].len().div_ceil(CHUNK);
    assert_eq!(
        first.end % SECTION_ALIGN as usize,
        0,
        "the table starts aligned"
    );
    // The book as written up to the end of the first's chunk table, the
    // second section's entry naming that table.
    let overlapping = resealed(&bytes[..table.end], params, count, |b| {
        b[second_entry..second_entry + 8].copy_from_slice(&(table.start as u64).to_le_bytes());
        b[second_entry + 8..second_entry + 16].copy_from_slice(&(table.len() as u64).to_le_bytes());
        let crc = crc32fast::hash(&bytes[table.clone()]);
        b[second_entry + 32..second_entry + 36].copy_from_slice(&crc.to_le_bytes());
    });
    let error = Container::from_bytes("overlapping", overlapping, GAME).unwrap_err();
    assert_eq!(kind(&error), "Corrupt", "{error}");
    assert!(error.to_string().contains("section 1 starts at"), "{error}");
}

/// An Oware book of 13 seeds (levels 13's records over `CHUNKED_FROM`)
/// opened for lookups reads the values a full open reads; a bit flipped in
/// one chunk of level 13 fails exactly the lookups that read that chunk,
/// as a corrupt record, and the full open.
#[test]
fn oware_lookups_check_the_chunks_they_read() {
    let seeds = 13;
    let generated = generate(GenerateOptions::new(seeds), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("thirteen.book");
    OwareBook::write(&path, &generated).unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(get_u32(&bytes, 8), 2, "a chunked book");
    let full = OwareBook::open(&path).unwrap();
    let lazy = OwareBook::open_for_lookups(&path).unwrap();
    let index = BoardIndex::new(seeds);
    let start = index.level_starts()[seeds as usize];
    let mut rng = Rng(77);
    let draws: Vec<(Board, u32)> = (0..20_000)
        .map(|_| {
            let rank = start + rng.below((index.states() - start) as u64) as usize;
            let turns = 1 + rng.below(u64::from(DEFAULT_TURN_LIMIT)) as u32;
            (index.board(rank), turns)
        })
        .collect();
    for (board, turns) in &draws {
        assert_eq!(
            lazy.value(board, *turns),
            full.value(board, *turns),
            "{board}"
        );
    }
    drop((full, lazy));

    // Level 13 is the last section: flip a bit in the middle of it.
    let params = get_u32(&bytes, 16) as usize;
    let entry = entry_at(params, seeds as usize);
    let (offset, len) = (
        get_u64(&bytes, entry) as usize,
        get_u64(&bytes, entry + 8) as usize,
    );
    assert!(len as u64 >= CHUNKED_FROM);
    assert_eq!(get_u32(&bytes, entry + 36), CHUNK_SHIFT);
    let at = len / 2;
    let mut flipped = bytes.clone();
    flipped[offset + at] ^= 0x04;
    fs::write(&path, &flipped).unwrap();
    assert!(matches!(
        OwareBook::open(&path),
        Err(BookError::ChecksumMismatch { .. })
    ));
    let lazy = OwareBook::open_for_lookups(&path).unwrap();
    let chunk = (at / CHUNK * CHUNK)..(at / CHUNK * CHUNK + CHUNK);
    let (mut failed, mut passed) = (0, 0);
    // The board ranks whose block's table entries or records lie in the chunk.
    let reference = OwareBook::from_generated(&generated);
    for rank in start..index.states() {
        let board = index.board(rank);
        match lazy.value(&board, DEFAULT_TURN_LIMIT) {
            Ok(value) => {
                assert_eq!(Ok(value), reference.value(&board, DEFAULT_TURN_LIMIT));
                passed += 1;
            }
            Err(ProbeError::Corrupt {
                reason, seeds: s, ..
            }) => {
                assert_eq!(s, seeds);
                let expected = format!("section {seeds}, bytes {}..{}", chunk.start, chunk.end);
                assert!(reason.contains(&expected), "{reason}");
                failed += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    // A chunk of 64 KiB holds the records of a few thousand boards (or the
    // table entries of about 130,000).
    assert!(
        failed > 0 && passed > failed,
        "{failed} failed, {passed} passed"
    );
    // Lookups in other levels are untouched.
    let small = index.board(index.level_starts()[12]);
    assert!(lazy.value(&small, 100).is_ok());
}

/// Books under `CHUNKED_FROM` a section are written as before chunks
/// (version 1): the 6-seed book's sections are each checked whole.
#[test]
fn small_books_stay_version_one() {
    let generated = generate(GenerateOptions::new(6), |_| {});
    let bytes = OwareBook::to_bytes(&generated);
    assert_eq!(get_u32(&bytes, 8), 1);
    let sections = get_u32(&bytes, 20) as usize;
    let params = get_u32(&bytes, 16) as usize;
    for i in 0..sections {
        assert_eq!(get_u32(&bytes, entry_at(params, i) + 36), 0);
    }
}

/// A book in the flat `layers` encoding opened for lookups is checked as
/// they read it, as a compact one is (it was read whole on opening): a
/// damaged level fails its checksum, and a value out of its level's bounds
/// under a valid checksum is refused, on the lookups that read them; every
/// other lookup answers as in the undamaged book. A full open refuses both.
#[test]
fn flat_books_are_checked_as_lookups_read_them() {
    use endbook::games::oware::Encoding;
    let seeds = 6;
    let generated = generate(GenerateOptions::new(seeds), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flat.book");
    OwareBook::write_with(&path, &generated, Encoding::Layers).unwrap();
    let reference = OwareBook::open(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let (params, sections, section) = layout_of(&bytes);
    // Level 6: its last byte changed, nothing resealed.
    let (_, damaged) = section(6);
    let mut broken_bytes = bytes.clone();
    broken_bytes[damaged.end - 1] ^= 1;
    // Level 5: the first board's value in the first layer made `value`, the
    // section's checksum and the header's recomputed.
    let (entry, level5) = section(5);
    let out_of_bounds = |value: i8| {
        resealed(&bytes, params, sections, |b| {
            b[level5.start] = value as u8;
            let crc = crc32fast::hash(&b[level5.clone()]);
            b[entry + 32..entry + 36].copy_from_slice(&crc.to_le_bytes());
        })
    };
    let index = BoardIndex::new(seeds);
    let first5 = index.board(index.level_starts()[5]);
    let first5_at_1 = |board: &Board, turns| *board == first5 && turns == 1;
    for (book, reason, is_refused) in [
        (
            broken_bytes,
            "checksum mismatch in section 6",
            &(|board: &Board, _| board.seeds() == 6) as &dyn Fn(&Board, u32) -> bool,
        ),
        // Far out of bounds, and just past either bound.
        (
            out_of_bounds(100),
            "value 100 is outside -5..=5",
            &first5_at_1,
        ),
        (out_of_bounds(6), "value 6 is outside -5..=5", &first5_at_1),
        (
            out_of_bounds(-6),
            "value -6 is outside -5..=5",
            &first5_at_1,
        ),
    ] {
        fs::write(&path, &book).unwrap();
        assert!(OwareBook::open(&path).is_err(), "{reason}");
        let lazy = OwareBook::open_for_lookups(&path).unwrap();
        let mut refused = 0;
        for rank in 0..index.states() {
            let board = index.board(rank);
            for turns in [1, 2, DEFAULT_TURN_LIMIT] {
                match lazy.value(&board, turns) {
                    Ok(value) => {
                        assert!(!is_refused(&board, turns), "{board}, {turns} turns");
                        assert_eq!(Ok(value), reference.value(&board, turns), "{board}");
                    }
                    Err(ProbeError::Corrupt { reason: why, .. }) => {
                        assert!(is_refused(&board, turns), "{board}, {turns} turns: {why}");
                        assert!(why.contains(reason), "{why}");
                        refused += 1;
                    }
                    Err(e) => panic!("{board}: {e}"),
                }
            }
        }
        assert!(refused > 0, "{reason}");
    }
}

/// `level_bytes` reads a whole level: on a book opened for lookups, whose
/// bytes are checked only as lookups read them, it panics.
#[test]
#[should_panic(expected = "open it with OwareBook::open to read it whole")]
fn whole_levels_are_not_read_from_a_book_opened_for_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("six.book");
    OwareBook::write(&path, &generate(GenerateOptions::new(6), |_| {})).unwrap();
    let lazy = OwareBook::open_for_lookups(&path).unwrap();
    lazy.level_bytes(6);
}

/// Opening for lookups reads the header and chunk tables alone: a level's
/// frame (its block offsets) and, where the level is too small for chunks,
/// its checksum are checked when a lookup first reads it, the checksum
/// first. Books with one level's offsets broken (the section resealed to
/// pass its checksum, or not), or its records damaged, open for lookups;
/// every lookup elsewhere answers as in the undamaged book, and each lookup
/// in the damaged level fails, again and again, naming the level and why.
/// A full open refuses each book.
#[test]
fn levels_are_checked_when_a_lookup_first_reads_them() {
    let seeds = 8;
    let generated = generate(GenerateOptions::new(seeds), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eight.book");
    OwareBook::write(&path, &generated).unwrap();
    let reference = OwareBook::open(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let (params, sections, section) = layout_of(&bytes);
    // Level 5: its first block offset (always 0) made 1, the section's
    // checksum and the header's recomputed.
    let (entry, framed) = section(5);
    let broken_frame = resealed(&bytes, params, sections, |b| {
        b[framed.start] ^= 1;
        let crc = crc32fast::hash(&b[framed.clone()]);
        b[entry + 32..entry + 36].copy_from_slice(&crc.to_le_bytes());
    });
    // Level 7: a byte in the middle of its records changed, nothing resealed.
    let (_, damaged) = section(7);
    let mut broken_bytes = bytes.clone();
    broken_bytes[(damaged.start + damaged.end) / 2] ^= 0x10;
    // Level 6: its first block offset made 1, nothing resealed: its bytes
    // are checked before its frame is read.
    let (_, first) = section(6);
    let mut broken_first = bytes.clone();
    broken_first[first.start] ^= 1;

    let index = BoardIndex::new(seeds);
    for (book, level, reason) in [
        (broken_frame, 5, "block offsets do not span the records"),
        (broken_bytes, 7, "checksum mismatch in section 7"),
        (broken_first, 6, "checksum mismatch in section 6"),
    ] {
        fs::write(&path, &book).unwrap();
        assert!(OwareBook::open(&path).is_err(), "level {level}");
        let lazy = OwareBook::open_for_lookups(&path).unwrap();
        let (mut answered, mut refused) = (0, 0);
        for rank in 0..index.states() {
            let board = index.board(rank);
            for turns in [1, 37, DEFAULT_TURN_LIMIT] {
                match lazy.value(&board, turns) {
                    Ok(value) => {
                        assert_ne!(board.seeds() as usize, level, "{board}");
                        assert_eq!(Ok(value), reference.value(&board, turns), "{board}");
                        answered += 1;
                    }
                    Err(ProbeError::Corrupt {
                        seeds, reason: why, ..
                    }) => {
                        assert_eq!(seeds as usize, level, "{board}");
                        assert!(why.contains(reason), "{why}");
                        refused += 1;
                    }
                    Err(e) => panic!("{board}: {e}"),
                }
            }
        }
        let boards = |level: usize| index.level_starts()[level + 1] - index.level_starts()[level];
        assert_eq!(refused, 3 * boards(level), "level {level}");
        assert_eq!(answered, 3 * (index.states() - boards(level)));
    }
}

/// `bytes` (a book) as a build laid it out while only larger sections were
/// chunked: each chunked section's table zeroed (padding now) or cut off
/// the end, its checksum the whole section's, the header resealed.
#[cfg(feature = "cli")]
fn without_chunks(bytes: &[u8]) -> Vec<u8> {
    let (params, sections) = (get_u32(bytes, 16) as usize, get_u32(bytes, 20) as usize);
    let mut end_of_last = 0;
    let mut old = resealed(bytes, params, sections, |b| {
        for i in 0..sections {
            let entry = entry_at(params, i);
            let (offset, len) = (get_u64(b, entry) as usize, get_u64(b, entry + 8) as usize);
            end_of_last = offset + len;
            if get_u32(b, entry + 36) == 0 {
                continue;
            }
            let table_len = 4 * len.div_ceil(CHUNK);
            b[offset + len..offset + len + table_len].fill(0);
            let crc = crc32fast::hash(&b[offset..offset + len]);
            b[entry + 32..entry + 36].copy_from_slice(&crc.to_le_bytes());
            b[entry + 36..entry + 40].fill(0);
        }
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
    });
    old.truncate(end_of_last);
    old
}

/// A checkpoint an earlier build began, whose levels of 2 to 16 MiB are
/// checked whole (an 11-seed book: levels 10 and 11), is taken over by
/// copying its levels into a new book: `--resume` gives the book a fresh
/// run gives, byte for byte, levels 10 and 11 chunked.
#[cfg(feature = "cli")]
#[test]
fn resuming_an_earlier_builds_checkpoint_gives_a_fresh_runs_book() {
    let fresh = OwareBook::to_bytes(&generate(GenerateOptions::new(12), |_| {}));
    let eleven = OwareBook::to_bytes(&generate(GenerateOptions::new(11), |_| {}));
    let params = get_u32(&eleven, 16) as usize;
    assert_ne!(
        get_u32(&eleven, entry_at(params, 10) + 36),
        0,
        "level 10 chunked"
    );
    let old = without_chunks(&eleven);
    assert_eq!(get_u32(&old, 8), 1);
    // Still a sound book, with the same values.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("12.book");
    let checkpoint = dir.path().join("12.book.checkpoint");
    fs::write(&checkpoint, &old).unwrap();
    assert_eq!(OwareBook::open(&checkpoint).unwrap().max_seeds(), 11);
    let run = common::endbook(&common::generate_args("12", &out, &["--resume"]));
    assert!(run.status.success(), "{}", common::text(&run.stderr));
    assert!(
        common::text(&run.stderr).contains("taking over levels 0..=11"),
        "{}",
        common::text(&run.stderr)
    );
    assert!(
        fs::read(&out).unwrap() == fresh,
        "the resumed book differs from a fresh run's"
    );
}
