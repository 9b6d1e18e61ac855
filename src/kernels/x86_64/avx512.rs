//! AVX-512 change packing: a block of 64 boards compared with one
//! `vpcmpb`, its changed values and their lanes gathered to the front with
//! `vpcompressb` (VBMI2), the gaps taken as differences of neighbouring
//! lanes, and the (gap, value) pairs interleaved by two `vpermt2b` (VBMI).
//! No loop over a block's changes, so no branch that depends on them: the
//! plain packer's loop mispredicts about once per block.

use crate::engine::{PackedChanges, BLOCK};
use std::arch::x86_64::*;

/// Lane numbers `0..64`.
const LANES: [u8; 64] = {
    let mut lanes = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        lanes[i] = i as u8;
        i += 1;
    }
    lanes
};

/// Byte `i` of a `vpermb` by this takes byte `i - 1` (byte 0 is masked off).
const PREVIOUS: [u8; 64] = {
    let mut previous = [0u8; 64];
    let mut i = 1;
    while i < 64 {
        previous[i] = (i - 1) as u8;
        i += 1;
    }
    previous
};

/// `vpermt2b` indices interleaving bytes `half * 32..` of the gaps (first
/// table) and of the values (second, bit 6 set): gap, value, gap, value...
const fn interleave(half: usize) -> [u8; 64] {
    let mut indices = [0u8; 64];
    let mut i = 0;
    while i < 32 {
        indices[2 * i] = (half * 32 + i) as u8;
        indices[2 * i + 1] = (64 + half * 32 + i) as u8;
        i += 1;
    }
    indices
}

const INTERLEAVE_LOW: [u8; 64] = interleave(0);
const INTERLEAVE_HIGH: [u8; 64] = interleave(1);

push_differences_with!(
    "avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,lzcnt,bmi1",
    "AVX-512 F, BW, VBMI and VBMI2, POPCNT, LZCNT and BMI1"
);

/// A bit per byte where `old` and `new` differ.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn differing(old: &[i8; BLOCK], new: &[i8; BLOCK]) -> u64 {
    // SAFETY: both are 64 bytes; the loads need no alignment.
    let (old, new) = unsafe {
        (
            _mm512_loadu_si512(old.as_ptr().cast()),
            _mm512_loadu_si512(new.as_ptr().cast()),
        )
    };
    _mm512_cmpneq_epi8_mask(old, new)
}

/// `engine::changes`' `block_pairs`, compressed: all 128 bytes of
/// `out` are written, the pairs first.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn pairs(differ: u64, new: &[i8; BLOCK], out: &mut [u8; 2 * BLOCK]) {
    let load = |bytes: &[u8; 64]| {
        // SAFETY: 64 bytes; the load needs no alignment.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    };
    // SAFETY: `new` is 64 bytes; the load needs no alignment.
    let values = unsafe { _mm512_loadu_si512(new.as_ptr().cast()) };
    let values = _mm512_maskz_compress_epi8(differ, values);
    let lanes = _mm512_maskz_compress_epi8(differ, load(&LANES));
    // Each changed lane's predecessor, -1 before the first: gaps are
    // `lane - previous - 1` (the first, `lane`), bytes wrapping alike.
    let previous = _mm512_mask_permutexvar_epi8(_mm512_set1_epi8(-1), !1, load(&PREVIOUS), lanes);
    let gaps = _mm512_sub_epi8(_mm512_sub_epi8(lanes, previous), _mm512_set1_epi8(1));
    let low = _mm512_permutex2var_epi8(gaps, load(&INTERLEAVE_LOW), values);
    let high = _mm512_permutex2var_epi8(gaps, load(&INTERLEAVE_HIGH), values);
    let out = out.as_mut_ptr();
    // SAFETY: `out` is 128 bytes, two unaligned 64-byte stores.
    unsafe {
        _mm512_storeu_si512(out.cast(), low);
        _mm512_storeu_si512(out.add(64).cast(), high);
    }
}
