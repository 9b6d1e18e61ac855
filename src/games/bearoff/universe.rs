//! A universe: a set of one-sided positions closed under play, in the order
//! the generator solves them, with every position's results per roll.
//!
//! **Order.** Positions are sorted by pip count, then checker count, then
//! their [`CompositionIndex`] rank. Every play lowers the pip count, so the
//! results of a position all sit in earlier pip classes: the positions a
//! class needs are a prefix of the order. Each pip class is padded with empty
//! slots to a multiple of [`LANES`], so a block of `LANES` consecutive slots
//! always lies in one class (the generator computes blocks of 8 x 8 pairs).
//!
//! **Keys.** A position's key is its rank among all sides with at most 15
//! checkers: the sides with fewer checkers first, then the stars-and-bars rank
//! of [`CompositionIndex<6>`] (point 1 most significant). A universe maps
//! keys to slots with one array lookup.
//!
//! **Results.** For each position and each of the 21 rolls, the set of
//! distinct positions the roll can leave does not depend on the opponent, so
//! it is computed once: rolls that can bear off every checker add their weight
//! to the position's `win_weight`; the others become groups (weight out of 36,
//! result slots). Rolls leaving the same set of results share one group.

use super::dice::{results, ROLLS};
use super::side::{Side, MAX_CHECKERS, POINTS};
use crate::index::CompositionIndex;
use rayon::prelude::*;
use std::collections::HashSet;

/// Positions per block: the generator's vector width and tile size.
pub const LANES: usize = 8;

/// Keys of sides: a rank among all sides with at most 15 checkers.
#[derive(Clone, Debug)]
pub struct Keys {
    index: CompositionIndex<POINTS>,
    /// `level_start[c]`: sides with fewer than `c` checkers.
    level_start: [u32; MAX_CHECKERS + 2],
}

impl Keys {
    pub fn new() -> Keys {
        let mut level_start = [0u32; MAX_CHECKERS + 2];
        for c in 0..=MAX_CHECKERS {
            level_start[c + 1] = level_start[c] + CompositionIndex::<POINTS>::count(c) as u32;
        }
        Keys {
            index: CompositionIndex::new(MAX_CHECKERS),
            level_start,
        }
    }

    /// Number of sides with at most `checkers` checkers.
    pub fn count(&self, checkers: usize) -> usize {
        self.level_start[checkers + 1] as usize
    }

    /// The key of `side`.
    #[inline]
    pub fn key(&self, side: &Side) -> usize {
        self.level_start[side.checkers()] as usize + self.index.rank(&side.counts()) as usize
    }

    /// Every side with exactly `checkers` checkers, in rank order.
    pub fn sides_with(&self, checkers: usize) -> impl Iterator<Item = Side> + '_ {
        (0..CompositionIndex::<POINTS>::count(checkers)).map(move |rank| {
            Side::new(self.index.unrank(checkers, rank)).expect("at most 15 checkers")
        })
    }
}

impl Default for Keys {
    fn default() -> Keys {
        Keys::new()
    }
}

/// One roll's (or several equivalent rolls') results from one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// Chances out of 36.
    pub weight: u32,
    /// Range in [`Universe::children`].
    pub start: u32,
    pub end: u32,
}

/// A closed set of positions in solving order, with their results per roll.
pub struct Universe {
    keys: Keys,
    slots: Vec<Option<Side>>,
    /// Class `p` (pip count `p`) is `class_start[p]..class_start[p + 1]`.
    class_start: Vec<usize>,
    /// Slot of each key, `u32::MAX` for sides outside the universe.
    slot_of_key: Vec<u32>,
    win_weight: Vec<u8>,
    /// Groups of slot `s`: `groups[group_start[s]..group_start[s + 1]]`.
    group_start: Vec<u32>,
    groups: Vec<Group>,
    children: Vec<u32>,
}

