//! Hand-worked Oware Abapa rules cases, through the public API only.
//!
//! Boards are written in the text notation: houses 0-11, the player to move
//! owning 0-5, sowing in the order 0, 1, ..., 11, 0, ... Each case shows the
//! sowing and capture arithmetic in a comment.

use endbook::games::oware::rules::no_move_score;
use endbook::games::oware::{
    generate, legal_moves, play, Board, GenerateOptions, OwareBook, ParseBoardError,
};
use std::sync::OnceLock;

fn board(text: &str) -> Board {
    text.parse()
        .unwrap_or_else(|e| panic!("bad test board {text:?}: {e}"))
}

/// Plays `house` on `before`, which must be legal, and checks the capture and
/// the board after the move (seen by the mover) and the child (seen by the opponent).
fn check_move(before: &str, house: usize, capture: u8, after: &str) {
    let outcome = play(&board(before), house)
        .unwrap_or_else(|| panic!("house {house} of {before} should be legal"));
    assert_eq!(outcome.house, house);
    assert_eq!(
        outcome.capture, capture,
        "capture of house {house} on {before}"
    );
    assert_eq!(
        outcome.after,
        board(after),
        "board after house {house} on {before}"
    );
    assert_eq!(outcome.child(), board(after).flipped());
    // Seeds are conserved: what is not captured is still on the board.
    assert_eq!(
        outcome.after.seeds() + u32::from(capture),
        board(before).seeds()
    );
}

/// The houses `legal_moves` offers on `text`.
fn legal_houses(text: &str) -> Vec<usize> {
    legal_moves(&board(text)).map(|m| m.house).collect()
}

/// A book of every board with up to 9 seeds, 200 turns.
fn book() -> &'static OwareBook {
    static BOOK: OnceLock<OwareBook> = OnceLock::new();
    BOOK.get_or_init(|| OwareBook::from_generated(&generate(GenerateOptions::new(9), |_| {})))
}

fn value(text: &str, turns_left: u32) -> i32 {
    book().value(&board(text), turns_left).unwrap()
}

#[test]
fn chain_capture_over_several_houses() {
    // House 5 (5 seeds) sows 6, 7, 8, 9, 10:
    //   6: 1+1=2, 7: 2+1=3, 8: 1+1=2, 9: 2+1=3, 10: 2+1=3; last seed in 10.
    // Backwards from 10: 3, 3, 2, 3, 2 are all 2 or 3, then house 5 is own side.
    // Capture 3+3+2+3+2 = 13; house 11 keeps 1, so no grand slam.
    check_move("0 0 0 0 0 5 1 2 1 2 2 1", 5, 13, "0 0 0 0 0 0 0 0 0 0 0 1");

    // House 4 (4 seeds) sows 5, 6, 7, 8: 6: 1+1=2, 7: 1+1=2, 8: 2+1=3, last in 8.
    // Backwards: 8 (3), 7 (2), 6 (2) captured = 7; house 11 keeps 2.
    check_move("0 0 0 0 4 0 1 1 2 0 0 2", 4, 7, "0 0 0 0 0 1 0 0 0 0 0 2");
}

#[test]
fn chain_capture_value_through_the_book() {
    // House 5 (4 seeds) sows 6-9, each 1+1 = 2: capture 2+2+2+2 = 8, house 11
    // keeps 1. It is the only legal move (houses 0-4 are empty).
    let text = "0 0 0 0 0 4 1 1 1 1 0 1";
    check_move(text, 5, 8, "0 0 0 0 0 0 0 0 0 0 0 1");
    assert_eq!(legal_houses(text), [5]);
    // 1 turn left: the capture alone, 8.
    assert_eq!(value(text, 1), 8);
    // 2 turns: the opponent then sows their single seed into our house 0
    // (1 seed: no capture), so still 8 - 0 = 8.
    assert_eq!(value(text, 2), 8);
    // 3 turns and more: we then face "1 0 0 0 0 0 0 0 0 0 0 0" and cannot
    // feed (house 0's seed only reaches house 1), so we score our 1 seed. The
    // opponent's turn is worth 0 - 1 = -1 to them, and ours 8 - (-1) = 9:
    // all nine seeds.
    for turns in [3, 4, 10, 200] {
        assert_eq!(value(text, turns), 9, "{turns} turns left");
    }
}

