//! An independent brute-force expectimax against the generator.
//!
//! The reference shares no code with the crate's rules: a side is a sorted
//! list of checker points, a play moves checkers one die at a time (all 36
//! ordered dice, each die order tried), and values come from plain recursion
//! with a memo over (mover, opponent), in `f64`. It computes P(win) and
//! race3's three cubeful equities (no-double equities, as gnubg stores them).

mod common;

use common::Rng;
use endbook::games::bearoff::{
    generate, Evaluation, GenerateOptions, Lookup, Plan, Side, Table, Universe, ONE, POINTS,
};
use endbook::kernels::{Kernel, KernelKind};
use std::collections::{BTreeSet, HashMap};

/// Checker points, highest first; empty when every checker is off.
type Checkers = Vec<u8>;

fn checkers_of(side: &Side) -> Checkers {
    let mut list = Vec::new();
    for (i, &count) in side.counts().iter().enumerate() {
        list.extend(std::iter::repeat_n(i as u8 + 1, count as usize));
    }
    list.sort_unstable_by(|a, b| b.cmp(a));
    list
}

/// Every way to play `dice` in order from `checkers`, as sorted lists.
fn play_in_order(checkers: &Checkers, dice: &[u8], out: &mut BTreeSet<Checkers>) {
    let Some((&die, rest)) = dice.split_first() else {
        out.insert(checkers.clone());
        return;
    };
    if checkers.is_empty() {
        out.insert(Vec::new());
        return;
    }
    let highest = checkers[0];
    for i in 0..checkers.len() {
        if i > 0 && checkers[i] == checkers[i - 1] {
            continue;
        }
        let point = checkers[i];
        let mut next = checkers.clone();
        if point > die {
            next[i] = point - die;
        } else if point == die || point == highest {
            next.remove(i);
        } else {
            continue;
        }
        next.sort_unstable_by(|a, b| b.cmp(a));
        play_in_order(&next, rest, out);
    }
}

fn results(checkers: &Checkers, a: u8, b: u8) -> BTreeSet<Checkers> {
    let mut out = BTreeSet::new();
    if a == b {
        play_in_order(checkers, &[a; 4], &mut out);
    } else {
        play_in_order(checkers, &[a, b], &mut out);
        play_in_order(checkers, &[b, a], &mut out);
    }
    out
}

/// [P(win), no-double equity owned, centred, opponent owns].
type Values = [f64; 4];

/// A side as one number: four bits per point, point 1 lowest.
fn pack(checkers: &Checkers) -> u32 {
    checkers
        .iter()
        .map(|&point| 1u32 << (4 * (point - 1)))
        .sum()
}

fn unpack(packed: u32) -> Checkers {
    let mut list = Vec::new();
    for point in (1..=6u8).rev() {
        let count = (packed >> (4 * (point - 1))) & 15;
        list.extend(std::iter::repeat_n(point, count as usize));
    }
    list
}

#[derive(Default)]
struct Reference {
    memo: HashMap<(u32, u32), Values>,
    /// P(win) in the cubeless tables' fixed point (see `fixed_win`).
    fixed: HashMap<(u32, u32), u32>,
    /// Per side, per ordered roll (a, b): `None` when it bears every checker
    /// off, else the sides it can leave.
    plays: HashMap<u32, Vec<Option<Vec<u32>>>>,
}

impl Reference {
    fn value(&mut self, mover: &Checkers, opponent: &Checkers) -> Values {
        self.packed_value(pack(mover), pack(opponent))
    }

    /// P(win) as the cubeless tables define it in fixed point (`ONE` =
    /// 2^32 - 1 certain): the sum over the 36 ordered rolls of `ONE` for a
    /// roll that bears every checker off, else `ONE` less the least of the
    /// opponent's values against what the roll can leave, rounded to the
    /// nearest unit once divided by 36 (halves up). Both sides have checkers.
    fn fixed_win(&mut self, mover: u32, opponent: u32) -> u32 {
        if let Some(&v) = self.fixed.get(&(mover, opponent)) {
            return v;
        }
        let mut sum = 0u64;
        for outcomes in self.plays_of(mover) {
            let least = match outcomes {
                None => 0,
                Some(outcomes) => outcomes
                    .into_iter()
                    .map(|next| self.fixed_win(opponent, next))
                    .min()
                    .expect("a roll leaves some side"),
            };
            sum += u64::from(ONE - least);
        }
        let v = u32::try_from((sum + 18) / 36).expect("at most ONE");
        self.fixed.insert((mover, opponent), v);
        v
    }

