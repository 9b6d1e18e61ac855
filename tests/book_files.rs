//! Every kind of bad book file is refused on open with the right
//! [`BookError`], never a panic and never a book: missing, empty, foreign,
//! truncated, bit-flipped, padded, and headers whose checksum was recomputed
//! after their contents were made inconsistent. Also: books are written under a
//! temporary `.partial` name that never survives, and every error names the file.

use endbook::book::{
    self, Appender, BookError, Container, SectionData, FORMAT_VERSION, MAGIC, MAX_PARAMS,
    MAX_SECTIONS, SECTION_ALIGN, TABLE_ROOM,
};
use endbook::games::oware::book::{GAME_TAG, RULES_ABAPA};
use endbook::games::oware::{
    generate, Board, BoardIndex, Encoding, GenerateOptions, OptionsError, OwareBook,
    DEFAULT_TURN_LIMIT, MAX_BOOK_SEEDS, MAX_TURN_LIMIT,
};
use std::fs;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;
use common::{rebuilt, Rng, Section};

/// Seeds of the small book every test starts from.
const SEEDS: u32 = 4;

// Header layout (see `endbook::book`).
const VERSION_AT: usize = 8;
const GAME_AT: usize = 12;
const PARAM_COUNT_AT: usize = 16;
const SECTION_COUNT_AT: usize = 20;
const FIXED_HEADER: usize = 24;
const SECTION_ENTRY: usize = 40;

// Oware parameters, in order.
const RULES: usize = 0;
const TURN_LIMIT: usize = 1;
const MAX_SEEDS: usize = 2;
const TURNS_SWEPT: usize = 3;
const ENCODING: usize = 4;

/// The generated small book, serialised with every layer stored (the
/// container and header checks are the same for both encodings;
/// `tests/compact_books.rs` covers the compact sections).
fn valid() -> &'static [u8] {
    static BOOK: OnceLock<Vec<u8>> = OnceLock::new();
    BOOK.get_or_init(|| {
        OwareBook::to_bytes_with(
            &generate(GenerateOptions::new(SEEDS), |_| {}),
            Encoding::Layers,
        )
    })
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn param_count(bytes: &[u8]) -> usize {
    get_u32(bytes, PARAM_COUNT_AT) as usize
}

fn section_count(bytes: &[u8]) -> usize {
    get_u32(bytes, SECTION_COUNT_AT) as usize
}

/// Header length, from the counts in the header itself.
fn header_len(bytes: &[u8]) -> usize {
    FIXED_HEADER + 8 * param_count(bytes) + SECTION_ENTRY * section_count(bytes) + 4
}

fn param_at(i: usize) -> usize {
    FIXED_HEADER + 8 * i
}

/// Byte offset of section `i`'s table entry.
fn entry_at(bytes: &[u8], i: usize) -> usize {
    FIXED_HEADER + 8 * param_count(bytes) + SECTION_ENTRY * i
}

#[derive(Clone, Copy)]
enum Field {
    Offset = 0,
    Len = 8,
    States = 16,
    LastChange = 24,
}

fn section_field(bytes: &[u8], i: usize, field: Field) -> u64 {
    get_u64(bytes, entry_at(bytes, i) + field as usize)
}

fn set_section_field(bytes: &mut [u8], i: usize, field: Field, value: u64) {
    let at = entry_at(bytes, i) + field as usize;
    put_u64(bytes, at, value);
}

/// The bytes of section `i`.
fn section_bytes(bytes: &[u8], i: usize) -> &[u8] {
    let offset = section_field(bytes, i, Field::Offset) as usize;
    let len = section_field(bytes, i, Field::Len) as usize;
    &bytes[offset..offset + len]
}

/// Recomputes the header CRC, so that only the contents can be wrong. A header
/// whose counts make it longer than the file is left as it is.
fn reseal(bytes: &mut [u8]) {
    if header_len(bytes) > bytes.len() {
        return;
    }
    let end = header_len(bytes) - 4;
    let crc = crc32fast::hash(&bytes[..end]);
    put_u32(bytes, end, crc);
}

/// The valid book after `change`, with its header CRC recomputed.
fn tampered(change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = valid().to_vec();
    change(&mut bytes);
    reseal(&mut bytes);
    bytes
}

/// The valid book's parameters and sections, for [`rebuilt`].
fn parts() -> (Vec<u64>, Vec<Section>) {
    let bytes = valid();
    let params = (0..param_count(bytes))
        .map(|i| get_u64(bytes, param_at(i)))
        .collect();
    let sections = (0..section_count(bytes))
        .map(|i| {
            let meta = [
                section_field(bytes, i, Field::States),
                section_field(bytes, i, Field::LastChange),
            ];
            (meta, section_bytes(bytes, i).to_vec())
        })
        .collect();
    (params, sections)
}

/// What kind of error (for messages and comparisons).
fn kind(error: &BookError) -> &'static str {
    match error {
        BookError::Io { .. } => "Io",
        BookError::NotABook { .. } => "NotABook",
        BookError::UnsupportedVersion { .. } => "UnsupportedVersion",
        BookError::WrongGame { .. } => "WrongGame",
        BookError::Truncated { .. } => "Truncated",
        BookError::ChecksumMismatch { .. } => "ChecksumMismatch",
        BookError::Corrupt { .. } => "Corrupt",
    }
}

fn from_memory(bytes: Vec<u8>) -> Result<OwareBook, BookError> {
    OwareBook::from_bytes(bytes)
}

/// Writes `bytes` to `name` in `dir`.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// Opens `bytes` both from memory and from a file; both must fail with the
/// same kind of error, which is returned (the file's, naming the file).
fn refused(bytes: &[u8], what: &str) -> BookError {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "bad.book", bytes);
    let memory = match from_memory(bytes.to_vec()) {
        Ok(_) => panic!("{what}: accepted from memory"),
        Err(e) => e,
    };
    let opened = match OwareBook::open(&path) {
        Ok(_) => panic!("{what}: accepted from a file"),
        Err(e) => e,
    };
    assert_eq!(kind(&memory), kind(&opened), "{what}: {memory} / {opened}");
    assert!(
        opened.to_string().contains(&path.display().to_string()),
        "{what}: the message does not name the file: {opened}"
    );
    opened
}

