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
use crate::games::oware::board::SIDE;
use crate::kernels::prefetch;
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
    /// Per (list, slot), where its child columns start in `parents`; one
    /// extra entry. A slot's entries cover the child row's columns up to
    /// the last one read.
    slot_starts: Vec<u32>,
    /// Per (list, slot) and child column: the column reading it, if one
    /// does (nearly always); `MANY | i` if several do, the `i`th entry of
    /// `many` their count and the columns after it. Meaningless where
    /// `read` has no bit.
    parents: Vec<u32>,
    many: Vec<u32>,
    /// Bit `i` set when some column reads the child column of `parents[i]`:
    /// most child columns are read by no column of a given list (its
    /// opponent sides hold fewer seeds than the child's), and these bits,
    /// a 32nd of `parents`, answer that from cache.
    read: Vec<u64>,
}

/// Marks a [`ListColumns::parents`] entry as an index into `many`.
const MANY: u32 = 1 << 31;

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
            let mut reading = Vec::new();
            for dst in 0..width as u32 {
                reading.clear();
                while let Some(&&(_, src)) = next.peek().filter(|p| p.0 == dst) {
                    reading.push(src);
                    next.next();
                }
                let at = self.parents.len();
                self.parents.push(match reading[..] {
                    [] => 0,
                    [src] => src,
                    _ => {
                        let many = MANY | u32::try_from(self.many.len()).expect("32-bit offsets");
                        self.many.push(reading.len() as u32);
                        self.many.extend_from_slice(&reading);
                        many
                    }
                });
                if self.read.len() <= at / 64 {
                    self.read.push(0);
                }
                if !reading.is_empty() {
                    self.read[at / 64] |= 1 << (at % 64);
                }
            }
            self.slot_starts.push(self.parents.len() as u32);
        }
        self.list_slots.push(self.slot_starts.len() as u32 - 1);
    }

    /// What column `column` of list `list` reads.
    #[inline(always)]
    fn child(&self, list: u32, column: usize) -> Child {
        self.children[self.child_index(list, column)]
    }

    /// Where [`Self::child`] finds column `column` of list `list` in `children`.
    #[inline(always)]
    fn child_index(&self, list: u32, column: usize) -> usize {
        self.child_starts[list as usize] as usize + column
    }

    /// Where list `list`'s slot `slot` is in `slot_starts`: what
    /// [`Self::parent_index`] takes.
    #[inline]
    fn slot_at(&self, list: u32, slot: u8) -> u32 {
        self.list_slots[list as usize] + u32::from(slot)
    }

    /// Where the readers of child column `dst` of slot `slot_at` (from
    /// [`Self::slot_at`]) are in `parents`, or `None` if no column of the
    /// slot's list reads it.
    #[inline]
    fn parent_index(&self, slot_at: u32, dst: usize) -> Option<usize> {
        let at = slot_at as usize;
        let (from, to) = (
            self.slot_starts[at] as usize,
            self.slot_starts[at + 1] as usize,
        );
        let index = from + dst;
        (dst < to - from && self.read[index / 64] & (1 << (index % 64)) != 0).then_some(index)
    }

    /// The reading columns from [`Self::parent_index`]'s `index`.
    #[inline]
    fn parents(&self, index: usize) -> &[u32] {
        let parent = &self.parents[index];
        if parent & MANY == 0 {
            return std::slice::from_ref(parent);
        }
        let at = (parent & !MANY) as usize;
        &self.many[at + 1..][..self.many[at] as usize]
    }

    /// Bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.children.len() * std::mem::size_of::<Child>()
            + (self.child_starts.len()
                + self.list_slots.len()
                + self.slot_starts.len()
                + self.parents.len()
                + self.many.len())
                * 4
            + self.read.len() * 8
    }
}

/// A level's program inverted: per mirror row, the child rows of the program
/// that read it, each as its program row's first board and its run list's
/// slot (from [`ListColumns::slot_at`]).
pub(super) struct Readers {
    /// Per mirror row, where its readers start in `readers`; one extra entry.
    starts: Vec<u32>,
    readers: Vec<(u32, u32)>,
}

