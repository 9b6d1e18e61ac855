//! The generator: every pair (mover, opponent) of two universes, solved in one
//! pass in pip order, 8 x 8 pairs at a time.
//!
//! **Recursion.** With `X` to move against `O`, a roll either bears off `X`'s
//! last checker (value 1 for `X`) or leaves one of its results `X'`, after
//! which `O` moves against `X'`:
//!
//! ```text
//! V(X, O) = sum over rolls r of p(r) * (1 if r bears X off, else 1 - min over X' of V(O, X'))
//! ```
//!
//! Every play lowers the pip count, so `V(X, O)` reads only pairs whose total
//! pip count is smaller: sweeping the totals `t = pips(X) + pips(O)` upward
//! (the anti-diagonals of the pip classes) finds every read final. One pass
//! is exact; nothing is iterated to convergence.
//!
//! **Layout.** A table for movers in universe `M` against opponents in `W`
//! keeps the mover's slots in blocks of [`LANES`]; an entry with `K` values
//! (`value` in `0..K`) is at
//! `((mover / LANES * slots(W) + opponent) * K + value) * LANES + mover % LANES`.
//! A block of 8 movers against one opponent is one contiguous vector.
//!
//! **Work item.** For an opponent block `B` (8 sides `O` of pip class `q`)
//! and the mover class `p = t - q`, the item computes `V(X, O)` for every
//! `X` of class `p` and `O` in `B`. Its reads `V(O, X')` are rows of `B` in
//! the other table, where `B` is the mover block: 8 lanes side by side, one
//! vector per result `X'`, and all of them in the prefix of slots before
//! class `p` (a slot's rows are 32 bytes cubeless, at most 1.75 MB for the
//! 54,632 padded slots of 15 checkers, mostly within the CPU caches; 256
//! bytes cubeful, 4.8 MB at 12 checkers). The
//! minimum over a roll's results is then a vector minimum, the weighted sum a
//! vector multiply-add; each 8 x 8 tile of results is stored transposed into
//! the written table as 8 contiguous vectors. Items of one diagonal write
//! disjoint tiles and read only earlier diagonals, so they run in parallel.
//!
//! **Values.** Cubeless tables hold `P(mover wins)` as `u32` fixed point,
//! [`ONE`] = 2^32 - 1: rounding to the nearest unit after each weighted sum
//! adds at most 1.2e-10 per ply of the longest game from a pair (a roll
//! moves at least 2 pips, so at most 90 plies from 90 pips a side: 1.1e-8
//! in all; 2.5e-10 is the largest error measured against the brute force).
//! Cubeful tables hold four `f64` per pair:
//! `P(mover wins)` and the mover's no-double equities with the cube owned by
//! the mover, centred, owned by the opponent (see [`Cubeful`]).
//!
//! **Kernels.** One algorithm over arrays of 8 lanes, compiled twice: for the
//! build's baseline (`portable`) and, behind runtime detection, with AVX2
//! enabled (`avx2`; vector min/max and gathers-free loads). The `scalar`
//! kernel computes each lane with plain loops and is the oracle. All give
//! identical bits.

use super::universe::{Universe, LANES};
use crate::kernels::{Kernel, KernelKind};
use rayon::prelude::*;
use std::marker::PhantomData;

/// Fixed-point 1 of cubeless tables: `P(win) = value / ONE`.
pub const ONE: u32 = u32::MAX;

/// Index of value `value` of pair (`mover`, `opponent`) in a table with
/// `opponents` opponent slots and `values` values per pair.
#[inline]
pub fn table_index(
    opponents: usize,
    values: usize,
    mover: usize,
    opponent: usize,
    value: usize,
) -> usize {
    ((mover / LANES * opponents + opponent) * values + value) * LANES + mover % LANES
}

