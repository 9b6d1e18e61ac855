//! Oware Abapa as CodinGame plays it, from the point of view of the player to move.
//!
//! - A move picks a non-empty own house (0-5) and sows its seeds one by one into
//!   the following houses, skipping the origin house when 12 or more seeds lap
//!   the board.
//! - If the last seed lands on the opponent's side (6-11) in a house that now
//!   holds 2 or 3, that house is captured, and so is each preceding house on the
//!   opponent's side that holds 2 or 3, walking backwards until one does not.
//! - Grand slam: a capture that would take every seed on the opponent's side
//!   captures nothing; the sowing stays.
//! - A move that leaves the opponent without seeds is illegal. A player with no
//!   legal move ends the game and scores the seeds on their own side.

use super::board::{Board, HOUSES, SIDE};

/// What one legal move does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The house sown from (0-5).
    pub house: usize,
    /// Seeds captured by the move.
    pub capture: u8,
    /// The board after the move, still seen by the player who moved.
    pub after: Board,
}

impl MoveOutcome {
    /// The position the opponent faces: `after` seen from their side.
    pub fn child(&self) -> Board {
        self.after.flipped()
    }
}

/// Sows `house` on `board`; returns the house the last seed fell in.
///
/// Every house but the origin receives one seed per full lap of 11, then the
/// remaining seeds go one each into the houses after the origin.
#[inline]
fn sow(board: &mut Board, house: usize) -> usize {
    let houses = board.houses_mut();
    let seeds = houses[house] as usize;
    houses[house] = 0;
    let laps = (seeds / (HOUSES - 1)) as u8;
    let rest = seeds % (HOUSES - 1);
    if laps > 0 {
        for (i, h) in houses.iter_mut().enumerate() {
            if i != house {
                *h += laps;
            }
        }
    }
    for step in 1..=rest {
        houses[(house + step) % HOUSES] += 1;
    }
    // With no remainder the last seed of the last lap fell just before the origin.
    let last_step = if rest > 0 { rest } else { HOUSES - 1 };
    (house + last_step) % HOUSES
}

/// Plays `house` for the player to move: `None` if it is empty or the move is
/// illegal (it would leave the opponent without seeds).
///
/// # Panics
///
/// Where `house` is not one of the mover's, 0-5.
#[inline]
pub fn play(board: &Board, house: usize) -> Option<MoveOutcome> {
    assert!(house < SIDE, "the player to move owns houses 0-5");
    if board.houses()[house] == 0 {
        return None;
    }
    let mut after = *board;
    let last = sow(&mut after, house);
    if after.opponent_seeds() == 0 {
        return None;
    }
    let mut capture = 0u8;
    if last >= SIDE {
        let houses = after.houses();
        let mut first = last + 1;
        while first > SIDE && matches!(houses[first - 1], 2 | 3) {
            first -= 1;
            capture += houses[first];
        }
        if u32::from(capture) == after.opponent_seeds() {
            capture = 0; // grand slam: nothing is captured
        } else {
            after.houses_mut()[first..=last].fill(0);
        }
    }
    Some(MoveOutcome {
        house,
        capture,
        after,
    })
}

/// The legal moves of the player to move, in house order.
pub fn legal_moves(board: &Board) -> impl Iterator<Item = MoveOutcome> + '_ {
    (0..SIDE).filter_map(move |house| play(board, house))
}

/// What the player to move scores when they have no legal move: their own seeds.
pub fn no_move_score(board: &Board) -> u32 {
    board.own_seeds()
}