    fn plays_of(&mut self, side: u32) -> Vec<Option<Vec<u32>>> {
        self.plays
            .entry(side)
            .or_insert_with(|| {
                let checkers = unpack(side);
                let mut rolls = Vec::with_capacity(36);
                for a in 1..=6u8 {
                    for b in 1..=6u8 {
                        let outcomes = results(&checkers, a, b);
                        rolls.push(if outcomes.contains(&Vec::new()) {
                            None
                        } else {
                            Some(outcomes.iter().map(pack).collect())
                        });
                    }
                }
                rolls
            })
            .clone()
    }

    fn packed_value(&mut self, mover: u32, opponent: u32) -> Values {
        if mover == 0 {
            return [1.0; 4];
        }
        if opponent == 0 {
            return [0.0, -1.0, -1.0, -1.0];
        }
        if let Some(&v) = self.memo.get(&(mover, opponent)) {
            return v;
        }
        let mut sum = [0.0; 4];
        for outcomes in self.plays_of(mover) {
            let Some(outcomes) = outcomes else {
                for s in &mut sum {
                    *s += 1.0;
                }
                continue;
            };
            let mut best = [f64::NEG_INFINITY; 4];
            for next in outcomes {
                let [p, own, centred, opp] = self.packed_value(opponent, next);
                let double = (2.0 * opp).min(1.0);
                best[0] = best[0].max(1.0 - p);
                best[1] = best[1].max(-opp);
                best[2] = best[2].max(-centred.max(double));
                best[3] = best[3].max(-own.max(double));
            }
            for (s, b) in sum.iter_mut().zip(best) {
                *s += b;
            }
        }
        let values = sum.map(|s| s / 36.0);
        self.memo.insert((mover, opponent), values);
        values
    }
}

fn all_sides(max: usize) -> Vec<Side> {
    let mut sides = Vec::new();
    for code in 0..(max + 1).pow(POINTS as u32) {
        let mut counts = [0u8; POINTS];
        let mut rest = code;
        for c in &mut counts {
            *c = (rest % (max + 1)) as u8;
            rest /= max + 1;
        }
        if counts.iter().map(|&c| c as usize).sum::<usize>() <= max {
            sides.push(Side::new(counts).unwrap());
        }
    }
    sides
}

fn values_of(lookup: &impl Lookup, x: &Side, o: &Side) -> Values {
    let entry = lookup.entry(x, o).unwrap();
    let cube = entry.cube.expect("cubeful values");
    [entry.win, cube.owned, cube.centred, cube.opponent_owns]
}

/// Largest difference between the generator and the reference over `pairs`.
fn worst(
    reference: &mut Reference,
    cubeless: &impl Lookup,
    cubeful: &impl Lookup,
    pairs: &[(Side, Side)],
) -> (f64, f64) {
    let (mut worst_cubeless, mut worst_cubeful) = (0.0f64, 0.0f64);
    for (x, o) in pairs {
        let expected = reference.value(&checkers_of(x), &checkers_of(o));
        let win = cubeless.entry(x, o).unwrap().win;
        worst_cubeless = worst_cubeless.max(common::error(win, expected[0]));
        let got = values_of(cubeful, x, o);
        for (g, e) in got.iter().zip(expected) {
            worst_cubeful = worst_cubeful.max(common::error(*g, e));
        }
    }
    (worst_cubeless, worst_cubeful)
}

#[test]
fn every_pair_up_to_four_checkers_matches_the_reference() {
    let cubeless = generate(GenerateOptions::new(4, false), |_| {});
    let cubeful = generate(GenerateOptions::new(4, true), |_| {});
    let sides = all_sides(4);
    assert_eq!(sides.len(), 210);
    let pairs: Vec<(Side, Side)> = sides
        .iter()
        .flat_map(|x| sides.iter().map(move |o| (*x, *o)))
        .collect();
    let mut reference = Reference::default();
    let (cubeless_error, cubeful_error) = worst(&mut reference, &cubeless, &cubeful, &pairs);
    eprintln!(
        "4 checkers, all {} pairs: largest difference cubeless {cubeless_error:.2e}, cubeful {cubeful_error:.2e}",
        pairs.len()
    );
    assert!(cubeless_error < 1e-9, "cubeless {cubeless_error:e}");
    assert!(cubeful_error < 1e-12, "cubeful {cubeful_error:e}");
}

