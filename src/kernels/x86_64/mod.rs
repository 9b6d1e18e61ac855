//! x86-64 kernels, compiled for their instruction set and entered only after
//! runtime detection.

pub(super) mod avx2;
pub(super) mod avx512;
