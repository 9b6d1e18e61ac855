//! The flat export must reproduce the `endSeeds` array of the program in
//! `000-oware-endgame-books.md` byte for byte (N = 9 seeds, 146 layers), and of
//! the same program enlarged to 12 and 13 seeds and 200 layers, and the state
//! counts its table gives.

use endbook::games::oware::{generate, BoardIndex, GenerateOptions, OwareBook};
use sha2::{Digest, Sha256};

/// SHA-256 of the article program's `endSeeds` array (42,913,634 bytes).
const ARTICLE_FLAT_9_SHA256: &str =
    "70d9caa6035222a644b8e1c6894c3cfc996c9f2e14dc59cf6c8bb2f76e397d36";

#[test]
fn flat_export_of_nine_seeds_matches_the_article() {
    let generated = generate(GenerateOptions::new(9), |_| {});
    let book = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    // Nine-seed values last change at turn 145; the article sweeps 146 layers,
    // and the export repeats the converged layer up to the layers asked for.
    assert_eq!(book.levels()[9].last_change, 145);
    let mut flat = Vec::new();
    book.export_flat(146, &mut flat).unwrap();
    assert_eq!(flat.len(), 42_913_634);
    assert_eq!(book.flat_len(146), 42_913_634);
    assert_eq!(hex(&Sha256::digest(&flat)), ARTICLE_FLAT_9_SHA256);
}

/// Size and SHA-256 of the `endSeeds` array (200 layers of the boards with
/// 1 to N seeds) written by the article's program with its arrays sized for
/// N seeds and 200 layers (`../shared/anchors/article-oware-book-enlarged.cpp`,
/// `g++ -O3 -march=native -DNSEEDS=N`, run with an output path), for N = 12
/// and 13: an independent reference for every value of those books, each
/// layer of it.
const ENLARGED_FLAT_SHA256: [(u32, u64, &str); 2] = [
    (
        12,
        540_831_000,
        "bb06c98fe50d662300c15b9e0f5f99ff2a346143eeaba23613511930462de0f6",
    ),
    (
        13,
        1_040_059_800,
        "7831cf2fdb4fb086f597817c3e12b770093faab6751b8040a9a461993766ec06",
    ),
];

/// Hashes what is written to it, keeping nothing: all of it, and apart
/// the first `keep` bytes of each `layer` bytes (the flat export of a
/// smaller book: each layer starts with the boards of fewer seeds).
struct Hashing {
    all: Sha256,
    prefixes: Sha256,
    layer: u64,
    keep: u64,
    written: u64,
    kept: u64,
}

impl std::io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.all.update(bytes);
        let mut rest = bytes;
        while !rest.is_empty() {
            let at = self.written % self.layer;
            let run = (self.layer - at).min(rest.len() as u64) as usize;
            if at < self.keep {
                let kept = (self.keep - at).min(run as u64) as usize;
                self.prefixes.update(&rest[..kept]);
                self.kept += kept as u64;
            }
            self.written += run as u64;
            rest = &rest[run..];
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn flat_exports_of_twelve_and_thirteen_seeds_match_the_enlarged_article_program() {
    // The 13-seed book holds the 12-seed one's levels, and its flat layers
    // start with the 12-seed book's: one generation, one export.
    let generated = generate(GenerateOptions::new(13), |_| {});
    let book = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    let [(twelve, len_12, sha_12), (thirteen, len_13, sha_13)] = ENLARGED_FLAT_SHA256;
    assert_eq!((twelve, thirteen), (12, 13));
    let mut hashing = Hashing {
        all: Sha256::new(),
        prefixes: Sha256::new(),
        layer: book.flat_len(1),
        keep: len_12 / 200,
        written: 0,
        kept: 0,
    };
    book.export_flat(200, &mut hashing).unwrap();
    assert_eq!((hashing.written, hashing.kept), (len_13, len_12));
    assert_eq!(hex(&hashing.prefixes.finalize()), sha_12, "12 seeds");
    assert_eq!(hex(&hashing.all.finalize()), sha_13, "13 seeds");
}

#[test]
fn state_counts_match_the_article_table() {
    let cumulative = [
        12, 90, 454, 1819, 6187, 18563, 50387, 125969, 293929, 646645,
    ];
    let index = BoardIndex::new(10);
    for (seeds, &expected) in (1..).zip(&cumulative) {
        // Level 0 (the empty board) is stored but not counted by the article.
        assert_eq!(index.level_starts()[seeds + 1] - 1, expected);
    }
}