#[test]
fn chain_stops_at_a_house_with_1_or_4_seeds() {
    // House 5 (4 seeds) sows 6-9: 6: 1+1=2, 7: 0+1=1, 8: 1+1=2, 9: 2+1=3.
    // Backwards from 9: 9 (3), 8 (2) captured = 5; house 7 holds 1: stop.
    // House 6 holds 2 but lies beyond the stop, so it stays.
    check_move("0 0 0 0 0 4 1 0 1 2 0 3", 5, 5, "0 0 0 0 0 0 2 1 0 0 0 3");

    // Same, with house 7 holding 3 before: 3+1 = 4 stops the chain.
    // Capture 9 (3) + 8 (2) = 5; houses 6 (2) and 7 (4) stay.
    check_move("0 0 0 0 0 4 1 3 1 2 0 0", 5, 5, "0 0 0 0 0 0 2 4 0 0 0 0");

    // A house the sowing just passed through stops it too: house 4 (3 seeds)
    // sows 5, 6, 7; 6: 0+1=1, 7: 2+1=3, last in 7: capture 3; house 6 (1)
    // stops the chain. The opponent keeps 6 (1) and 11 (1).
    check_move("0 0 0 0 3 0 0 2 0 0 0 1", 4, 3, "0 0 0 0 0 1 1 0 0 0 0 1");

    // The last house itself holding 4 captures nothing: 6: 3+1 = 4.
    check_move("0 0 0 0 0 1 3 0 0 0 0 0", 5, 0, "0 0 0 0 0 0 4 0 0 0 0 0");
    // Nor holding 1: 6: 0+1 = 1.
    check_move("0 0 0 0 0 1 0 2 0 0 0 0", 5, 0, "0 0 0 0 0 0 1 2 0 0 0 0");
}

#[test]
fn chain_does_not_cross_onto_the_own_side() {
    // House 3 (3 seeds) sows 4, 5, 6: 4: 1+1=2, 5: 2+1=3, 6: 1+1=2; last in 6.
    // Backwards: house 6 (2) captured; houses 5 (3) and 4 (2) are the mover's
    // own, so the chain stops at the side's edge. Capture 2; house 10 keeps 4.
    check_move("0 0 0 3 1 2 1 0 0 0 4 0", 3, 2, "0 0 0 0 2 3 0 0 0 0 4 0");

    // Nor does it wrap from house 0 back to house 11: a last seed on the
    // mover's own side captures nothing, even in a house of 2 or 3 with
    // 2s and 3s before it. House 4 (9 seeds) sows 5-11 (7) then 0, 1:
    // 0: 1+1=2, 1: 1+1=2 (last); 6-11 hold 2 or 3 but nothing is taken.
    check_move("1 1 0 0 9 0 1 1 2 2 1 1", 4, 0, "2 2 0 0 0 1 2 2 3 3 2 2");
}