#[test]
fn random_pairs_at_six_checkers_match_the_reference() {
    let cubeless = generate(GenerateOptions::new(6, false), |_| {});
    let cubeful = generate(GenerateOptions::new(6, true), |_| {});
    let sides = all_sides(6);
    assert_eq!(sides.len(), 924);
    let mut rng = Rng(6);
    let pairs: Vec<(Side, Side)> = (0..300)
        .map(|_| {
            let pick = |rng: &mut Rng| sides[rng.below(sides.len() as u64) as usize];
            (pick(&mut rng), pick(&mut rng))
        })
        .collect();
    let mut reference = Reference::default();
    let (cubeless_error, cubeful_error) = worst(&mut reference, &cubeless, &cubeful, &pairs);
    eprintln!(
        "6 checkers, 300 random pairs ({} pairs solved by the reference): largest difference cubeless {cubeless_error:.2e}, cubeful {cubeful_error:.2e}",
        reference.memo.len()
    );
    assert!(cubeless_error < 1e-9, "cubeless {cubeless_error:e}");
    assert!(cubeful_error < 1e-12, "cubeful {cubeful_error:e}");
}

#[test]
fn on_demand_evaluation_matches_the_reference_and_the_table() {
    let table = generate(GenerateOptions::new(6, true), |_| {});
    let mut reference = Reference::default();
    let cases = [
        ("0 0 0 0 0 1", "0 0 0 0 0 1"),
        ("3 2 1 0 0 0", "2 2 2 0 0 0"),
        ("1 0 0 0 0 0", "0 1 1 1 1 2"),
        ("0 0 2 0 0 4", "1 0 0 1 0 4"),
        ("0 0 0 0 0 6", "1 1 1 1 1 1"),
    ];
    for (x, o) in cases {
        let (x, o): (Side, Side) = (x.parse().unwrap(), o.parse().unwrap());
        let expected = reference.value(&checkers_of(&x), &checkers_of(&o));
        let from_table = values_of(&table, &x, &o);
        // Every kernel the CPU has (the others are named by
        // `every_kernel_computes_identical_tables`).
        for kernel in Kernel::available() {
            let evaluation = Evaluation::solve(Plan::new(&x, &o), true, kernel, |_| {});
            let got = values_of(&evaluation, &x, &o);
            for k in 0..4 {
                assert!(
                    (got[k] - expected[k]).abs() < 1e-9,
                    "{kernel}, {x} v {o}: {got:?} {expected:?}"
                );
                assert!(
                    (got[k] - from_table[k]).abs() < 1e-12,
                    "{kernel}, {x} v {o}: {got:?} {from_table:?}"
                );
            }
        }
    }
}

#[test]
fn on_demand_evaluation_of_uneven_sides_uses_two_universes() {
    // Few checkers against many: the reachable sets differ by far more than
    // a factor two, so the evaluator solves both directions separately.
    let x: Side = "0 1 0 0 0 0".parse().unwrap();
    let o: Side = "0 0 0 2 2 3".parse().unwrap();
    let plan = Plan::new(&x, &o);
    assert!(plan.sides().1.is_some());
    // The pairs the plan counts (and its memory estimate sizes) are those
    // the solve goes through.
    let (planned, bytes) = (plan.pairs(), plan.table_bytes(true));
    assert_eq!(bytes, 32 * planned);
    let mut last = None;
    let evaluation = Evaluation::solve(plan, true, Kernel::scalar(), |p| last = Some(p));
    let last = last.expect("progress reported");
    assert_eq!((last.pairs_done, last.pairs), (planned, planned));
    assert_eq!(evaluation.pairs(), planned);
    let mut reference = Reference::default();
    let expected = reference.value(&checkers_of(&x), &checkers_of(&o));
    let got = values_of(&evaluation, &x, &o);
    for k in 0..4 {
        assert!((got[k] - expected[k]).abs() < 1e-9, "{got:?} {expected:?}");
    }
    // Every pair of the two universes, both ways round: X's sides against
    // O's (the first table) and O's against X's (the second, the opponent's
    // replies).
    let plan = Plan::new(&x, &o);
    let (xs, os) = (plan.sides().0.to_vec(), plan.sides().1.unwrap().to_vec());
    assert!(
        xs.len() >= 2 && os.len() > 100 * xs.len(),
        "{} {}",
        xs.len(),
        os.len()
    );
    let mut pairs = 0;
    for (movers, opponents) in [(&xs, &os), (&os, &xs)] {
        for mover in movers {
            for opponent in opponents {
                let expected = reference.value(&checkers_of(mover), &checkers_of(opponent));
                let got = values_of(&evaluation, mover, opponent);
                for k in 0..4 {
                    assert!(
                        common::error(got[k], expected[k]) < 1e-9,
                        "{mover} v {opponent}: {got:?} {expected:?}"
                    );
                }
                pairs += 1;
            }
        }
    }
    println!("{pairs} pairs of the two universes agree with the reference");
    // Both tables' pairs, each side padded to its universe's slots.
    assert!(
        planned >= pairs,
        "{planned} planned, {pairs} pairs of sides"
    );
}