impl Readers {
    /// Inverts `program`, whose base `i` reads mirror row `base_rows[i]`
    /// (of `mirror_rows` rows), with the run lists of `columns`.
    pub(super) fn new(
        program: &RowProgram,
        columns: &ListColumns,
        base_rows: &[u32],
        mirror_rows: usize,
    ) -> Readers {
        let mut owners = vec![(0, 0); program.bases.len()];
        for row in 0..program.rows() {
            for k in program.move_range(row) {
                let first = program.moves[k].first_base as usize;
                let end = program
                    .moves
                    .get(k + 1)
                    .map_or(program.bases.len(), |m| m.first_base as usize);
                for (slot, owner) in owners[first..end].iter_mut().enumerate() {
                    *owner = (
                        program.row_starts[row],
                        columns.slot_at(program.moves[k].list, slot as u8),
                    );
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
        let mut readers = vec![(0, 0); base_rows.len()];
        for (&row, &owner) in base_rows.iter().zip(&owners) {
            readers[next[row as usize] as usize] = owner;
            next[row as usize] += 1;
        }
        Readers { starts, readers }
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

/// Changed positions followed back to their readers together (see
/// [`Frontier::sweep`]).
const MARK_BATCH: usize = 128;

/// Boards recomputed together (see [`Frontier::recompute`]).
const RECOMPUTE_BATCH: usize = 64;

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
                // In batches, each pass prefetching what the next reads:
                // where a child column's readers are, then the readers.
                let columns = self.columns;
                let mut found = Vec::new();
                for batch in positions.chunks(MARK_BATCH) {
                    found.clear();
                    for (row, column) in self.mirror_rows.cells(batch.iter().copied()) {
                        let readers = self.readers.starts[row] as usize
                            ..self.readers.starts[row + 1] as usize;
                        for &(first, slot_at) in &self.readers.readers[readers] {
                            if let Some(index) = columns.parent_index(slot_at, column) {
                                prefetch(&columns.parents, index);
                                found.push((first, index));
                            }
                        }
                    }
                    for &(first, index) in &found {
                        for &src in columns.parents(index) {
                            let board = first as usize + src as usize;
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
                let mut batch = Vec::with_capacity(RECOMPUTE_BATCH);
                for (w, word) in dirty.iter().enumerate() {
                    // Taken and cleared for the next turn (a plain store:
                    // marking is over).
                    let mut bits = word.load(Ordering::Relaxed);
                    if bits != 0 {
                        word.store(0, Ordering::Relaxed);
                    }
                    recomputed += bits.count_ones() as usize;
                    while bits != 0 {
                        let board = first + 64 * w + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        while program.row_starts[row + 1] as usize <= board {
                            row += 1;
                        }
                        batch.push((board as u32, row as u32));
                        if batch.len() == RECOMPUTE_BATCH {
                            self.recompute(&batch, mirror, previous, first, values, &mut changes);
                            batch.clear();
                        }
                    }
                }
                self.recompute(&batch, mirror, previous, first, values, &mut changes);
                (changes, recomputed)
            })
            .collect();
        let recomputed = parts.iter().map(|p| p.1).sum();
        let changes = PackedChanges::concatenate(parts.into_iter().map(|p| p.0).collect());
        (changes, recomputed)
    }

    /// Recomputes `boards` (each with its program row, ascending) from the
    /// mirror layer into `values` (the level's boards from `first`), adding
    /// to `changes` those that differ from `previous`. In three passes over
    /// the batch, each prefetching what the next reads, so that the
    /// scattered reads of many boards overlap instead of each waiting on
    /// the one before (what each child is, then the child's value).
    fn recompute(
        &self,
        boards: &[(u32, u32)],
        mirror: &[i8],
        previous: &[i8],
        first: usize,
        values: &mut [i8],
        changes: &mut PackedChanges,
    ) {
        let (program, columns) = (self.program, self.columns);
        let moves = |row: u32| program.moves_of(row as usize);
        let column = |board: u32, row: u32| (board - program.row_starts[row as usize]) as usize;
        for &(board, row) in boards {
            let column = column(board, row);
            for m in moves(row) {
                prefetch(&columns.children, columns.child_index(m.list, column));
            }
            prefetch(previous, board as usize);
        }
        let mut children = [(0u32, 0i8); RECOMPUTE_BATCH * SIDE];
        let mut n = 0;
        for &(board, row) in boards {
            let column = column(board, row);
            for m in moves(row) {
                let child = columns.child(m.list, column);
                let base = program.bases[m.first_base as usize + usize::from(child.slot)];
                let at = base + child.dst;
                prefetch(mirror, at as usize);
                children[n] = (at, child.capture as i8);
                n += 1;
            }
        }
        let mut children = children[..n].iter();
        for &(board, row) in boards {
            let value = children
                .by_ref()
                .take(moves(row).len())
                .map(|&(at, capture)| capture - mirror[at as usize])
                .max()
                .unwrap_or(program.no_move[row as usize]);
            let board = board as usize;
            values[board - first] = value;
            if value != previous[board] {
                changes.push((self.offset + board) as u32, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RunPlan;

    #[test]
    fn parents_are_the_columns_reading_each_child_column() {
        let columns = RunPlan::new(10).columns;
        let (mut read, mut several) = (0, 0);
        for list in 0..columns.child_starts.len() - 1 {
            let from = columns.child_starts[list] as usize;
            let children = &columns.children[from..columns.child_starts[list + 1] as usize];
            let slots = columns.list_slots[list + 1] - columns.list_slots[list];
            for slot in 0..slots as u8 {
                let slot_at = columns.slot_at(list as u32, slot);
                let widest = children
                    .iter()
                    .map(|c| c.dst as usize + 2)
                    .max()
                    .unwrap_or(0);
                for dst in 0..widest {
                    // The columns whose child in this slot is `dst`, by looking.
                    let reading: Vec<u32> = (0..children.len() as u32)
                        .filter(|&src| {
                            let child = children[src as usize];
                            child.slot == slot && child.dst as usize == dst
                        })
                        .collect();
                    let found = columns
                        .parent_index(slot_at, dst)
                        .map_or(&[][..], |index| columns.parents(index));
                    assert_eq!(found, reading, "list {list}, slot {slot}, column {dst}");
                    read += usize::from(!reading.is_empty());
                    several += usize::from(reading.len() > 1);
                }
            }
        }
        // Both kinds of entry were checked.
        assert!(
            read > 1000 && several > 10,
            "{read} read, {several} by several"
        );
    }
}