#[test]
fn grand_slam_captures_nothing_and_the_sowing_stays() {
    // House 5 (3 seeds) sows 6, 7, 8: 6: 1+1=2, 7: 2+1=3, 8: 1+1=2.
    // Backwards 8 (2), 7 (3), 6 (2) = 7 = every seed on the opponent's side
    // (houses 9-11 are empty): a grand slam, so nothing is captured, the
    // move is still legal, and the sown seeds stay.
    let slam = "0 0 0 0 0 3 1 2 1 0 0 0";
    check_move(slam, 5, 0, "0 0 0 0 0 0 2 3 2 0 0 0");
    // It is the only move; with 1 turn left its value is its capture, 0.
    assert_eq!(legal_houses(slam), [5]);
    assert_eq!(value(slam, 1), 0);

    // One more seed in house 11 (untouched by the chain) and the same chain
    // is no longer everything: capture 2+3+2 = 7, house 11 keeps its seed.
    let capture = "0 0 0 0 0 3 1 2 1 0 0 1";
    check_move(capture, 5, 7, "0 0 0 0 0 0 0 0 0 0 0 1");
    assert_eq!(value(capture, 1), 7);

    // Only a chain that takes every seed on the side is a grand slam. Before
    // the move the opponent's seeds are all in houses 9 and 10, but the
    // sowing adds some in front of them: house 4 (6 seeds) sows 5-10;
    // 6-8: 0+1=1 each, 9: 1+1=2, 10: 2+1=3. Backwards from 10: 10 (3), 9 (2),
    // then 8 (1) stops: 5 of the 3+2+1+1+1 = 8 on the side. Capture 5.
    check_move("0 0 0 0 6 0 0 0 0 1 2 0", 4, 5, "0 0 0 0 0 1 1 1 1 0 0 0");
    // House 5 (5 seeds) sows 6-10, each 1+1 = 2; house 11 is empty.
    // Backwards from 10 all five hold 2: 10 = every seed there: grand slam.
    check_move("0 0 0 0 0 5 1 1 1 1 1 0", 5, 0, "0 0 0 0 0 0 2 2 2 2 2 0");
}

#[test]
fn laps_skip_the_origin_house() {
    // 12 seeds from house 0: houses 1-11 get one each (11 seeds), house 0 is
    // skipped, the 12th goes into house 1 (1+1 = 2). Last seed on the mover's
    // side: no capture.
    check_move("12 0 0 0 0 0 0 0 0 0 0 0", 0, 0, "0 2 1 1 1 1 1 1 1 1 1 1");

    // 15 seeds from house 2: 3-11 (9) and 0, 1 (2) make 11, house 2 is
    // skipped, then 3, 4, 5, 6 (4 more). House 6 ends at 1+1 = 2 with the last
    // seed: captured (2); house 5 is own side, so the chain ends there.
    // The opponent keeps 7-11 (1 each): no grand slam.
    check_move("0 0 15 0 0 0 0 0 0 0 0 0", 2, 2, "1 1 0 2 2 2 0 1 1 1 1 1");

    // 23 seeds from house 0: two laps of 11 give houses 1-11 two each, house
    // 0 is skipped twice, the 23rd goes into house 1 (3). Own side: no capture.
    check_move("23 0 0 0 0 0 0 0 0 0 0 0", 0, 0, "0 3 2 2 2 2 2 2 2 2 2 2");

    // 34 seeds from house 3: three laps (33) give every other house 3, the
    // 34th goes into house 4 (4). House 3 stays empty.
    check_move("0 0 0 34 0 0 0 0 0 0 0 0", 3, 0, "3 3 3 0 4 3 3 3 3 3 3 3");
}

#[test]
fn the_last_seed_of_a_lap_can_capture() {
    // 12 seeds from house 5: 6-11 (6) and 0-4 (5) make 11, house 5 skipped,
    // the 12th into house 6: 1+1+1 = 3, captured. House 5 is own side: stop.
    // Opponent: 6: 3, 7: 1+1 = 2, 8-11: 1 = 9 in all; capture 3.
    check_move("0 0 0 0 0 12 1 1 0 0 0 0", 5, 3, "1 1 1 1 1 0 0 2 1 1 1 1");

    // 15 seeds from house 5: 11 for the lap, then 6, 7, 8, 9 again: those
    // hold 2, houses 10, 11 hold 1. Backwards from 9: 2+2+2+2 = 8 of 10.
    check_move("0 0 0 0 0 15 0 0 0 0 0 0", 5, 8, "1 1 1 1 1 0 0 0 0 0 1 1");

    // 23 seeds from house 5: every other house gets 2, the 23rd into house 6
    // (3), captured. House 4 (2) is own side, so only 3 is taken, of 13.
    check_move("0 0 0 0 0 23 0 0 0 0 0 0", 5, 3, "2 2 2 2 2 0 0 2 2 2 2 2");

    // 11 seeds from house 0: exactly one lap, the last seed in house 11
    // (1+1 = 2), captured; house 10 holds 1: stop. 2 of the opponent's 7.
    check_move("11 0 0 0 0 0 0 0 0 0 0 1", 0, 2, "0 1 1 1 1 1 1 1 1 1 1 0");

    // 22 seeds from house 0: exactly two laps, the last seed in house 11 (2).
    // Backwards 11, 10, ..., 6 all hold 2: 12 = all the opponent's seeds, a
    // grand slam: nothing is captured.
    check_move("22 0 0 0 0 0 0 0 0 0 0 0", 0, 0, "0 2 2 2 2 2 2 2 2 2 2 2");
}