/// What a generator computes per pair.
pub trait Kind: Sync {
    /// One stored value.
    type Value: Copy + Default + Send + Sync;
    /// Values per pair.
    const VALUES: usize;
    /// Value `k` when the mover has no checkers left (it has won).
    fn won(k: usize) -> Self::Value;
    /// Value `k` when the opponent has no checkers left (the mover has lost).
    fn lost(k: usize) -> Self::Value;
    /// The values of mover `x` against the 8 opponents whose rows are
    /// `rows` (`[slot][value][lane]`, every result of `x` inside): `out[k][lane]`.
    fn lanes(
        kernel: Kernel,
        universe: &Universe,
        x: usize,
        rows: &[Self::Value],
        out: &mut [[Self::Value; LANES]],
    );
}

/// Cubeless: `P(mover wins)` as `u32` fixed point ([`ONE`] = certain).
pub struct Cubeless;

/// Cubeful money equities, cube at 1, no gammons: per pair `P(mover wins)`
/// and the mover's equities when not doubling now, with the cube owned by
/// the mover, centred, and owned by the opponent (the order gnubg stores).
///
/// With `D = min(1, 2 * opp)` the equity of doubling (the opponent takes,
/// owning the cube at twice the stake, or passes), the mover's equity with
/// correct cube action is `max(own, D)` when owning, `max(centred, D)` when
/// centred, and `opp` when the opponent owns the cube. After a roll the
/// opponent is to move with the cube states swapped, so the mover's
/// no-double equity averages, over rolls, the best play's negated opponent
/// equity: owned reads the opponent's `opp`, centred `max(centred, D)`,
/// opponent-owned `max(own, D)` (race3's recursion; the best play is chosen
/// separately for each cube state).
pub struct Cubeful;

/// Value indices of a cubeful pair.
pub mod cubeful {
    pub const WIN: usize = 0;
    pub const OWNED: usize = 1;
    pub const CENTRED: usize = 2;
    pub const OPPONENT_OWNS: usize = 3;
}

impl Kind for Cubeless {
    type Value = u32;
    const VALUES: usize = 1;

    fn won(_: usize) -> u32 {
        ONE
    }

    fn lost(_: usize) -> u32 {
        0
    }

    fn lanes(
        kernel: Kernel,
        universe: &Universe,
        x: usize,
        rows: &[u32],
        out: &mut [[u32; LANES]],
    ) {
        let out = &mut out[0];
        match kernel.kind() {
            KernelKind::Scalar => {
                for (lane, out) in out.iter_mut().enumerate() {
                    *out = cubeless_scalar(universe, x, rows, lane);
                }
            }
            KernelKind::Portable => *out = cubeless_lanes(universe, x, rows),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of kind Avx2 exists only on CPUs with AVX2.
            KernelKind::Avx2 => *out = unsafe { avx2::cubeless(universe, x, rows) },
            #[cfg(not(target_arch = "x86_64"))]
            KernelKind::Avx2 => unreachable!("no AVX2 kernel is made on this architecture"),
        }
    }
}

impl Kind for Cubeful {
    type Value = f64;
    const VALUES: usize = 4;

    fn won(k: usize) -> f64 {
        let _ = k;
        1.0
    }

    fn lost(k: usize) -> f64 {
        if k == cubeful::WIN {
            0.0
        } else {
            -1.0
        }
    }

    fn lanes(
        kernel: Kernel,
        universe: &Universe,
        x: usize,
        rows: &[f64],
        out: &mut [[f64; LANES]],
    ) {
        let out: &mut [[f64; LANES]; 4] = out.try_into().expect("four values");
        match kernel.kind() {
            KernelKind::Scalar => {
                for lane in 0..LANES {
                    let values = cubeful_scalar(universe, x, rows, lane);
                    for (out, value) in out.iter_mut().zip(values) {
                        out[lane] = value;
                    }
                }
            }
            KernelKind::Portable => *out = cubeful_lanes(universe, x, rows),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of kind Avx2 exists only on CPUs with AVX2.
            KernelKind::Avx2 => *out = unsafe { avx2::cubeful(universe, x, rows) },
            #[cfg(not(target_arch = "x86_64"))]
            KernelKind::Avx2 => unreachable!("no AVX2 kernel is made on this architecture"),
        }
    }
}

