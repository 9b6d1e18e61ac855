//! Row kernels: a layer computed row by row from contiguous runs of the
//! previous layer's mirror image.
//!
//! Some games order their positions so that a move does the same thing to a
//! whole *row* of them, and the children of a row, read in the mirror layer
//! (each position's value stored where the position seen by the other side
//! is), form a few contiguous stretches of a few rows: *runs* (Oware's
//! `runs` module explains why). The game compiles each level (every turn
//! sweeps the same program) into a
//! [`RowProgram`]: per row, its moves; per move, a list of runs (shared by
//! every row the move does the same thing to) and the start of each child
//! row it reads. A row's new values are then
//! `max over moves of (capture - mirror[base + dst .. base + dst + len])`,
//! computed run by run with byte-wide vector operations, with no gathers and
//! no per-position child index streamed from memory; a row without moves
//! takes a constant. Runs shorter than [`SHORT_RUN`] columns (most of them,
//! though few of the columns) are stored column by column instead (child
//! column, capture, slot), in *stretches* of consecutive columns: a move's
//! short runs mostly lie side by side between its long ones. Their records
//! are shared by every row the move acts on alike and stay in cache; a
//! stretch's child values are gathered one column at a time, or with AVX2
//! gathers eight at a time.
//!
//! The sweep also compares each row with the previous layer while it is in
//! cache and packs the changes. Every variant runs the same sweep, with
//! its own way to apply a run and a stretch (`ApplyRun`): `scalar` plain
//! loops as the baseline build compiles them, `portable` explicit `wide`
//! vectors, `avx2` (entered after runtime detection) runs in whole 32-byte
//! vectors, the last one overlapping the one before, and stretches by
//! gathers.

use crate::engine::PackedChanges;
use std::ops::Range;

/// A stretch of a row whose children are a stretch of one mirror row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// First column of the run in the row being swept.
    pub src: u32,
    /// First column of the children in their row.
    pub dst: u32,
    /// Number of columns.
    pub len: u32,
    /// What the move captures on the whole run.
    pub capture: u8,
    /// Which of the move's child rows the run reads (an index into its bases).
    pub slot: u8,
}

/// Runs shorter than this are stored column by column, in [`Stretch`]es,
/// applied in one flat loop (or gather) per stretch: a loop of its own per
/// run costs more than a short run repays. Measured on level 16's sweeps
/// (where nearly nine runs in ten are shorter): 6% less time with a bound
/// of 4 or of 12, alike within the noise.
pub const SHORT_RUN: u32 = 12;

/// Consecutive columns of a row stored one by one: column `src + i` reads
/// child column `dst[first + i]` of the child row in slot `slot[first + i]`
/// and captures `capture[first + i]` (see [`RunLists::columns`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// First column in the row being swept.
    pub src: u32,
    /// Number of columns.
    pub len: u32,
    /// Where its columns start in the column arrays.
    pub first: u32,
}

/// A stretch's columns: child columns, slots and captures, one per column.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    /// Each column's child column in its child row.
    pub dst: &'a [u32],
    /// Which of the move's child rows each column reads.
    pub slot: &'a [u8],
    /// What the move captures at each column.
    pub capture: &'a [u8],
}

/// Run lists stored end to end, each split into its runs of at least
/// [`SHORT_RUN`] columns and the stretches of columns of the shorter ones.
#[derive(Clone, Debug, Default)]
pub struct RunLists {
    runs: Vec<Run>,
    stretches: Vec<Stretch>,
    dst: Vec<u32>,
    slot: Vec<u8>,
    capture: Vec<u8>,
    /// Per list, where its runs and its stretches start; one extra entry.
    starts: Vec<(u32, u32)>,
    /// Per list, the largest slot any of its runs or columns reads, and
    /// the largest child column its stretches read.
    tops: Vec<(u8, u32)>,
}

impl RunLists {
    /// Adds a list; returns its number.
    ///
    /// # Panics
    ///
    /// Where a run's end (one past its last column, or its last child
    /// column) does not fit in a `u32`.
    pub fn push(&mut self, runs: &[Run]) -> u32 {
        if self.starts.is_empty() {
            self.starts.push((0, 0));
        }
        let mut runs = runs.to_vec();
        runs.sort_by_key(|run| run.src);
        for run in &runs {
            assert!(
                run.src.checked_add(run.len).is_some() && run.dst.checked_add(run.len).is_some(),
                "a run's end passes u32::MAX: {run:?}"
            );
        }
        let first_column = self.dst.len();
        for run in &runs {
            if run.len >= SHORT_RUN {
                self.runs.push(*run);
                continue;
            }
            let first = self.dst.len() as u32;
            let own = self.stretches.len() > self.starts.last().unwrap().1 as usize;
            match self.stretches.last_mut() {
                // Continues the list's last stretch.
                Some(last) if own && last.src + last.len == run.src => last.len += run.len,
                _ => self.stretches.push(Stretch {
                    src: run.src,
                    len: run.len,
                    first,
                }),
            }
            self.dst.extend(run.dst..run.dst + run.len);
            self.slot.extend((0..run.len).map(|_| run.slot));
            self.capture.extend((0..run.len).map(|_| run.capture));
        }
        self.starts
            .push((self.runs.len() as u32, self.stretches.len() as u32));
        // From the columns as stored: what the gathers' bounds check rests on.
        self.tops.push((
            runs.iter().map(|run| run.slot).max().unwrap_or(0),
            self.dst[first_column..].iter().copied().max().unwrap_or(0),
        ));
        self.starts.len() as u32 - 2
    }