#[test]
fn the_opponent_must_be_fed() {
    // The opponent has no seeds. House 0 (1) reaches only house 1: illegal.
    // House 3 (3) sows 4, 5, 6: reaches the opponent, legal (6 holds 1: no
    // capture). House 5 (1) sows 6: legal. Houses 1, 2, 4 are empty.
    let text = "1 0 0 3 0 1 0 0 0 0 0 0";
    let b = board(text);
    assert_eq!(play(&b, 0), None);
    for empty in [1, 2, 4] {
        assert_eq!(play(&b, empty), None, "empty house {empty}");
    }
    check_move(text, 3, 0, "1 0 0 0 1 2 1 0 0 0 0 0");
    check_move(text, 5, 0, "1 0 0 3 0 0 1 0 0 0 0 0");
    assert_eq!(legal_houses(text), [3, 5]);

    // House 2 (3 seeds) sows 3, 4, 5: short of house 6, illegal; house 4
    // (2 seeds) sows 5, 6: legal.
    let text = "0 0 3 0 2 0 0 0 0 0 0 0";
    assert_eq!(legal_houses(text), [4]);
    // With 1 turn left, the forced move captures nothing: value 0.
    assert_eq!(value(text, 1), 0);
}

#[test]
fn a_player_who_cannot_feed_scores_their_own_seeds() {
    // The opponent is empty and no house reaches them: house 0 (1) sows 1,
    // house 1 (1) sows 2, house 3 (2) sows 4, 5. No legal move: the game ends
    // and the player to move scores their own 1+1+2 = 4, whatever the turns.
    let text = "1 1 0 2 0 0 0 0 0 0 0 0";
    let b = board(text);
    assert_eq!(legal_houses(text), Vec::<usize>::new());
    assert_eq!(no_move_score(&b), 4);
    for house in 0..6 {
        assert_eq!(play(&b, house), None);
    }
    for turns in [1, 2, 7, 100, 200] {
        assert_eq!(value(text, turns), 4, "{turns} turns left");
        let analysis = book().analyse(&b, turns).unwrap();
        assert_eq!(analysis.value, 4);
        assert!(analysis.moves.is_empty());
        assert_eq!(analysis.best_moves().count(), 0);
    }

    // A player can be driven to it. Here the only move sows house 5 into
    // house 6 (0+1 = 1, no capture); the opponent then faces, from their
    // side, "1 1 0 0 0 0 0 0 0 0 0 0" (their houses 0 and 1 are our 6 and 7):
    // they cannot feed us and score their 2 seeds. So the value is
    // 0 - 2 = -2 with 2 or more turns left, and 0 (the capture) with 1.
    let text = "0 0 0 0 0 1 0 1 0 0 0 0";
    check_move(text, 5, 0, "0 0 0 0 0 0 1 1 0 0 0 0");
    assert_eq!(value(text, 1), 0);
    for turns in [2, 3, 200] {
        assert_eq!(value(text, turns), -2, "{turns} turns left");
    }
}