/// [`refused`], and the error must be of kind `expected`.
#[track_caller]
fn refused_as(bytes: &[u8], expected: &str, what: &str) -> BookError {
    let error = refused(bytes, what);
    assert_eq!(kind(&error), expected, "{what}: {error}");
    error
}

/// [`refused_as`] `Corrupt`.
#[track_caller]
fn corrupt(bytes: &[u8], what: &str) {
    refused_as(bytes, "Corrupt", what);
}

#[test]
fn the_small_book_is_laid_out_as_documented() {
    let bytes = valid();
    assert_eq!(bytes[..8], MAGIC);
    // No section of CHUNKED_FROM bytes: version 1, every section checked
    // whole (tests/chunked_books.rs covers version 2).
    assert_eq!(get_u32(bytes, VERSION_AT), 1);
    assert_eq!(bytes[GAME_AT..GAME_AT + 4], GAME_TAG);
    assert_eq!(param_count(bytes), 5);
    assert_eq!(get_u64(bytes, param_at(ENCODING)), 0, "every layer stored");
    assert_eq!(section_count(bytes), SEEDS as usize + 1);
    assert_eq!(get_u64(bytes, param_at(RULES)), RULES_ABAPA);
    assert_eq!(
        get_u64(bytes, param_at(TURN_LIMIT)),
        u64::from(DEFAULT_TURN_LIMIT)
    );
    assert_eq!(get_u64(bytes, param_at(MAX_SEEDS)), u64::from(SEEDS));
    let swept = get_u64(bytes, param_at(TURNS_SWEPT));
    assert!((1..=u64::from(DEFAULT_TURN_LIMIT)).contains(&swept));
    // Room before the first section for a table of TABLE_ROOM sections.
    let room = header_len(bytes) + SECTION_ENTRY * (TABLE_ROOM - section_count(bytes));
    let mut end = room as u64;
    for i in 0..section_count(bytes) {
        let offset = section_field(bytes, i, Field::Offset);
        let len = section_field(bytes, i, Field::Len);
        let states = section_field(bytes, i, Field::States);
        let last_change = section_field(bytes, i, Field::LastChange);
        assert_eq!(offset, end.next_multiple_of(SECTION_ALIGN));
        assert_eq!(states, BoardIndex::level_size(i as u32) as u64);
        assert!((1..=swept).contains(&last_change));
        assert_eq!(len, states * last_change);
        let entry = entry_at(bytes, i);
        assert_eq!(
            get_u32(bytes, entry + 32),
            crc32fast::hash(section_bytes(bytes, i))
        );
        assert_eq!(get_u32(bytes, entry + 36), 0);
        end = offset + len;
    }
    assert_eq!(end, bytes.len() as u64);
    // Re-sealing an untouched header changes nothing.
    assert_eq!(tampered(|_| {}), bytes);
}

#[test]
fn a_valid_book_opens_from_a_file_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("four.book");
    let generated = generate(GenerateOptions::new(SEEDS), |_| {});
    OwareBook::write_with(&path, &generated, Encoding::Layers).unwrap();
    assert_eq!(fs::read(&path).unwrap(), valid());
    let compact_path = dir.path().join("four-compact.book");
    OwareBook::write(&compact_path, &generated).unwrap();
    let compact = OwareBook::open(&compact_path).unwrap();
    assert_eq!(compact.encoding(), Encoding::Changes);

    let book = OwareBook::open(&path).unwrap();
    let memory = from_memory(valid().to_vec()).unwrap();
    assert_eq!(book.path(), path);
    assert_eq!(book.file_len(), valid().len() as u64);
    assert_eq!(book.max_seeds(), SEEDS);
    assert_eq!(book.turn_limit(), DEFAULT_TURN_LIMIT);
    assert_eq!(book.levels(), memory.levels());

    // The example of the crate docs.
    let board: Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
    assert_eq!(book.value(&board, 1).unwrap(), 2);
    assert_eq!(
        book.analyse(&board, 200).unwrap().value,
        book.value(&board, 200).unwrap()
    );
    // Every value reads back the same from the mapped file, from memory, and
    // from the compact encoding.
    assert_eq!(compact.levels(), book.levels());
    let index = BoardIndex::new(SEEDS);
    for (board, _) in index.boards_from(0) {
        for turns in [1, 2, 3, 7, book.turns_swept(), DEFAULT_TURN_LIMIT] {
            assert_eq!(book.value(&board, turns), memory.value(&board, turns));
            assert_eq!(compact.value(&board, turns), book.value(&board, turns));
        }
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such.book");
    let error = match OwareBook::open(&path) {
        Ok(_) => panic!("a missing file opened"),
        Err(e) => e,
    };
    assert!(matches!(&error, BookError::Io { path: p, source }
        if p == &path && source.kind() == std::io::ErrorKind::NotFound));
    assert!(error.to_string().contains(&path.display().to_string()));
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn a_directory_is_not_a_book() {
    let dir = tempfile::tempdir().unwrap();
    let error = match OwareBook::open(dir.path()) {
        Ok(_) => panic!("a directory opened"),
        Err(e) => e,
    };
    // Opening a directory succeeds on Linux and mapping it fails: Io. (A
    // file system reporting a zero length for it gives NotABook instead.)
    assert!(matches!(kind(&error), "Io" | "NotABook"), "{error}");
    assert!(error
        .to_string()
        .contains(&dir.path().display().to_string()));
}

#[test]
fn empty_short_and_random_files_are_not_books() {
    refused_as(&[], "NotABook", "an empty file");
    refused_as(b"ENDBOO", "NotABook", "half a magic");
    refused_as(b"endbook\0 and then some", "NotABook", "a lower-case magic");
    refused_as(
        b"#!/bin/sh\necho this is a script, not a book\n",
        "NotABook",
        "a text file",
    );
    // Random bytes, seeded so that failures reproduce.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for len in [1, 7, 8, 23, 24, 100, 4096, valid().len()] {
        let noise: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        refused_as(&noise, "NotABook", &format!("{len} random bytes"));
        // Random bytes behind a good magic: refused, whatever the reason.
        let mut behind_magic = MAGIC.to_vec();
        behind_magic.extend_from_slice(&noise);
        refused(&behind_magic, &format!("the magic then {len} random bytes"));
        // ... and behind the first 24 bytes of a real book.
        let mut behind_fixed = valid()[..FIXED_HEADER].to_vec();
        behind_fixed.extend_from_slice(&noise);
        refused(
            &behind_fixed,
            &format!("a fixed header then {len} random bytes"),
        );
    }
}

