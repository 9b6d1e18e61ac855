//! Oware Abapa (CodinGame rules): board, rules, indexing, generation and books.

pub mod board;
pub mod book;
pub mod generate;
pub mod index;
pub mod movegen;
pub mod rules;
pub mod runs;
pub mod verify;

pub use crate::book::BookError;
pub use board::{Board, ParseBoardError, HOUSES, SIDE};
pub use book::{
    Analysis, BookWriter, Encoded, Encoding, LevelEncoder, LevelInfo, LevelStats, Line, LineEnd,
    LinePly, OwareBook, ProbeError, ScoredMove, COMPACT_TURNS,
};
pub use generate::{
    extend, generate, GenerateOptions, Generated, OptionsError, Progress as GenerateProgress,
    Sweep, DEFAULT_TURN_LIMIT, MAX_TURN_LIMIT,
};
pub use index::{BoardIndex, MAX_BOOK_SEEDS};
pub use movegen::{MoveGen, MoveGenKind};
pub use rules::{legal_moves, play, MoveOutcome};
pub use verify::{verify, Mismatch, Verified, VerifyProgress};

/// "1 turn left", "`n` turns left": how messages name a number of turns left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnsLeft(pub u32);

impl std::fmt::Display for TurnsLeft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            1 => f.write_str("1 turn left"),
            n => write!(f, "{n} turns left"),
        }
    }
}
