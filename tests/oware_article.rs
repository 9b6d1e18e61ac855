//! The flat export must reproduce the `endSeeds` array of the program in
//! `000-oware-endgame-books.md` byte for byte (N = 9 seeds, 146 layers), and of
//! the same program enlarged to 12 seeds and 200 layers, and the state counts
//! its table gives.

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
    let digest: String = Sha256::digest(&flat)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, ARTICLE_FLAT_9_SHA256);
}

/// SHA-256 of the `endSeeds` array (540,831,000 bytes: 200 layers of the
/// 2,704,155 boards with 1 to 12 seeds) written by the article's program
/// with its arrays sized for 12 seeds and 200 layers
/// (`../shared/anchors/article-oware-book-enlarged.cpp`, `g++ -O3
/// -march=native -DNSEEDS=12`, run with an output path): an independent
/// reference for every value of the 12-seed book, each layer of it.
const ENLARGED_FLAT_12_SHA256: &str =
    "bb06c98fe50d662300c15b9e0f5f99ff2a346143eeaba23613511930462de0f6";

/// Hashes what is written to it, keeping nothing.
struct Hashing(Sha256, u64);

impl std::io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        self.1 += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn flat_export_of_twelve_seeds_matches_the_enlarged_article_program() {
    let generated = generate(GenerateOptions::new(12), |_| {});
    let book = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
    let mut hashing = Hashing(Sha256::new(), 0);
    book.export_flat(200, &mut hashing).unwrap();
    assert_eq!(hashing.1, 540_831_000);
    let digest: String = hashing
        .0
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, ENLARGED_FLAT_12_SHA256);
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