/// Every kernel this CPU supports against the first (scalar); those it
/// lacks are named on the stderr handle itself, which the test harness
/// does not capture.
#[test]
fn every_kernel_computes_identical_tables() {
    for kind in KernelKind::ALL {
        if !kind.is_supported() {
            endbook::kernels::skip_unsupported(kind.name(), "bear-off tables by every kernel");
        }
    }
    assert_eq!(Kernel::available().next(), Some(Kernel::scalar()));
    let tables = |cube: bool| -> Vec<Table> {
        Kernel::available()
            .map(|kernel| {
                let mut options = GenerateOptions::new(5, cube);
                options.kernel = kernel;
                eprintln!("kernel {kernel}, cube {cube}");
                generate(options, |_| {}).table
            })
            .collect()
    };
    for cube in [false, true] {
        let tables = tables(cube);
        for table in &tables[1..] {
            match (&tables[0], table) {
                (Table::Cubeless(a), Table::Cubeless(b)) => assert!(a == b),
                (Table::Cubeful(a), Table::Cubeful(b)) => {
                    assert_eq!(a.len(), b.len());
                    assert!(a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits()))
                }
                _ => unreachable!(),
            }
        }
    }
}

#[test]
fn fifteen_checker_universe_counts() {
    let universe = Universe::full_layout(15);
    assert_eq!(universe.positions(), 54_264);
    assert_eq!(universe.max_pips(), 90);
    assert_eq!(all_sides(3).len(), Universe::full_layout(3).positions());
}

/// The cubeless tables' fixed point is exact arithmetic, so the generator's
/// values are the reference's to the last unit, not only within an error
/// bound (a rounding changed to truncation stays within 1e-9 of the `f64`
/// reference, yet moves some 16-bit codes a step).
#[test]
fn cubeless_tables_equal_the_fixed_point_reference_to_the_unit() {
    let mut reference = Reference::default();
    for (checkers, pairs) in [(4, None), (6, Some(2_000))] {
        let table = generate(GenerateOptions::new(checkers, false), |_| {});
        let sides: Vec<Side> = all_sides(checkers)
            .into_iter()
            .filter(|side| !side.is_empty())
            .collect();
        let mut rng = Rng(checkers as u64);
        let pairs: Vec<(Side, Side)> = match pairs {
            None => sides
                .iter()
                .flat_map(|x| sides.iter().map(move |o| (*x, *o)))
                .collect(),
            Some(count) => (0..count)
                .map(|_| {
                    let pick = |rng: &mut Rng| sides[rng.below(sides.len() as u64) as usize];
                    (pick(&mut rng), pick(&mut rng))
                })
                .collect(),
        };
        for (x, o) in &pairs {
            let (mover, opponent) = (pack(&checkers_of(x)), pack(&checkers_of(o)));
            let expected = f64::from(reference.fixed_win(mover, opponent)) / f64::from(ONE);
            let got = table.entry(x, o).unwrap().win;
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "{x} v {o}: {got} against {expected}"
            );
        }
    }
}

#[test]
fn cubeless_on_demand_evaluation_equals_the_table_bit_for_bit() {
    // Same arithmetic in the same order: the exact fixed-point values agree.
    let table = generate(GenerateOptions::new(6, false), |_| {});
    for (x, o) in [
        ("0 0 2 0 0 4", "1 0 0 1 0 4"),
        ("0 1 0 0 0 0", "0 0 0 2 2 2"),
    ] {
        let (x, o): (Side, Side) = (x.parse().unwrap(), o.parse().unwrap());
        let evaluation = Evaluation::solve(Plan::new(&x, &o), false, Kernel::scalar(), |_| {});
        let (a, b) = (
            evaluation.entry(&x, &o).unwrap(),
            table.entry(&x, &o).unwrap(),
        );
        assert_eq!(a.win.to_bits(), b.win.to_bits(), "{x} v {o}");
        assert!(a.cube.is_none());
    }
}