/// `round(sum / 36)` for a weighted sum of fixed-point values.
#[inline(always)]
fn average(sum: u64) -> u32 {
    ((sum + 18) / 36) as u32
}

fn cubeless_scalar(universe: &Universe, x: usize, rows: &[u32], lane: usize) -> u32 {
    let mut sum = u64::from(universe.win_weight(x)) * u64::from(ONE);
    for group in universe.groups(x) {
        let mut least = ONE;
        for &child in universe.children(group) {
            least = least.min(rows[child as usize * LANES + lane]);
        }
        sum += u64::from(group.weight) * u64::from(ONE - least);
    }
    average(sum)
}

#[inline(always)]
fn cubeless_lanes(universe: &Universe, x: usize, rows: &[u32]) -> [u32; LANES] {
    let mut sum = [u64::from(universe.win_weight(x)) * u64::from(ONE); LANES];
    for group in universe.groups(x) {
        let mut least = [ONE; LANES];
        for &child in universe.children(group) {
            let start = child as usize * LANES;
            let row: &[u32; LANES] = rows[start..start + LANES].try_into().unwrap();
            for (least, &value) in least.iter_mut().zip(row) {
                *least = (*least).min(value);
            }
        }
        for (sum, least) in sum.iter_mut().zip(least) {
            *sum += u64::from(group.weight) * u64::from(ONE - least);
        }
    }
    sum.map(average)
}

/// The opponent's equity after a play, as read by each cube state of the
/// mover: (owned: the opponent's `opp`, centred: `max(centred, D)`,
/// opponent owns: `max(own, D)`).
#[inline(always)]
fn opponent_equities(own: f64, centred: f64, opp: f64) -> (f64, f64, f64) {
    let double = (2.0 * opp).min(1.0);
    (opp, centred.max(double), own.max(double))
}

fn cubeful_scalar(universe: &Universe, x: usize, rows: &[f64], lane: usize) -> [f64; 4] {
    let won = f64::from(universe.win_weight(x));
    let mut sum = [won; 4];
    for group in universe.groups(x) {
        let mut least = [f64::INFINITY; 4];
        for &child in universe.children(group) {
            let at = |k: usize| rows[(child as usize * 4 + k) * LANES + lane];
            let (owned, centred, opponent_owns) = opponent_equities(
                at(cubeful::OWNED),
                at(cubeful::CENTRED),
                at(cubeful::OPPONENT_OWNS),
            );
            least[0] = least[0].min(at(cubeful::WIN));
            least[1] = least[1].min(owned);
            least[2] = least[2].min(centred);
            least[3] = least[3].min(opponent_owns);
        }
        let weight = f64::from(group.weight);
        sum[0] += weight * (1.0 - least[0]);
        for k in 1..4 {
            sum[k] += weight * -least[k];
        }
    }
    sum.map(|s| s / 36.0)
}

#[inline(always)]
fn cubeful_lanes(universe: &Universe, x: usize, rows: &[f64]) -> [[f64; LANES]; 4] {
    let won = f64::from(universe.win_weight(x));
    let mut sum = [[won; LANES]; 4];
    for group in universe.groups(x) {
        let mut least = [[f64::INFINITY; LANES]; 4];
        for &child in universe.children(group) {
            let start = child as usize * 4 * LANES;
            let entry: &[f64; 4 * LANES] = rows[start..start + 4 * LANES].try_into().unwrap();
            for lane in 0..LANES {
                let (owned, centred, opponent_owns) = opponent_equities(
                    entry[cubeful::OWNED * LANES + lane],
                    entry[cubeful::CENTRED * LANES + lane],
                    entry[cubeful::OPPONENT_OWNS * LANES + lane],
                );
                least[0][lane] = least[0][lane].min(entry[lane]);
                least[1][lane] = least[1][lane].min(owned);
                least[2][lane] = least[2][lane].min(centred);
                least[3][lane] = least[3][lane].min(opponent_owns);
            }
        }
        let weight = f64::from(group.weight);
        for lane in 0..LANES {
            sum[0][lane] += weight * (1.0 - least[0][lane]);
            for k in 1..4 {
                sum[k][lane] += weight * -least[k][lane];
            }
        }
    }
    sum.map(|value| value.map(|s| s / 36.0))
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! The lane kernels compiled with AVX2 enabled: the same code, wider vectors.
    use super::*;

    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cubeless(universe: &Universe, x: usize, rows: &[u32]) -> [u32; LANES] {
        cubeless_lanes(universe, x, rows)
    }

    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cubeful(universe: &Universe, x: usize, rows: &[f64]) -> [[f64; LANES]; 4] {
        cubeful_lanes(universe, x, rows)
    }
}

