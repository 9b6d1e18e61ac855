//! Frontier turns: once very few values change, only the boards with a
//! child that changed are recomputed, one at a time.
//!
//! Late in a level's solve a turn changes a few thousand of its millions of
//! boards, yet nearly every row reads one of them somewhere: sweeping the
//! rows that read a changed mirror row recomputes almost the whole level.
//! Here the changed mirror positions are followed back to the boards that
//! read them instead: a position's mirror row is read by a few (row, move,
//! capture) triples of the level's program ([`Readers`]), and within each
//! the run list's inverse ([`ListColumns::parents`]) gives the columns that
//! read that position. Each such board is then recomputed from its moves'
//! children, looked up column by column ([`ListColumns::child`]).

use super::{MirrorRows, RowProgram};
use crate::engine::PackedChanges;
use crate::kernels::rows::Run;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one column of a run list reads: the child's column in the child
/// row, the capture, and which of the move's child rows (its slot).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Child {
    dst: u32,
    capture: u8,
    slot: u8,
}

/// Every run list column by column, and inverted: for each list and slot,
/// the columns reading each column of the child row.
#[derive(Clone, Debug, Default)]
pub(super) struct ListColumns {
    /// Per list, where its columns start in `children`; one extra entry.
    child_starts: Vec<u32>,
    children: Vec<Child>,
    /// Per list, where its slots start in `slot_starts`; one extra entry.
    list_slots: Vec<u32>,
    /// Per (list, slot), where its offsets start in `parent_starts`; one
    /// extra entry. A slot's offsets cover the child row's columns up to
    /// the last one read, plus one.
    slot_starts: Vec<u32>,
    /// Per (list, slot) and child column, where its readers start in `parents`.
    parent_starts: Vec<u32>,
    /// Reading columns, ascending per child column.
    parents: Vec<u32>,
}

impl ListColumns {
    /// Adds a list (in the order of [`crate::kernels::rows::RunLists`]),
    /// from its runs covering `columns` columns.
    pub(super) fn push(&mut self, runs: &[Run], columns: usize) {
        if self.child_starts.is_empty() {
            self.child_starts.push(0);
            self.list_slots.push(0);
            self.slot_starts.push(0);
        }
        let first = self.children.len();
        self.children.resize(first + columns, Child::default());
        let slots = runs
            .iter()
            .map(|r| usize::from(r.slot) + 1)
            .max()
            .unwrap_or(0);
        let mut by_slot = vec![Vec::new(); slots];
        for run in runs {
            for i in 0..run.len {
                self.children[first + (run.src + i) as usize] = Child {
                    dst: run.dst + i,
                    capture: run.capture,
                    slot: run.slot,
                };
                by_slot[usize::from(run.slot)].push((run.dst + i, run.src + i));
            }
        }
        self.child_starts.push(self.children.len() as u32);
        for mut pairs in by_slot {
            // By child column, then reading column.
            pairs.sort_unstable();
            let width = pairs.last().map_or(0, |&(dst, _)| dst as usize + 1);
            let mut next = pairs.iter().peekable();
            for dst in 0..=width as u32 {
                self.parent_starts.push(self.parents.len() as u32);
                while let Some(&&(_, src)) = next.peek().filter(|p| p.0 == dst) {
                    self.parents.push(src);
                    next.next();
                }
            }
            self.slot_starts.push(self.parent_starts.len() as u32);
        }
        self.list_slots.push(self.slot_starts.len() as u32 - 1);
    }

    /// What column `column` of list `list` reads.
    #[inline(always)]
    fn child(&self, list: u32, column: usize) -> Child {
        self.children[self.child_starts[list as usize] as usize + column]
    }

    /// The columns of list `list` whose slot-`slot` child is column `dst`.
    #[inline]
    fn parents(&self, list: u32, slot: usize, dst: usize) -> &[u32] {
        let at = self.list_slots[list as usize] as usize + slot;
        let (from, to) = (
            self.slot_starts[at] as usize,
            self.slot_starts[at + 1] as usize,
        );
        // `to - from` offsets: one per child column read, plus the end.
        if dst + 1 >= to - from {
            return &[];
        }
        let offsets = &self.parent_starts[from + dst..from + dst + 2];
        &self.parents[offsets[0] as usize..offsets[1] as usize]
    }

    /// Bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.children.len() * std::mem::size_of::<Child>()
            + (self.child_starts.len()
                + self.list_slots.len()
                + self.slot_starts.len()
                + self.parent_starts.len()
                + self.parents.len())
                * 4
    }
}

/// A level's program inverted: per mirror row, the child rows of the program
/// that read it, as indices into [`RowProgram::bases`].
pub(super) struct Readers {
    /// Per mirror row, where its readers start in `bases`; one extra entry.
    starts: Vec<u32>,
    bases: Vec<u32>,
    /// Per base: its program row, run list and slot.
    owners: Vec<(u32, u32, u8)>,
}

