//! The compact encodings of one level of a game's positions: per position
//! (a *board*, below, as in Oware, the game that stores its seed levels
//! this way), the turns at which its value changes and by how much, mostly
//! a byte per change. Nothing here knows a game: a level is a count of
//! boards and their changes, turn by turn, from a [`TurnOrder`].
//!
//! Values change rarely (a board changes value a handful of times over 200
//! turns) and by little, so a level is stored as records, one per board in
//! rank order, grouped in blocks of [`BLOCK`] boards:
//!
//! ```text
//! section  = offsets records wraps
//! offsets  = u32 LE per block, plus one past the end: byte offset of the
//!            block's first record within `records`, modulo 2^32
//! record   = len body
//!   len    = LEB128 byte count of `body`
//! wraps    = u32 LE per multiple m * 2^32 (m >= 1) of bytes the records
//!            reach: the index of the first entry of `offsets` whose offset
//!            is at least that (ascending; none where the records take
//!            less than 4 GiB, as in every Oware level up to 21 seeds)
//! ```
//!
//! An offset is its entry plus 2^32 for each of `wraps` at or below the
//! entry's index. The count of `wraps`, k, follows from the section's
//! length: the records take the last entry plus k * 2^32 bytes, so the
//! section is `offsets`, then k * (2^32 + 4) bytes more than the last entry.
//!
//! A record's body spells the board's changes in one of two [`Codec`]s:
//!
//! ```text
//! Codec::V2 (encoding code 2 in an Oware book's header): body = change*, the first change
//!   counted from turn 0 and value 0 (a board worth 0 throughout has an empty
//!   body), each change by its turn delta dt and value delta dv:
//!   0b0ddttttt           dv -2, -1, +1, +2 for d = 0..=3, dt = t + 1 (1..=32)
//!   0b10dddddd t         dv = d as a 6-bit two's complement number
//!                        (-32..=31, not 0), dt = t + 1 (1..=256)
//!   0b11000000 dt dv     dt u8 (1..=255), dv i8: any other change
//! Codec::V1 (encoding code 1): body = value1 change*
//!   value1 = i8, the value with 1 turn left
//!   change = (dt - 1) << 4 | (dv & 0xf) for dt 1..=16, dv -8..=7, the byte
//!            0xff excluded; | 0xff dt dv (u8, i8): any other change
//! ```
//!
//! Version 2 spends a byte on the 95% of changes by at most 2 (any delay up to
//! 32 turns) and no byte on the two thirds of boards worth 0 with 1 turn left;
//! on the 12-seed book it is about a fifth smaller than version 1.
//!
//! A lookup reads the block's offset, skips at most seven records by their
//! lengths and replays the changes up to the turn asked for: about one cache
//! line. Opening a book checks every record (lengths, codes, turn range, that
//! each block ends where the next begins), or a book opened for lookups has
//! each lookup check its block first, so lookups never leave the section.

use crate::engine::{Solution, TurnCursors};
use rayon::prelude::*;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Boards per block.
pub const BLOCK: usize = 8;

/// How a record's body spells its changes (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// The value with 1 turn left, then one byte per change (three for rare ones).
    V1,
    /// Changes from turn 0 in one, two or three bytes, most of them one.
    V2,
}

const V1_ESCAPE: u8 = 0xff;
const V2_LONG: u8 = 0x80;
const V2_ESCAPE: u8 = 0xc0;

impl Codec {
    /// The code of the change by `dt` turns and `dv` in value: its bytes in
    /// the low bytes of the result (first byte lowest) and their count.
    #[inline]
    fn code(self, dt: u32, dv: i16) -> (u32, usize) {
        debug_assert!(dt >= 1 && dv != 0);
        let escape = match self {
            Codec::V1 => {
                let code = ((dt as i32 - 1) << 4) | (i32::from(dv) & 0xf);
                if (1..=16).contains(&dt) && (-8..=7).contains(&dv) && code != i32::from(V1_ESCAPE)
                {
                    return (code as u32, 1);
                }
                V1_ESCAPE
            }
            Codec::V2 => {
                if dt <= 32 && (-2..=2).contains(&dv) {
                    let d = if dv < 0 { dv + 2 } else { dv + 1 };
                    return (((d as u32) << 5) | (dt - 1), 1);
                }
                if dt <= 256 && (-32..=31).contains(&dv) {
                    let first = u32::from(V2_LONG) | (dv as u32 & 0x3f);
                    return (first | (dt - 1) << 8, 2);
                }
                V2_ESCAPE
            }
        };
        let dt = u8::try_from(dt).expect("compact books cover at most 255 turns");
        let dv = i8::try_from(dv).expect("a change of a value by at most 127");
        let dv = u32::from(dv as u8);
        (u32::from(escape) | u32::from(dt) << 8 | dv << 16, 3)
    }

    /// The change at the start of `bytes`: (dt, dv, bytes read), or why it
    /// is not one. Escapes' and long codes' `dt` and `dv` may be 0 here.
    #[inline(always)]
    fn read(self, bytes: &[u8]) -> Result<(u32, i16, usize), Malformed> {
        let code = bytes[0];
        let escaped = |bytes: &[u8]| match bytes.get(1..3) {
            Some(&[dt, dv]) => Ok((u32::from(dt), i16::from(dv as i8), 3)),
            _ => Err(Malformed("a change escape runs past its record".into())),
        };
        match self {
            Codec::V1 if code == V1_ESCAPE => escaped(bytes),
            Codec::V1 => Ok((
                u32::from(code >> 4) + 1,
                i16::from(((code << 4) as i8) >> 4),
                1,
            )),
            Codec::V2 if code < V2_LONG => {
                let d = i16::from(code >> 5);
                let dv = if d < 2 { d - 2 } else { d - 1 };
                Ok((u32::from(code & 0x1f) + 1, dv, 1))
            }
            Codec::V2 if code < V2_ESCAPE => match bytes.get(1) {
                Some(&t) => Ok((u32::from(t) + 1, i16::from(((code << 2) as i8) >> 2), 2)),
                None => Err(Malformed("a long change code runs past its record".into())),
            },
            Codec::V2 if code == V2_ESCAPE => escaped(bytes),
            Codec::V2 => Err(Malformed(format!("byte {code:#04x} is no change code"))),
        }
    }
}

/// Why an encoded level is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed(pub String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Boards per parallel work item when encoding (whole blocks).
const ENCODE_CHUNK: usize = 1 << 18;

/// The fewest boards per chunk [`Streaming::new`] takes: a chunk's cursors
/// are set on every turn's changes, so small chunks cost more than they share.
const MIN_ENCODE_CHUNK: usize = 1 << 12;

/// Boards whose records are built at once: their changes, gathered from
/// every turn, stay in cache.
const STRETCH: usize = 2048;

/// A level's changes as a generator records them: turn by turn.
pub trait TurnOrder {
    /// Calls `f(turn, board, value)` for each change of a board below `end`
    /// not given yet, turn by turn and boards ascending within a turn; `end`
    /// grows from call to call. Turns start at 1 and go up to [`MAX_TURNS`];
    /// each change's value lies within `-127..=127`, at most 127 from the
    /// board's value at the turn before (0 at turn 0), and differs from it.
    /// The encoder panics on a change that does not, unless the reader is
    /// [`TurnOrder::TRUSTED`].
    fn take_below(&mut self, end: usize, f: impl FnMut(u32, usize, i8));