    /// List `id`'s runs of at least [`SHORT_RUN`] columns, in column order.
    #[inline(always)]
    pub fn runs(&self, id: u32) -> &[Run] {
        let (from, to) = (self.starts[id as usize], self.starts[id as usize + 1]);
        &self.runs[from.0 as usize..to.0 as usize]
    }

    /// List `id`'s other columns, in stretches, in column order.
    #[inline(always)]
    pub fn stretches(&self, id: u32) -> &[Stretch] {
        let (from, to) = (self.starts[id as usize], self.starts[id as usize + 1]);
        &self.stretches[from.1 as usize..to.1 as usize]
    }

    /// The columns of `stretch`.
    #[inline(always)]
    pub fn columns(&self, stretch: &Stretch) -> Columns<'_> {
        let columns = stretch.first as usize..(stretch.first + stretch.len) as usize;
        Columns {
            dst: &self.dst[columns.clone()],
            slot: &self.slot[columns.clone()],
            capture: &self.capture[columns],
        }
    }

    /// The largest slot list `id` reads, and the largest child column its
    /// stretches read (0 without stretches).
    #[inline(always)]
    pub fn tops(&self, id: u32) -> (u8, u32) {
        self.tops[id as usize]
    }

    /// List `id`'s short-run columns, each as a run of length 1.
    pub fn short_columns(&self, id: u32) -> impl Iterator<Item = Run> + '_ {
        self.stretches(id).iter().flat_map(move |stretch| {
            let columns = self.columns(stretch);
            (0..stretch.len as usize).map(move |i| Run {
                src: stretch.src + i as u32,
                dst: columns.dst[i],
                len: 1,
                capture: columns.capture[i],
                slot: columns.slot[i],
            })
        })
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.runs.len() * std::mem::size_of::<Run>()
            + self.stretches.len() * std::mem::size_of::<Stretch>()
            + self.dst.len() * 6
            + self.starts.len() * 8
            + self.tops.len() * std::mem::size_of::<(u8, u32)>()
    }
}

/// One move of one row: its run list and where its child rows' starts are.
#[derive(Clone, Copy, Debug)]
pub struct RowMove {
    /// The run list (a number in [`RunLists`]).
    pub list: u32,
    /// Index in [`RowProgram::bases`] of the child row start for slot 0.
    pub first_base: u32,
}

/// A level compiled into rows, swept once a turn (see the module docs).
///
/// A row's moves' run lists must each cover the row exactly once, in column
/// order; every `base + dst + len` must lie within the mirror layer.
#[derive(Clone, Debug, Default)]
pub struct RowProgram {
    /// Per row, its first position in the layer; one extra entry.
    pub row_starts: Vec<u32>,
    /// Per row, where its moves start in `moves`; one extra entry.
    pub row_moves: Vec<u32>,
    /// Per row, its value when it has no moves.
    pub no_move: Vec<i8>,
    /// Every row's moves, row after row.
    pub moves: Vec<RowMove>,
    /// Child row starts (indices into the mirror layer), by move and slot.
    pub bases: Vec<u32>,
}

impl RowProgram {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.no_move.len()
    }

    /// Where row `row`'s moves are in `moves`.
    #[inline(always)]
    pub fn move_range(&self, row: usize) -> Range<usize> {
        self.row_moves[row] as usize..self.row_moves[row + 1] as usize
    }

    /// Row `row`'s moves.
    #[inline(always)]
    pub fn moves_of(&self, row: usize) -> &[RowMove] {
        &self.moves[self.move_range(row)]
    }

    /// Splits the rows into consecutive ranges of about `positions` each.
    pub fn row_ranges(&self, positions: usize) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        let mut first = 0;
        for row in 0..self.rows() {
            if (self.row_starts[row + 1] - self.row_starts[first]) as usize >= positions {
                ranges.push(first..row + 1);
                first = row + 1;
            }
        }
        if first < self.rows() {
            ranges.push(first..self.rows());
        }
        ranges
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.row_starts.len() * 4
            + self.row_moves.len() * 4
            + self.no_move.len()
            + self.moves.len() * std::mem::size_of::<RowMove>()
            + self.bases.len() * 4
    }
}

/// What a row sweep reads.
#[derive(Clone, Copy)]
pub struct RowSweep<'a> {
    /// The run lists the program refers to.
    pub lists: &'a RunLists,
    /// The layer's rows.
    pub program: &'a RowProgram,
    /// The previous layer's mirror image.
    pub mirror: &'a [i8],
    /// Number given to the layer's first position in the change list.
    pub first_state: usize,
    /// When given, a bit per row: only rows whose bit is set are swept; the
    /// others are left as they are (their values must already be current).
    pub only: Option<&'a [u64]>,
}

