//! An independent brute-force reference for the Oware book.
//!
//! The rules are written again here from their statement, without calling or
//! copying the crate's rules code: a plain `[u8; 12]` board, its own sowing,
//! capture, grand slam and legality, and a plain recursive minimax memoised on
//! (board, turns left). The crate's generated 12-seed book must agree with it
//! on thousands of random (board, turns left) queries at every seed count
//! 1..=12, including turn counts far past the levels' convergence (where the
//! book clamps to its last stored layer), and every legal move's score from
//! `OwareBook::analyse` must agree too. Separately, the crate's `play` and
//! `legal_moves` must agree with these rules on every board of up to 7 seeds
//! and on random boards with large houses (laps).
//!
//! Rules (CodinGame Oware Abapa, player to move owns houses 0-5):
//! - a move sows a non-empty own house into the following houses, skipping
//!   the origin;
//! - if the last seed lands on the opponent's side in a house now holding 2
//!   or 3, it is captured, and so is each preceding opponent house holding 2
//!   or 3, stopping at the first that does not (or at the side's edge);
//! - grand slam: a capture of every opponent seed captures nothing;
//! - a move leaving the opponent with no seeds is illegal; without a legal
//!   move the game ends and the player to move scores their own seeds.
//!
//! V(s, 0) = 0; V(s, t) = max over legal moves of (capture - V(child, t - 1)),
//! or the own seeds when there is no legal move.

use endbook::games::oware::{
    generate, legal_moves, play, Board, GenerateOptions, LineEnd, OwareBook,
};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;
use std::time::Instant;

mod common;
use common::Rng;

/// Seeds of the book under test.
const BOOK_SEEDS: u32 = 12;
/// Turn limit of `GenerateOptions::new`.
const TURN_LIMIT: u32 = 200;

type Houses = [u8; 12];

// ---------------------------------------------------------------------------
// The reference rules.
// ---------------------------------------------------------------------------

/// Result of a legal reference move: seeds captured and the board after the
/// move, still seen by the player who moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RefMove {
    capture: u32,
    after: Houses,
}

/// Sows house `from` one seed at a time; returns the house of the last seed.
fn ref_sow(board: &mut Houses, from: usize) -> usize {
    let mut seeds = board[from];
    board[from] = 0;
    let mut at = from;
    while seeds > 0 {
        at = (at + 1) % 12;
        if at == from {
            continue; // the origin is skipped on every lap
        }
        board[at] += 1;
        seeds -= 1;
    }
    at
}

fn ref_side_sum(board: &Houses, side: std::ops::Range<usize>) -> u32 {
    board[side].iter().map(|&h| u32::from(h)).sum()
}

/// Plays own house `from` (0-5): `None` when it is empty or illegal.
fn ref_play(board: &Houses, from: usize) -> Option<RefMove> {
    assert!(from < 6);
    if board[from] == 0 {
        return None;
    }
    let mut after = *board;
    let last = ref_sow(&mut after, from);
    if ref_side_sum(&after, 6..12) == 0 {
        return None; // the opponent would be left without seeds
    }
    // Walk back from the last house while on the opponent's side and 2 or 3.
    let mut captured = Vec::new();
    let mut house = last;
    while house >= 6 && (after[house] == 2 || after[house] == 3) {
        captured.push(house);
        house -= 1;
    }
    let capture: u32 = captured.iter().map(|&h| u32::from(after[h])).sum();
    if capture == ref_side_sum(&after, 6..12) {
        // Grand slam (or no capture at all): nothing is taken.
        return Some(RefMove { capture: 0, after });
    }
    for &h in &captured {
        after[h] = 0;
    }
    Some(RefMove { capture, after })
}

fn ref_flip(board: &Houses) -> Houses {
    let mut flipped = [0; 12];
    for (i, slot) in flipped.iter_mut().enumerate() {
        *slot = board[(i + 6) % 12];
    }
    flipped
}

/// splitmix64 finaliser as a hasher for the memo's packed keys.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// The brute-force solver: memo keyed on (board, turns left), packed into a
/// u64 (4 bits per house, boards of at most 15 seeds; turns above them).
#[derive(Default)]
struct Reference {
    memo: HashMap<u64, i8, BuildHasherDefault<MixHasher>>,
}