    /// Whether the changes given keep the rules of
    /// [`TurnOrder::take_below`] by construction, so that the encoder
    /// need not check each one (a check measured at 4% of its time): so
    /// for a [`Solution`]'s readers, whose lists hold only changes, as a
    /// generator records them. Where it is set and a change breaks a rule,
    /// the level is stored wrong (in a release build; a debug build checks
    /// every change all the same).
    const TRUSTED: bool = false;
}

/// Encodes a level from each board's changes: `changes(board)` lists
/// (turn, value) with ascending turns from 1, only where the value differs
/// from the turn before (turn 0 counting as value 0).
///
/// # Panics
///
/// Where a list breaks that rule or the bounds a [`TurnOrder`] keeps
/// (turns up to [`MAX_TURNS`], values within `-127..=127`, each at most
/// 127 from the one before).
pub fn encode(
    codec: Codec,
    boards: usize,
    changes: impl Fn(usize) -> Vec<(u32, i8)> + Sync,
) -> Vec<u8> {
    encode_with(Streaming::new(codec, boards), changes)
}

/// [`encode`] by `streaming`.
fn encode_with(streaming: Streaming, changes: impl Fn(usize) -> Vec<(u32, i8)> + Sync) -> Vec<u8> {
    /// Per turn, its changes (board, value), and how many were given.
    struct ByTurn(Vec<(Vec<(usize, i8)>, usize)>);
    impl TurnOrder for ByTurn {
        fn take_below(&mut self, end: usize, mut f: impl FnMut(u32, usize, i8)) {
            for (turn, (changes, given)) in (1..).zip(&mut self.0) {
                while let Some(&(board, value)) = changes.get(*given).filter(|c| c.0 < end) {
                    f(turn, board, value);
                    *given += 1;
                }
            }
        }
    }
    let by_chunk = |range: Range<usize>| {
        let mut by_turn = Vec::new();
        for board in range {
            let mut last_turn = 0;
            for (turn, value) in changes(board) {
                // (The encoder sees them turn by turn: it checks the rest.)
                assert!(
                    turn > last_turn,
                    "board {board}: (turn {turn}, value {value}) is not a change after turn \
                     {last_turn}: turns must rise"
                );
                last_turn = turn;
                let at = turn as usize - 1;
                if by_turn.len() <= at {
                    by_turn.resize(at + 1, (Vec::new(), 0));
                }
                by_turn[at].0.push((board, value));
            }
        }
        ByTurn(by_turn)
    };
    encode_whole(streaming, by_chunk)
}

/// A level's section (block table, records, wraps) from `chunk`, encoded
/// by `streaming` as [`encode_streaming`] does, joined.
fn encode_whole<C, T>(streaming: Streaming, chunk: C) -> Vec<u8>
where
    C: Fn(Range<usize>) -> T + Sync,
    T: TurnOrder,
{
    let buffers = Buffers::default();
    let mut records = Vec::new();
    let table = encode_streaming(streaming, chunk, &buffers, |part| {
        records.extend_from_slice(&part);
        buffers.give_back(part);
    });
    [table, records].concat()
}

/// Level `level` of a solved game, as a section's bytes (block table,
/// records, wraps): what a game that stores its levels this way writes.
///
/// # Panics
///
/// Where `solution` has no level `level`, or no longer holds its changes,
/// or a change lies past turn [`MAX_TURNS`]. Its lists are trusted to
/// hold changes only, as [`Solution::changes`] says
/// ([`TurnOrder::TRUSTED`]).
pub fn encode_level(codec: Codec, solution: &Solution, level: usize) -> Vec<u8> {
    let boards = solution.levels[level].states;
    encode_whole(
        Streaming::new(codec, boards),
        level_changes(solution, level),
    )
}

/// The encoder's reader of level `level` of `solution`: a chunk's boards'
/// changes, turn by turn, the boards numbered within the level.
pub fn level_changes<'a>(
    solution: &'a Solution,
    level: usize,
) -> impl Fn(Range<usize>) -> LevelChanges<'a> + Sync {
    let start = solution.level_starts[level];
    move |range| LevelChanges {
        cursors: solution.changes_from(start + range.start),
        start,
    }
}

/// The changes of a solved level's boards, for the encoder
/// ([`level_changes`]).
pub struct LevelChanges<'a> {
    cursors: TurnCursors<'a>,
    /// The level's first state.
    start: usize,
}

impl TurnOrder for LevelChanges<'_> {
    const TRUSTED: bool = true;

    #[inline]
    fn take_below(&mut self, end: usize, mut f: impl FnMut(u32, usize, i8)) {
        let start = self.start;
        self.cursors.take_below(start + end, |turn, state, value| {
            f(turn, state as usize - start, value)
        });
    }
}

/// The most turns a compact level covers: a change's turn delta is at most
/// a byte (and the turn of each change is checked against this as it is
/// encoded: the encoders panic past it).
pub const MAX_TURNS: u32 = 255;

/// Bytes of the block table at the start of a level of `boards` boards.
pub fn table_len(boards: usize) -> usize {
    (boards.div_ceil(BLOCK) + 1) * 4
}

/// The span of a block offset's entry: offsets are stored modulo this, and
/// the level's `wraps` (see the [module docs](self)) give what it cut off.
const OFFSET_SPAN: u64 = 1 << 32;

/// Chunks encoded at once by [`encode_streaming`], per worker thread.
const WAVE_PER_THREAD: usize = 4;

/// Record buffers kept by [`Buffers`]: more than a wave's chunks and the
/// writer's queue hold at once on the machines the project runs on.
const SPARE_BUFFERS: usize = 64;

/// The largest buffer [`Buffers`] keeps. A chunk's records take a few
/// megabytes ([`ENCODE_CHUNK`] boards, about 20 bytes each at 20 seeds);
/// a larger buffer (a whole level in the layer encoding) is freed.
const SPARE_BUFFER_BYTES: usize = 64 << 20;

/// Byte buffers for chunks' records, given back once their bytes are
/// written, so that the next chunks are encoded into memory already
/// faulted in. Each chunk's records in a buffer fresh from the kernel
/// cost a page fault per 4 KiB: at 16 seeds a fifth of the run's faults,
/// as many as the book has bytes. Clones share the buffers.
#[derive(Clone, Debug, Default)]
pub struct Buffers(Arc<Mutex<Vec<Vec<u8>>>>);

impl Buffers {
    /// An empty buffer, one given back if there is one.
    fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .expect("the buffers' lock is never held across a panic")
            .pop()
            .unwrap_or_default()
    }

    /// Keeps `buffer`, emptied, for the next chunk (unless enough are kept).
    pub fn give_back(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        let mut spare = self
            .0
            .lock()
            .expect("the buffers' lock is never held across a panic");
        if spare.len() < SPARE_BUFFERS && (1..=SPARE_BUFFER_BYTES).contains(&buffer.capacity()) {
            spare.push(buffer);
        }
    }
}

