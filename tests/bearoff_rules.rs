//! Hand-worked bear-off rules and values: notation, dice, plays, simple
//! positions whose values are known in closed form.

use endbook::games::bearoff::{
    generate, plays, ranked_plays, results, CubeAction, GenerateOptions, Lookup, ParseSideError,
    ProbeError, Roll, Side, Universe, ROLLS,
};
use endbook::games::bearoff::{universe::reachable_sides, Plan};
use std::collections::BTreeSet;

fn side(text: &str) -> Side {
    text.parse().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn notation_is_points_one_to_six() {
    let s = side("3 2 1 0 0 0");
    assert_eq!(s.counts(), [3, 2, 1, 0, 0, 0]);
    assert_eq!(s.checkers(), 6);
    assert_eq!(s.pips(), 3 + 4 + 3);
    assert_eq!(s.to_string(), "3 2 1 0 0 0");
    assert_eq!(side("2,2,2,2,2,5").pips(), 60);
    assert_eq!("1 2 3".parse::<Side>(), Err(ParseSideError::WrongLength(3)));
    assert_eq!(
        "0 0 0 0 0 -1".parse::<Side>(),
        Err(ParseSideError::Negative("-1".into()))
    );
    assert_eq!(
        "5 5 5 1 0 0".parse::<Side>(),
        Err(ParseSideError::TooManyCheckers(16))
    );
    assert!(matches!(
        "a 0 0 0 0 0".parse::<Side>(),
        Err(ParseSideError::BadCount(_))
    ));
}

#[test]
fn twenty_one_rolls_cover_thirty_six_throws() {
    assert_eq!(ROLLS.iter().map(|r| r.weight()).sum::<u32>(), 36);
    assert_eq!(ROLLS.iter().filter(|r| r.is_double()).count(), 6);
    assert_eq!(Roll::new(2, 5), Roll::new(5, 2));
    assert_eq!(Roll::new(0, 3), None);
    assert_eq!(Roll::new(7, 1), None);
    let roll = Roll::new(2, 5).unwrap();
    assert_eq!(
        (roll.high(), roll.low(), roll.to_string()),
        (5, 2, "5-2".into())
    );
}

#[test]
fn every_die_is_playable_while_a_checker_is_left() {
    // Why the "use both dice / the larger die" rules never bite in a bear-off.
    let universe = Universe::full_layout(15);
    let mut checked = 0;
    for slot in 0..universe.slots() {
        let Some(side) = universe.side(slot) else {
            continue;
        };
        if side.is_empty() {
            continue;
        }
        checked += 1;
        for die in 1..=6 {
            assert!(
                (1..=6).any(|from| side.play_die(from, die).is_some()),
                "{side} cannot play a {die}"
            );
        }
    }
    assert_eq!(checked, 54_263, "every side but the empty one");
}

#[test]
fn sides_order_as_their_counts_do() {
    // Ord compares a side's counts as one word: the same order as the
    // arrays', point 1's count first.
    let universe = Universe::full_layout(4);
    let sides: Vec<Side> = (0..universe.slots())
        .filter_map(|slot| universe.side(slot))
        .collect();
    assert_eq!(sides.len(), 210, "every side of up to 4 checkers");
    for a in &sides {
        for b in &sides {
            assert_eq!(a.cmp(b), a.counts().cmp(&b.counts()), "{a} against {b}");
        }
    }
}

#[test]
fn an_evaluation_is_sized_from_the_sides_before_they_are_laid_out() {
    let set = |sides: &[Side]| sides.iter().copied().collect::<BTreeSet<Side>>();
    let cases = [
        ("0 1 0 0 0 0", "0 0 0 2 2 3"),
        ("2 0 1 0 0 1", "0 1 1 0 1 1"),
        ("0 0 0 0 0 3", "0 0 0 0 0 0"),
        ("3 2 1 0 0 0", "2 2 2 0 0 0"),
    ];
    let mut kinds = BTreeSet::new();
    for (x, o) in cases {
        let (x, o) = (side(x), side(o));
        let (from_x, from_o) = (reachable_sides(&[x]), reachable_sides(&[o]));
        // Each slot count is the laid-out universe's, padding included.
        for sides in [&from_x, &from_o] {
            assert_eq!(
                Universe::slots_of(sides),
                Universe::of(sides.clone()).slots()
            );
        }
        // What two starts reach is the union of what each reaches, which is
        // what a plan of one universe takes.
        let both = reachable_sides(&[x, o]);
        assert_eq!(set(&both), &set(&from_x) | &set(&from_o));
        let plan = Plan::new(&x, &o);
        let universes = match plan.sides() {
            (first, None) => {
                assert_eq!(set(first), set(&both), "{x} v {o}");
                [Universe::slots_of(first); 2]
            }
            (first, Some(second)) => {
                assert_eq!(set(first), set(&from_x), "{x} v {o}");
                assert_eq!(set(second), set(&from_o), "{x} v {o}");
                [Universe::slots_of(first), Universe::slots_of(second)]
            }
        };
        let pairs = match plan.sides().1 {
            None => universes[0] * universes[0],
            Some(_) => 2 * universes[0] * universes[1],
        } as u64;
        assert_eq!(plan.pairs(), pairs, "{x} v {o}");
        assert_eq!(plan.table_bytes(true), 32 * pairs);
        assert_eq!(plan.table_bytes(false), 4 * pairs);
        kinds.insert(plan.sides().1.is_some());
    }
    assert_eq!(kinds.len(), 2, "cases of one universe and of two");
}

#[test]
fn bearing_off_with_a_larger_die_only_from_the_highest_point() {
    let s = side("0 1 0 0 0 1"); // checkers on the 2- and 6-points
    assert_eq!(s.play_die(2, 6), None, "6 is occupied above the 2-point");
    assert_eq!(s.play_die(6, 6), Some(side("0 1 0 0 0 0")));
    assert_eq!(s.play_die(2, 2), Some(side("0 0 0 0 0 1")));
    let s = side("0 1 1 0 0 0");
    assert_eq!(s.play_die(3, 6), Some(side("0 1 0 0 0 0")));
    assert_eq!(s.play_die(2, 6), None);
    assert_eq!(s.play_die(3, 1), Some(side("0 2 0 0 0 0")));
    // No such point or die: not a legal play either.
    for (from, die) in [(0, 1), (7, 1), (3, 0), (3, 7)] {
        assert_eq!(s.play_die(from, die), None, "from {from}, die {die}");
    }
}

#[test]
fn plays_of_six_one_from_two_and_six() {
    // 6/off 2/1 and 6/5 5/off (or 2/1 6/off) leave one of two sides.
    let found = results(&side("0 1 0 0 0 1"), Roll::new(6, 1).unwrap());
    assert_eq!(found, vec![side("0 1 0 0 0 0"), side("1 0 0 0 0 0")]);
    let listed = plays(&side("0 1 0 0 0 1"), Roll::new(1, 6).unwrap());
    let notations: Vec<String> = listed.iter().map(|p| p.notation()).collect();
    assert_eq!(notations, ["6/5 5/off", "6/off 2/1"]);
}

#[test]
fn doubles_play_four_times_and_stop_when_all_are_off() {
    let found = results(&side("0 0 0 2 0 0"), Roll::new(3, 3).unwrap());
    // 4/1 4/1 1/off 1/off, or 4/1 1/off 4/1 1/off...: both checkers come off.
    assert_eq!(found, vec![Side::EMPTY]);
    // Three checkers on the 6-point move 4 pips in all: as 4, 3+1, 2+2 or 2+1+1.
    let found = results(&side("0 0 0 0 0 3"), Roll::new(1, 1).unwrap());
    assert_eq!(
        found,
        vec![
            side("0 0 0 1 2 0"),
            side("0 0 0 2 0 1"),
            side("0 0 1 0 1 1"),
            side("0 1 0 0 0 2")
        ]
    );
    let one = results(&side("1 0 0 0 0 0"), Roll::new(1, 1).unwrap());
    assert_eq!(one, vec![Side::EMPTY]);
}

#[test]
fn closed_form_values() {
    let table = generate(GenerateOptions::new(3, true), |_| {});
    let entry = |x: &str, o: &str| table.entry(&side(x), &side(o)).unwrap();

    // One checker on the 1-point each: the mover is off at once.
    let e = entry("1 0 0 0 0 0", "1 0 0 0 0 0");
    assert!(close(e.win, 1.0));
    let cube = e.cube.unwrap();
    assert!(close(cube.owned, 1.0) && close(cube.centred, 1.0) && close(cube.opponent_owns, 1.0));

    // One checker on the 6-point each: 27 of 36 rolls bear it off (any 6,
    // 5-x, 4-2, 4-3 and the doubles from 2-2 up); otherwise the opponent
    // needs the same, then the mover comes off from point 3 or lower.
    let e = entry("0 0 0 0 0 1", "0 0 0 0 0 1");
    let hit = 27.0 / 36.0;
    assert!(close(e.win, hit + (1.0 - hit) * (1.0 - hit)));
    // The opponent, on roll after a miss, doubles and X is indifferent
    // between take and pass (2 * 0.5 = 1): X's misses cost a full point
    // unless X owns the cube.
    let cube = e.cube.unwrap();
    assert!(close(cube.opponent_owns, hit - (1.0 - hit)));
    assert!(close(cube.centred, hit - (1.0 - hit)));
    assert!(close(cube.owned, hit - (1.0 - hit) * (hit - (1.0 - hit))));
    assert!(close(cube.double(), 1.0));

    // Against a side that will be off next turn, the mover must bear off now.
    let e = entry("0 0 0 0 0 1", "1 0 0 0 0 0");
    assert!(close(e.win, hit));

    // Game over: a side with no checkers has won.
    assert!(close(entry("0 0 0 0 0 0", "0 0 1 0 0 0").win, 1.0));
    let lost = entry("0 0 1 0 0 0", "0 0 0 0 0 0");
    assert!(close(lost.win, 0.0) && close(lost.cube.unwrap().centred, -1.0));
}

#[test]
fn cube_actions() {
    let table = generate(GenerateOptions::new(3, true), |_| {});
    let cube = |x: &str, o: &str| table.entry(&side(x), &side(o)).unwrap().cube.unwrap();
    // Two checkers on the 1-point: every roll bears both off. A certain win
    // is not doubled.
    assert_eq!(
        cube("2 0 0 0 0 0", "0 0 0 0 0 1").centred_action(),
        CubeAction::NoDouble
    );
    // 6-point against 1-point (the opponent is off next turn): X wins 27/36
    // now or never. Doubled, that is 2 * (27 - 9) / 36 = 1: the opponent is
    // indifferent, and takes (as race3 decides a tie).
    let c = cube("0 0 0 0 0 1", "1 0 0 0 0 0");
    assert_eq!(c.centred_action(), CubeAction::DoubleTake);
    assert_eq!(c.owned_action(), CubeAction::DoubleTake);
    // Doubling is right with the cube centred and owned: the double's
    // equity is theirs.
    assert!(c.double() > c.owned && c.double() > c.centred);
    assert_eq!(
        c.with_cube_action(),
        (c.double(), c.double(), c.opponent_owns)
    );
    // From the 5-point, 31 rolls of 36 win: 2 * 26 / 36 > 1, a pass.
    let c = cube("0 0 0 0 1 0", "1 0 0 0 0 0");
    assert_eq!(c.centred_action(), CubeAction::DoublePass);
    // Three on the 6-point against two on the 6-point: X is behind; no double.
    let c = cube("0 0 0 0 0 3", "0 0 0 0 0 2");
    assert_eq!(c.centred_action(), CubeAction::NoDouble);
    assert_eq!(c.owned_action(), CubeAction::NoDouble);
    assert_eq!(c.with_cube_action(), (c.owned, c.centred, c.opponent_owns));
}

/// A side with no checker left has no result (the game is over); every
/// other side has at least one for every roll.
#[test]
fn only_the_empty_side_has_no_results() {
    for roll in ROLLS {
        assert_eq!(results(&Side::EMPTY, roll), Vec::<Side>::new(), "{roll}");
        for x in ["1 0 0 0 0 0", "0 0 0 0 0 1", "2 2 2 2 2 5"] {
            assert!(!results(&side(x), roll).is_empty(), "{x} {roll}");
        }
    }
}

/// A universe's result groups are its sides' rolls grouped by the results
/// they leave: each set of results once, weighted by the rolls leaving it,
/// the rolls that bear every checker off counted apart, 36 in all.
#[test]
fn result_groups_are_the_rolls_grouped_by_their_results() {
    use std::collections::BTreeMap;
    let universe = Universe::full(4);
    let mut sides = 0;
    for slot in 0..universe.slots() {
        let Some(x) = universe.side(slot) else {
            assert!(universe.groups(slot).is_empty());
            continue;
        };
        let mut win_weight = 0;
        let mut expected: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
        for roll in ROLLS {
            let after = results(&x, roll);
            if after.is_empty() {
                continue;
            }
            if after.contains(&Side::EMPTY) {
                win_weight += roll.weight();
                continue;
            }
            let mut slots: Vec<u32> = after
                .iter()
                .map(|r| universe.slot(r).unwrap() as u32)
                .collect();
            slots.sort_unstable();
            *expected.entry(slots).or_default() += roll.weight();
        }
        let mut found: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
        for group in universe.groups(slot) {
            let mut children = universe.children(group).to_vec();
            children.sort_unstable();
            let before = found.insert(children, group.weight);
            assert!(before.is_none(), "{x}: two groups of the same results");
        }
        assert_eq!(found, expected, "{x}");
        assert_eq!(universe.win_weight(slot), win_weight, "{x}");
        let total = win_weight + found.values().sum::<u32>();
        assert_eq!(total, if x.is_empty() { 0 } else { 36 }, "{x}");
        sides += 1;
    }
    assert_eq!(sides, 210);
}

#[test]
fn ranked_plays_prefer_bearing_off() {
    let table = generate(GenerateOptions::new(3, true), |_| {});
    // 6-1 from the 2- and 6-points against two checkers on the 6-point:
    // 6/off 2/1 leaves a checker on the 1-point (off next turn for sure),
    // 6/5 5/off leaves one on the 2-point (also off next turn); equal.
    let ranked = ranked_plays(
        &table,
        &side("0 1 0 0 0 1"),
        &side("0 0 0 0 0 2"),
        Roll::new(6, 1).unwrap(),
    )
    .unwrap();
    assert_eq!(ranked.len(), 2);
    assert!(close(ranked[0].win, ranked[1].win));
    // Two checkers on the 4-point and 4-4: both come off, the game ends
    // before the last two fours are played.
    let ranked = ranked_plays(
        &table,
        &side("0 0 0 2 0 0"),
        &side("0 0 1 0 0 0"),
        Roll::new(4, 4).unwrap(),
    )
    .unwrap();
    assert_eq!(ranked.len(), 1);
    assert!(close(ranked[0].win, 1.0));
    assert_eq!(ranked[0].play.notation(), "4/off 4/off");
    // A side with no checker left: the game is over, no play to rank.
    let some = side("0 1 0 0 0 1");
    for (mover, opponent) in [(some, Side::EMPTY), (Side::EMPTY, some)] {
        assert_eq!(
            ranked_plays(&table, &mover, &opponent, Roll::new(3, 1).unwrap()).unwrap_err(),
            ProbeError::GameOver { mover, opponent }
        );
    }
    // A side past the table's 3 checkers is named, whatever the roll (4-1
    // and 6-6 leave sides the table covers, 1-1 one it does not; the error
    // named that one, a side the caller never gave).
    let four = side("1 1 1 1 0 0");
    for (a, b) in [(4, 1), (6, 6), (1, 1)] {
        let error = ranked_plays(&table, &four, &some, Roll::new(a, b).unwrap()).unwrap_err();
        assert_eq!(
            error,
            ProbeError::NotCovered {
                side: four,
                checkers: 4,
                max: 3
            },
            "{a}-{b}"
        );
    }
    // Finished games' entries: the side with no checker left has won.
    let over = |mover: Side, opponent: Side| table.entry(&mover, &opponent).unwrap();
    for (mover, opponent, win, equity) in [
        (Side::EMPTY, some, 1.0, 1.0),
        (some, Side::EMPTY, 0.0, -1.0),
        (Side::EMPTY, Side::EMPTY, 1.0, 1.0),
    ] {
        let entry = over(mover, opponent);
        let cube = entry.cube.unwrap();
        assert_eq!(entry.win, win);
        assert_eq!(
            [cube.owned, cube.centred, cube.opponent_owns],
            [equity; 3],
            "{mover} against {opponent}"
        );
    }
}

/// A play's cube values are the mover's after it, in each cube state the
/// mover had: the opponent moves next with the cube's owner swapped and may
/// double a centred cube or one it owns (`min(1, 2 * opponent-owns)`), so
/// (owned, centred, opponent owns) = (-O's opp-owns, -max(O's centred, D),
/// -max(O's owned, D)).
#[test]
fn ranked_plays_carry_the_cube_states_across_the_turn() {
    let table = generate(GenerateOptions::new(4, true), |_| {});
    let (mover, opponent) = (side("0 0 0 3 0 0"), side("0 0 0 0 2 2"));
    let ranked = ranked_plays(&table, &mover, &opponent, Roll::new(2, 1).unwrap()).unwrap();
    assert!(ranked.len() > 1);
    for play in &ranked {
        let next = table.entry(&opponent, &play.play.result).unwrap();
        let cube = next.cube.unwrap();
        let double = (2.0 * cube.opponent_owns).min(1.0);
        let (owned, centred, opponent_owns) = play.cube.unwrap();
        assert!(
            close(owned, -cube.opponent_owns),
            "{}",
            play.play.notation()
        );
        assert!(
            close(centred, -cube.centred.max(double)),
            "{}",
            play.play.notation()
        );
        assert!(
            close(opponent_owns, -cube.owned.max(double)),
            "{}",
            play.play.notation()
        );
        // Owning the cube is worth the most, the opponent's owning it the least.
        assert!(owned >= centred && centred >= opponent_owns);
        assert!(owned > opponent_owns, "{}", play.play.notation());
    }
}

/// With cube values, plays rank by the centred equity, and plays equal
/// there by P(win): here O's double would be passed after every play of
/// 6-2 (centred equity -1 for all three), so the play that keeps the most
/// winning chances comes first.
#[test]
fn ranked_plays_break_centred_ties_by_winning_chances() {
    let table = generate(GenerateOptions::new(4, true), |_| {});
    let ranked = ranked_plays(
        &table,
        &side("0 0 2 1 0 1"),
        &side("1 1 1 1 0 0"),
        Roll::new(6, 2).unwrap(),
    )
    .unwrap();
    assert_eq!(ranked.len(), 3);
    let centred = |i: usize| ranked[i].cube.expect("a cube table").1;
    assert!((0..3).all(|i| close(centred(i), -1.0)));
    assert!(ranked.windows(2).all(|w| w[0].win > w[1].win));
    assert_eq!(ranked[0].play.notation(), "6/off 3/1");
}
