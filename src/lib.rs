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
//! - [`engine`]: the shared generator, layered sweeps over a precomputed
//!   child cache, for any game that provides its states, levels and moves
//!   (Oware's default run sweeps are its own, in [`games::oware::runs`];
//!   bear-off has its own solver in [`games::bearoff`]);
//! - [`kernels`]: the layer-update kernels (cache sweeps, Oware's row
//!   programs, change packing);
//! - [`book`]: the book container format, and the per-board change lists
//!   ([`book::compact`]) a game can store its levels in.
//!
//! To generate and probe books, [`games::oware`] (`generate`, `OwareBook`,
//! `Board`) and [`games::bearoff`] (`generate`, `BearoffBook`, `Lookup`,
//! `ranked_plays`) are all a user needs. [`engine`], [`kernels`], [`book`]
//! and [`index`] are public for games built on them (the engine's
//! documentation says what a game provides) and for the benchmarks; the
//! modules inside a game beyond those names (Oware's `runs`, `movegen`,
//! the book writers) are its machinery, public for its command line, tests
//! and benchmarks.
//!
//! ```
//! use endbook::games::oware::{generate, Board, GenerateOptions, OwareBook};
//!
//! let generated = generate(GenerateOptions::new(4), |_| {});
//! let book = OwareBook::from_generated(&generated);
//! let board: Board = "0 0 0 0 0 1 1 1 0 0 0 0".parse().unwrap();
//! // With one turn left: sowing house 5 makes house 6 hold 2, captured.
//! assert_eq!(book.value(&board, 1).unwrap(), 2);
//! // With 200: the opponent, left with the seed in house 7 and unable to
//! // feed the emptied side, has no move and keeps it: 2 - 1.
//! assert_eq!(book.value(&board, 200).unwrap(), 1);
//! let analysis = book.analyse(&board, 200).unwrap();
//! assert_eq!(analysis.best_moves().collect::<Vec<_>>(), [5]);
//! ```
//!
//! A book file is opened, checked and probed the same way:
//!
//! ```no_run
//! use endbook::games::oware::{Board, OwareBook};
//!
//! let book = OwareBook::open("oware-12.book")?;
//! let board: Board = "4 4 0 0 0 0 0 0 0 0 2 2".parse()?;
//! println!("{:+}", book.value(&board, 200)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod book;
pub mod engine;
pub mod games;
pub mod index;
pub mod kernels;
#[cfg(test)]
mod testing;