/// Encodes a level by `streaming` (from [`Streaming::new`], before its
/// first wave): `chunk(range)` gives the changes of the boards of `range`
/// (starting at a block boundary) in turn order.
/// Chunks are encoded in parallel, a wave of a few per worker thread at a
/// time; each chunk's records go to `records` in order as soon as its wave
/// is done, so they can be written while the next are encoded (at 20
/// seeds, joining them would hold gigabytes), and the level's wraps after
/// them, if any. Each chunk's records are encoded into a buffer from
/// `buffers`, to be given back once written. Returns the block table
/// ([`table_len`] bytes), which goes before them in the section.
/// ([`Streaming`] does the same a wave at a call.)
///
/// # Panics
///
/// Where a chunk's changes break [`TurnOrder`]'s rules.
pub fn encode_streaming<C, T>(
    mut streaming: Streaming,
    chunk: C,
    buffers: &Buffers,
    mut records: impl FnMut(Vec<u8>),
) -> Vec<u8>
where
    C: Fn(Range<usize>) -> T + Sync,
    T: TurnOrder,
{
    while streaming.next_wave(&chunk, buffers, &mut records) {}
    streaming.table()
}

/// [`encode_streaming`] a wave of chunks at a call, so that the caller can
/// act between waves: free the changes of the boards encoded so far, say.
pub struct Streaming {
    codec: Codec,
    boards: usize,
    /// Boards per chunk ([`ENCODE_CHUNK`], fewer for small levels or in tests).
    chunk: usize,
    /// Chunks encoded so far.
    chunks_done: usize,
    /// The block table so far.
    table: Vec<u8>,
    /// Bytes of records so far.
    base: usize,
    /// The offsets' span ([`OFFSET_SPAN`]; less in tests) and the level's
    /// wraps so far: entries whose offset reached another multiple of it.
    span: u64,
    wraps: Vec<u32>,
}

impl Streaming {
    /// Before the first wave of a level of `boards` boards, in chunks of
    /// 262,144 boards, or fewer (at least 4,096) so that each of the current
    /// pool's threads gets at least four (a wave's share): a level of up to
    /// 262,144 boards (all of them at 9 seeds) was one chunk, encoded by
    /// one thread.
    pub fn new(codec: Codec, boards: usize) -> Streaming {
        let threads = rayon::current_num_threads();
        let even = boards
            .div_ceil(WAVE_PER_THREAD * threads)
            .next_multiple_of(BLOCK);
        Self::with_chunk(codec, boards, even.clamp(MIN_ENCODE_CHUNK, ENCODE_CHUNK))
    }

    /// [`Streaming::new`] with chunks of `chunk` boards (a multiple of
    /// [`BLOCK`]): the records are the same whatever the chunks.
    pub fn with_chunk(codec: Codec, boards: usize, chunk: usize) -> Streaming {
        Self::with_span(codec, boards, chunk, OFFSET_SPAN)
    }

    /// [`Streaming::with_chunk`] with offsets stored modulo `span` rather
    /// than 2^32: a test's small levels then wrap as a level past 4 GiB does.
    fn with_span(codec: Codec, boards: usize, chunk: usize, span: u64) -> Streaming {
        assert!(
            chunk > 0 && chunk.is_multiple_of(BLOCK),
            "chunks of whole blocks"
        );
        assert!(
            (1..=OFFSET_SPAN).contains(&span),
            "offsets fit their entries"
        );
        Streaming {
            codec,
            boards,
            chunk,
            chunks_done: 0,
            table: Vec::with_capacity(table_len(boards)),
            base: 0,
            span,
            wraps: Vec::new(),
        }
    }

    /// Appends the block table's next entry, for an offset of `offset`
    /// bytes: modulo the span, past a wrap for each multiple of it reached.
    fn push_offset(&mut self, offset: usize) {
        let offset = offset as u64;
        let entry = u32::try_from(self.table.len() / 4).expect("fewer than 2^32 blocks a level");
        while offset >= (self.wraps.len() as u64 + 1) * self.span {
            self.wraps.push(entry);
        }
        let low = u32::try_from(offset % self.span).expect("the span fits an entry");
        self.table.extend_from_slice(&low.to_le_bytes());
    }

    /// Boards whose records are encoded (and handed to `records`) so far:
    /// those below this number.
    pub fn encoded(&self) -> usize {
        (self.chunks_done * self.chunk).min(self.boards)
    }

    /// Encodes the next wave of chunks as [`encode_streaming`] does; returns
    /// whether boards are left for another.
    pub fn next_wave<C, T>(
        &mut self,
        chunk: C,
        buffers: &Buffers,
        mut records: impl FnMut(Vec<u8>),
    ) -> bool
    where
        C: Fn(Range<usize>) -> T + Sync,
        T: TurnOrder,
    {
        let (codec, boards, size) = (self.codec, self.boards, self.chunk);
        let chunks = boards.div_ceil(size);
        assert!(
            self.table.len() < table_len(boards),
            "no wave after the last"
        );
        let wave = WAVE_PER_THREAD * rayon::current_num_threads();
        let first = self.chunks_done;
        let last = (first + wave).min(chunks);
        let parts: Vec<(Vec<u32>, Vec<u8>)> = (first..last)
            .into_par_iter()
            .with_max_len(1)
            .map(|i| {
                let range = i * size..((i + 1) * size).min(boards);
                let changes = chunk(range.clone());
                encode_records(codec, range, changes, buffers.take())
            })
            .collect();
        for (offsets, part) in parts {
            for &offset in &offsets {
                self.push_offset(self.base + offset as usize);
            }
            self.base += part.len();
            records(part);
        }
        self.chunks_done = last;
        if last < chunks {
            return true;
        }
        // The entry past the end, and the wraps after the records.
        self.push_offset(self.base);
        if !self.wraps.is_empty() {
            records(self.wraps.iter().flat_map(|w| w.to_le_bytes()).collect());
        }
        false
    }

    /// The block table, once every wave is encoded (its records and wraps
    /// handed out).
    pub fn table(self) -> Vec<u8> {
        assert_eq!(self.encoded(), self.boards, "every wave is encoded");
        debug_assert_eq!(self.table.len(), table_len(self.boards));
        self.table
    }
}

/// A board's state while its records are built by [`encode_records`]: its
/// last change so far and the first of its codes, while they fit (most
/// boards change a handful of times). Half a cache line, so a change
/// touches one line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Slot {
    /// Turn and value of the board's last change so far.
    turn: u16,
    value: i8,
    /// Bytes of `codes` used.
    used: u8,
    codes: [u8; SLOT_CODES],
}

/// Bytes of codes a [`Slot`] holds.
const SLOT_CODES: usize = 28;

/// Why the encoder refuses a change `(turn, board, value)` after the
/// board's last, `(last_turn, last_value)` (turn 0, value 0 before any).
#[cold]
#[inline(never)]
fn not_a_change(board: usize, turn: u32, value: i8, last_turn: u16, last_value: i8) -> ! {
    if turn > MAX_TURNS {
        panic!("board {board}: a change at turn {turn}, past the {MAX_TURNS} turns compact levels cover");
    }
    if value == i8::MIN {
        panic!("board {board}: value {value} at turn {turn}, outside -127..=127");
    }
    panic!(
        "board {board}: (turn {turn}, value {value}) is not a change after (turn {last_turn}, value \
         {last_value}): turns must rise and each value differ from the one before"
    );
}

