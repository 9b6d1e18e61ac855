//! Move generation on packed boards.
//!
//! A board packs into a `u64`, house `i` in bits `5i..5i+5`, so the opponent's
//! side is bits 30..60. Sowing adds a precomputed increment word. A house holds
//! 2 or 3 exactly when, of its five bits, bit 1 is set and bits 2-4 are clear.
//! The captured chain is the run of such houses ending at the last seed's
//! house; two ways to find it:
//!
//! - scalar: in place, on one flag bit per house field: mask the fields up to
//!   the last seed's, find the highest field without a flag (`leading_zeros`),
//!   keep the flags above it;
//! - BMI2: `pext` compacts the six flags into six bits, the run is found there,
//!   and `pdep` spreads it back to the fields, as the program in
//!   `000-oware-endgame-books.md` does.
//!
//! Either way, multiplying a field's low bit by 31 gives the field's mask.

use crate::games::oware::board::{Board, HOUSES, SIDE};
use crate::games::oware::movegen::GeneratedMove;

const FIELD_BITS: usize = 5;
const FIELD: u64 = 0x1f;
/// Bit 1 of each of six fields.
const BIT1: u32 = 0b00010_00010_00010_00010_00010_00010;
/// Bit 0 of each of six fields.
const BIT0: u32 = 0b00001_00001_00001_00001_00001_00001;
const SIDE_SHIFT: u32 = (FIELD_BITS * SIDE) as u32;
const SIDE_MASK: u64 = (1 << SIDE_SHIFT) - 1;

/// Most seeds a packed board may hold (a house field has 5 bits).
pub const MAX_PACKED_SEEDS: u32 = 31;

/// For each house and seed count: the word to add when sowing, and the house
/// of the last seed.
struct Sowing {
    increments: [[u64; MAX_PACKED_SEEDS as usize + 1]; SIDE],
    last: [[u8; MAX_PACKED_SEEDS as usize + 1]; SIDE],
}

const SOWING: Sowing = {
    let mut increments = [[0u64; MAX_PACKED_SEEDS as usize + 1]; SIDE];
    let mut last = [[0u8; MAX_PACKED_SEEDS as usize + 1]; SIDE];
    let mut house = 0;
    while house < SIDE {
        let mut seeds = 1;
        while seeds <= MAX_PACKED_SEEDS as usize {
            let mut word = 0u64;
            let mut at = house;
            let mut left = seeds;
            while left > 0 {
                at = (at + 1) % HOUSES;
                if at != house {
                    word += 1 << (FIELD_BITS * at);
                    left -= 1;
                }
            }
            increments[house][seeds] = word;
            last[house][seeds] = at as u8;
            seeds += 1;
        }
        house += 1;
    }
    Sowing { increments, last }
};

fn pack(board: &Board) -> u64 {
    board
        .houses()
        .iter()
        .enumerate()
        .fold(0, |word, (i, &h)| word | u64::from(h) << (FIELD_BITS * i))
}

fn unpack(word: u64) -> Board {
    Board::new(std::array::from_fn(|i| {
        ((word >> (FIELD_BITS * i)) & FIELD) as u8
    }))
}

/// Bits `0..=bit` set.
#[inline(always)]
fn up_to(bit: u32) -> u32 {
    (2 << bit) - 1
}

/// The chain ending at opponent house `end` (0-5), as the low bit of each
/// captured field, from the 2-or-3 flags at bit 0 of each field.
#[inline(always)]
fn chain_scalar(flags: u32, end: u32) -> u32 {
    let reach = BIT0 & up_to(FIELD_BITS as u32 * end);
    let gaps = reach & !flags;
    if gaps == 0 {
        flags & reach
    } else {
        flags & reach & !up_to(31 - gaps.leading_zeros())
    }
}

/// As [`chain_scalar`], through six compacted bits.
///
/// # Safety
///
/// The CPU must support BMI2.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "bmi2")]
unsafe fn chain_bmi2(flags: u32, end: u32) -> u32 {
    use std::arch::x86_64::{_pdep_u32, _pext_u32};
    let compact = _pext_u32(flags, BIT0) & up_to(end);
    let gaps = !compact & up_to(end);
    let run = if gaps == 0 {
        compact
    } else {
        compact & !up_to(31 - gaps.leading_zeros())
    };
    _pdep_u32(run, BIT0)
}

/// The legal moves of `board` in house order; returns how many.
///
/// With `BMI2` the chain is found by [`chain_bmi2`], so the CPU must support
/// BMI2; the public entry points below uphold that.
#[inline(always)]
fn moves<const BMI2: bool>(board: &Board, out: &mut [GeneratedMove; SIDE]) -> usize {
    assert!(
        board.seeds() <= MAX_PACKED_SEEDS,
        "packed boards hold at most 31 seeds"
    );
    let packed = pack(board);
    let mut count = 0;
    for house in 0..SIDE {
        let seeds = board.houses()[house] as usize;
        if seeds == 0 {
            continue;
        }
        let mut after =
            (packed & !(FIELD << (FIELD_BITS * house))) + SOWING.increments[house][seeds];
        let opponent = (after >> SIDE_SHIFT) as u32;
        if opponent == 0 {
            continue; // the opponent would have no seeds: illegal
        }
        let last = u32::from(SOWING.last[house][seeds]);
        let mut capture = 0;
        if last >= SIDE as u32 {
            let two_or_three =
                opponent & BIT1 & !(opponent >> 1) & !(opponent >> 2) & !(opponent >> 3);
            let flags = two_or_three >> 1;
            let end = last - SIDE as u32;
            let chain = if BMI2 {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `moves::<true>` is only reached through `moves_bmi2`,
                // whose caller guarantees BMI2.
                unsafe {
                    chain_bmi2(flags, end)
                }
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!()
            } else {
                chain_scalar(flags, end)
            };
            let fields = chain * FIELD as u32;
            let remaining = opponent & !fields;
            // Capture unless the chain would take everything (a grand slam).
            if chain != 0 && remaining != 0 {
                // A field of 2 has bit 1; a field of 3 has bits 1 and 0.
                let taken = opponent & fields;
                capture = (taken & BIT1).count_ones() + taken.count_ones();
                after = (after & SIDE_MASK) | u64::from(remaining) << SIDE_SHIFT;
            }
        }
        let flipped = (after >> SIDE_SHIFT) | (after & SIDE_MASK) << SIDE_SHIFT;
        out[count] = GeneratedMove {
            capture: capture as u8,
            child: unpack(flipped),
        };
        count += 1;
    }
    count
}

/// The legal moves of `board` with plain bit operations.
pub(super) fn moves_scalar(board: &Board, out: &mut [GeneratedMove; SIDE]) -> usize {
    moves::<false>(board, out)
}

/// The legal moves of `board` with `pext`/`pdep`.
///
/// # Safety
///
/// The CPU must support BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
pub(super) unsafe fn moves_bmi2(board: &Board, out: &mut [GeneratedMove; SIDE]) -> usize {
    moves::<true>(board, out)
}
