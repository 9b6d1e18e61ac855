//! Layer-update kernels: `v[s] = max(base[s], max_k(capture[s,k] - prev[child[s,k]]))`
//! over a run of cache blocks (see [`crate::engine::MoveCache`] for the layout).
//!
//! | kernel | how | chosen |
//! |---|---|---|
//! | [`KernelKind::Scalar`] | plain loops; the oracle every other kernel is tested against | always available |
//! | [`KernelKind::Portable`] | `wide` vectors for the arithmetic, scalar loads for the gathers; instructions fixed at build time | always available |
//! | [`KernelKind::Avx2`] | `std::arch` AVX2: one `vpgatherdd` per move row of 8 states; in row sweeps, 32-byte runs and a `vpgatherdd` per 8 columns of the short runs' stretches | when the CPU has AVX2 (runtime detection) |
//!
//! Packing a layer's changes ([`PackedChanges::push_differences`], in every
//! row sweep; cache sweeps list theirs one by one) has vector paths of its own ([`Packing`]): AVX-512 byte
//! compression (`vpcompressb`, VBMI2) where runtime detection finds it,
//! else AVX2 compares and a table of `pshufb` shuffles; each packs exactly
//! the bytes of the portable path ([`change_packing`] says which runs).
//!
//! A [`Kernel`] can only be made for a kind the running CPU supports, so
//! holding one is the proof the unsafe AVX2 path needs. It is a small `Copy`
//! value handed to every rayon worker. Which kernel is fastest depends on the
//! CPU (gathers are slow on some, fast on others), so the engine's
//! [`KernelChoice::Auto`] times each available kernel on real layers and keeps
//! the fastest (the row sweeps time them again on each seed level: the
//! gathers pay only once a level's layers outgrow the L2 cache). Every
//! kernel computes exactly the same bytes.

mod portable;
pub mod rows;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86_64;

use crate::engine::{MoveCache, PackedChanges, LANES};
use rows::RowSweep;
use std::fmt;
use std::ops::Range;

/// Bytes a layer buffer must hold past its last state, so that a kernel may
/// read a 32-bit word at any state's byte.
pub const LAYER_PADDING: usize = 3;

/// The layer-update implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// Plain loops.
    Scalar,
    /// Portable SIMD through the `wide` crate.
    Portable,
    /// AVX2 gathers through `std::arch`.
    Avx2,
}

impl KernelKind {
    /// Every kind, in the order they are tried and reported.
    pub const ALL: [KernelKind; 3] = [KernelKind::Scalar, KernelKind::Portable, KernelKind::Avx2];

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Scalar => "scalar",
            KernelKind::Portable => "portable",
            KernelKind::Avx2 => "avx2",
        }
    }

    /// Whether the running CPU can execute this kernel.
    pub fn is_supported(self) -> bool {
        match self {
            KernelKind::Scalar | KernelKind::Portable => true,
            KernelKind::Avx2 => x86_64_has_avx2(),
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
fn x86_64_has_avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn x86_64_has_avx2() -> bool {
    false
}

/// A kernel the running CPU supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    kind: KernelKind,
}

/// Which kernel the engine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelChoice {
    /// Time every available kernel on the first layers and keep the fastest.
    Auto,
    /// Always this one.
    Fixed(Kernel),
}

impl Kernel {
    /// The kernel of `kind`, if the running CPU supports it.
    pub fn new(kind: KernelKind) -> Option<Kernel> {
        kind.is_supported().then_some(Kernel { kind })
    }

    /// The scalar kernel, available everywhere.
    pub fn scalar() -> Kernel {
        Kernel {
            kind: KernelKind::Scalar,
        }
    }

    /// Every kernel the running CPU supports.
    pub fn available() -> impl Iterator<Item = Kernel> {
        KernelKind::ALL.into_iter().filter_map(Kernel::new)
    }