#[test]
fn foreign_magic_version_and_game_are_refused() {
    let mut bytes = valid().to_vec();
    bytes[0] = b'X';
    refused_as(&bytes, "NotABook", "a wrong magic");
    let mut bytes = valid().to_vec();
    bytes[7] = b'\n';
    refused_as(&bytes, "NotABook", "a wrong magic terminator");

    for version in [0, FORMAT_VERSION + 1, u32::MAX] {
        let bytes = tampered(|b| put_u32(b, VERSION_AT, version));
        match refused_as(&bytes, "UnsupportedVersion", "a wrong version") {
            BookError::UnsupportedVersion { version: v, .. } => assert_eq!(v, version),
            _ => unreachable!(),
        }
    }
    for (game, shown) in [
        (*b"BKGM", "'BKGM'"),
        (*b"owar", "'owar'"),
        ([0; 4], "'\\x00\\x00\\x00\\x00'"),
        (*b"O\rAR", "'O\\rAR'"),
    ] {
        let bytes = tampered(|b| b[GAME_AT..GAME_AT + 4].copy_from_slice(&game));
        let error = refused_as(&bytes, "WrongGame", "another game's tag");
        // Printed escaped: a damaged tag sends no control bytes to a terminal.
        assert!(error.to_string().contains(shown), "{error}");
        match error {
            BookError::WrongGame {
                expected, found, ..
            } => {
                assert_eq!(expected, GAME_TAG);
                assert_eq!(found, game);
            }
            _ => unreachable!(),
        }
    }
    // A complete, valid container of another game.
    let section = [1u8, 2, 3];
    let other = book::to_bytes(
        *b"BKGM",
        &[1, 2],
        &[SectionData {
            meta: [3, 1],
            bytes: &section,
        }],
    );
    let error = refused_as(&other, "WrongGame", "a backgammon container");
    assert!(error.to_string().contains("BKGM") && error.to_string().contains("OWAR"));
}

#[test]
fn every_truncation_is_refused() {
    let full = valid();
    let header = header_len(full);
    for len in 0..full.len() {
        let error = match from_memory(full[..len].to_vec()) {
            Ok(_) => panic!("the book cut to {len} bytes was accepted"),
            Err(e) => e,
        };
        let expected = if len < MAGIC.len() {
            "NotABook"
        } else {
            "Truncated"
        };
        assert_eq!(kind(&error), expected, "cut to {len} bytes: {error}");
        if let BookError::Truncated { needed, len: l, .. } = error {
            assert_eq!(l, len as u64);
            assert!(needed > l, "cut to {len} bytes: needs {needed}");
            if len >= header {
                // Past the header, the sections say how long the file must be.
                assert_eq!(needed, full.len() as u64, "cut to {len} bytes");
            }
        }
    }

    // The same through the file system, shrinking one file step by step.
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "cut.book", full);
    let handle = fs::OpenOptions::new().write(true).open(&path).unwrap();
    for len in (0..full.len()).rev() {
        handle.set_len(len as u64).unwrap();
        let error = match OwareBook::open(&path) {
            Ok(_) => panic!("the book file cut to {len} bytes was accepted"),
            Err(e) => e,
        };
        assert!(
            matches!(kind(&error), "NotABook" | "Truncated"),
            "file cut to {len} bytes: {error}"
        );
    }
}

#[test]
fn trailing_bytes_are_refused() {
    for extra in [&[0u8][..], &[0; 63], &[0; 64], b"garbage", &valid()[..300]] {
        let mut bytes = valid().to_vec();
        bytes.extend_from_slice(extra);
        corrupt(&bytes, &format!("{} trailing bytes", extra.len()));
    }
    // A whole second book appended.
    let mut twice = valid().to_vec();
    twice.extend_from_slice(valid());
    corrupt(&twice, "two books in one file");
}

/// Flips `mask` in byte `at` of the valid book: never accepted.
fn flipped(at: usize, mask: u8) -> BookError {
    let mut bytes = valid().to_vec();
    bytes[at] ^= mask;
    match from_memory(bytes) {
        Ok(_) => panic!("flipping {mask:#04x} at byte {at} was accepted"),
        Err(e) => e,
    }
}

#[test]
fn every_bit_of_the_header_is_checked() {
    let header = header_len(valid());
    for at in 0..header {
        for bit in 0..8 {
            let error = flipped(at, 1 << bit);
            let what = format!("bit {bit} of header byte {at}: {error}");
            let expected: &[&str] = match at {
                0..8 => &["NotABook"],
                8..12 => &["UnsupportedVersion"],
                12..16 => &["WrongGame"],
                // The counts change the header's length or break a limit.
                16..24 => &["Corrupt", "Truncated", "ChecksumMismatch"],
                _ => &["ChecksumMismatch"],
            };
            assert!(expected.contains(&kind(&error)), "{what}");
        }
    }
}