#[test]
fn an_empty_own_side_has_no_move_and_scores_nothing() {
    // Houses 0-5 are empty: no move, the player to move scores their own
    // seeds, which are none; the opponent's 1+2+3 = 6 count for nobody.
    let text = "0 0 0 0 0 0 1 2 0 0 0 3";
    let b = board(text);
    assert_eq!(b.own_seeds(), 0);
    assert_eq!(b.opponent_seeds(), 6);
    assert_eq!(legal_houses(text), Vec::<usize>::new());
    assert_eq!(no_move_score(&b), 0);
    for turns in [1, 50, 200] {
        assert_eq!(value(text, turns), 0);
        assert!(book().analyse(&b, turns).unwrap().moves.is_empty());
    }
    // The empty board too.
    let empty = "0 0 0 0 0 0 0 0 0 0 0 0";
    assert_eq!(board(empty), Board::default());
    assert_eq!(legal_houses(empty), Vec::<usize>::new());
    assert_eq!(value(empty, 1), 0);
}

#[test]
fn text_notation_reads_spaces_and_commas() {
    let opening = board("4 4 4 4 4 4 4 4 4 4 4 4");
    assert_eq!(opening, Board::new([4; 12]));
    assert_eq!(opening.seeds(), 48);
    assert_eq!(opening.own_seeds(), 24);
    assert_eq!(opening.opponent_seeds(), 24);

    let expected = Board::new([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for text in [
        "1 2 3 4 5 6 7 8 9 10 11 12",
        "1,2,3,4,5,6,7,8,9,10,11,12",
        "  1, 2 ,3,,4 5\t6\n7 8 9 10 11 12  ",
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,",
        "001 2 3 4 5 6 7 8 9 10 11 12",
        // As boards are shown, a '|' between the sides.
        "1 2 3 4 5 6 | 7 8 9 10 11 12",
        "1,2,3,4,5,6|7,8,9,10,11,12",
    ] {
        assert_eq!(text.parse::<Board>(), Ok(expected), "{text:?}");
    }
    // Up to 255 seeds in all, in one house or spread.
    assert_eq!(
        "255 0 0 0 0 0 0 0 0 0 0 0"
            .parse::<Board>()
            .unwrap()
            .seeds(),
        255
    );
    assert_eq!(
        "100 100 55 0 0 0 0 0 0 0 0 0"
            .parse::<Board>()
            .unwrap()
            .seeds(),
        255
    );
}

#[test]
fn text_notation_refuses_bad_input() {
    let parse = |text: &str| text.parse::<Board>();
    // Wrong count.
    assert_eq!(parse(""), Err(ParseBoardError::WrongCount(0)));
    assert_eq!(parse(" , ,, "), Err(ParseBoardError::WrongCount(0)));
    assert_eq!(parse("1 2 3"), Err(ParseBoardError::WrongCount(3)));
    assert_eq!(
        parse("4 4 4 4 4 4 4 4 4 4 4"),
        Err(ParseBoardError::WrongCount(11))
    );
    assert_eq!(
        parse("4 4 4 4 4 4 4 4 4 4 4 4 4"),
        Err(ParseBoardError::WrongCount(13))
    );
    // A '|' anywhere but between two sides of 6, or more than one.
    let sides = |mover, other| Err(ParseBoardError::SideCounts { mover, other });
    assert_eq!(parse("4 4 4 4 4 | 4 4 4 4 4 4 4"), sides(5, 7));
    assert_eq!(parse("| 4 4 4 4 4 4 4 4 4 4 4 4"), sides(0, 12));
    assert_eq!(parse("4 4 4 4 4 4 |"), sides(6, 0));
    assert_eq!(
        parse("4 4 4 | 4 4 4 | 4 4 4 4 4 4"),
        Err(ParseBoardError::Bars(2))
    );
    // Both notations as shown read back.
    for houses in [[0; 12], [4; 12], [0, 10, 1, 0, 0, 0, 200, 1, 0, 0, 0, 7]] {
        let board = Board::new(houses);
        let sides = format!("{board:#}");
        assert_eq!(sides.split('|').count(), 2, "{sides}");
        assert_eq!(sides.parse::<Board>(), Ok(board), "{sides}");
        assert_eq!(board.to_string().parse::<Board>(), Ok(board));
    }
    // Not numbers.
    let not_a_count = |house: usize, text: &str| {
        Err(ParseBoardError::NotACount {
            house,
            text: text.to_string(),
        })
    };
    assert_eq!(parse("4 4 x 4 4 4 4 4 4 4 4 4"), not_a_count(2, "x"));
    assert_eq!(parse("4 4 4 4 4 4 4 4 4 4 4 1.5"), not_a_count(11, "1.5"));
    assert_eq!(parse("4;4 4 4 4 4 4 4 4 4 4 4 4"), not_a_count(0, "4;4"));
    // Negative numbers.
    assert_eq!(parse("4 4 4 4 4 -1 4 4 4 4 4 4"), not_a_count(5, "-1"));
    assert_eq!(parse("-0 0 0 0 0 0 0 0 0 0 0 0"), not_a_count(0, "-0"));
    // More than 255 in a house.
    assert_eq!(parse("0 0 0 0 0 0 0 256 0 0 0 0"), not_a_count(7, "256"));
    assert_eq!(parse("0 0 0 0 0 0 0 0 0 0 0 1000"), not_a_count(11, "1000"));
    // More than 255 in all.
    assert_eq!(
        parse("255 1 0 0 0 0 0 0 0 0 0 0"),
        Err(ParseBoardError::TooManySeeds(256))
    );
    assert_eq!(
        parse("200 200 200 200 200 200 200 200 200 200 200 200"),
        Err(ParseBoardError::TooManySeeds(2400))
    );
    // The messages name the problem.
    let message = parse("4 4 x 4 4 4 4 4 4 4 4 4").unwrap_err().to_string();
    assert!(
        message.contains("house 2") && message.contains("'x'"),
        "{message}"
    );
    assert!(parse("1 2 3").unwrap_err().to_string().contains("found 3"));
    assert!(parse("255 1 0 0 0 0 0 0 0 0 0 0")
        .unwrap_err()
        .to_string()
        .contains("256"));
}

#[test]
#[should_panic(expected = "at most 255 seeds")]
fn a_board_of_more_than_255_seeds_cannot_be_built() {
    Board::new([22; 12]); // 264 seeds
}

#[test]
fn try_new_refuses_what_new_panics_on() {
    assert_eq!(Board::try_new([22; 12]), None); // 264 seeds
    let mut houses = [21; 12];
    houses[0] = 24; // 255 seeds
    assert_eq!(Board::try_new(houses).map(|b| b.seeds()), Some(255));
    assert_eq!(Board::try_new(houses), Some(Board::new(houses)));
}

#[test]
fn display_round_trips() {
    assert_eq!(Board::new([4; 12]).to_string(), "4 4 4 4 4 4 4 4 4 4 4 4");
    assert_eq!(
        Board::new([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100]).to_string(),
        "0 1 2 3 4 5 6 7 8 9 10 100"
    );
    // A few deterministic pseudo-random boards (at most 12 * 21 = 252 seeds).
    let mut state = 0x0123_4567_89ab_cdefu64;
    for _ in 0..1000 {
        let mut houses = [0u8; 12];
        for h in houses.iter_mut() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *h = ((state >> 33) % 22) as u8;
        }
        let b = Board::new(houses);
        let text = b.to_string();
        assert_eq!(text.parse::<Board>(), Ok(b), "{text}");
        assert_eq!(text.split(' ').count(), 12);
        // Flipping twice is the identity, and the flipped board's text is
        // the two halves swapped.
        assert_eq!(b.flipped().flipped(), b);
        let halves: Vec<&str> = text.split(' ').collect();
        assert_eq!(
            b.flipped().to_string(),
            [&halves[6..], &halves[..6]].concat().join(" ")
        );
    }
}