/// A table shared by the workers of one diagonal: each reads entries of
/// earlier diagonals and writes its own tiles of this one.
struct Shared<'a, T> {
    ptr: *mut T,
    len: usize,
    _table: PhantomData<&'a mut [T]>,
}

// SAFETY: `Shared` hands out access only through the unsafe methods below,
// whose callers guarantee that no element is written while another thread
// reads or writes it; `T` itself is `Send + Sync`.
unsafe impl<T: Send + Sync> Sync for Shared<'_, T> {}

impl<'a, T> Shared<'a, T> {
    fn new(table: &'a mut [T]) -> Shared<'a, T> {
        Shared {
            ptr: table.as_mut_ptr(),
            len: table.len(),
            _table: PhantomData,
        }
    }

    /// # Safety
    ///
    /// Nothing may write `start..start + len` while the slice lives.
    unsafe fn read(&self, start: usize, len: usize) -> &[T] {
        assert!(start + len <= self.len);
        // SAFETY: in bounds (asserted); the caller excludes concurrent writes.
        unsafe { std::slice::from_raw_parts(self.ptr.add(start), len) }
    }

    /// # Safety
    ///
    /// No other thread may read or write `start..start + values.len()` meanwhile.
    unsafe fn write(&self, start: usize, values: &[T])
    where
        T: Copy,
    {
        assert!(start + values.len() <= self.len);
        // SAFETY: in bounds (asserted); the caller excludes concurrent access.
        unsafe {
            std::ptr::copy_nonoverlapping(values.as_ptr(), self.ptr.add(start), values.len())
        };
    }
}

/// Progress of a solve: diagonal `diagonal` of `diagonals` is done, and with
/// it `pairs_done` of `pairs` pairs.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub diagonal: usize,
    pub diagonals: usize,
    pub pairs_done: u64,
    pub pairs: u64,
}

/// One table being written and the table its items read.
struct Direction<'a, 't, T> {
    /// Universe of the movers of the written table.
    movers: &'a Universe,
    /// Universe of their opponents (the movers of the read table).
    opponents: &'a Universe,
    write: &'t Shared<'t, T>,
    read: &'t Shared<'t, T>,
}