#[test]
fn flipped_bits_in_every_section_are_checked() {
    let bytes = valid();
    for i in 0..section_count(bytes) {
        let offset = section_field(bytes, i, Field::Offset) as usize;
        let len = section_field(bytes, i, Field::Len) as usize;
        // The first and last bytes, and up to 64 more spread over the section.
        let step = (len / 64).max(1);
        let positions = (0..len).step_by(step).chain([len - 1]);
        for at in positions {
            for bit in 0..8 {
                let error = flipped(offset + at, 1 << bit);
                match &error {
                    BookError::ChecksumMismatch { what, .. } => {
                        assert_eq!(what, &format!("section {i}"))
                    }
                    _ => panic!("bit {bit} of byte {at} of section {i}: {error}"),
                }
            }
        }
    }
    // Every byte of the whole file, one bit each, padding included: never
    // accepted.
    for at in 0..bytes.len() {
        flipped(at, 1 << (at % 8));
    }
}

/// The alignment gaps: before each section, after the previous one (or the header).
fn padding_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut end = header_len(bytes);
    let mut gaps = Vec::new();
    for i in 0..section_count(bytes) {
        let offset = section_field(bytes, i, Field::Offset) as usize;
        if offset > end {
            gaps.push(end..offset);
        }
        end = offset + section_field(bytes, i, Field::Len) as usize;
    }
    gaps
}

/// The zero bytes between the header and the first section, and between
/// sections, are covered by no checksum: opening checks they are zero, so
/// that a corrupt file is an error before any value is read, as the module
/// docs promise.
#[test]
fn flipped_bits_in_the_padding_are_refused() {
    let bytes = valid();
    let gaps = padding_ranges(bytes);
    assert!(!gaps.is_empty());
    for gap in gaps {
        for at in gap {
            flipped(at, 0x01);
        }
    }
}

/// The table entry's fourth `u32` is documented as zero in version 1, and a
/// header that says otherwise is refused even with a good checksum.
#[test]
fn a_nonzero_reserved_field_is_corrupt() {
    let bytes = tampered(|b| {
        let at = entry_at(b, 1) + 36;
        put_u32(b, at, 1);
    });
    corrupt(&bytes, "a nonzero reserved field");
}

#[test]
fn resealed_headers_with_inconsistent_counts_are_corrupt() {
    let (params, sections) = parts();
    // Sections: one missing, one extra, none at all.
    corrupt(
        &rebuilt(&params, &sections[..sections.len() - 1]),
        "one section too few",
    );
    let mut extra = sections.clone();
    extra.push(sections[SEEDS as usize].clone());
    corrupt(&rebuilt(&params, &extra), "one section too many");
    corrupt(&rebuilt(&params, &[]), "no sections");
    // Parameters: too few, too many, none.
    corrupt(&rebuilt(&params[..3], &sections), "three parameters");
    let mut six = params.clone();
    six.push(0);
    corrupt(&rebuilt(&six, &sections), "six parameters");
    corrupt(&rebuilt(&[], &sections), "no parameters");
    // Books written before the encoding parameter existed have four and store
    // every layer: they still open.
    let old = from_memory(rebuilt(&params[..4], &sections)).expect("a four-parameter book opens");
    assert_eq!(old.encoding(), Encoding::Layers);
    // An encoding this build does not know.
    for code in [3, u64::MAX] {
        let mut unknown = params.clone();
        unknown[ENCODING] = code;
        corrupt(&rebuilt(&unknown, &sections), &format!("encoding {code}"));
    }
    // The compact encodings named over layer sections: they do not parse.
    for code in [1, 2] {
        let mut compact = params.clone();
        compact[ENCODING] = code;
        corrupt(
            &rebuilt(&compact, &sections),
            &format!("layer sections called compact ({code})"),
        );
    }
    // Counts beyond the container's limits: refused before the header length
    // is even computed.
    for count in [MAX_PARAMS + 1, u32::MAX] {
        let bytes = tampered(|b| put_u32(b, PARAM_COUNT_AT, count));
        corrupt(&bytes, &format!("{count} parameters"));
    }
    for count in [MAX_SECTIONS + 1, u32::MAX] {
        let bytes = tampered(|b| put_u32(b, SECTION_COUNT_AT, count));
        corrupt(&bytes, &format!("{count} sections"));
    }
    // Counts within the limits whose header would run past the file.
    let bytes = tampered(|b| put_u32(b, SECTION_COUNT_AT, MAX_SECTIONS));
    refused_as(&bytes, "Truncated", "4096 sections in a small file");
}

#[test]
fn resealed_headers_with_bad_parameters_are_corrupt() {
    let set = |i: usize, value: u64| tampered(move |b| put_u64(b, param_at(i), value));
    let swept = get_u64(valid(), param_at(TURNS_SWEPT));

    for rules in [0, 2, u64::MAX] {
        corrupt(&set(RULES, rules), &format!("rules variant {rules}"));
    }
    for limit in [0, swept - 1, u64::from(u16::MAX) + 1, u64::MAX] {
        corrupt(&set(TURN_LIMIT, limit), &format!("turn limit {limit}"));
    }
    for turns in [0, u64::from(DEFAULT_TURN_LIMIT) + 1, u64::MAX] {
        corrupt(&set(TURNS_SWEPT, turns), &format!("{turns} layers swept"));
    }
    // More seeds than the build supports, whatever the sections say.
    for seeds in [
        u64::from(MAX_BOOK_SEEDS) + 1,
        u64::from(u32::MAX) + 1,
        u64::MAX,
    ] {
        let error = refused_as(&set(MAX_SEEDS, seeds), "Corrupt", "too many seeds");
        assert!(error.to_string().contains("beyond"), "{error}");
    }
    // A supported seed count that the sections do not match.
    for seeds in [0, u64::from(SEEDS) - 1, u64::from(SEEDS) + 1, 27] {
        corrupt(&set(MAX_SEEDS, seeds), &format!("max seeds {seeds}"));
    }
    // A lower turn limit still covering the layers swept is fine.
    let lower = from_memory(set(TURN_LIMIT, swept)).unwrap();
    assert_eq!(lower.turn_limit() as u64, swept);
}

