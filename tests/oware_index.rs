//! Ranking is a bijection: every Oware board with up to 8 seeds and every
//! six-point arrangement of up to 15 checkers round-trips through rank and
//! unrank, in the documented lexicographic order; the largest book's indices
//! fit in 32 bits; random boards of 20 seeds round-trip.

use endbook::games::oware::{Board, BoardIndex, HOUSES, MAX_BOOK_SEEDS};
use endbook::index::{binomial, compositions, next_arrangement, CompositionIndex};
use std::collections::HashSet;

/// Every arrangement of `items` in `N` cells, in lexicographic order with cell
/// 0 most significant and counts ascending, built without the index.
fn arrangements<const N: usize>(items: usize) -> Vec<[u8; N]> {
    fn fill<const N: usize>(
        cell: usize,
        left: usize,
        current: &mut [u8; N],
        out: &mut Vec<[u8; N]>,
    ) {
        if cell == N - 1 {
            current[cell] = left as u8;
            out.push(*current);
            return;
        }
        for count in 0..=left {
            current[cell] = count as u8;
            fill(cell + 1, left - count, current, out);
        }
    }
    let mut out = Vec::new();
    fill(0, items, &mut [0; N], &mut out);
    out
}

#[test]
fn every_board_up_to_eight_seeds_round_trips() {
    let index = BoardIndex::new(8);
    assert_eq!(index.max_seeds(), 8);
    // Boards with at most 8 seeds in 12 houses: C(8 + 12, 12).
    assert_eq!(index.states() as u64, binomial(20, 12));
    for i in 0..index.states() {
        let board = index.board(i);
        let seeds = index.level_of(i);
        assert_eq!(board.seeds(), seeds, "board {i}");
        assert_eq!(index.index(&board), i, "board {i} = {board}");
        assert_eq!(index.index_with_seeds(&board, seeds), i, "board {i}");
        assert_eq!(
            index.rank(&board),
            i - index.level_starts()[seeds as usize],
            "board {i}"
        );
    }
}

#[test]
fn boards_from_zero_walks_every_board_once_in_index_order() {
    let index = BoardIndex::new(8);
    let mut seen = HashSet::new();
    let mut count = 0;
    for (i, (board, seeds)) in index.boards_from(0).enumerate() {
        assert_eq!(board, index.board(i), "position {i}");
        assert_eq!(seeds, board.seeds(), "position {i}");
        assert!(seen.insert(*board.houses()), "{board} twice");
        count += 1;
    }
    assert_eq!(count, index.states());
    // Starting anywhere gives the tail of the same walk.
    let all: Vec<(Board, u32)> = index.boards_from(0).collect();
    let starts = index.level_starts();
    let mut from = vec![1, 2, 12, 13, index.states() - 1];
    from.extend_from_slice(starts);
    from.extend(starts.iter().filter(|&&s| s > 0).map(|&s| s - 1));
    for start in from {
        let tail: Vec<(Board, u32)> = index.boards_from(start).collect();
        let expected = all.get(start..).unwrap_or(&[]);
        assert_eq!(tail, expected, "from {start}");
    }
    assert_eq!(index.boards_from(index.states() + 5).count(), 0);
}

#[test]
fn boards_are_in_lexicographic_order_within_each_level() {
    let index = BoardIndex::new(8);
    for seeds in 0..=8u32 {
        let start = index.level_starts()[seeds as usize];
        let expected = arrangements::<HOUSES>(seeds as usize);
        assert_eq!(expected.len(), BoardIndex::level_size(seeds));
        for (rank, houses) in expected.iter().enumerate() {
            assert_eq!(index.board(start + rank).houses(), houses);
        }
    }
}

#[test]
fn level_sizes_are_binomials() {
    let index = BoardIndex::new(8);
    let starts = index.level_starts();
    assert_eq!(starts.len(), 10);
    assert_eq!(starts[0], 0);
    for n in 0..=8u64 {
        let expected = binomial(n + 11, 11);
        assert_eq!(
            BoardIndex::level_size(n as u32) as u64,
            expected,
            "level {n}"
        );
        assert_eq!(
            (starts[n as usize + 1] - starts[n as usize]) as u64,
            expected
        );
        assert_eq!(compositions(12, n), expected);
        assert_eq!(CompositionIndex::<12>::count(n as usize), expected);
        let walked = index
            .boards_from(starts[n as usize])
            .take_while(|&(_, seeds)| seeds as u64 == n)
            .count();
        assert_eq!(walked as u64, expected, "level {n}");
    }
    assert_eq!(*starts.last().unwrap(), index.states());
    assert_eq!(BoardIndex::level_size(0), 1);
    assert_eq!(index.board(0), Board::default());
}