    /// Which implementation this is.
    pub fn kind(self) -> KernelKind {
        self.kind
    }

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        self.kind.name()
    }

    /// Computes `out` (a whole number of blocks) for the blocks starting at
    /// `first_block` (blocks the cache holds), reading the previous layer `prev`.
    ///
    /// `prev` must cover every state of the cache plus [`LAYER_PADDING`] bytes,
    /// and its values must lie within [`crate::engine::VALUE_BOUND`].
    #[inline]
    pub fn sweep<const MOVES: usize>(
        self,
        cache: &MoveCache<MOVES>,
        first_block: usize,
        prev: &[i8],
        out: &mut [i8],
    ) {
        assert_eq!(out.len() % LANES, 0, "whole blocks only");
        assert!(first_block >= cache.first_block());
        assert!(first_block + out.len() / LANES <= cache.blocks());
        assert!(prev.len() >= cache.blocks() * LANES + LAYER_PADDING);
        // The AVX2 gathers take signed 32-bit offsets: a cache of more
        // states (up to u32::MAX) than i32::MAX goes to `portable`.
        let gathers_reach = cache.blocks() * LANES <= i32::MAX as usize;
        match self.kind {
            KernelKind::Scalar => scalar::sweep(cache, first_block, prev, out),
            KernelKind::Portable => portable::sweep(cache, first_block, prev, out),
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx2 if !gathers_reach => portable::sweep(cache, first_block, prev, out),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of kind Avx2 is only made after runtime
            // detection found AVX2; the bounds of `out`, the blocks and `prev`
            // were asserted above, and every child index in the cache is below
            // its state count (checked as the cache was built), itself at
            // most i32::MAX (checked just above).
            KernelKind::Avx2 => unsafe { x86_64::avx2::sweep(cache, first_block, prev, out) },
            #[cfg(not(target_arch = "x86_64"))]
            KernelKind::Avx2 => unreachable!("no AVX2 kernel is made on this architecture"),
        }
    }
}