#[test]
fn resealed_headers_with_bad_levels_are_corrupt() {
    let bytes = valid();
    let swept = get_u64(bytes, param_at(TURNS_SWEPT));
    let levels = section_count(bytes);
    for i in 0..levels {
        let states = section_field(bytes, i, Field::States);
        let last_change = section_field(bytes, i, Field::LastChange);
        let set =
            |field: Field, value: u64| tampered(move |b| set_section_field(b, i, field, value));
        // Wrong state counts.
        for wrong in [0, states - 1, states + 1, u64::MAX] {
            if wrong != states {
                corrupt(
                    &set(Field::States, wrong),
                    &format!("level {i}: {wrong} states"),
                );
            }
        }
        // last_change 0, beyond the turns swept, or disagreeing with the length.
        for wrong in [0, swept + 1, u64::MAX, last_change + 1] {
            corrupt(
                &set(Field::LastChange, wrong),
                &format!("level {i}: last change {wrong}"),
            );
        }
        if last_change > 1 {
            corrupt(
                &set(Field::LastChange, last_change - 1),
                &format!(
                    "level {i}: last change {} for {last_change} layers",
                    last_change - 1
                ),
            );
        }
    }

    // Section lengths that are not states × last_change, in a container that
    // is otherwise sound (rebuilt, so offsets and checksums agree).
    let (params, sections) = parts();
    for i in 0..levels {
        let mut short = sections.clone();
        short[i].1.pop();
        corrupt(
            &rebuilt(&params, &short),
            &format!("level {i} one byte short"),
        );
        let mut long = sections.clone();
        long[i].1.push(0);
        corrupt(
            &rebuilt(&params, &long),
            &format!("level {i} one byte long"),
        );
        // One layer too many, with last_change still in range.
        let states = sections[i].0[0] as usize;
        let mut layer_more = sections.clone();
        let last = layer_more[i].1[layer_more[i].1.len() - states..].to_vec();
        layer_more[i].1.extend_from_slice(&last);
        corrupt(
            &rebuilt(&params, &layer_more),
            &format!("level {i} a layer long"),
        );
    }
    // A value outside -n..=n in level n, sizes and checksums sound: refused
    // naming it; the bound itself is sound.
    for i in 1..levels {
        let bound = i as i8;
        for (value, sound) in [(bound + 1, false), (-bound - 1, false), (-bound, true)] {
            let mut out_of_range = sections.clone();
            let at = out_of_range[i].1.len() / 2;
            out_of_range[i].1[at] = value as u8;
            let bytes = rebuilt(&params, &out_of_range);
            if sound {
                assert!(from_memory(bytes).is_ok(), "level {i}: value {value}");
            } else {
                corrupt(&bytes, &format!("level {i}: value {value}"));
                let error = from_memory(bytes).unwrap_err().to_string();
                let expected = format!("value {value} is outside -{bound}..={bound}");
                assert!(error.contains(&expected), "{error}");
            }
        }
    }
    // A level that says one layer more and holds it, a repeat of its last:
    // its last change would be earlier. (Level 3: the top level changes
    // until the turn before the last swept, and a change at the last
    // would be refused for that.)
    let last = levels - 2;
    let mut longer = sections.clone();
    let states = longer[last].0[0] as usize;
    let tail = longer[last].1[longer[last].1.len() - states..].to_vec();
    longer[last].1.extend_from_slice(&tail);
    longer[last].0[1] += 1;
    assert!(
        longer[last].0[1] < swept,
        "level 3 changes until its last turn swept: pick another"
    );
    let error = refused_as(&rebuilt(&params, &longer), "Corrupt", "a repeated layer");
    let expected = format!(
        "last changes at turn {}, its values at turn {}",
        sections[last].0[1] + 1,
        sections[last].0[1]
    );
    assert!(error.to_string().contains(&expected), "{error}");
}

#[test]
fn resealed_headers_with_bad_section_offsets_are_refused() {
    let bytes = valid();
    let levels = section_count(bytes);
    let header = header_len(bytes) as u64;
    for i in 0..levels {
        let offset = section_field(bytes, i, Field::Offset);
        let set = |value: u64| tampered(move |b| set_section_field(b, i, Field::Offset, value));
        // Misaligned.
        for delta in [1, 8, 32, 63] {
            corrupt(
                &set(offset + delta),
                &format!("section {i} at {offset}+{delta}"),
            );
            corrupt(
                &set(offset - delta),
                &format!("section {i} at {offset}-{delta}"),
            );
        }
        // Inside the header.
        corrupt(&set(0), &format!("section {i} at 0"));
        corrupt(
            &set(header / SECTION_ALIGN * SECTION_ALIGN),
            &format!("section {i} overlapping the header"),
        );
        // Aligned but beyond the file (the later sections then overlap or
        // the file is too short for it).
        let beyond = set(offset + SECTION_ALIGN);
        let error = refused(&beyond, &format!("section {i} one line later"));
        assert!(matches!(kind(&error), "Corrupt" | "Truncated"), "{error}");
        // Far beyond: no overflow, the file is just too short.
        let far = tampered(|b| {
            for j in i..levels {
                let moved = section_field(b, j, Field::Offset) + (1 << 40);
                set_section_field(b, j, Field::Offset, moved);
            }
        });
        refused_as(
            &far,
            "Truncated",
            &format!("sections {i}.. a terabyte later"),
        );
    }
    for i in 1..levels {
        // Overlapping the previous section: at its start, or one line into it.
        let previous = section_field(bytes, i - 1, Field::Offset);
        let set = |value: u64| tampered(move |b| set_section_field(b, i, Field::Offset, value));
        corrupt(&set(previous), &format!("section {i} on section {}", i - 1));
        let previous_len = section_field(bytes, i - 1, Field::Len);
        if previous_len > SECTION_ALIGN {
            corrupt(
                &set(previous + SECTION_ALIGN),
                &format!("section {i} inside section {}", i - 1),
            );
        }
        // Sections out of order.
        let swapped = tampered(|b| {
            let a = section_field(b, i - 1, Field::Offset);
            let c = section_field(b, i, Field::Offset);
            set_section_field(b, i - 1, Field::Offset, c);
            set_section_field(b, i, Field::Offset, a);
        });
        corrupt(&swapped, &format!("sections {} and {i} swapped", i - 1));
    }
}