/// The records of the boards of `range` (starting at a block boundary),
/// in `records` (empty), and each block's offset within them.
///
/// A stretch of boards at a time: their changes are read turn by turn and
/// each coded against its board's change before, straight into the board's
/// [`Slot`] while it has room for a whole code; a board's codes past that
/// go to a list in turn order. Then the records are laid out: each board's
/// length, its slot's bytes, and the codes from the list, in the same
/// order, so each board's codes land in turn order.
fn encode_records(
    codec: Codec,
    range: Range<usize>,
    changes: impl TurnOrder,
    records: Vec<u8>,
) -> (Vec<u32>, Vec<u8>) {
    // The codec as a constant, so that the per-change path has no branch on it.
    match codec {
        Codec::V1 => encode_records_in::<true, _>(range, changes, records),
        Codec::V2 => encode_records_in::<false, _>(range, changes, records),
    }
}

/// [`encode_records`] in [`Codec::V1`] if `V1`, else [`Codec::V2`].
fn encode_records_in<const V1: bool, T: TurnOrder>(
    range: Range<usize>,
    mut changes: T,
    mut records: Vec<u8>,
) -> (Vec<u32>, Vec<u8>) {
    debug_assert!(records.is_empty());
    let codec = if V1 { Codec::V1 } else { Codec::V2 };
    // V1 counts changes from turn 1 and stores the value there up front.
    let first_turn = u16::from(V1);
    // A slot's turn starts at 0 for both: so a change at turn 1 is later
    // than the slot's (V1's dt counts from `first_turn` all the same).
    let mut offsets = Vec::with_capacity(range.len().div_ceil(BLOCK));
    // Per board of the stretch (small, to stay in L1 and L2): its slot,
    // V1's value at turn 1, the bytes of its codes past the slot, where the
    // next of those goes.
    let empty = Slot {
        turn: 0,
        value: 0,
        used: 0,
        codes: [0; SLOT_CODES],
    };
    let mut slots: Box<[Slot; STRETCH]> = vec![empty; STRETCH].try_into().expect("STRETCH slots");
    let mut first_values = vec![0i8; if V1 { STRETCH } else { 0 }];
    let mut spilled = vec![0u32; STRETCH];
    let mut cursors = vec![0u32; STRETCH];
    // Codes past a slot: the board within the stretch, the code's length, its bytes.
    let mut spills: Vec<u64> = Vec::new();
    for start in range.clone().step_by(STRETCH) {
        let end = (start + STRETCH).min(range.end);
        let boards = end - start;
        let spilled = &mut spilled[..boards];
        for slot in &mut slots[..boards] {
            (slot.turn, slot.value, slot.used) = (0, 0, 0);
        }
        first_values.fill(0);
        spilled.fill(0);
        spills.clear();
        changes.take_below(end, |turn, board, value| {
            let i = board - start;
            // `i` is below STRETCH: no bounds check.
            let slot = &mut slots[i % STRETCH];
            let (last_turn, last_value) = (slot.turn, slot.value);
            // A list breaking `TurnOrder`'s rules would be stored wrong
            // without a word: checked, unless the reader keeps them (and
            // then too in a debug build, the tests').
            if !T::TRUSTED || cfg!(debug_assertions) {
                if (turn > MAX_TURNS)
                    | (turn as u16 <= last_turn)
                    | (value == last_value)
                    | (value == i8::MIN)
                {
                    not_a_change(board, turn, value, last_turn, last_value);
                }
            } else {
                assert!(
                    turn <= MAX_TURNS,
                    "compact levels cover at most {MAX_TURNS} turns"
                );
            }
            let turn = turn as u16;
            (slot.turn, slot.value) = (turn, value);
            if V1 && turn == first_turn {
                // V1's value with 1 turn left: the body's first byte.
                first_values[i] = value;
                return;
            }
            let dv = i16::from(value) - i16::from(last_value);
            let dt = turn - last_turn.max(first_turn);
            let (code, len) = codec.code(u32::from(dt), dv);
            let at = usize::from(slot.used);
            if at <= SLOT_CODES - 4 {
                // All four bytes within the slot; those past the code are
                // overwritten by the next one or never read.
                slot.codes[at..][..4].copy_from_slice(&code.to_le_bytes());
                slot.used += len as u8;
            } else {
                spills.push(u64::from(code) | (len as u64) << 24 | (i as u64) << 32);
                spilled[i] += len as u32;
            }
        });
        // Lay the records out: length, V1's first value, the slot's codes,
        // room for the spilled ones.
        let size =
            |i: usize| usize::from(first_turn) + usize::from(slots[i].used) + spilled[i] as usize;
        let mut stretch_end = records.len();
        for (board, i) in (start..end).zip(0..) {
            if board % BLOCK == 0 {
                offsets.push(u32::try_from(stretch_end).expect("a chunk's records exceed 4 GiB"));
            }
            stretch_end += leb128_len(size(i)) + size(i);
        }
        u32::try_from(stretch_end).expect("a chunk's records exceed 4 GiB");
        let mut at = records.len();
        // Room for a whole slot's codes past the last record: each slot is
        // copied whole, its bytes past its codes overwritten by the records
        // and spilled codes after it, or cut off below.
        records.resize(stretch_end + SLOT_CODES, 0);
        for i in 0..boards {
            at += write_leb128(&mut records[at..], size(i));
            if V1 {
                records[at] = first_values[i] as u8;
                at += 1;
            }
            records[at..at + SLOT_CODES].copy_from_slice(&slots[i].codes);
            at += usize::from(slots[i].used);
            cursors[i] = at as u32;
            at += spilled[i] as usize;
        }
        records.truncate(stretch_end);
        for &code in &spills {
            let i = (code >> 32) as usize;
            let len = (code >> 24 & 3) as usize;
            let bytes = (code as u32).to_le_bytes();
            let at = cursors[i] as usize;
            records[at..at + len].copy_from_slice(&bytes[..len]);
            cursors[i] += len as u32;
        }
    }
    (offsets, records)
}

/// Bytes of `n` in LEB128.
fn leb128_len(n: usize) -> usize {
    (usize::BITS - (n | 1).leading_zeros()).div_ceil(7) as usize
}

/// Writes `n` in LEB128 at the start of `out`; returns its length.
fn write_leb128(out: &mut [u8], mut n: usize) -> usize {
    let mut len = 0;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out[len] = byte;
            return len + 1;
        }
        out[len] = byte | 0x80;
        len += 1;
    }
}