/// How a variant applies one run, and one move's stretches.
pub(super) trait ApplyRun {
    /// `out = capture - source`.
    fn set(out: &mut [i8], source: &[i8], capture: i8);
    /// `out = max(out, capture - source)`.
    fn max(out: &mut [i8], source: &[i8], capture: i8);
    /// Applies list `list`'s stretches to `out` (a row), reading the child
    /// rows starting at `bases` (by slot, at least `top_slot + 1` of them)
    /// in `mirror`: sets `out` when `first`, else takes the maximum.
    #[inline(always)]
    fn stretches(
        lists: &RunLists,
        list: u32,
        bases: &[u32],
        mirror: &[i8],
        out: &mut [i8],
        first: bool,
    ) {
        for stretch in lists.stretches(list) {
            let out = &mut out[stretch.src as usize..(stretch.src + stretch.len) as usize];
            stretch_columns(lists.columns(stretch), bases, mirror, out, first);
        }
    }
}

/// Applies a stretch's columns one at a time.
#[inline(always)]
pub(super) fn stretch_columns(
    columns: Columns<'_>,
    bases: &[u32],
    mirror: &[i8],
    out: &mut [i8],
    first: bool,
) {
    let Columns { dst, slot, capture } = columns;
    let scores = dst
        .iter()
        .zip(slot)
        .zip(capture)
        .map(|((&dst, &slot), &capture)| {
            capture as i8 - mirror[bases[usize::from(slot)] as usize + dst as usize]
        });
    if first {
        for (out, score) in out.iter_mut().zip(scores) {
            *out = score;
        }
    } else {
        for (out, score) in out.iter_mut().zip(scores) {
            *out = (*out).max(score);
        }
    }
}

/// Plain loops, vectorised by the compiler for whatever the function they
/// are inlined into is compiled for.
pub(super) struct PlainLoops;

impl ApplyRun for PlainLoops {
    #[inline(always)]
    fn set(out: &mut [i8], source: &[i8], capture: i8) {
        for (o, &v) in out.iter_mut().zip(source) {
            *o = capture - v;
        }
    }

    #[inline(always)]
    fn max(out: &mut [i8], source: &[i8], capture: i8) {
        for (o, &v) in out.iter_mut().zip(source) {
            *o = (*o).max(capture - v);
        }
    }
}

/// Boards of adjacent rows compared with the previous layer at once.
const DIFF_SPAN: usize = 2048;

/// Sweeps rows `rows` into `out` (their positions, from the first row's
/// start), comparing with `previous` (the same positions one layer earlier);
/// returns the changes, numbered from `sweep.first_state`.
#[inline(always)]
pub(super) fn sweep<A: ApplyRun>(
    sweep: &RowSweep<'_>,
    rows: Range<usize>,
    previous: &[i8],
    out: &mut [i8],
) -> PackedChanges {
    let RowSweep {
        lists,
        program,
        mirror,
        first_state,
        only,
    } = *sweep;
    let first = program.row_starts[rows.start] as usize;
    let mut changes = PackedChanges::with_room_for(out.len());
    // Rows swept but not yet compared with `previous`: adjacent ones are
    // compared together, up to DIFF_SPAN boards, while still in cache.
    let mut pending = 0..0;
    let mut compare = |span: Range<usize>, out: &[i8]| {
        if !span.is_empty() {
            changes.push_differences(
                first_state + first + span.start,
                &previous[span.clone()],
                &out[span],
            );
        }
    };
    for row in rows {
        if only.is_some_and(|bits| bits[row / 64] & (1 << (row % 64)) == 0) {
            continue;
        }
        let start = program.row_starts[row] as usize - first;
        let end = program.row_starts[row + 1] as usize - first;
        let row_out = &mut out[start..end];
        let moves = program.moves_of(row);
        if moves.is_empty() {
            row_out.fill(program.no_move[row]);
        }
        for (k, row_move) in moves.iter().enumerate() {
            let bases = &program.bases[row_move.first_base as usize..];
            for run in lists.runs(row_move.list) {
                let len = run.len as usize;
                let from = bases[run.slot as usize] as usize + run.dst as usize;
                let source = &mirror[from..from + len];
                let row_out = &mut row_out[run.src as usize..run.src as usize + len];
                // A move's runs cover the row once: the first move sets it.
                if k == 0 {
                    A::set(row_out, source, run.capture as i8);
                } else {
                    A::max(row_out, source, run.capture as i8);
                }
            }
            A::stretches(lists, row_move.list, bases, mirror, row_out, k == 0);
        }
        if pending.end == start && pending.len() < DIFF_SPAN {
            pending.end = end;
        } else {
            compare(std::mem::replace(&mut pending, start..end), out);
        }
    }
    compare(pending, out);
    changes.fit();
    changes
}