#[test]
fn resealed_headers_whose_sections_overflow_are_corrupt() {
    let bytes = valid();
    let last = section_count(bytes) - 1;
    let top = u64::MAX / SECTION_ALIGN * SECTION_ALIGN;
    // offset + len overflows a u64.
    for (offset, len) in [(top, u64::MAX), (top, SECTION_ALIGN), (1 << 63, 1 << 63)] {
        let overflowing = tampered(|b| {
            set_section_field(b, last, Field::Offset, offset);
            set_section_field(b, last, Field::Len, len);
        });
        let error = refused_as(&overflowing, "Corrupt", "offset + len overflowing");
        assert!(
            error.to_string().contains("longer than any file"),
            "{error}"
        );
    }
    // Huge but representable: the file is too short.
    let huge = tampered(|b| {
        set_section_field(b, last, Field::Offset, top);
        set_section_field(b, last, Field::Len, SECTION_ALIGN - 1);
    });
    match refused_as(&huge, "Truncated", "a section ending at u64::MAX") {
        BookError::Truncated { needed, .. } => assert_eq!(needed, u64::MAX),
        _ => unreachable!(),
    }
    // An early section overflowing, with the ones after it in place.
    let early = tampered(|b| set_section_field(b, 0, Field::Len, u64::MAX));
    corrupt(&early, "section 0 of length u64::MAX");
    // Section lengths that disagree with the Oware layout but fit the file
    // are Corrupt; longer ones that run past the end are Truncated.
    let shorter = tampered(|b| {
        let len = section_field(b, last, Field::Len);
        set_section_field(b, last, Field::Len, len - 1);
    });
    corrupt(&shorter, "the last section one byte short of the file");
    let longer = tampered(|b| {
        let len = section_field(b, last, Field::Len);
        set_section_field(b, last, Field::Len, len + 1);
    });
    refused_as(&longer, "Truncated", "the last section past the end");
}

#[test]
fn resealed_section_data_is_still_checked() {
    // Data altered with the header resealed: the section CRC still catches it.
    let bytes = valid();
    let last = section_count(bytes) - 1;
    let at = section_field(bytes, last, Field::Offset) as usize + 5;
    let mut altered = bytes.to_vec();
    altered[at] = altered[at].wrapping_add(1);
    reseal(&mut altered);
    match refused_as(
        &altered,
        "ChecksumMismatch",
        "altered data, header resealed",
    ) {
        BookError::ChecksumMismatch { what, .. } => assert_eq!(what, format!("section {last}")),
        _ => unreachable!(),
    }
    // A stale section CRC in an untouched file.
    let stale = tampered(|b| {
        let entry = entry_at(b, 0) + 32;
        let crc = get_u32(b, entry);
        put_u32(b, entry, crc ^ 1);
    });
    refused_as(&stale, "ChecksumMismatch", "a wrong section CRC");
    // The header CRC itself altered.
    let mut header_crc = bytes.to_vec();
    let end = header_len(bytes) - 1;
    header_crc[end] ^= 0x80;
    refused_as(&header_crc, "ChecksumMismatch", "a wrong header CRC");
}

#[test]
fn write_goes_through_a_partial_file_that_never_survives() {
    let generated = generate(GenerateOptions::new(2), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.book");
    let partial = dir.path().join("two.book.partial");
    assert_eq!(book::temporary_path(&path), partial);

    let names = || {
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };

    // Success: the book, and nothing else.
    OwareBook::write(&path, &generated).unwrap();
    assert_eq!(names(), ["two.book"]);
    assert_eq!(fs::read(&path).unwrap(), OwareBook::to_bytes(&generated));

    // A stale `.partial` left by a crash is replaced and gone afterwards, and
    // an existing book is replaced whole.
    fs::write(&partial, b"left over from a crash").unwrap();
    fs::write(&path, b"an old book").unwrap();
    OwareBook::write(&path, &generated).unwrap();
    assert_eq!(names(), ["two.book"]);
    OwareBook::open(&path).unwrap();

    // The temporary name is really used: when it cannot be created, the
    // write fails before touching the target.
    fs::create_dir(&partial).unwrap();
    fs::write(&path, b"the previous contents").unwrap();
    let error = match OwareBook::write(&path, &generated) {
        Ok(()) => panic!("wrote through a directory"),
        Err(e) => e,
    };
    assert_eq!(kind(&error), "Io", "{error}");
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"the previous contents");
    fs::remove_dir(&partial).unwrap();

    // When the rename fails (the target is a non-empty directory), the
    // `.partial` file is removed and the error names the target.
    let blocked = dir.path().join("blocked.book");
    fs::create_dir(&blocked).unwrap();
    fs::write(blocked.join("inside"), b"x").unwrap();
    let error = match OwareBook::write(&blocked, &generated) {
        Ok(()) => panic!("renamed over a non-empty directory"),
        Err(e) => e,
    };
    assert_eq!(kind(&error), "Io", "{error}");
    assert!(
        error.to_string().contains(&blocked.display().to_string()),
        "{error}"
    );
    assert_eq!(names(), ["blocked.book", "two.book"]);

    // A missing directory: an Io error naming the path, nothing created.
    let nowhere = dir.path().join("missing").join("x.book");
    let error = match OwareBook::write(&nowhere, &generated) {
        Ok(()) => panic!("wrote into a missing directory"),
        Err(e) => e,
    };
    assert_eq!(kind(&error), "Io", "{error}");
    assert!(
        error.to_string().contains(&nowhere.display().to_string()),
        "{error}"
    );
    assert_eq!(names(), ["blocked.book", "two.book"]);
}