/// Reads a LEB128 length at `*at`, advancing past it.
fn read_leb128(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= usize::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// Whether a [`Codec::V2`] record body is a list of valid changes whose
/// values lie within `-bound..=bound` and whose last one comes no later
/// than `last_change`, and if so the turn of its last change (0 for none):
/// what [`Level::parse`] checks, in one tight loop for the records that
/// pass (nearly all the time taken to open a book); the others are read
/// again to say what is wrong.
#[inline]
fn scan_v2(body: &[u8], bound: i16, last_change: u32) -> Option<u32> {
    let (mut at, mut turn, mut value) = (0, 0u64, 0i16);
    while let Some(&code) = body.get(at) {
        let (dt, dv, len) = if code < V2_LONG {
            // dt 1..=32, dv -2, -1, +1, +2: always a change.
            let d = i16::from(code >> 5);
            (
                u64::from(code & 0x1f) + 1,
                if d < 2 { d - 2 } else { d - 1 },
                1,
            )
        } else if code < V2_ESCAPE {
            let &t = body.get(at + 1)?;
            (u64::from(t) + 1, i16::from(((code << 2) as i8) >> 2), 2)
        } else if code == V2_ESCAPE {
            let (Some(&dt), Some(&dv)) = (body.get(at + 1), body.get(at + 2)) else {
                return None;
            };
            (u64::from(dt), i16::from(dv as i8), 3)
        } else {
            return None;
        };
        value += dv;
        if dt == 0 || dv == 0 || value.abs() > bound {
            return None;
        }
        at += len;
        turn += dt;
    }
    (turn <= u64::from(last_change)).then_some(turn as u32)
}

/// Where [`Level::replay`] stopped reading a board's record: the next
/// change's byte, the turn and value before it (4 bytes a board).
#[derive(Clone, Copy, Debug, Default)]
pub struct Resume {
    /// Bytes of the record read; 0: none yet (its first call).
    at: u16,
    turn: u8,
    value: i8,
}

/// An encoded level, validated.
#[derive(Clone, Copy)]
pub struct Level<'a> {
    codec: Codec,
    boards: usize,
    offsets: &'a [u8],
    records: &'a [u8],
    /// The wraps of the offsets (empty for levels under 4 GiB), and their
    /// span (2^32; less in tests).
    wraps: &'a [u8],
    span: u64,
}

/// Walks one record's changes from turn 0 and value 0; a [`Codec::V1`]
/// value with 1 turn left other than 0 counts as a change at turn 1.
#[derive(Clone, Copy)]
struct Changes<'a> {
    codec: Codec,
    body: &'a [u8],
    at: usize,
    turn: u32,
    value: i8,
    /// A change to hand out before reading the body (V1's value at turn 1).
    head: Option<(u32, i8)>,
}

impl Iterator for Changes<'_> {
    /// (turn, value) of the next change.
    type Item = Result<(u32, i8), Malformed>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(head) = self.head.take() {
            return Some(Ok(head));
        }
        let bytes = self.body.get(self.at..).filter(|rest| !rest.is_empty())?;
        let (dt, dv, len) = match self.codec.read(bytes) {
            Ok(change) => change,
            Err(e) => return Some(Err(e)),
        };
        let value = i16::from(self.value) + dv;
        if dt == 0 || dv == 0 || !(-127..=127).contains(&value) {
            return Some(Err(Malformed(format!(
                "change code {:02x?} is not a change",
                &bytes[..len]
            ))));
        }
        self.at += len;
        self.turn += dt;
        self.value = value as i8;
        Some(Ok((self.turn, self.value)))
    }
}