impl Kernel {
    /// Sweeps rows `rows` of a [`rows::RowProgram`] into `out` (their
    /// positions), comparing with `previous`; returns the changes.
    #[inline]
    pub fn sweep_rows(
        self,
        sweep: &RowSweep<'_>,
        rows: Range<usize>,
        previous: &[i8],
        out: &mut [i8],
    ) -> PackedChanges {
        match self.kind {
            KernelKind::Scalar => rows::sweep::<rows::PlainLoops>(sweep, rows, previous, out),
            KernelKind::Portable => {
                rows::sweep::<portable::WideVectors>(sweep, rows, previous, out)
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of kind Avx2 is only made after runtime
            // detection found AVX2; the sweep checks every index itself.
            KernelKind::Avx2 => unsafe { x86_64::avx2::sweep_rows(sweep, rows, previous, out) },
            #[cfg(not(target_arch = "x86_64"))]
            KernelKind::Avx2 => unreachable!("no AVX2 kernel is made on this architecture"),
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How change lists are packed ([`PackedChanges::push_differences`]): every
/// variant packs exactly the same bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// A loop over each 64-board block's changes; the oracle.
    Portable,
    /// AVX2 compares, then sixteen lanes at a time by a table of shuffles.
    Avx2,
    /// AVX-512 byte compression (`vpcompressb`, VBMI2).
    Avx512,
}

impl Packing {
    /// Every variant, slowest first: the last one the CPU supports is the
    /// one [`Packing::detected`] takes. (`benches/kernels.rs`, group
    /// `packing`: `avx512` 2.5x `portable` on the project's Intel Xeon;
    /// `avx2` 1.1x `portable` on its AMD EPYC, Zen 3, which lacks AVX-512.)
    pub const ALL: [Packing; 3] = [Packing::Portable, Packing::Avx2, Packing::Avx512];

    /// Short name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Portable => "portable",
            Packing::Avx2 => "avx2",
            Packing::Avx512 => "avx512",
        }
    }

    /// Whether the running CPU can run this variant (detected once).
    pub fn is_supported(self) -> bool {
        use std::sync::OnceLock;
        static SUPPORTED: OnceLock<[bool; 3]> = OnceLock::new();
        SUPPORTED.get_or_init(|| Packing::ALL.map(Packing::detect))[self as usize]
    }

    /// Whether the running CPU has what this variant needs: AVX2, or
    /// AVX-512 F, BW, VBMI and VBMI2, each with the bit counts POPCNT,
    /// LZCNT and BMI1 that every such CPU has.
    fn detect(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            let counts = has!("popcnt") && has!("lzcnt") && has!("bmi1");
            match self {
                Packing::Portable => true,
                Packing::Avx2 => counts && has!("avx2"),
                Packing::Avx512 => {
                    counts
                        && has!("avx512f")
                        && has!("avx512bw")
                        && has!("avx512vbmi")
                        && has!("avx512vbmi2")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Packing::Portable
        }
    }

    /// Every variant the running CPU supports.
    pub fn available() -> impl Iterator<Item = Packing> {
        Packing::ALL.into_iter().filter(|p| p.is_supported())
    }

    /// The fastest variant the running CPU supports.
    pub fn detected() -> Packing {
        Packing::available().last().unwrap_or(Packing::Portable)
    }

    /// [`PackedChanges::push_differences`] by this variant.
    ///
    /// # Panics
    ///
    /// If the running CPU does not support it.
    #[inline]
    pub fn push_differences(
        self,
        changes: &mut PackedChanges,
        first_state: usize,
        old: &[i8],
        new: &[i8],
    ) {
        assert!(self.is_supported(), "{} packing on this CPU", self.name());
        match self {
            Packing::Portable => changes.push_differences_portable(first_state, old, new),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has the features the kernel needs (asserted).
            Packing::Avx2 => unsafe {
                x86_64::avx2_pack::push_differences(changes, first_state, old, new)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Packing::Avx512 => unsafe {
                x86_64::avx512::push_differences(changes, first_state, old, new)
            },
            #[cfg(not(target_arch = "x86_64"))]
            Packing::Avx2 | Packing::Avx512 => unreachable!("supported only on x86-64"),
        }
    }
}

impl fmt::Display for Packing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The variant [`PackedChanges::push_differences`] takes on this CPU,
/// detected once.
#[inline]
pub(crate) fn packing() -> Packing {
    use std::sync::OnceLock;
    static DETECTED: OnceLock<Packing> = OnceLock::new();
    *DETECTED.get_or_init(Packing::detected)
}

/// How [`PackedChanges::push_differences`] packs changes on this CPU, for
/// reports: `"avx512"`, `"avx2"` or `"portable"`.
pub fn change_packing() -> &'static str {
    packing().name()
}

/// The variants a CPU may lack, by the names [`skip_unsupported`] and
/// `ENDBOOK_REQUIRE_SIMD` use: kernels and change packers (`avx2`,
/// `avx512`), and Oware's BMI2 move generator (`bmi2`).
pub const SIMD_VARIANTS: [&str; 3] = ["avx2", "avx512", "bmi2"];

/// For the checks that run every variant this CPU supports: says, on the
/// standard error handle itself (which the test harness does not capture),
/// that the check of `variant` is skipped because the CPU lacks it; or,
/// where the environment variable `ENDBOOK_REQUIRE_SIMD` lists `variant`
/// (comma-separated names, e.g. `avx2,bmi2`), panics: on a machine meant to
/// cover a variant, its check skipped is a failure, not a pass.
///
/// # Panics
///
/// Also where `ENDBOOK_REQUIRE_SIMD` lists a name that is none of
/// [`SIMD_VARIANTS`]: a misspelt requirement would otherwise hold for
/// nothing.
#[doc(hidden)]
pub fn skip_unsupported(variant: &str, check: &str) {
    use std::io::Write;
    let required = std::env::var("ENDBOOK_REQUIRE_SIMD").unwrap_or_default();
    let names = required
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty());
    for name in names {
        assert!(
            SIMD_VARIANTS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(name)),
            "ENDBOOK_REQUIRE_SIMD names '{name}', none of {SIMD_VARIANTS:?}"
        );
        if name.eq_ignore_ascii_case(variant) {
            panic!("{check}: this CPU lacks {variant}, which ENDBOOK_REQUIRE_SIMD requires");
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "{check}: {variant} skipped (this CPU lacks it)"
    );
}

/// Asks the CPU to bring the cache line holding `items[at]` in (nothing if
/// `at` is past the end, or on targets without a prefetch instruction): for
/// readers of many streams at once, more than the hardware prefetchers
/// track, or of scattered items whose addresses are known ahead.
#[inline(always)]
pub fn prefetch<T>(items: &[T], at: usize) {
    if let Some(item) = items.get(at) {
        prefetch_address(std::ptr::from_ref(item));
    }
}

/// Asks the CPU to bring the cache line holding `address` in, as
/// [`prefetch`] does, for a buffer written through a raw pointer (any
/// address will do: a prefetch reads nothing and never faults).
#[inline(always)]
pub fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that reads nothing and never faults,
        // whatever the address; SSE, which has it, is part of every x86-64
        // CPU.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
