//! Move generators for the child-cache builder: every legal move of a board
//! as (capture, child board seen by the opponent).
//!
//! Both work on packed boards (5 bits per house, see `packed.rs`) and differ
//! in how they find the chain of captured houses:
//!
//! - [`MoveGenKind::Scalar`]: plain bit operations on the house fields;
//! - [`MoveGenKind::Bmi2`]: `pext`/`pdep`, as the program in
//!   `000-oware-endgame-books.md` does.
//!
//! [`crate::games::oware::rules`] is the readable definition both are tested against.
//!
//! `pext` and `pdep` take one cycle on Intel since Haswell and on AMD since
//! Zen 3, but are microcoded on AMD Zen 1 and Zen 2 (families 0x17 and 0x18),
//! where each costs tens to hundreds of cycles depending on the mask. So
//! availability alone does not pick BMI2: [`MoveGen::auto`] takes it only on
//! CPUs that have it and are not AMD family 0x17/0x18. The benchmarks in
//! `benches/` measure both on the machine at hand.

mod packed;

use super::board::{Board, SIDE};
use std::fmt;

pub use packed::MAX_PACKED_SEEDS;

/// The move generator implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveGenKind {
    /// Packed boards, plain bit operations.
    Scalar,
    /// Packed boards with `pext`/`pdep` capture detection.
    Bmi2,
}

impl MoveGenKind {
    /// Every kind, in the order reported.
    pub const ALL: [MoveGenKind; 2] = [MoveGenKind::Scalar, MoveGenKind::Bmi2];

    /// Short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            MoveGenKind::Scalar => "scalar",
            MoveGenKind::Bmi2 => "bmi2",
        }
    }

    /// Whether the running CPU can execute it.
    pub fn is_supported(self) -> bool {
        match self {
            MoveGenKind::Scalar => true,
            MoveGenKind::Bmi2 => cpu::has_bmi2(),
        }
    }
}

impl fmt::Display for MoveGenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A move generator the running CPU supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveGen {
    kind: MoveGenKind,
}

/// One generated move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratedMove {
    /// Seeds captured.
    pub capture: u8,
    /// The position the opponent faces.
    pub child: Board,
}

impl MoveGen {
    /// The generator of `kind`, if the running CPU supports it.
    pub fn new(kind: MoveGenKind) -> Option<MoveGen> {
        kind.is_supported().then_some(MoveGen { kind })
    }

    /// The scalar generator, available everywhere.
    pub fn scalar() -> MoveGen {
        MoveGen {
            kind: MoveGenKind::Scalar,
        }
    }

    /// BMI2 where `pext`/`pdep` are fast, scalar elsewhere (see the module docs).
    pub fn auto() -> MoveGen {
        if cpu::has_bmi2() && !cpu::has_slow_pext() {
            MoveGen {
                kind: MoveGenKind::Bmi2,
            }
        } else {
            MoveGen::scalar()
        }
    }

    /// Every generator the running CPU supports.
    pub fn available() -> impl Iterator<Item = MoveGen> {
        MoveGenKind::ALL.into_iter().filter_map(MoveGen::new)
    }

    /// Which implementation this is.
    pub fn kind(self) -> MoveGenKind {
        self.kind
    }

    /// The legal moves of `board` in house order, written to `moves`; returns how many.
    ///
    /// Panics if the board holds more than [`MAX_PACKED_SEEDS`] seeds.
    #[inline]
    pub fn moves(self, board: &Board, moves: &mut [GeneratedMove; SIDE]) -> usize {
        match self.kind {
            MoveGenKind::Scalar => packed::moves_scalar(board, moves),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a MoveGen of kind Bmi2 is only made after runtime
            // detection found BMI2.
            MoveGenKind::Bmi2 => unsafe { packed::moves_bmi2(board, moves) },
            #[cfg(not(target_arch = "x86_64"))]
            MoveGenKind::Bmi2 => unreachable!("no BMI2 generator is made on this architecture"),
        }
    }
}

impl fmt::Display for MoveGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())
    }
}

/// CPU identification for the BMI2 rule.
mod cpu {
    #[cfg(target_arch = "x86_64")]
    pub fn has_bmi2() -> bool {
        std::is_x86_feature_detected!("bmi2")
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn has_bmi2() -> bool {
        false
    }

    /// AMD family 0x17 (Zen 1, Zen+, Zen 2) or 0x18 (Hygon Dhyana, a Zen 1):
    /// `pext`/`pdep` are microcoded there.
    #[cfg(target_arch = "x86_64")]
    pub fn has_slow_pext() -> bool {
        use std::arch::x86_64::__cpuid;
        let vendor = __cpuid(0);
        let mut name = [0u8; 12];
        name[..4].copy_from_slice(&vendor.ebx.to_le_bytes());
        name[4..8].copy_from_slice(&vendor.edx.to_le_bytes());
        name[8..].copy_from_slice(&vendor.ecx.to_le_bytes());
        slow_pext(&name, __cpuid(1).eax)
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn has_slow_pext() -> bool {
        false
    }

    /// The rule of [`has_slow_pext`], from the CPU's vendor string and its
    /// signature (`cpuid` leaf 1, `eax`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn slow_pext(vendor: &[u8; 12], signature: u32) -> bool {
        if vendor != b"AuthenticAMD" && vendor != b"HygonGenuine" {
            return false;
        }
        let base_family = (signature >> 8) & 0xf;
        let family = if base_family == 0xf {
            base_family + ((signature >> 20) & 0xff)
        } else {
            base_family
        };
        family == 0x17 || family == 0x18
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pext` counts as slow on AMD's and Hygon's families 0x17 and 0x18
    /// alone (signatures of real parts).
    #[test]
    fn pext_is_slow_on_amd_families_17_and_18_only() {
        for (vendor, signature, slow) in [
            (b"AuthenticAMD", 0x0080_0f12, true),  // EPYC 7601, Zen 1
            (b"AuthenticAMD", 0x0083_0f10, true),  // EPYC 7742, Zen 2
            (b"HygonGenuine", 0x0090_0f01, true),  // Dhyana, family 0x18
            (b"AuthenticAMD", 0x00a0_0f11, false), // EPYC 7763, Zen 3
            (b"AuthenticAMD", 0x0060_0f20, false), // family 0x15
            (b"GenuineIntel", 0x0005_0654, false), // Xeon, Skylake-SP
            (b"GenuineIntel", 0x0080_0f12, false), // an AMD signature, not AMD
        ] {
            assert_eq!(cpu::slow_pext(vendor, signature), slow, "{signature:#x}");
        }
    }

    /// `auto` takes BMI2 exactly where this CPU has it and `pext` is fast.
    #[test]
    fn auto_takes_bmi2_where_pext_is_fast() {
        let fast = cpu::has_bmi2() && !cpu::has_slow_pext();
        let expected = if fast {
            MoveGenKind::Bmi2
        } else {
            MoveGenKind::Scalar
        };
        assert_eq!(MoveGen::auto().kind(), expected);
    }
}