/// Solves every pair of `a` against `b` and, when `b` is another universe,
/// of `b` against `a`. Returns the table for movers in `a` (opponents in
/// `b`) and, for two universes, the table for movers in `b`.
pub fn solve<K: Kind>(
    kernel: Kernel,
    a: &Universe,
    b: Option<&Universe>,
    mut progress: impl FnMut(Progress),
) -> (Vec<K::Value>, Option<Vec<K::Value>>) {
    let size = |m: &Universe, o: &Universe| m.slots() * o.slots() * K::VALUES;
    let mut table_a = vec![K::Value::default(); size(a, b.unwrap_or(a))];
    let mut table_b = b.map(|b| vec![K::Value::default(); size(b, a)]);
    {
        let shared_a = Shared::new(&mut table_a);
        let shared_b = table_b.as_deref_mut().map(Shared::new);
        let directions: Vec<Direction<'_, '_, K::Value>> = match (b, &shared_b) {
            (Some(b), Some(shared_b)) => vec![
                Direction {
                    movers: a,
                    opponents: b,
                    write: &shared_a,
                    read: shared_b,
                },
                Direction {
                    movers: b,
                    opponents: a,
                    write: shared_b,
                    read: &shared_a,
                },
            ],
            _ => vec![Direction {
                movers: a,
                opponents: a,
                write: &shared_a,
                read: &shared_a,
            }],
        };
        let diagonals = directions
            .iter()
            .map(|d| d.movers.max_pips() + d.opponents.max_pips() + 1)
            .max()
            .unwrap();
        let pairs: u64 = directions
            .iter()
            .map(|d| (d.movers.slots() * d.opponents.slots()) as u64)
            .sum();
        let mut pairs_done = 0u64;
        for diagonal in 0..diagonals {
            let mut items = Vec::new();
            for (which, direction) in directions.iter().enumerate() {
                for block in 0..direction.opponents.slots() / LANES {
                    let q = direction.opponents.block_pips(block);
                    let Some(p) = diagonal.checked_sub(q) else {
                        continue;
                    };
                    if p <= direction.movers.max_pips() && !direction.movers.class(p).is_empty() {
                        pairs_done += (direction.movers.class(p).len() * LANES) as u64;
                        items.push((which, block, p));
                    }
                }
            }
            items.par_iter().for_each(|&(which, block, p)| {
                // SAFETY: every item of this diagonal writes the pairs (X, O)
                // with X in class p and O in its own opponent block, which no
                // other item writes, and reads pairs of smaller pip totals,
                // which no item of this diagonal writes.
                unsafe { solve_item::<K>(kernel, &directions[which], block, p) };
            });
            progress(Progress {
                diagonal,
                diagonals,
                pairs_done,
                pairs,
            });
        }
    }
    (table_a, table_b)
}

/// Solves movers of class `p` against opponent block `block`.
///
/// # Safety
///
/// No other thread may write the read rows (pairs of total pips below
/// `p + pips(block)`) or touch the written tiles while this runs.
unsafe fn solve_item<K: Kind>(
    kernel: Kernel,
    direction: &Direction<'_, '_, K::Value>,
    block: usize,
    p: usize,
) {
    let (movers, opponents) = (direction.movers, direction.opponents);
    let values = K::VALUES;
    let class = movers.class(p);
    // Row of opponent block `block` in the read table: its opponents are our movers.
    let row_start = table_index(movers.slots(), values, block * LANES, 0, 0);
    // SAFETY: results of class p lie before class p, at smaller pip totals (caller).
    let rows = unsafe { direction.read.read(row_start, class.start * values * LANES) };
    let opponent_sides: [Option<_>; LANES] =
        std::array::from_fn(|lane| opponents.side(block * LANES + lane));
    let mut lanes = vec![[K::Value::default(); LANES]; values];
    let mut tile = vec![K::Value::default(); LANES * values * LANES];
    for x_block in class.start / LANES..class.end / LANES {
        for x_lane in 0..LANES {
            let x = x_block * LANES + x_lane;
            match movers.side(x) {
                None => lanes
                    .iter_mut()
                    .for_each(|l| *l = [K::Value::default(); LANES]),
                Some(side) if side.is_empty() => {
                    for (k, l) in lanes.iter_mut().enumerate() {
                        *l = [K::won(k); LANES];
                    }
                }
                Some(_) => {
                    K::lanes(kernel, movers, x, rows, &mut lanes);
                    for (lane, opponent) in opponent_sides.iter().enumerate() {
                        for (k, l) in lanes.iter_mut().enumerate() {
                            match opponent {
                                None => l[lane] = K::Value::default(),
                                Some(o) if o.is_empty() => l[lane] = K::lost(k),
                                Some(_) => {}
                            }
                        }
                    }
                }
            }
            // Transpose: the tile is [opponent lane][value][mover lane].
            for (k, l) in lanes.iter().enumerate() {
                for (o_lane, &value) in l.iter().enumerate() {
                    tile[(o_lane * values + k) * LANES + x_lane] = value;
                }
            }
        }
        let start = table_index(opponents.slots(), values, x_block * LANES, block * LANES, 0);
        // SAFETY: this tile (movers x_block, opponents block) is this item's alone (caller).
        unsafe { direction.write.write(start, &tile) };
    }
}
