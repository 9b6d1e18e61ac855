//! The games: each brings its rules, indexing and reduction to the shared engine and book container.

pub mod oware;