impl Reference {
    fn key(board: &Houses, turns_left: u32) -> u64 {
        let mut key = u64::from(turns_left) << 48;
        for (i, &h) in board.iter().enumerate() {
            key |= u64::from(h) << (4 * i);
        }
        key
    }

    fn value(&mut self, board: &Houses, turns_left: u32) -> i32 {
        if turns_left == 0 {
            return 0;
        }
        let key = Self::key(board, turns_left);
        if let Some(&v) = self.memo.get(&key) {
            return i32::from(v);
        }
        let mut best: Option<i32> = None;
        for from in 0..6 {
            if let Some(m) = ref_play(board, from) {
                let score = m.capture as i32 - self.value(&ref_flip(&m.after), turns_left - 1);
                best = Some(best.map_or(score, |b| b.max(score)));
            }
        }
        let v = best.unwrap_or_else(|| ref_side_sum(board, 0..6) as i32);
        self.memo.insert(key, v as i8);
        v
    }

    /// Every legal move's (house, capture, score), in house order.
    fn move_scores(&mut self, board: &Houses, turns_left: u32) -> Vec<(usize, u32, i32)> {
        (0..6)
            .filter_map(|from| {
                ref_play(board, from).map(|m| {
                    let score = m.capture as i32 - self.value(&ref_flip(&m.after), turns_left - 1);
                    (from, m.capture, score)
                })
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Random boards.
// ---------------------------------------------------------------------------

impl Rng {
    /// Uniform in `range` (inclusive).
    fn in_range(&mut self, range: std::ops::RangeInclusive<u32>) -> u32 {
        range.start() + self.below(u64::from(range.end() - range.start() + 1)) as u32
    }

    /// A board with exactly `seeds` seeds, uniform over all such boards
    /// (stars and bars: 11 bars among `seeds + 11` slots).
    fn uniform_board(&mut self, seeds: u32) -> Houses {
        let slots = seeds as usize + 11;
        let mut is_bar = vec![false; slots];
        let mut bars = 0;
        while bars < 11 {
            let at = self.below(slots as u64) as usize;
            if !is_bar[at] {
                is_bar[at] = true;
                bars += 1;
            }
        }
        let mut board = [0u8; 12];
        let mut house = 0;
        for bar in is_bar {
            if bar {
                house += 1;
            } else {
                board[house] += 1;
            }
        }
        board
    }

    /// A board with exactly `seeds` seeds thrown into a few random houses, so
    /// that empty sides, big houses and lopsided positions come up often.
    fn clustered_board(&mut self, seeds: u32) -> Houses {
        let mut houses = Vec::new();
        for _ in 0..=self.below(4) {
            houses.push(self.below(12) as usize);
        }
        let mut board = [0u8; 12];
        for _ in 0..seeds {
            board[houses[self.below(houses.len() as u64) as usize]] += 1;
        }
        board
    }

    fn board(&mut self, seeds: u32) -> Houses {
        if self.below(4) == 0 {
            self.clustered_board(seeds)
        } else {
            self.uniform_board(seeds)
        }
    }
}

// ---------------------------------------------------------------------------
// The book under test.
// ---------------------------------------------------------------------------

fn book() -> &'static OwareBook {
    static BOOK: OnceLock<OwareBook> = OnceLock::new();
    BOOK.get_or_init(|| {
        let start = Instant::now();
        let generated = generate(GenerateOptions::new(BOOK_SEEDS), |_| {});
        let book = OwareBook::from_generated(&generated);
        assert_eq!(book.max_seeds(), BOOK_SEEDS);
        assert_eq!(book.turn_limit(), TURN_LIMIT);
        println!(
            "generated the {BOOK_SEEDS}-seed book in {:.2?}",
            start.elapsed()
        );
        book
    })
}

/// How to sample one seed count: queries, and the turns-left ranges to draw
/// from (each query picks a range, then a turn count uniformly in it).
struct Plan {
    seeds: u32,
    queries: u32,
    turns: Vec<std::ops::RangeInclusive<u32>>,
    /// About one query in this many also has every move's score checked.
    analyse_one_in: u32,
}

/// `book.analyse` must give the reference's value and, for every legal move in
/// house order, the reference's capture and score.
fn check_analysis(book: &OwareBook, reference: &mut Reference, houses: &Houses, turns: u32) {
    let board = Board::new(*houses);
    let analysis = book.analyse(&board, turns).unwrap();
    let expected = reference.move_scores(houses, turns);
    let got: Vec<(usize, u32, i32)> = analysis
        .moves
        .iter()
        .map(|m| (m.house, u32::from(m.capture), m.score))
        .collect();
    assert_eq!(
        got, expected,
        "moves of {board} with {turns} turns left (house, capture, score): book vs reference"
    );
    assert_eq!(
        analysis.value,
        reference.value(houses, turns),
        "{board} t={turns}"
    );
    if expected.is_empty() {
        assert_eq!(analysis.value, ref_side_sum(houses, 0..6) as i32);
    } else {
        let best = expected.iter().map(|m| m.2).max().unwrap();
        assert_eq!(analysis.value, best);
        let best_houses: Vec<usize> = analysis.best_moves().collect();
        let expected_best: Vec<usize> = expected
            .iter()
            .filter(|m| m.2 == best)
            .map(|m| m.0)
            .collect();
        assert_eq!(
            best_houses, expected_best,
            "best moves of {board} t={turns}"
        );
    }
}

/// Checks `plan.queries` random queries of `plan.seeds` seeds against the
/// reference; returns the number checked.
fn check_level(plan: &Plan, reference: &mut Reference) -> u32 {
    let book = book();
    let last_change = book.levels()[plan.seeds as usize].last_change;
    let mut rng = Rng(0x5eed_0000 + u64::from(plan.seeds));
    let start = Instant::now();
    let mut past_convergence = 0;
    let mut analysed = 0;
    for _ in 0..plan.queries {
        let houses = rng.board(plan.seeds);
        let range = plan.turns[rng.below(plan.turns.len() as u64) as usize].clone();
        let turns = rng.in_range(range);
        if turns > last_change {
            past_convergence += 1;
        }
        let expected = reference.value(&houses, turns);
        let got = book.value(&Board::new(houses), turns).unwrap();
        assert_eq!(
            got,
            expected,
            "value of {} with {turns} turns left: book {got}, reference {expected}",
            Board::new(houses)
        );
        if rng.below(u64::from(plan.analyse_one_in)) == 0 {
            check_analysis(book, reference, &houses, turns);
            analysed += 1;
        }
    }
    println!(
        "{:2} seeds: {:5} queries checked, {analysed} of them move by move (turns {:?}, \
         {past_convergence} past the level's convergence at turn {last_change}) in {:.2?}, \
         memo {} entries",
        plan.seeds,
        plan.queries,
        plan.turns,
        start.elapsed(),
        reference.memo.len()
    );
    plan.queries
}

#[test]
fn book_matches_reference_for_1_to_6_seeds() {
    // Small levels converge well before 200 turns, so most of these queries
    // read the book's clamped last layer.
    let mut reference = Reference::default();
    let mut total = 0;
    for seeds in 1..=6 {
        let plan = Plan {
            seeds,
            queries: 3000,
            turns: vec![1..=12, 1..=TURN_LIMIT, 150..=TURN_LIMIT],
            analyse_one_in: 4,
        };
        total += check_level(&plan, &mut reference);
    }
    println!("1-6 seeds: {total} queries checked");
}

#[test]
fn book_matches_reference_for_7_and_8_seeds() {
    let mut reference = Reference::default();
    let mut total = 0;
    for (seeds, turns) in [
        (7, vec![1..=10, 1..=TURN_LIMIT, 93..=TURN_LIMIT]),
        (8, vec![1..=10, 1..=60, 100..=110]),
    ] {
        let plan = Plan {
            seeds,
            queries: 2000,
            turns,
            analyse_one_in: 4,
        };
        total += check_level(&plan, &mut reference);
    }
    println!("7-8 seeds: {total} queries checked");
}

#[test]
fn book_matches_reference_for_9_to_12_seeds() {
    let mut reference = Reference::default();
    let mut total = 0;
    for (seeds, turns, queries) in [
        (9, 30, 2000),
        (10, 20, 1500),
        (11, 16, 1500),
        (12, 14, 1500),
    ] {
        let plan = Plan {
            seeds,
            queries,
            turns: vec![1..=6, 1..=turns],
            analyse_one_in: 4,
        };
        total += check_level(&plan, &mut reference);
    }
    println!("9-12 seeds: {total} queries checked");
}

/// `book.best_line` from `houses` with `turns` turns left, replayed with the
/// reference rules: each ply starts from the board the one before left, its
/// house is the lowest whose reference score is the reference value, its
/// capture is the reference's, and the line ends as the reference game does.
/// Returns the plies.
fn check_line(book: &OwareBook, reference: &mut Reference, houses: &Houses, turns: u32) -> usize {
    let line = book.best_line(&Board::new(*houses), turns).unwrap();
    let mut board = *houses;
    let mut turns_left = turns;
    let mut net = 0;
    for (ply, step) in line.plies.iter().enumerate() {
        assert_eq!(step.board.houses(), &board, "board of ply {ply}");
        assert_eq!(step.turns_left, turns_left);
        let value = reference.value(&board, turns_left);
        assert_eq!(step.value, value, "value at ply {ply}");
        let best = reference
            .move_scores(&board, turns_left)
            .into_iter()
            .find(|&(_, _, score)| score == value)
            .expect("a ply is played only where a move exists");
        assert_eq!(
            (step.house, u32::from(step.capture)),
            (best.0, best.1),
            "ply {ply} of the line from {} with {turns} turns left",
            Board::new(*houses)
        );
        net += if ply.is_multiple_of(2) { 1 } else { -1 } * best.1 as i32;
        assert_eq!(step.net, net, "net after ply {ply}");
        board = ref_flip(&ref_play(&board, best.0).unwrap().after);
        turns_left -= 1;
    }
    let plies = line.plies.len();
    let sign = if plies.is_multiple_of(2) { 1 } else { -1 };
    match line.end {
        LineEnd::TurnLimit => assert_eq!(turns_left, 0, "the line stops with turns left"),
        LineEnd::NoMove { board: end, seeds } => {
            assert!(turns_left > 0);
            assert_eq!(end.houses(), &board);
            assert!((0..6).all(|from| ref_play(&board, from).is_none()));
            assert_eq!(seeds, ref_side_sum(&board, 0..6));
            net += sign * seeds as i32;
        }
    }
    assert_eq!(net, reference.value(houses, turns), "net of the line");
    assert_eq!(line.net(), net);
    plies
}

#[test]
fn best_lines_are_perfect_play_by_the_reference() {
    let book = book();
    let mut reference = Reference::default();
    let mut rng = Rng(0x11e5);
    let (mut lines, mut plies, mut no_move, mut turn_limit) = (0, 0, 0, 0);
    let mut longest = 0;
    for seeds in 1..=8 {
        // Small levels are solved to 200 turns by the reference in moments;
        // larger ones with fewer turns.
        let most = if seeds <= 6 { TURN_LIMIT } else { 24 };
        for _ in 0..150 {
            let houses = rng.board(seeds);
            let turns = rng.in_range(1..=most);
            let length = check_line(book, &mut reference, &houses, turns);
            plies += length;
            longest = longest.max(length);
            match book.best_line(&Board::new(houses), turns).unwrap().end {
                LineEnd::TurnLimit => turn_limit += 1,
                LineEnd::NoMove { .. } => no_move += 1,
            }
            lines += 1;
        }
    }
    println!(
        "{lines} lines of {plies} plies in all (the longest {longest}) agree with the reference \
         ({no_move} end without a move, {turn_limit} at the turn limit)"
    );
    // Both endings must have been checked, and long lines as well as short.
    assert!(no_move > 100 && turn_limit > 100, "{no_move} {turn_limit}");
    assert!(longest > 100, "the longest line has {longest} plies");
}

// ---------------------------------------------------------------------------
// The crate's rules against the reference rules.
// ---------------------------------------------------------------------------

/// Every board with exactly `seeds` seeds, by a plain recursion.
fn all_boards(seeds: u32, out: &mut Vec<Houses>) {
    fn fill(board: &mut Houses, house: usize, left: u8, out: &mut Vec<Houses>) {
        if house == 11 {
            board[11] = left;
            out.push(*board);
            return;
        }
        for here in 0..=left {
            board[house] = here;
            fill(board, house + 1, left - here, out);
        }
    }
    fill(&mut [0; 12], 0, seeds as u8, out);
}

/// The crate's `play` and `legal_moves` must agree with the reference on `houses`.
fn check_rules(houses: &Houses) {
    let board = Board::new(*houses);
    let mut expected_legal = Vec::new();
    for from in 0..6 {
        let expected = ref_play(houses, from);
        let got = play(&board, from);
        match (got, expected) {
            (None, None) => {}
            (Some(got), Some(expected)) => {
                assert_eq!(got.house, from, "{board} house {from}");
                assert_eq!(
                    u32::from(got.capture),
                    expected.capture,
                    "capture of {board} house {from}"
                );
                assert_eq!(
                    got.after.houses(),
                    &expected.after,
                    "board after {board} house {from}"
                );
                assert_eq!(got.child().houses(), &ref_flip(&expected.after));
                expected_legal.push((from, expected.capture, expected.after));
            }
            (got, expected) => panic!(
                "legality of {board} house {from}: crate {:?}, reference {:?}",
                got.map(|m| m.after.to_string()),
                expected.map(|m| Board::new(m.after).to_string())
            ),
        }
    }
    let got_legal: Vec<(usize, u32, Houses)> = legal_moves(&board)
        .map(|m| (m.house, u32::from(m.capture), *m.after.houses()))
        .collect();
    assert_eq!(got_legal, expected_legal, "legal moves of {board}");
}

#[test]
fn play_and_legal_moves_match_the_reference_on_every_board_up_to_7_seeds() {
    let mut boards = Vec::new();
    let mut per_level = Vec::new();
    for seeds in 0..=7 {
        let before = boards.len();
        all_boards(seeds, &mut boards);
        per_level.push(boards.len() - before);
    }
    // C(n + 11, 11) boards with n seeds.
    assert_eq!(per_level, [1, 12, 78, 364, 1365, 4368, 12376, 31824]);
    let mut moves = 0;
    let mut captures = 0;
    let mut grand_slams = 0;
    for houses in &boards {
        check_rules(houses);
        for from in 0..6 {
            if let Some(m) = ref_play(houses, from) {
                moves += 1;
                captures += u32::from(m.capture > 0);
                let mut sown = *houses;
                let last = ref_sow(&mut sown, from);
                grand_slams +=
                    u32::from(m.capture == 0 && last >= 6 && matches!(sown[last], 2 | 3));
            }
        }
    }
    println!(
        "rules: {} boards, {moves} legal moves, {captures} captures, {grand_slams} grand slams \
         agree",
        boards.len()
    );
    // The exhaustive sweep must have exercised captures and grand slams.
    assert!(captures > 5_000 && grand_slams > 500);
}

#[test]
fn play_matches_the_reference_on_random_boards_with_laps() {
    let mut rng = Rng(0x1a95);
    let mut laps = 0;
    for i in 0..50_000 {
        let mut houses = [0u8; 12];
        if i % 2 == 0 {
            // Houses of up to 20 seeds each (at most 240 in all).
            for h in houses.iter_mut() {
                *h = rng.below(21) as u8;
            }
        } else {
            // One big own house among a few small ones.
            for h in houses.iter_mut() {
                *h = rng.below(4) as u8;
            }
            houses[rng.below(6) as usize] = rng.in_range(11..=150) as u8;
        }
        laps += houses[..6].iter().filter(|&&h| h >= 11).count();
        check_rules(&houses);
    }
    assert!(laps > 10_000);
}