#[test]
fn six_point_arrangements_of_up_to_fifteen_round_trip() {
    let index = CompositionIndex::<6>::new(15);
    assert_eq!(index.max_items(), 15);
    let mut total = 0;
    for items in 0..=15usize {
        let count = CompositionIndex::<6>::count(items);
        assert_eq!(count, binomial(items as u64 + 5, 5));
        let expected = arrangements::<6>(items);
        assert_eq!(expected.len() as u64, count);
        let mut walking = index.unrank(items, 0);
        for (rank, cells) in expected.iter().enumerate() {
            let rank = rank as u64;
            assert_eq!(index.rank(cells), rank, "{cells:?}");
            assert_eq!(
                &index.unrank(items, rank),
                cells,
                "{items} items, rank {rank}"
            );
            assert_eq!(&walking, cells, "{items} items, step {rank}");
            let more = next_arrangement(&mut walking);
            assert_eq!(more, rank + 1 < count, "{items} items, step {rank}");
        }
        total += count;
    }
    // A bear-off side: 0 to 15 checkers on six points.
    assert_eq!(total, binomial(21, 6));
    // Smaller tables rank the arrangements they cover the same way.
    let small = CompositionIndex::<6>::new(9);
    for items in 0..=9 {
        for cells in arrangements::<6>(items) {
            assert_eq!(small.rank(&cells), index.rank(&cells));
        }
    }
}

#[test]
#[should_panic]
fn unranking_past_the_last_rank_panics() {
    let index = CompositionIndex::<6>::new(15);
    index.unrank(15, CompositionIndex::<6>::count(15));
}

#[test]
fn the_largest_book_fits_32_bit_indices() {
    let index = BoardIndex::new(MAX_BOOK_SEEDS);
    let states = index.states() as u64;
    assert_eq!(states, binomial(u64::from(MAX_BOOK_SEEDS) + 12, 12));
    assert!(states < u64::from(u32::MAX), "{states} states");
    // One more seed would not fit.
    assert!(binomial(u64::from(MAX_BOOK_SEEDS) + 13, 12) > u64::from(u32::MAX));
    // The extremes round-trip.
    let last = index.states() - 1;
    let top = index.board(last);
    let mut houses = [0; HOUSES];
    houses[0] = MAX_BOOK_SEEDS as u8;
    assert_eq!(*top.houses(), houses);
    assert_eq!(index.index(&top), last);
    let first_of_top = index.level_starts()[MAX_BOOK_SEEDS as usize];
    let mut houses = [0; HOUSES];
    houses[HOUSES - 1] = MAX_BOOK_SEEDS as u8;
    assert_eq!(*index.board(first_of_top).houses(), houses);
    assert_eq!(index.boards_from(last).count(), 1);
}

/// A board with more seeds than the index holds has no index or rank (they
/// would be another board's, or past the end).
#[test]
fn boards_beyond_the_index_panic() {
    let index = BoardIndex::new(8);
    let nine: Board = "9 0 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
    let eight: Board = "8 0 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
    assert_eq!(index.index(&eight), index.states() - 1);
    for what in ["index", "rank"] {
        let outcome = std::panic::catch_unwind(|| match what {
            "index" => index.index(&nine),
            _ => index.rank(&nine),
        });
        let message = *outcome.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(
            message, "a board of 9 seeds: the index holds at most 8",
            "{what}"
        );
    }
}

#[test]
#[should_panic]
fn an_index_beyond_the_largest_book_panics() {
    BoardIndex::new(MAX_BOOK_SEEDS + 1);
}

#[test]
fn random_boards_of_twenty_seeds_round_trip() {
    let index = BoardIndex::new(20);
    let states = index.states() as u64;
    assert_eq!(states, binomial(32, 12));
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200_000 {
        let i = (next() % states) as usize;
        let board = index.board(i);
        assert_eq!(board.seeds(), index.level_of(i), "index {i}");
        assert_eq!(index.index(&board), i, "index {i} = {board}");
        // The walk from there agrees with unranking its successors.
        let walked: Vec<(Board, u32)> = index.boards_from(i).take(3).collect();
        for (k, (b, seeds)) in walked.iter().enumerate() {
            assert_eq!(*b, index.board(i + k), "index {i} + {k}");
            assert_eq!(*seeds, b.seeds());
        }
    }
    // Random boards, built house by house, round-trip the other way.
    for _ in 0..200_000 {
        let seeds = (next() % 21) as u32;
        let mut houses = [0u8; HOUSES];
        for _ in 0..seeds {
            houses[(next() % HOUSES as u64) as usize] += 1;
        }
        let board = Board::new(houses);
        let i = index.index(&board);
        assert!(i < index.states());
        assert_eq!(index.board(i), board);
        assert_eq!(index.level_of(i), seeds);
    }
}