#[test]
fn every_error_message_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path_text = |p: &Path| p.display().to_string();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("NotABook", b"not a book".to_vec()),
        (
            "UnsupportedVersion",
            tampered(|b| put_u32(b, VERSION_AT, 9)),
        ),
        (
            "WrongGame",
            tampered(|b| b[GAME_AT..GAME_AT + 4].copy_from_slice(b"CHSS")),
        ),
        ("Truncated", valid()[..valid().len() - 1].to_vec()),
        ("ChecksumMismatch", {
            let mut b = valid().to_vec();
            b[FIXED_HEADER] ^= 1;
            b
        }),
        ("Corrupt", tampered(|b| put_u64(b, param_at(RULES), 7))),
    ];
    for (expected, bytes) in cases {
        let path = file(dir.path(), &format!("{expected}.book"), &bytes);
        let error = match OwareBook::open(&path) {
            Ok(_) => panic!("{expected}: accepted"),
            Err(e) => e,
        };
        assert_eq!(kind(&error), expected, "{error}");
        let message = error.to_string();
        assert!(message.starts_with(&path_text(&path)), "{message}");
        // In-memory books are named too.
        let error = match from_memory(bytes) {
            Ok(_) => panic!("{expected}: accepted from memory"),
            Err(e) => e,
        };
        assert!(error.to_string().starts_with("<memory>"), "{error}");
    }
    let missing = dir.path().join("absent.book");
    let error = match OwareBook::open(&missing) {
        Ok(_) => panic!("a missing file opened"),
        Err(e) => e,
    };
    assert!(
        error.to_string().starts_with(&path_text(&missing)),
        "{error}"
    );
}

#[test]
fn a_file_replaced_by_a_longer_one_is_read_whole() {
    // A book written over an old, longer file must not keep the old tail.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book");
    let mut old = fs::File::create(&path).unwrap();
    old.write_all(&vec![0xAA; valid().len() * 2]).unwrap();
    drop(old);
    let generated = generate(GenerateOptions::new(SEEDS), |_| {});
    OwareBook::write_with(&path, &generated, Encoding::Layers).unwrap();
    assert!(fs::read(&path).unwrap() == valid());
    OwareBook::open(&path).unwrap();
}

/// A container written section by section, committing as it goes, is byte
/// for byte the container written whole; sections appended after the last
/// commit (a crash) are cut off when it is reopened.
#[test]
fn appended_books_equal_written_ones_and_survive_an_interrupted_append() {
    let game = *b"TEST";
    let data: Vec<Vec<u8>> = (0..5u8)
        .map(|i| {
            (0..100 * usize::from(i) + 3)
                .map(|j| (j as u8) ^ i)
                .collect()
        })
        .collect();
    let sections = |count: usize| -> Vec<SectionData<'_>> {
        data[..count]
            .iter()
            .enumerate()
            .map(|(i, bytes)| SectionData {
                meta: [i as u64, 7],
                bytes,
            })
            .collect()
    };
    let params = |count: usize| [count as u64, 42];
    let dir = tempfile::tempdir().unwrap();
    let (growing, done) = (dir.path().join("growing"), dir.path().join("done"));
    let mut appender = Appender::create(&growing, game, 2).unwrap();
    for count in 1..=3 {
        appender.append(sections(count).pop().unwrap()).unwrap();
        appender.commit(&params(count)).unwrap();
        let whole = book::to_bytes(game, &params(count), &sections(count));
        assert!(fs::read(&growing).unwrap() == whole, "{count} sections");
        assert_eq!(
            Container::open(&growing, game).unwrap().sections().len(),
            count
        );
    }
    // A fourth section appended, then the writer dies before committing.
    appender.append(sections(4).pop().unwrap()).unwrap();
    drop(appender);
    assert!(
        Container::open(&growing, game).is_err(),
        "uncommitted bytes"
    );
    let (mut appender, committed) = Appender::reopen(&growing, game).unwrap();
    assert_eq!(committed, params(3));
    assert_eq!(appender.sections(), 3);
    assert!(fs::read(&growing).unwrap() == book::to_bytes(game, &params(3), &sections(3)));
    // The fourth in pieces (an empty one among them), the fifth streamed
    // with its first 40 bytes (a table) written last: the same bytes.
    let fourth = &data[3];
    let pieces = [&fourth[..1], &fourth[1..1], &fourth[1..250], &fourth[250..]];
    appender.append_pieces([3, 7], &pieces).unwrap();
    let fifth = &data[4];
    appender.begin_section([4, 7], 40).unwrap();
    for piece in fifth[40..].chunks(97) {
        appender.write_section(piece).unwrap();
    }
    appender.end_section(&fifth[..40]).unwrap();
    appender.finish(&params(5), &done).unwrap();
    assert!(!growing.exists(), "renamed into place");
    assert!(fs::read(&done).unwrap() == book::to_bytes(game, &params(5), &sections(5)));
    // A file never committed is no book; another game's is refused.
    let empty = dir.path().join("empty");
    drop(Appender::create(&empty, game, 2).unwrap());
    assert!(matches!(
        Appender::reopen(&empty, game),
        Err(BookError::NotABook { .. })
    ));
    assert!(matches!(
        Appender::reopen(&done, *b"OTHR"),
        Err(BookError::WrongGame { .. })
    ));
}

/// Sections are checksummed in parallel pieces: the combined CRC is the
/// CRC of the whole, at every size around the piece boundaries.
#[test]
fn parallel_checksums_equal_plain_ones() {
    let piece = 1usize << 24;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let data: Vec<u8> = (0..2 * piece + 1000).map(|_| rng.next() as u8).collect();
    for len in [
        0,
        1,
        piece - 1,
        piece,
        piece + 1,
        2 * piece,
        2 * piece + 1000,
    ] {
        assert_eq!(
            book::crc32(&data[..len]),
            crc32fast::hash(&data[..len]),
            "{len} bytes"
        );
    }
}

