//! AVX2 change packing, for CPUs without AVX-512's byte compression: a
//! block of 64 boards compared with two `vpcmpeqb`, then its changed lanes
//! packed sixteen at a time: a table lookup per eight lanes (the table
//! holds, for each 8-bit mask, the numbers of its set lanes in order), the
//! two joined into one `pshufb` of the sixteen values, the gaps taken as
//! byte differences of neighbouring lanes in a 16-byte vector, and the
//! (gap, value) pairs interleaved by `punpcklbw` and `punpckhbw`. Every
//! quarter of the block is stored whole, 32 bytes, and the next one starts
//! where its pairs end: no loop over a block's changes, so no branch that
//! depends on them (the plain packer's loop mispredicts about once a
//! block).

use crate::engine::{PackedChanges, BLOCK};
use std::arch::x86_64::*;

/// For each 8-bit mask, the lanes of its set bits in ascending order, one
/// per byte from the lowest, the bytes past them 0.
static SET_LANES: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lanes, mut count, mut lane) = (0u64, 0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                lanes |= (lane as u64) << (8 * count);
                count += 1;
            }
            lane += 1;
        }
        table[mask] = lanes;
        mask += 1;
    }
    table
};

push_differences_with!("avx2,popcnt,lzcnt,bmi1", "AVX2, POPCNT, LZCNT and BMI1");

/// A bit per byte where `old` and `new` differ.
#[inline]
#[target_feature(enable = "avx2")]
fn differing(old: &[i8; BLOCK], new: &[i8; BLOCK]) -> u64 {
    let equal = |half: usize| {
        // SAFETY: both arrays are 64 bytes, so bytes `half * 32..+32` are
        // in each; the loads need no alignment.
        let (old, new) = unsafe {
            (
                _mm256_loadu_si256(old.as_ptr().add(half * 32).cast()),
                _mm256_loadu_si256(new.as_ptr().add(half * 32).cast()),
            )
        };
        u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(old, new)) as u32)
    };
    !(equal(0) | equal(1) << 32)
}

/// `engine::changes`' `block_pairs`, sixteen lanes at a time: the
/// pairs first, the bytes after them in `out` overwritten with others.
#[inline]
#[target_feature(enable = "avx2,popcnt,lzcnt")]
fn pairs(differ: u64, new: &[i8; BLOCK], out: &mut [u8; 2 * BLOCK]) {
    const EIGHTS: u64 = 0x0808_0808_0808_0808;
    let mut at = 0;
    // One past the last changed lane so far: the base of the next gap.
    let mut next = 0;
    for quarter in 0..BLOCK / 16 {
        let mask = (differ >> (16 * quarter)) as u16;
        let (low, high) = (mask as u8, (mask >> 8) as u8);
        // The quarter's changed lanes (within it) from the lowest: the low
        // eight's, then the high eight's moved up past them (the bytes past
        // the low eight's are 0, so an `or` places the others).
        let low_count = low.count_ones();
        let picks = u128::from(SET_LANES[usize::from(low)])
            | u128::from(SET_LANES[usize::from(high)] + EIGHTS) << (8 * low_count);
        let picks = _mm_set_epi64x((picks >> 64) as i64, picks as i64);
        // SAFETY: bytes `quarter * 16..+16` are within the 64 of `new`.
        let quarter_values = unsafe { _mm_loadu_si128(new.as_ptr().add(quarter * 16).cast()) };
        let values = _mm_shuffle_epi8(quarter_values, picks);
        // Block lanes; each one's gap base is the lane before it plus one,
        // the first's `next`. Past the quarter's changes the bytes are
        // garbage, and so are their pairs.
        let lanes = _mm_add_epi8(picks, _mm_set1_epi8(16 * quarter as i8));
        let bases = _mm_or_si128(
            _mm_slli_si128::<1>(_mm_add_epi8(lanes, _mm_set1_epi8(1))),
            _mm_cvtsi32_si128(next),
        );
        let gaps = _mm_sub_epi8(lanes, bases);
        let pairs = _mm256_set_m128i(
            _mm_unpackhi_epi8(gaps, values),
            _mm_unpacklo_epi8(gaps, values),
        );
        // Earlier quarters wrote `at <= 2 * 16 * quarter` bytes, so the 32
        // bytes stored end by byte 128.
        let slot: &mut [u8; 32] = (&mut out[at..at + 32]).try_into().unwrap();
        // SAFETY: `slot` is 32 bytes; the store needs no alignment.
        unsafe { _mm256_storeu_si256(slot.as_mut_ptr().cast(), pairs) };
        at += 2 * mask.count_ones() as usize;
        if mask != 0 {
            next = (quarter * 16 + 16 - mask.leading_zeros() as usize) as i32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::block_pairs;

    /// Every 16-bit mask in every quarter, after quarters below it with no
    /// change or with their highest lane set, the others random: the pairs
    /// equal the plain packer's.
    #[test]
    fn every_quarter_mask_packs_as_the_plain_loop() {
        if !crate::kernels::Packing::Avx2.is_supported() {
            crate::kernels::skip_unsupported("avx2", "packing by quarter masks");
            return;
        }
        let mut random = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        for quarter in 0..4 {
            for mask in 0..=u16::MAX {
                let below = match mask % 3 {
                    0 => 0,
                    1 => 1u64 << (16 * quarter) >> 1,
                    _ => random(),
                } & ((1u64 << (16 * quarter)) - 1);
                let above = random() & u64::MAX.checked_shl(16 * (quarter + 1)).unwrap_or(0);
                let differ = below | u64::from(mask) << (16 * quarter) | above;
                let new: [i8; BLOCK] = std::array::from_fn(|_| random() as i8);
                let (mut expected, mut packed) = ([0u8; 2 * BLOCK], [0u8; 2 * BLOCK]);
                block_pairs(differ, &new, &mut expected);
                // SAFETY: AVX2, POPCNT and LZCNT were detected above (the
                // variant's detection requires all three).
                unsafe { pairs(differ, &new, &mut packed) };
                let used = 2 * differ.count_ones() as usize;
                assert_eq!(packed[..used], expected[..used], "{differ:#018x}");
            }
        }
    }
}