impl<'a> Level<'a> {
    /// Checks `section` as the `codec` encoding of `boards` boards whose
    /// values change at turns up to `last_change` and lie within
    /// `-bound..=bound`; returns the level and the turn of its latest
    /// change (0 where no value changes), which a book's metadata can be
    /// held to.
    pub fn parse(
        section: &'a [u8],
        codec: Codec,
        boards: usize,
        last_change: u32,
        bound: i8,
    ) -> Result<(Level<'a>, u32), Malformed> {
        let level = Level::structure(section, codec, boards)?;
        // Blocks are independent: checked in parallel stretches.
        let latest = (0..boards.div_ceil(BLOCK))
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|block| level.check_block(block, last_change, bound))
            .try_reduce(|| 0, |a, b| Ok(a.max(b)))?;
        Ok((level, latest))
    }

    /// Checks only the frame of `section` as the `codec` encoding of
    /// `boards` boards: the block offsets' table, its first and last entries.
    /// The records are then read only after [`Level::check_block`] passes
    /// on their block, as [`Level::checked_value`] does.
    pub fn structure(
        section: &'a [u8],
        codec: Codec,
        boards: usize,
    ) -> Result<Level<'a>, Malformed> {
        Self::structure_in(section, codec, boards, OFFSET_SPAN)
    }

    /// [`Level::structure`] of a section whose bytes are checked (by their
    /// checksums) only as they are read: `ensure` is given each range of
    /// `section` that the check reads, before it reads it (the last entry
    /// of the block table, which frames the records, and the first; the
    /// wraps after the records; the entries on each side of a wrap), and
    /// its error stops the check.
    pub fn structure_ensured(
        section: &'a [u8],
        codec: Codec,
        boards: usize,
        ensure: impl FnMut(Range<usize>) -> Result<(), Malformed>,
    ) -> Result<Level<'a>, Malformed> {
        Self::structure_ensured_in(section, codec, boards, OFFSET_SPAN, ensure)
    }

    /// [`Level::structure_ensured`] of offsets stored modulo `span`.
    fn structure_ensured_in(
        section: &'a [u8],
        codec: Codec,
        boards: usize,
        span: u64,
        mut ensure: impl FnMut(Range<usize>) -> Result<(), Malformed>,
    ) -> Result<Level<'a>, Malformed> {
        let index_len = table_len(boards);
        if section.len() >= index_len {
            ensure(index_len - 4..index_len)?;
            ensure(0..4)?;
            if let Some(level) = Self::framed(section, codec, boards, span) {
                ensure(section.len() - level.wraps.len()..section.len())?;
                for wrap in level.wraps.chunks_exact(4) {
                    let wrap = u32::from_le_bytes(wrap.try_into().unwrap()) as usize;
                    if (1..=boards.div_ceil(BLOCK)).contains(&wrap) {
                        ensure(4 * (wrap - 1)..4 * (wrap + 1))?;
                    }
                }
            }
        }
        Self::structure_in(section, codec, boards, span)
    }

    /// [`Level::structure`] of offsets stored modulo `span`.
    fn structure_in(
        section: &'a [u8],
        codec: Codec,
        boards: usize,
        span: u64,
    ) -> Result<Level<'a>, Malformed> {
        let blocks = boards.div_ceil(BLOCK);
        let index_len = table_len(boards);
        if section.len() < index_len {
            return Err(Malformed(format!(
                "{} bytes cannot hold the offsets of {blocks} blocks",
                section.len()
            )));
        }
        let level = Self::framed(section, codec, boards, span)
            .ok_or_else(|| Malformed("block offsets do not span the records".into()))?;
        // Each wrap is an entry below the one before it (a block's records
        // take far less than the span), in ascending order.
        let mut previous = 0;
        for wrap in level.wraps.chunks_exact(4) {
            let wrap = u32::from_le_bytes(wrap.try_into().unwrap()) as usize;
            if wrap <= previous || wrap > blocks || level.entry(wrap) >= level.entry(wrap - 1) {
                return Err(Malformed(format!(
                    "the offsets do not wrap at block {wrap}"
                )));
            }
            previous = wrap;
        }
        if level.offset(0) != 0 {
            return Err(Malformed("block offsets do not span the records".into()));
        }
        Ok(level)
    }

    /// The level in `section` (at least its block table), its records and
    /// wraps told apart by the section's length (see the
    /// [module docs](self)), or `None` where no count of wraps fits it.
    fn framed(section: &'a [u8], codec: Codec, boards: usize, span: u64) -> Option<Level<'a>> {
        let (offsets, rest) = section.split_at(table_len(boards));
        let mut level = Level {
            codec,
            boards,
            offsets,
            records: rest,
            wraps: &[],
            span,
        };
        // rest = end + wraps * (span + 4), end being the last entry.
        let past_end = (rest.len() as u64).checked_sub(level.entry(boards.div_ceil(BLOCK)))?;
        if past_end % (span + 4) != 0 {
            return None;
        }
        let wraps = usize::try_from(past_end / (span + 4) * 4).ok()?;
        (level.records, level.wraps) = rest.split_at(rest.len() - wraps);
        Some(level)
    }

    /// Checks the records of block `block` (of a level whose frame
    /// [`Level::structure`] checked): lengths, codes, that the values lie
    /// within `-bound..=bound` and change no later than `last_change`, and
    /// that the block ends where the next begins; returns the turn of the
    /// block's latest change (0 for none). Lookups in a block that passes
    /// stay within it.
    pub fn check_block(&self, block: usize, last_change: u32, bound: i8) -> Result<u32, Malformed> {
        let check = |value: i8| {
            if (-bound..=bound).contains(&value) {
                Ok(())
            } else {
                Err(Malformed(format!(
                    "value {value} is outside -{bound}..={bound}"
                )))
            }
        };
        let codec = self.codec;
        let mut at = self.offset(block);
        let in_block = BLOCK.min(self.boards - block * BLOCK);
        let mut latest = 0;
        for _ in 0..in_block {
            let body = self.record(&mut at).ok_or_else(|| {
                Malformed(format!("a record of block {block} runs past the section"))
            })?;
            if codec == Codec::V2 {
                if let Some(last) = scan_v2(body, i16::from(bound), last_change) {
                    latest = latest.max(last);
                    continue;
                }
            }
            // Version 1, or a malformed record: why, change by change.
            if codec == Codec::V1 && body.is_empty() {
                return Err(Malformed(format!("an empty record in block {block}")));
            }
            for change in self.changes(body) {
                let (turn, value) = change?;
                check(value)?;
                if turn > last_change {
                    return Err(Malformed(format!(
                        "a value changes at turn {turn}, after the level's last change {last_change}"
                    )));
                }
                latest = latest.max(turn);
            }
        }
        if at != self.offset(block + 1) {
            return Err(Malformed(format!(
                "block {block} does not end where the next begins"
            )));
        }
        Ok(latest)
    }

    /// [`Level::value`] once [`Level::check_block`] passes on the board's
    /// block: for a level whose records were not all checked.
    pub fn checked_value(
        &self,
        rank: usize,
        turns_left: u32,
        last_change: u32,
        bound: i8,
    ) -> Result<i8, Malformed> {
        assert!(rank < self.boards);
        self.check_block(rank / BLOCK, last_change, bound)?;
        Ok(self.value(rank, turns_left))
    }

    /// [`Level::checked_value`] in a level framed by
    /// [`Level::structure_ensured`] (its frame checked then): `ensure` is
    /// first given the bytes of the section that the lookup reads (the
    /// block's two entries in the table, then its records).
    ///
    /// A block's records end where the next block's begin in any level its
    /// writer made, so a file whose checksums pass is read only where
    /// `ensure` was asked to check it; one altered and checksummed again may
    /// be read further, within the section (as any lookup's reads stay).
    pub fn checked_value_ensured(
        &self,
        rank: usize,
        turns_left: u32,
        last_change: u32,
        bound: i8,
        mut ensure: impl FnMut(Range<usize>) -> Result<(), Malformed>,
    ) -> Result<i8, Malformed> {
        assert!(rank < self.boards);
        let block = rank / BLOCK;
        ensure(4 * block..4 * block + 8)?;
        let records = self.offsets.len();
        let (start, end) = (self.offset(block), self.offset(block + 1));
        ensure(records.saturating_add(start)..records.saturating_add(end))?;
        self.checked_value(rank, turns_left, last_change, bound)
    }

    /// Entry `block` of the block table: the block's offset modulo the span.
    #[inline]
    fn entry(&self, block: usize) -> u64 {
        u64::from(u32::from_le_bytes(
            self.offsets[block * 4..block * 4 + 4].try_into().unwrap(),
        ))
    }

    /// The offset of block `block`'s first record within the records (past
    /// their end where a malformed table says so; reading there fails).
    #[inline]
    fn offset(&self, block: usize) -> usize {
        let mut offset = self.entry(block);
        if !self.wraps.is_empty() {
            let wrapped = self
                .wraps
                .chunks_exact(4)
                .take_while(|wrap| {
                    u32::from_le_bytes((*wrap).try_into().unwrap()) as usize <= block
                })
                .count();
            offset += wrapped as u64 * self.span;
        }
        usize::try_from(offset).unwrap_or(usize::MAX)
    }

    /// The body of the record at `*at`, advancing past it.
    fn record(&self, at: &mut usize) -> Option<&'a [u8]> {
        let len = read_leb128(self.records, at)?;
        let body = self.records.get(*at..at.checked_add(len)?)?;
        *at += len;
        Some(body)
    }

    /// Every board's record body, in rank order.
    fn bodies(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.bodies_of(0..self.boards)
    }

    /// The record bodies of boards `boards` (from a block's first board).
    fn bodies_of(&self, boards: Range<usize>) -> impl Iterator<Item = &'a [u8]> + '_ {
        assert!(boards.start.is_multiple_of(BLOCK) && boards.end <= self.boards);
        let mut at = 0;
        boards.map(move |board| {
            if board % BLOCK == 0 {
                at = self.offset(board / BLOCK);
            }
            self.record(&mut at).expect("validated on open")
        })
    }

    fn changes(&self, body: &'a [u8]) -> Changes<'a> {
        match self.codec {
            Codec::V1 => {
                // An empty V1 body is refused on open; read it as value 0.
                let value = body.first().map_or(0, |&b| b as i8);
                Changes {
                    codec: Codec::V1,
                    body,
                    at: 1,
                    turn: 1,
                    value,
                    head: (value != 0).then_some((1, value)),
                }
            }
            Codec::V2 => Changes {
                codec: Codec::V2,
                body,
                at: 0,
                turn: 0,
                value: 0,
                head: None,
            },
        }
    }

    /// Every change of a validated record.
    fn valid_changes(&self, body: &'a [u8]) -> impl Iterator<Item = (u32, i8)> + 'a {
        self.changes(body)
            .map(|change| change.expect("validated on open"))
    }

    /// The value of board `rank` with `turns_left` turns left.
    pub fn value(&self, rank: usize, turns_left: u32) -> i8 {
        assert!(rank < self.boards);
        let mut at = self.offset(rank / BLOCK);
        for _ in 0..rank % BLOCK {
            self.record(&mut at).expect("validated on open");
        }
        let body = self.record(&mut at).expect("validated on open");
        self.valid_changes(body)
            .take_while(|&(turn, _)| turn <= turns_left)
            .last()
            .map_or(0, |(_, value)| value)
    }

    /// Every layer `1..=layers` of the level, layer-major.
    pub fn layers(&self, layers: u32) -> Vec<i8> {
        let boards = self.boards;
        let mut out = vec![0i8; boards * layers as usize];
        let mut rows: Vec<&mut [i8]> = out.chunks_mut(boards.max(1)).collect();
        let mut resume = vec![Resume::default(); boards];
        self.replay(0..boards, 1, &mut rows, &mut resume);
        out
    }

    /// Layers `first..first + rows.len()` of boards `boards` (from a block's
    /// first board), `rows[k][i]` the value of board `boards.start + i` with
    /// `first + k` turns left, each board's record read on from `resume`
    /// (where the call for the layers before `first` left it; from the
    /// start for `first` = 1, with `Resume::default()`), which it updates.
    /// Layers are replayed a window at a time this way with each record
    /// read once in all: an export needs no more than a window in memory.
    pub fn replay(
        &self,
        boards: Range<usize>,
        first: u32,
        rows: &mut [&mut [i8]],
        resume: &mut [Resume],
    ) {
        assert!(first >= 1);
        assert_eq!(resume.len(), boards.len());
        assert!(rows.iter().all(|row| row.len() == boards.len()));
        if rows.is_empty() {
            // Nothing to replay: a record left unread stays so (V1's value
            // with 1 turn left, read with the body's first byte, included).
            return;
        }
        let end = first + rows.len() as u32;
        // Each board's value before the window, and the window's changes
        // (row, board, value) in board order; then row by row, the row's
        // changes applied and the values copied out whole.
        let mut values: Vec<i8> = resume.iter().map(|state| state.value).collect();
        let mut changed: Vec<(u32, u32, i8)> = Vec::new();
        for (i, (body, state)) in self.bodies_of(boards).zip(resume).enumerate() {
            let mut changes = if state.at == 0 {
                self.changes(body)
            } else {
                Changes {
                    codec: self.codec,
                    body,
                    at: usize::from(state.at),
                    turn: u32::from(state.turn),
                    value: state.value,
                    head: None,
                }
            };
            let mut value = state.value;
            loop {
                let before = changes;
                match changes.next() {
                    Some(Ok((turn, new))) if turn < end => {
                        changed.push((turn - first, i as u32, new));
                        value = new;
                    }
                    Some(Ok(_)) => {
                        changes = before;
                        break;
                    }
                    None => break,
                    Some(Err(e)) => panic!("validated on open: {e}"),
                }
            }
            *state = Resume {
                at: u16::try_from(changes.at).expect("a record under 64 KiB"),
                turn: u8::try_from(changes.turn).expect("turns up to 255"),
                value,
            };
        }
        // By row (a counting sort keeps each row's changes in board order,
        // so a board's later change comes after its earlier one).
        let mut starts = vec![0usize; rows.len() + 1];
        for &(row, _, _) in &changed {
            starts[row as usize + 1] += 1;
        }
        for k in 0..rows.len() {
            starts[k + 1] += starts[k];
        }
        let mut by_row = vec![(0u32, 0i8); changed.len()];
        let mut next = starts.clone();
        for &(row, board, value) in &changed {
            by_row[next[row as usize]] = (board, value);
            next[row as usize] += 1;
        }
        for (k, row) in rows.iter_mut().enumerate() {
            for &(board, value) in &by_row[starts[k]..starts[k + 1]] {
                values[board as usize] = value;
            }
            row.copy_from_slice(&values);
        }
    }

    /// Calls `f(board, turn, value)` for every change, board by board, turns
    /// ascending; a value other than 0 with 1 turn left counts as a change at
    /// turn 1.
    pub fn for_each_change(&self, mut f: impl FnMut(usize, u32, i8)) {
        for (board, body) in self.bodies().enumerate() {
            for (turn, value) in self.valid_changes(body) {
                f(board, turn, value);
            }
        }
    }

    /// Each board's number of changes after turn 1 and its final value, for
    /// boards `boards` (from a block's first board).
    pub fn summaries_of(&self, boards: Range<usize>) -> impl Iterator<Item = (u32, i8)> + '_ {
        self.bodies_of(boards).map(|body| {
            let (mut changes, mut value) = (0, 0);
            for (turn, new) in self.valid_changes(body) {
                value = new;
                changes += u32::from(turn > 1);
            }
            (changes, value)
        })
    }

    /// A level already validated by [`Level::parse`] (from the same bytes and
    /// codec): no checks repeated. Malformed bytes could only make lookups panic.
    pub fn trusted(section: &'a [u8], codec: Codec, boards: usize) -> Level<'a> {
        Self::trusted_in(section, codec, boards, OFFSET_SPAN)
    }

    /// [`Level::trusted`] of offsets stored modulo `span`.
    fn trusted_in(section: &'a [u8], codec: Codec, boards: usize, span: u64) -> Level<'a> {
        Self::framed(section, codec, boards, span).expect("validated on open")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks [`Streaming::new`] takes for a level of `boards` boards on
    /// `threads` threads, and how many of them the level has.
    fn chunking(threads: usize, boards: usize) -> (usize, usize) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let chunk = pool.install(|| Streaming::new(Codec::V2, boards).chunk);
        (chunk, boards.div_ceil(chunk))
    }

    #[test]
    fn every_thread_gets_chunks_of_a_small_level() {
        // The 9-seed top level: a wave of chunks, a fourth of them each.
        assert_eq!(chunking(2, 167_960), (21_000, 8));
        assert_eq!(chunking(16, 167_960), (MIN_ENCODE_CHUNK, 42));
        // Small levels are not cut below the floor; large ones keep theirs.
        assert_eq!(chunking(2, 5_000), (MIN_ENCODE_CHUNK, 2));
        assert_eq!(chunking(2, 84_672_315).0, ENCODE_CHUNK);
        // Whole blocks.
        assert_eq!(chunking(3, 1_000_001).0 % BLOCK, 0);
    }

    /// Change lists for `boards` boards, up to turn 200, a few each (some
    /// none), by a xorshift from `seed`.
    fn random_lists(seed: u64, boards: usize) -> Vec<Vec<(u32, i8)>> {
        let mut state = seed;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        (0..boards)
            .map(|_| {
                let (mut turn, mut value) = (0u32, 0i8);
                let mut list = Vec::new();
                for _ in 0..next(12) {
                    turn += 1 + next(40) as u32;
                    let step = next(9) as i8 - 4;
                    if turn > 200 || step == 0 {
                        continue;
                    }
                    value = (value + step).clamp(-40, 40);
                    if list.last().map_or(0, |&(_, v)| v) != value {
                        list.push((turn, value));
                    }
                }
                list
            })
            .collect()
    }

    /// Entry `i` of a block table.
    fn entry(section: &[u8], i: usize) -> u64 {
        u64::from(u32::from_le_bytes(
            section[i * 4..i * 4 + 4].try_into().unwrap(),
        ))
    }

    /// A level checked as read ([`Level::structure_ensured`],
    /// [`Level::checked_value_ensured`]) asks for every byte it reads: with
    /// every other byte of the section changed, the frame passes and each
    /// board's value reads the same, with and without wraps.
    #[test]
    fn ensured_ranges_cover_every_byte_read() {
        let boards = 1003;
        let lists = random_lists(0x0bad_cafe, boards);
        for codec in [Codec::V1, Codec::V2] {
            let plain = encode(codec, boards, |b| lists[b].clone());
            let records = (plain.len() - table_len(boards)) as u64;
            for span in [OFFSET_SPAN, records / 3, records / 2 + 1] {
                let what = format!("{codec:?}, span {span}");
                let streaming = Streaming::with_span(codec, boards, 64, span);
                let section = encode_with(streaming, |b| lists[b].clone());
                // Every byte outside the ranges asked for changed, two ways
                // (a change that leaves an order of entries as it was can
                // pass where another does not).
                let scrambled = |asked: &[Range<usize>], zeroed: bool| {
                    let mut kept = vec![false; section.len()];
                    for range in asked {
                        kept[range.start..range.end.min(section.len())].fill(true);
                    }
                    let mut bytes = section.clone();
                    for (byte, kept) in bytes.iter_mut().zip(kept) {
                        if !kept {
                            *byte = if zeroed { 0 } else { *byte ^ 0x5a };
                        }
                    }
                    bytes
                };
                let mut frame = Vec::new();
                let level = Level::structure_ensured_in(&section, codec, boards, span, |r| {
                    frame.push(r);
                    Ok(())
                })
                .expect(&what);
                assert!(frame.len() > 2 || span == OFFSET_SPAN, "{what}: wraps read");
                for zeroed in [false, true] {
                    let bytes = scrambled(&frame, zeroed);
                    Level::structure_in(&bytes, codec, boards, span).expect(&what);
                }
                for rank in 0..boards {
                    let mut asked = frame.clone();
                    let value = level
                        .checked_value_ensured(rank, 150, 200, 63, |r| {
                            asked.push(r);
                            Ok(())
                        })
                        .expect(&what);
                    for zeroed in [false, true] {
                        let bytes = scrambled(&asked, zeroed);
                        let other = Level::structure_in(&bytes, codec, boards, span).expect(&what);
                        assert_eq!(
                            other.checked_value(rank, 150, 200, 63),
                            Ok(value),
                            "{what}, board {rank}"
                        );
                    }
                }
                // A refusal from `ensure` stops the reading.
                let refused = Level::structure_ensured_in(&section, codec, boards, span, |_| {
                    Err(Malformed("no".into()))
                });
                assert!(refused.is_err(), "{what}");
                let refused =
                    level.checked_value_ensured(0, 1, 200, 63, |_| Err(Malformed("no".into())));
                assert!(refused.is_err(), "{what}");
            }
        }
    }

    /// A level whose records reach past the offsets' span (2^32 in a book;
    /// a few hundred bytes here, so that a test can reach it) keeps its
    /// records, stores its offsets modulo the span, lists where they wrap
    /// after the records, and reads back as the level stored without wraps:
    /// spans below the records, one the records end on, and one past them.
    #[test]
    fn offsets_past_their_span_wrap_and_read_back() {
        let boards = 1003;
        let lists = random_lists(0x5eed_0ff5, boards);
        let blocks = boards.div_ceil(BLOCK);
        let table = table_len(boards);
        for codec in [Codec::V1, Codec::V2] {
            let plain = encode(codec, boards, |b| lists[b].clone());
            let records = plain.len() - table;
            let (level, _) = Level::parse(&plain, codec, boards, 200, 63).unwrap();
            let layers = level.layers(200);
            let widest = (0..blocks)
                .map(|b| entry(&plain, b + 1) - entry(&plain, b))
                .max()
                .unwrap();
            // A first offset other than 0 is refused with the frame alone.
            let mut shifted = plain.clone();
            shifted[0] = 1;
            assert!(Level::structure(&shifted, codec, boards).is_err());
            let spans = [
                widest + 1,
                2 * widest,
                997,
                records as u64,
                records as u64 + 1,
            ];
            for span in spans {
                let what = format!("{codec:?}, span {span} ({records} bytes of records)");
                // Chunks of 64 boards: many waves, wraps inside and between chunks.
                let streaming = Streaming::with_span(codec, boards, 64, span);
                let wrapped = encode_with(streaming, |b| lists[b].clone());
                let wraps = records / span as usize;
                assert_eq!(wrapped.len(), table + records + 4 * wraps, "{what}");
                assert_eq!(wrapped[table..table + records], plain[table..], "{what}");
                for i in 0..=blocks {
                    assert_eq!(entry(&wrapped, i), entry(&plain, i) % span, "{what}");
                }
                for (m, wrap) in wrapped[table + records..].chunks_exact(4).enumerate() {
                    let wrap = u32::from_le_bytes(wrap.try_into().unwrap()) as usize;
                    let at = (m as u64 + 1) * span;
                    assert!(
                        entry(&plain, wrap) >= at && entry(&plain, wrap - 1) < at,
                        "{what}"
                    );
                }
                let level = Level::structure_in(&wrapped, codec, boards, span).expect(&what);
                for block in 0..blocks {
                    level.check_block(block, 200, 63).expect(&what);
                }
                assert_eq!(level.layers(200), layers, "{what}");
                // As every reader after the opening sees it.
                let trusted = Level::trusted_in(&wrapped, codec, boards, span);
                assert_eq!(trusted.layers(200), layers, "{what}");
                // Records cut short by a byte, or followed by one, leave no
                // count of wraps that fits.
                for bad in [
                    &wrapped[..wrapped.len() - 1],
                    &[&wrapped[..], &[0]].concat(),
                ] {
                    let opened = Level::structure_in(bad, codec, boards, span);
                    assert!(opened.is_err(), "{what}, {} bytes", bad.len());
                }
                if wraps == 0 {
                    continue;
                }
                // A wrap short, or one too many, leaves no count of wraps
                // that fits the section.
                let short = &wrapped[..wrapped.len() - 4];
                assert!(
                    Level::structure_in(short, codec, boards, span).is_err(),
                    "{what}"
                );
                let long = [&wrapped[..], &[0; 4]].concat();
                assert!(
                    Level::structure_in(&long, codec, boards, span).is_err(),
                    "{what}"
                );
                // A wrap moved by a block is refused on open: no decrease
                // of the entries there (a lookup's check of the block would
                // find it too).
                for moved in [-1i64, 1] {
                    let mut bad = wrapped.clone();
                    let at = table + records;
                    let wrap = u32::from_le_bytes(bad[at..at + 4].try_into().unwrap());
                    let wrap = (i64::from(wrap) + moved) as u32;
                    bad[at..at + 4].copy_from_slice(&wrap.to_le_bytes());
                    let opened = Level::structure_in(&bad, codec, boards, span);
                    assert!(opened.is_err(), "{what}, first wrap moved by {moved}");
                }
                // A first wrap at entry 0, or a wrap repeated, is refused.
                let at = table + records;
                let mut bad = wrapped.clone();
                bad[at..at + 4].fill(0);
                let opened = Level::structure_in(&bad, codec, boards, span);
                assert!(opened.is_err(), "{what}, a wrap at entry 0");
                if wraps >= 2 {
                    let mut bad = wrapped.clone();
                    bad.copy_within(at..at + 4, at + 4);
                    let opened = Level::structure_in(&bad, codec, boards, span);
                    assert!(opened.is_err(), "{what}, a wrap repeated");
                }
            }
        }
    }
}
