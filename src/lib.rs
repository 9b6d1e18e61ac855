//! Exact endgame books by parallel retrograde analysis.
//!
//! `endbook` generates, for every position of a game up to a size limit and
//! every number of turns left, the exact value under perfect play, stores it in
//! a validated, memory-mapped book, and looks positions up.
//!
//! The crate is laid out by concern:
//! - [`games`]: each game's rules, indexing and book interpretation ([`games::oware`],
//!   [`games::bearoff`]);
//! - [`index`]: combinatorial ranking shared by the games;
//! - [`engine`]: the generator, layered sweeps over a precomputed child cache;
//! - [`kernels`]: the layer-update kernels the engine dispatches to;
//! - [`book`]: the book container format.
//!
//! ```
//! use endbook::games::oware::{generate, Board, GenerateOptions, OwareBook};
//!
//! let generated = generate(GenerateOptions::new(4), |_| {});
//! let book = OwareBook::from_bytes(OwareBook::to_bytes(&generated)).unwrap();
//! let board: Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
//! // With one turn left: sowing house 5 makes house 6 hold 2, captured.
//! assert_eq!(book.value(&board, 1).unwrap(), 2);
//! // With 200: the opponent's seed in house 7 comes back with interest.
//! let analysis = book.analyse(&board, 200).unwrap();
//! assert_eq!(analysis.value, book.value(&board, 200).unwrap());
//! ```

pub mod book;
pub mod engine;
pub mod games;
pub mod index;
pub mod kernels;
#[cfg(test)]
mod testing;
