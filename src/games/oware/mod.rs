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
pub use crate::engine::TurnsLeft;
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
pub use verify::{verify, verify_sample, Mismatch, SampleError, Verified, VerifyProgress};