impl Readers {
    /// Inverts `program`, whose base `i` reads mirror row `base_rows[i]`
    /// (of `mirror_rows` rows).
    pub(super) fn new(program: &RowProgram, base_rows: &[u32], mirror_rows: usize) -> Readers {
        let mut owners = vec![(0, 0, 0); program.bases.len()];
        for row in 0..program.rows() {
            let moves = program.row_moves[row] as usize..program.row_moves[row + 1] as usize;
            for k in moves {
                let first = program.moves[k].first_base as usize;
                let end = program
                    .moves
                    .get(k + 1)
                    .map_or(program.bases.len(), |m| m.first_base as usize);
                for (slot, owner) in owners[first..end].iter_mut().enumerate() {
                    *owner = (row as u32, program.moves[k].list, slot as u8);
                }
            }
        }
        let mut starts = vec![0u32; mirror_rows + 1];
        for &row in base_rows {
            starts[row as usize + 1] += 1;
        }
        for i in 0..mirror_rows {
            starts[i + 1] += starts[i];
        }
        let mut next = starts.clone();
        let mut bases = vec![0u32; base_rows.len()];
        for (i, &row) in base_rows.iter().enumerate() {
            bases[next[row as usize] as usize] = i as u32;
            next[row as usize] += 1;
        }
        Readers {
            starts,
            bases,
            owners,
        }
    }
}

/// What a frontier turn reads: the level's program and its inverse.
pub(super) struct Frontier<'a> {
    program: &'a RowProgram,
    columns: &'a ListColumns,
    readers: &'a Readers,
    mirror_rows: &'a MirrorRows,
    /// Global index of the level's first board.
    offset: usize,
    /// A bit per board of the level, set while it is to be recomputed
    /// (clear between turns).
    dirty: Vec<AtomicU64>,
}

/// Positions of changed mirror values handled per parallel task.
const POSITIONS_PER_TASK: usize = 1 << 12;

/// Bitmap words of boards recomputed per parallel task.
const WORDS_PER_TASK: usize = 1 << 10;

impl<'a> Frontier<'a> {
    /// Frontier turns of the level of `program`, whose first board has
    /// global index `offset`.
    pub(super) fn new(
        program: &'a RowProgram,
        columns: &'a ListColumns,
        readers: &'a Readers,
        mirror_rows: &'a MirrorRows,
        offset: usize,
    ) -> Frontier<'a> {
        let boards = *program.row_starts.last().unwrap_or(&0) as usize;
        Frontier {
            program,
            columns,
            readers,
            mirror_rows,
            offset,
            dirty: (0..boards.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Recomputes into `values` (the level's layer, holding the previous
    /// turn's values) every board reading one of `changed` (global mirror
    /// positions whose value changed in the previous turn, ascending) from
    /// `mirror`; returns the boards whose value differs from `previous`,
    /// and how many were recomputed.
    pub(super) fn sweep(
        &self,
        changed: &[u32],
        mirror: &[i8],
        previous: &[i8],
        values: &mut [i8],
    ) -> (PackedChanges, usize) {
        let program = self.program;
        let dirty = &self.dirty;
        assert_eq!(dirty.len(), values.len().div_ceil(64));
        changed
            .par_chunks(POSITIONS_PER_TASK)
            .with_max_len(1)
            .for_each(|positions| {
                for (row, column) in self.mirror_rows.cells(positions.iter().copied()) {
                    let readers =
                        self.readers.starts[row] as usize..self.readers.starts[row + 1] as usize;
                    for &base in &self.readers.bases[readers] {
                        let (reader, list, slot) = self.readers.owners[base as usize];
                        let first = program.row_starts[reader as usize] as usize;
                        for &src in self.columns.parents(list, usize::from(slot), column) {
                            let board = first + src as usize;
                            dirty[board / 64].fetch_or(1 << (board % 64), Ordering::Relaxed);
                        }
                    }
                }
            });
        let parts: Vec<(PackedChanges, usize)> = values
            .par_chunks_mut(64 * WORDS_PER_TASK)
            .zip(dirty.par_chunks(WORDS_PER_TASK))
            .with_max_len(1)
            .enumerate()
            .map(|(task, (values, dirty))| {
                let first = task * 64 * WORDS_PER_TASK;
                let (mut changes, mut recomputed) = (PackedChanges::default(), 0);
                let mut row = program
                    .row_starts
                    .partition_point(|&start| start as usize <= first)
                    - 1;
                for (w, word) in dirty.iter().enumerate() {
                    // Taken and cleared for the next turn (a plain store:
                    // marking is over).
                    let mut bits = word.load(Ordering::Relaxed);
                    if bits != 0 {
                        word.store(0, Ordering::Relaxed);
                    }
                    recomputed += bits.count_ones() as usize;
                    while bits != 0 {
                        let i = 64 * w + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let board = first + i;
                        while program.row_starts[row + 1] as usize <= board {
                            row += 1;
                        }
                        let value = self.recompute(row, board, mirror);
                        values[i] = value;
                        if value != previous[board] {
                            changes.push((self.offset + board) as u32, value);
                        }
                    }
                }
                (changes, recomputed)
            })
            .collect();
        let recomputed = parts.iter().map(|p| p.1).sum();
        let changes = PackedChanges::concatenate(parts.into_iter().map(|p| p.0).collect());
        (changes, recomputed)
    }

    /// The value of `board` (of program row `row`) from the mirror layer.
    #[inline]
    fn recompute(&self, row: usize, board: usize, mirror: &[i8]) -> i8 {
        let program = self.program;
        let column = board - program.row_starts[row] as usize;
        let moves =
            &program.moves[program.row_moves[row] as usize..program.row_moves[row + 1] as usize];
        moves
            .iter()
            .map(|m| {
                let child = self.columns.child(m.list, column);
                let base = program.bases[m.first_base as usize + usize::from(child.slot)];
                child.capture as i8 - mirror[base as usize + child.dst as usize]
            })
            .max()
            .unwrap_or(program.no_move[row])
    }
}
