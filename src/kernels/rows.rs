//! Row kernels: a layer computed row by row from contiguous runs of the
//! previous layer's mirror image.
//!
//! Some games order their positions so that a move does the same thing to a
//! whole *row* of them, and the children of a row, read in the mirror layer
//! (each position's value stored where the position seen by the other side
//! is), form a few contiguous stretches of a few rows: *runs* (Oware's
//! `runs` module explains why). The game compiles each layer into a
//! [`RowProgram`]: per row, its moves; per move, a list of runs (shared by
//! every row the move does the same thing to) and the start of each child
//! row it reads. A row's new values are then
//! `max over moves of (capture - mirror[base + dst .. base + dst + len])`,
//! computed run by run with byte-wide vector operations, with no gathers and
//! no per-position child index streamed from memory; a row without moves
//! takes a constant. Runs shorter than [`SHORT_RUN`] columns (most of them,
//! though few of the columns) are stored column by column instead and
//! applied one column at a time in a flat loop per move: their records are
//! shared by every row the move acts on alike and stay in cache.
//!
//! The sweep also compares each row with the previous layer while it is in
//! cache and packs the changes. Every variant runs the same code: `scalar`
//! as the baseline build compiles it, `avx2` compiled with AVX2 enabled
//! (entered after runtime detection), `portable` with explicit `wide` vectors.

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

/// Runs shorter than this are stored column by column, as runs of length 1
/// ([`RunLists::singles`]), applied in one flat loop per move: a loop of its
/// own per run costs more than a short run repays. Measured on level 16's
/// sweeps (where nearly nine runs in ten are shorter): 6% less time with a
/// bound of 4 or of 12, alike within the noise.
pub const SHORT_RUN: u32 = 12;

/// Run lists stored end to end, each split into its runs of at least
/// [`SHORT_RUN`] columns and the single columns of the shorter ones.
#[derive(Clone, Debug, Default)]
pub struct RunLists {
    runs: Vec<Run>,
    singles: Vec<Run>,
    /// Per list, where its runs and its singles start; one extra entry.
    starts: Vec<(u32, u32)>,
}

impl RunLists {
    /// Adds a list; returns its number.
    pub fn push(&mut self, runs: &[Run]) -> u32 {
        if self.starts.is_empty() {
            self.starts.push((0, 0));
        }
        for run in runs {
            if run.len >= SHORT_RUN {
                self.runs.push(*run);
            } else {
                self.singles.extend((0..run.len).map(|i| Run {
                    src: run.src + i,
                    dst: run.dst + i,
                    len: 1,
                    ..*run
                }));
            }
        }
        self.starts
            .push((self.runs.len() as u32, self.singles.len() as u32));
        self.starts.len() as u32 - 2
    }

    /// List `id`'s runs of at least [`SHORT_RUN`] columns, in column order.
    #[inline(always)]
    pub fn runs(&self, id: u32) -> &[Run] {
        let (from, to) = (self.starts[id as usize], self.starts[id as usize + 1]);
        &self.runs[from.0 as usize..to.0 as usize]
    }

    /// List `id`'s other columns, each as a run of length 1, in column order.
    #[inline(always)]
    pub fn singles(&self, id: u32) -> &[Run] {
        let (from, to) = (self.starts[id as usize], self.starts[id as usize + 1]);
        &self.singles[from.1 as usize..to.1 as usize]
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.runs.len() + self.singles.len()) * std::mem::size_of::<Run>() + self.starts.len() * 8
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

/// A layer compiled into rows (see the module docs).
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

/// How a variant applies one run.
pub(super) trait ApplyRun {
    /// `out = capture - source`.
    fn set(out: &mut [i8], source: &[i8], capture: i8);
    /// `out = max(out, capture - source)`.
    fn max(out: &mut [i8], source: &[i8], capture: i8);
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
        let moves =
            &program.moves[program.row_moves[row] as usize..program.row_moves[row + 1] as usize];
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
            let singles = lists.singles(row_move.list);
            let single = |run: &Run| {
                let source = mirror[bases[run.slot as usize] as usize + run.dst as usize];
                (run.src as usize, run.capture as i8 - source)
            };
            if k == 0 {
                for (column, score) in singles.iter().map(single) {
                    row_out[column] = score;
                }
            } else {
                for (column, score) in singles.iter().map(single) {
                    row_out[column] = row_out[column].max(score);
                }
            }
        }
        if pending.end == start && pending.len() < DIFF_SPAN {
            pending.end = end;
        } else {
            compare(std::mem::replace(&mut pending, start..end), out);
        }
    }
    compare(pending, out);
    changes
}
