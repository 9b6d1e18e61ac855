//! The games: each brings its rules, indexing and reduction to the shared engine and book container
//! (Oware; backgammon bear-offs).

pub mod bearoff;
pub mod oware;
