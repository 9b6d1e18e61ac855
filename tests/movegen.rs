//! Every move generator the CPU supports against the rules module, which
//! defines the game: every board up to 9 seeds, random boards up to 31, and
//! whole books.

use endbook::games::oware::movegen::{GeneratedMove, MAX_PACKED_SEEDS};
use endbook::games::oware::Sweep;
use endbook::games::oware::{
    generate, legal_moves, Board, BoardIndex, GenerateOptions, MoveGen, MoveGenKind, OwareBook,
};

mod common;
use common::Rng;

fn movegens() -> Vec<MoveGen> {
    for kind in MoveGenKind::ALL {
        if !kind.is_supported() {
            endbook::kernels::skip_unsupported(kind.name(), "move generators against the rules");
        }
    }
    MoveGen::available().collect()
}

fn check(movegen: MoveGen, board: &Board) {
    let expected: Vec<GeneratedMove> = legal_moves(board)
        .map(|outcome| GeneratedMove {
            capture: outcome.capture,
            child: outcome.child(),
        })
        .collect();
    let mut out = [GeneratedMove {
        capture: 0,
        child: Board::default(),
    }; 6];
    let count = movegen.moves(board, &mut out);
    assert_eq!(&out[..count], &expected[..], "{movegen} on {board}");
}

#[test]
fn movegens_match_the_rules_on_every_board_up_to_nine_seeds() {
    let index = BoardIndex::new(9);
    for movegen in movegens() {
        for (board, _) in index.boards_from(0) {
            check(movegen, &board);
        }
    }
}

#[test]
fn movegens_match_the_rules_on_random_boards_up_to_31_seeds() {
    let mut rng = Rng(0x1234_5678_9abc_def0);
    let mut next = move || rng.next();
    for movegen in movegens() {
        for _ in 0..200_000 {
            let total = next() % u64::from(MAX_PACKED_SEEDS + 1);
            let mut houses = [0u8; 12];
            for _ in 0..total {
                houses[(next() % 12) as usize] += 1;
            }
            check(movegen, &Board::new(houses));
        }
        // Every count a last seed can land on, 0 to 30 before it: only 1
        // or 2 before (2 or 3 after) captures, and a packed count must not
        // pass for one (17 or 18 before, random boards almost never hold).
        // Each alone, beside a house just as full (the chain goes on), and
        // with a seed in every other opponent house (no grand slam).
        for last in 6..12 {
            for count in 0..=30u8 {
                for house in 0..6 {
                    let sown = (last - house) as u8;
                    for filler in 0..3 {
                        let mut houses = [0u8; 12];
                        houses[house] = sown;
                        houses[last] = count;
                        match filler {
                            1 if last > 6 => houses[last - 1] = count,
                            2 => (6..12).filter(|&h| h != last).for_each(|h| houses[h] = 1),
                            _ => {}
                        }
                        if houses.iter().map(|&h| u32::from(h)).sum::<u32>() <= MAX_PACKED_SEEDS {
                            check(movegen, &Board::new(houses));
                        }
                    }
                }
            }
        }
        // The fullest boards: 31 seeds in one house (laps twice and more).
        for house in 0..12 {
            let mut houses = [0u8; 12];
            houses[house] = 31;
            check(movegen, &Board::new(houses));
        }
    }
}

#[test]
#[should_panic(expected = "at most 31 seeds")]
fn movegens_refuse_boards_beyond_the_packed_range() {
    let mut out = [GeneratedMove {
        capture: 0,
        child: Board::default(),
    }; 6];
    MoveGen::scalar().moves(
        &Board::new([16, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        &mut out,
    );
}

/// With a child cache (hybrid sweeps: run sweeps build none and use no
/// move generator; every cache sweep reads the same cache), each generator
/// gives the same book, its caches built level by level or for all levels
/// at once.
#[test]
fn forced_movegens_generate_identical_books() {
    for level_by_level in [true, false] {
        let book = |movegen| {
            let options = GenerateOptions {
                movegen,
                mode: Sweep::Hybrid,
                level_by_level,
                ..GenerateOptions::new(9)
            };
            let generated = generate(options, |_| {});
            assert!(generated.cache_bytes > 0, "a child cache was built");
            OwareBook::to_bytes(&generated)
        };
        let scalar = book(MoveGen::scalar());
        for movegen in movegens() {
            assert!(
                book(movegen) == scalar,
                "{movegen} book differs (level by level {level_by_level})"
            );
        }
    }
}