/// The number of `sides` with each pip count, from 0 to the largest.
fn class_sizes(sides: &[Side]) -> Vec<usize> {
    let max_pips = sides.iter().map(Side::pips).max().unwrap_or(0);
    let mut sizes = vec![0; max_pips + 1];
    for side in sides {
        sizes[side.pips()] += 1;
    }
    sizes
}

/// Slots a pip class of `size` sides takes: whole blocks of [`LANES`].
fn padded(size: usize) -> usize {
    size.next_multiple_of(LANES)
}

/// Every side some play sequence can reach from one of `starts` (the starts
/// included), in no particular order.
pub fn reachable_sides(starts: &[Side]) -> Vec<Side> {
    let mut seen: HashSet<Side> = starts.iter().copied().collect();
    let mut frontier: Vec<Side> = seen.iter().copied().collect();
    while !frontier.is_empty() {
        let next: Vec<Side> = frontier
            .par_iter()
            .flat_map_iter(|side| ROLLS.iter().flat_map(move |&roll| results(side, roll)))
            .collect();
        frontier = next.into_iter().filter(|s| seen.insert(*s)).collect();
    }
    seen.into_iter().collect()
}

impl std::fmt::Debug for Universe {
    /// A summary: its positions and slots.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Universe")
            .field("positions", &self.positions())
            .field("slots", &self.slots())
            .finish_non_exhaustive()
    }
}

impl Universe {
    /// Every side with at most `max_checkers` checkers.
    pub fn full(max_checkers: usize) -> Universe {
        let mut universe = Universe::full_layout(max_checkers);
        universe.build_groups();
        universe
    }

    /// The slots of [`Universe::full`] without the result groups: enough to
    /// find a side's slot, which is all a book lookup needs.
    ///
    /// # Panics
    ///
    /// Above [`MAX_CHECKERS`].
    pub fn full_layout(max_checkers: usize) -> Universe {
        assert!(
            max_checkers <= MAX_CHECKERS,
            "{max_checkers} checkers: at most {MAX_CHECKERS} per side"
        );
        let keys = Keys::new();
        let sides: Vec<Side> = (0..=max_checkers)
            .flat_map(|c| keys.sides_with(c).collect::<Vec<_>>())
            .collect();
        Universe::layout(keys, sides)
    }

    /// Every side some play sequence can reach from one of `starts` (the
    /// starts included).
    pub fn reachable(starts: &[Side]) -> Universe {
        Universe::of(reachable_sides(starts))
    }

    /// The universe of `sides`, which must hold every result of every play
    /// from each of them (a set [`reachable_sides`] returns, or a union of
    /// such sets), each once.
    ///
    /// # Panics
    ///
    /// Where a side's result is missing.
    pub fn of(sides: Vec<Side>) -> Universe {
        let mut universe = Universe::layout(Keys::new(), sides);
        universe.build_groups();
        universe
    }

    /// The slots the universe of `sides` (as [`Universe::of`] takes them)
    /// has, padding included, without building it: what its tables' size
    /// is reckoned from.
    pub fn slots_of(sides: &[Side]) -> usize {
        class_sizes(sides).into_iter().map(padded).sum()
    }

