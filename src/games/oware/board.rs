//! The Oware board and its text notation.
//!
//! Houses are numbered from the point of view of the player to move: 0-5 are
//! theirs, 6-11 the opponent's, and sowing runs 0, 1, ..., 11, 0, ... The text
//! notation is the 12 counts in that order, as a CodinGame bot reads its input:
//! `"4 4 4 4 4 4 4 4 4 4 4 4"` is the opening position.

use crate::games::count_fields;
use std::fmt;
use std::str::FromStr;

/// Number of houses on the board.
pub const HOUSES: usize = 12;
/// Houses per side.
pub const SIDE: usize = 6;

/// Most seeds a board may hold in all, so that no house count can overflow.
pub const MAX_BOARD_SEEDS: u32 = u8::MAX as u32;

/// A board seen by the player to move (houses 0-5 are theirs).
///
/// A board holds at most [`MAX_BOARD_SEEDS`] seeds in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Board {
    houses: [u8; HOUSES],
}

impl Board {
    /// The board with these house counts, player to move first.
    ///
    /// # Panics
    ///
    /// If the board holds more than [`MAX_BOARD_SEEDS`] seeds (see
    /// [`Board::try_new`]).
    pub fn new(houses: [u8; HOUSES]) -> Board {
        Board::try_new(houses).expect("a board holds at most 255 seeds")
    }

    /// The board with these house counts, player to move first, if it
    /// holds at most [`MAX_BOARD_SEEDS`] seeds.
    pub fn try_new(houses: [u8; HOUSES]) -> Option<Board> {
        let board = Board { houses };
        (board.seeds() <= MAX_BOARD_SEEDS).then_some(board)
    }

    /// The seed counts, houses 0..11.
    pub const fn houses(&self) -> &[u8; HOUSES] {
        &self.houses
    }

    pub(crate) fn houses_mut(&mut self) -> &mut [u8; HOUSES] {
        &mut self.houses
    }

    /// Total seeds on the board.
    pub fn seeds(&self) -> u32 {
        self.houses.iter().map(|&h| h as u32).sum()
    }

    /// Seeds on the side of the player to move (houses 0-5).
    pub fn own_seeds(&self) -> u32 {
        self.houses[..SIDE].iter().map(|&h| h as u32).sum()
    }

    /// Seeds on the opponent's side (houses 6-11).
    pub fn opponent_seeds(&self) -> u32 {
        self.houses[SIDE..].iter().map(|&h| h as u32).sum()
    }

    /// The same board seen by the other player.
    pub fn flipped(&self) -> Board {
        let mut houses = [0; HOUSES];
        houses[..SIDE].copy_from_slice(&self.houses[SIDE..]);
        houses[SIDE..].copy_from_slice(&self.houses[..SIDE]);
        Board { houses }
    }
}

/// The 12 counts separated by spaces; with `{:#}`, a `|` between the
/// sides (`0 0 1 0 0 0 | 2 1 0 0 0 0`). Both read back.
impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, h) in self.houses.iter().enumerate() {
            if i == SIDE && f.alternate() {
                f.write_str(" | ")?;
            } else if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{h}")?;
        }
        Ok(())
    }
}

/// Why a board's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseBoardError {
    /// Not exactly 12 counts.
    WrongCount(usize),
    /// Split by a `|` into sides that do not hold 6 counts each.
    SideCounts { mover: usize, other: usize },
    /// More than one `|`.
    Bars(usize),
    /// A count that is not a non-negative integer, with its house.
    NotACount { house: usize, text: String },
    /// More than [`MAX_BOARD_SEEDS`] seeds in all.
    TooManySeeds(u32),
}

impl fmt::Display for ParseBoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseBoardError::WrongCount(n) => write!(
                f,
                "a board is 12 seed counts (houses 0-11, player to move first), found {n}"
            ),
            ParseBoardError::SideCounts { mover, other } => write!(
                f,
                "a board split by '|' is 6 seed counts on each side (the player to move's \
                 first), found {mover} | {other}"
            ),
            ParseBoardError::Bars(n) => write!(
                f,
                "a board has at most one '|', between the two sides; found {n}"
            ),
            ParseBoardError::NotACount { house, text } => write!(
                f,
                "house {house}: '{}' is not a seed count (an integer from 0 to 255)",
                crate::games::excerpt(text)
            ),
            ParseBoardError::TooManySeeds(n) => {
                write!(
                    f,
                    "the board holds {n} seeds; at most {MAX_BOARD_SEEDS} are allowed"
                )
            }
        }
    }
}

impl std::error::Error for ParseBoardError {}

impl FromStr for Board {
    type Err = ParseBoardError;

    /// Reads 12 counts separated by spaces and/or commas, and at most one
    /// `|` between the sides (as boards are shown: `4 4 4 4 4 4 | 4 4 4 4 4 4`).
    fn from_str(text: &str) -> Result<Board, ParseBoardError> {
        let counts = |text| count_fields(text).collect::<Vec<&str>>();
        let fields = match text.split('|').collect::<Vec<_>>()[..] {
            [all] => counts(all),
            [mover, other] => {
                let (mover, other) = (counts(mover), counts(other));
                if mover.len() != SIDE || other.len() != SIDE {
                    return Err(ParseBoardError::SideCounts {
                        mover: mover.len(),
                        other: other.len(),
                    });
                }
                [mover, other].concat()
            }
            ref sides => return Err(ParseBoardError::Bars(sides.len() - 1)),
        };
        if fields.len() != HOUSES {
            return Err(ParseBoardError::WrongCount(fields.len()));
        }
        let mut houses = [0u8; HOUSES];
        for (house, (slot, field)) in houses.iter_mut().zip(&fields).enumerate() {
            *slot = field.parse().map_err(|_| ParseBoardError::NotACount {
                house,
                text: field.to_string(),
            })?;
        }
        let board = Board { houses };
        if board.seeds() > MAX_BOARD_SEEDS {
            return Err(ParseBoardError::TooManySeeds(board.seeds()));
        }
        Ok(board)
    }
}