/// Options no book can hold (a turn limit no book records, more seeds
/// than books index) are refused by `check` and, before any work, by
/// `generate` (a book generated with such a turn limit would be written,
/// then refused on open); the limits themselves pass.
#[test]
fn generating_what_no_book_holds_is_refused() {
    let with = |max_seeds, turn_limit| GenerateOptions {
        turn_limit,
        ..GenerateOptions::new(max_seeds)
    };
    for (options, refusal, message) in [
        (
            with(2, 0),
            OptionsError::TurnLimit(0),
            "turn limit 0: books hold 1 to 65535",
        ),
        (
            with(2, 65_536),
            OptionsError::TurnLimit(65_536),
            "turn limit 65536: books hold 1 to 65535",
        ),
        (
            with(28, 200),
            OptionsError::Seeds(28),
            "28 seeds: books hold at most 27",
        ),
    ] {
        assert_eq!(options.check(), Err(refusal));
        assert_eq!(refusal.to_string(), message);
        let outcome = std::panic::catch_unwind(|| generate(options, |_| {}));
        let error = outcome.expect_err("no book");
        assert_eq!(*error.downcast::<String>().unwrap(), message);
    }
    for options in [with(0, 1), with(MAX_BOOK_SEEDS, MAX_TURN_LIMIT)] {
        assert_eq!(options.check(), Ok(()), "{options:?}");
    }
}

/// A per-board change encoding cannot hold more than 255 turns: asking for
/// one on a longer book panics before anything is written (it had written
/// a book no reader opens), and the encoding the book gets by default
/// opens.
#[test]
fn change_encodings_refuse_books_past_their_turns() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let generated = generate(
        GenerateOptions {
            turn_limit: 300,
            ..GenerateOptions::new(3)
        },
        |_| {},
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("300.book");
    for encoding in [Encoding::Changes, Encoding::ChangesV1] {
        let bytes = catch_unwind(AssertUnwindSafe(|| {
            OwareBook::to_bytes_with(&generated, encoding)
        }));
        assert!(bytes.is_err(), "{encoding:?} encoded 300 turns");
        let written = catch_unwind(AssertUnwindSafe(|| {
            OwareBook::write_with(&path, &generated, encoding)
        }));
        assert!(written.is_err(), "{encoding:?} wrote 300 turns");
        assert!(!path.exists());
    }
    // A writer appending levels commits none of them in such an encoding.
    let mut writer = endbook::games::oware::BookWriter::create(&path, Encoding::Changes).unwrap();
    for level in 0..generated.solution.levels.len() {
        writer.append_level(&generated.solution, level).unwrap();
    }
    let finished = catch_unwind(AssertUnwindSafe(|| writer.finish(&generated, &path)));
    assert!(finished.is_err(), "a writer committed 300 turns in Changes");
    assert!(OwareBook::open(&path).is_err());
    OwareBook::write(&path, &generated).unwrap();
    let book = OwareBook::open(&path).unwrap();
    assert_eq!(book.turn_limit(), 300);
}

/// The library's writers, as the command line's: through a symbolic link
/// the link stays and its target gets the book; a named pipe, a folder or a
/// link to nothing is refused and left as it is (the book is renamed into
/// place, which had replaced a pipe, or a device for a root user, with a
/// regular file).
#[test]
fn books_are_written_through_links_and_never_over_other_files() {
    let generated = generate(GenerateOptions::new(3), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.book");
    let link = dir.path().join("link.book");
    fs::write(&target, b"old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    OwareBook::write(&link, &generated).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(OwareBook::open(&target).unwrap().max_seeds(), 3);
    let pipe = dir.path().join("pipe.book");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.unwrap().success(), "mkfifo");
    let folder = dir.path().join("folder.book");
    fs::create_dir(&folder).unwrap();
    let dangling = dir.path().join("dangling.book");
    std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
    for (path, kind) in [
        (&pipe, std::io::ErrorKind::InvalidInput),
        (&folder, std::io::ErrorKind::InvalidInput),
        (&dangling, std::io::ErrorKind::NotFound),
    ] {
        match OwareBook::write(path, &generated) {
            Err(BookError::Io { source, .. }) => assert_eq!(source.kind(), kind, "{path:?}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    // And a writer appending levels: created, and renamed at the end,
    // alike (creating at a pipe had waited for a reader).
    use endbook::games::oware::BookWriter;
    let partial = dir.path().join("w.partial");
    let appended = || {
        let mut writer = BookWriter::create(&partial, Encoding::Changes).unwrap();
        for level in 0..generated.solution.levels.len() {
            writer.append_level(&generated.solution, level).unwrap();
        }
        writer
    };
    for (path, kind) in [
        (&pipe, std::io::ErrorKind::InvalidInput),
        (&folder, std::io::ErrorKind::InvalidInput),
        (&dangling, std::io::ErrorKind::NotFound),
    ] {
        match BookWriter::create(path, Encoding::Changes) {
            Err(BookError::Io { source, .. }) => assert_eq!(source.kind(), kind, "{path:?}"),
            Err(other) => panic!("{path:?}: {other:?}"),
            Ok(_) => panic!("{path:?}: created"),
        }
        match appended().finish(&generated, path) {
            Err(BookError::Io { source, .. }) => assert_eq!(source.kind(), kind, "{path:?}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    fs::remove_file(&partial).unwrap();
    fs::write(&target, b"old").unwrap();
    appended().finish(&generated, &link).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(OwareBook::open(&target).unwrap().max_seeds(), 3);
    assert!(fs::symlink_metadata(&pipe).unwrap().file_type().is_fifo());
    assert!(folder.is_dir());
    assert!(fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        5,
        "no file left beside them"
    );
}

/// What a library user reaches for: writers take any path type, books and
/// generated books print a summary with `{:?}` (so they fit in a derived
/// `Debug` of the user's own), and open's error type is named beside them.
#[test]
fn books_take_any_path_and_print_a_summary() {
    let generated = generate(GenerateOptions::new(3), |_| {});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("3.book");
    OwareBook::write(path.to_str().unwrap(), &generated).unwrap();
    let book = OwareBook::open(&path).unwrap();
    let summary = format!("{book:?}");
    for part in [
        "OwareBook",
        "3.book",
        "max_seeds: 3",
        "turn_limit: 200",
        "Changes",
    ] {
        assert!(summary.contains(part), "{part}: {summary}");
    }
    assert!(format!("{generated:?}").contains("max_seeds: 3"));
    let missing: endbook::games::oware::BookError =
        OwareBook::open(dir.path().join("none")).unwrap_err();
    assert!(format!("{missing:?}").starts_with("Io"), "{missing:?}");
}