    /// Slots for `sides`, without result groups: each pip class in turn,
    /// padded.
    fn layout(keys: Keys, mut sides: Vec<Side>) -> Universe {
        sides.sort_by_cached_key(|s| (s.pips(), s.checkers(), keys.key(s)));
        let sizes = class_sizes(&sides);
        let mut slots = Vec::with_capacity(sizes.iter().copied().map(padded).sum());
        let mut class_start = Vec::with_capacity(sizes.len() + 1);
        let mut rest = &sides[..];
        for size in sizes {
            class_start.push(slots.len());
            let (class, tail) = rest.split_at(size);
            slots.extend(class.iter().copied().map(Some));
            slots.resize(slots.len() + padded(size) - size, None);
            rest = tail;
        }
        class_start.push(slots.len());
        let mut slot_of_key = vec![u32::MAX; keys.count(MAX_CHECKERS)];
        for (slot, side) in slots.iter().enumerate() {
            if let Some(side) = side {
                slot_of_key[keys.key(side)] = slot as u32;
            }
        }
        Universe {
            keys,
            slots,
            class_start,
            slot_of_key,
            win_weight: Vec::new(),
            group_start: Vec::new(),
            groups: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Computes every position's win weight and result groups.
    fn build_groups(&mut self) {
        struct Local {
            win_weight: u8,
            groups: Vec<(u32, Vec<u32>)>,
        }
        let this = &*self;
        let local: Vec<Local> = self
            .slots
            .par_iter()
            .map(|side| {
                let Some(side) = side else {
                    return Local {
                        win_weight: 0,
                        groups: Vec::new(),
                    };
                };
                let mut win_weight = 0;
                let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
                for roll in ROLLS {
                    let results = results(side, roll);
                    if results.is_empty() {
                        continue; // the side has no checkers
                    }
                    if results.contains(&Side::EMPTY) {
                        win_weight += roll.weight() as u8;
                        continue;
                    }
                    let mut slots: Vec<u32> = results
                        .iter()
                        .map(|r| {
                            this.slot(r)
                                .expect("a universe holds every result of its positions")
                                as u32
                        })
                        .collect();
                    slots.sort_unstable();
                    match groups.iter_mut().find(|(_, g)| *g == slots) {
                        Some((weight, _)) => *weight += roll.weight(),
                        None => groups.push((roll.weight(), slots)),
                    }
                }
                Local { win_weight, groups }
            })
            .collect();
        let mut group_start = Vec::with_capacity(self.slots.len() + 1);
        let mut groups = Vec::new();
        let mut children = Vec::new();
        let mut win_weight = Vec::with_capacity(self.slots.len());
        for entry in local {
            group_start.push(groups.len() as u32);
            win_weight.push(entry.win_weight);
            for (weight, slots) in entry.groups {
                let start = children.len() as u32;
                children.extend_from_slice(&slots);
                groups.push(Group {
                    weight,
                    start,
                    end: children.len() as u32,
                });
            }
        }
        group_start.push(groups.len() as u32);
        self.win_weight = win_weight;
        self.group_start = group_start;
        self.groups = groups;
        self.children = children;
    }

    /// The key ranking shared by every universe.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Slots, padding included (a multiple of [`LANES`]).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Positions (without padding).
    pub fn positions(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// The side in `slot`, `None` for padding.
    #[inline]
    pub fn side(&self, slot: usize) -> Option<Side> {
        self.slots[slot]
    }

    /// The slot of `side`, if the universe holds it.
    #[inline]
    pub fn slot(&self, side: &Side) -> Option<usize> {
        let slot = self.slot_of_key[self.keys.key(side)];
        (slot != u32::MAX).then_some(slot as usize)
    }

    /// Largest pip count.
    pub fn max_pips(&self) -> usize {
        self.class_start.len() - 2
    }

    /// Slots of pip class `pips`.
    pub fn class(&self, pips: usize) -> std::ops::Range<usize> {
        self.class_start[pips]..self.class_start[pips + 1]
    }

    /// Pip class of the block starting at slot `LANES * block`.
    pub fn block_pips(&self, block: usize) -> usize {
        let slot = block * LANES;
        self.class_start.partition_point(|&start| start <= slot) - 1
    }

    /// Chances out of 36 that `slot` bears off its last checker this roll.
    #[inline]
    pub fn win_weight(&self, slot: usize) -> u32 {
        self.win_weight[slot].into()
    }

    /// Result groups of `slot`.
    #[inline]
    pub fn groups(&self, slot: usize) -> &[Group] {
        &self.groups[self.group_start[slot] as usize..self.group_start[slot + 1] as usize]
    }

    /// Result slots of a group.
    #[inline]
    pub fn children(&self, group: &Group) -> &[u32] {
        &self.children[group.start as usize..group.end as usize]
    }

    /// Result slots over all positions and groups: the reads per opponent.
    pub fn total_children(&self) -> usize {
        self.children.len()
    }
}
