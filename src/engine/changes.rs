//! Change lists: the states whose value changed in one layer, with their new values.
//!
//! A solve keeps every layer's changes of every level, so their size bounds
//! the largest book one machine can generate. [`LayerChanges`] is the working
//! form (a state index and a value per change, 5 bytes); [`PackedChanges`] is
//! the stored form: per change, the gap from the previous changed state as
//! LEB128 (one byte while changes are denser than one in 128 states) and the
//! value, about 2 bytes, with a sync point every [`SYNC_EVERY`] changes so a
//! range of states is found without decoding the whole layer. A list is a
//! sequence of pieces, each packed from scratch: the parts a layer is
//! packed in, in parallel, are joined by moving them. Joining them by
//! copying into one buffer of the whole list's size took a fifth of the
//! dense sweeps' time at 17 seeds: such buffers came fresh from the
//! kernel, every page zeroed before it was written.

use rayon::prelude::*;
use std::cell::RefCell;
use wide::u8x16;

/// The states whose value changed in one layer, ascending, with their new values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerChanges {
    /// State indices, ascending.
    pub states: Vec<u32>,
    /// New values, one per state.
    pub values: Vec<i8>,
}

impl LayerChanges {
    pub(super) fn append(&mut self, other: LayerChanges) {
        self.states.extend(other.states);
        self.values.extend(other.values);
    }

    /// Writes the new values into `layer`.
    pub(super) fn write_to(&self, layer: &mut [i8]) {
        for (&state, &value) in self.states.iter().zip(&self.values) {
            layer[state as usize] = value;
        }
    }

    /// Number of changes.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// The changes of states in `start..end`.
    pub fn within(&self, start: usize, end: usize) -> (&[u32], &[i8]) {
        let from = self.states.partition_point(|&s| (s as usize) < start);
        let to = self.states.partition_point(|&s| (s as usize) < end);
        (&self.states[from..to], &self.values[from..to])
    }
}

/// Boards compared at once by [`PackedChanges::push_differences`].
pub(crate) const BLOCK: usize = 64;

/// A bit per byte of the block where `old` and `new` differ: 16 bytes
/// compared at once (SSE2 on x86-64, whatever `wide` has elsewhere).
#[inline(always)]
fn differing_bytes(old: &[i8; BLOCK], new: &[i8; BLOCK]) -> u64 {
    let mut same = 0u64;
    for quarter in 0..BLOCK / 16 {
        let bytes = |values: &[i8; BLOCK]| {
            let bytes: [i8; 16] = values[quarter * 16..quarter * 16 + 16].try_into().unwrap();
            u8x16::from(bytes.map(|b| b as u8))
        };
        let equal = bytes(old).simd_eq(bytes(new)).to_bitmask();
        same |= u64::from(equal) << (quarter * 16);
    }
    !same
}

/// Packs the boards of a block whose bits are set in `differ` as (gap,
/// value) pairs at the start of `out`, the gap from the board before (for
/// the first, from the block's start), the value from `new`; the bytes
/// after them are left as they are or overwritten.
#[inline(always)]
pub(crate) fn block_pairs(mut differ: u64, new: &[i8; BLOCK], out: &mut [u8; 2 * BLOCK]) {
    let mut next = 0;
    let mut at = 0;
    while differ != 0 {
        let lane = differ.trailing_zeros() as usize;
        differ &= differ - 1;
        out[at] = (lane - next) as u8;
        out[at + 1] = new[lane] as u8;
        at += 2;
        next = lane + 1;
    }
}

/// Changes between sync points of a [`PackedChanges`].
pub const SYNC_EVERY: usize = 1024;

/// Sync points per piece when [`PackedChanges::write_to`] works in parallel.
const WRITE_PIECE_SYNCS: usize = 32;

/// One layer's changes, packed (see the module docs). States are pushed in
/// ascending order. Two lists are equal when they hold the same changes,
/// however they were packed and cut into pieces.
#[derive(Clone, Debug, Default)]
pub struct PackedChanges {
    /// The pieces before the last: none empty, each one's states below the
    /// next one's.
    sealed: Vec<Piece>,
    /// Changes in `sealed`.
    sealed_len: usize,
    /// The piece changes are pushed to; not empty while `sealed` is not.
    last: Piece,
}

/// Spare buffers a worker thread keeps for [`room`].
const SPARE_ROOMS: usize = 4;

thread_local! {
    /// Byte buffers of parts already joined ([`Piece::shrink`]), empty,
    /// for the next parts packed on this thread.
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An empty byte buffer with room for `bytes`: one this thread kept
/// ([`give_back_room`]) if it is large enough. A part's room is written
/// once per layer and turn: taken fresh from the kernel each time, its
/// pages were faulted in and zeroed again (at 17 seeds, a third of the
/// run's page faults).
fn room(bytes: usize) -> Vec<u8> {
    SPARE
        .with_borrow_mut(|spare| {
            let fits = spare.iter().position(|buffer| buffer.capacity() >= bytes)?;
            Some(spare.swap_remove(fits))
        })
        .unwrap_or_else(|| Vec::with_capacity(bytes))
}

/// Keeps `buffer` for [`room`] on this thread, emptied, unless it keeps
/// [`SPARE_ROOMS`] already.
fn give_back_room(mut buffer: Vec<u8>) {
    buffer.clear();
    SPARE.with_borrow_mut(|spare| {
        if spare.len() < SPARE_ROOMS {
            spare.push(buffer);
        }
    });
}

/// Changes packed from scratch: the first gap counts from state 0.
#[derive(Clone, Debug, Default)]
struct Piece {
    bytes: Vec<u8>,
    len: usize,
    /// One past the last state pushed: the base of the next gap.
    next_base: u64,
    /// Every `SYNC_EVERY`-th change: (gap base, byte offset) where it starts.
    sync: Vec<(u64, usize)>,
}

impl PackedChanges {
    /// An empty list with room for a change of each of `states` boards
    /// packed by [`PackedChanges::push_differences`] without growing: a
    /// sweep's list grown by doubling spent its time in `realloc` (copies,
    /// and the allocator's locks when threads contend for them). The room
    /// left over is given back when the list is joined to others
    /// ([`PackedChanges::concatenate`], [`PackedChanges::append`]).
    pub fn with_room_for(states: usize) -> PackedChanges {
        PackedChanges {
            last: Piece {
                // Two bytes a change, a first gap of up to five, and the
                // spare room `push_block` makes for a block before cutting it.
                bytes: room(2 * states + 2 * BLOCK + 16),
                sync: Vec::with_capacity(states / SYNC_EVERY + 2),
                ..Piece::default()
            },
            ..PackedChanges::default()
        }
    }

    /// Gives back the room the list reserved and did not use
    /// ([`PackedChanges::with_room_for`]), for the next list packed on this
    /// thread: best right after packing, while its bytes are in cache.
    pub fn fit(&mut self) {
        self.last.shrink();
    }

    /// Appends a change; `state` must exceed every state pushed before.
    #[inline]
    pub fn push(&mut self, state: u32, value: i8) {
        self.last.push(state, value);
    }

    /// Appends a change for every board where `new` differs from `old`
    /// (the values of boards `first_state..`), ascending. Compares 64
    /// boards at a time: most of a layer repeats the previous one. With
    /// AVX-512 VBMI2 or AVX2 (runtime detection, [`crate::kernels::Packing`]),
    /// a block's changes are packed with no loop over them.
    #[inline]
    pub fn push_differences(&mut self, first_state: usize, old: &[i8], new: &[i8]) {
        crate::kernels::packing().push_differences(self, first_state, old, new);
    }

    /// [`PackedChanges::push_differences`] without vector packing, whatever
    /// the CPU: the oracle its vector paths are tested against.
    pub fn push_differences_portable(&mut self, first_state: usize, old: &[i8], new: &[i8]) {
        self.push_blocks(first_state, old, new, differing_bytes, block_pairs);
    }

    /// The loop of [`PackedChanges::push_differences`], given how to find
    /// a block's differing bytes and how to pack them ([`block_pairs`] or
    /// an equivalent): inlined into each kernel, compiled for its
    /// instruction set.
    #[inline(always)]
    pub(crate) fn push_blocks(
        &mut self,
        first_state: usize,
        old: &[i8],
        new: &[i8],
        differ: impl Fn(&[i8; BLOCK], &[i8; BLOCK]) -> u64,
        pairs: impl Fn(u64, &[i8; BLOCK], &mut [u8; 2 * BLOCK]),
    ) {
        assert_eq!(old.len(), new.len());
        let whole = old.len() / BLOCK * BLOCK;
        for start in (0..whole).step_by(BLOCK) {
            let old: &[i8; BLOCK] = old[start..start + BLOCK].try_into().unwrap();
            let new: &[i8; BLOCK] = new[start..start + BLOCK].try_into().unwrap();
            let differ = differ(old, new);
            if differ != 0 {
                self.last
                    .push_block(first_state + start, differ, new, &pairs);
            }
        }
        // The rest, padded with equal bytes.
        if whole < old.len() {
            let (mut old_tail, mut new_tail) = ([0i8; BLOCK], [0i8; BLOCK]);
            old_tail[..old.len() - whole].copy_from_slice(&old[whole..]);
            new_tail[..old.len() - whole].copy_from_slice(&new[whole..]);
            let differ = differ(&old_tail, &new_tail);
            if differ != 0 {
                self.last
                    .push_block(first_state + whole, differ, &new_tail, &pairs);
            }
        }
    }

    /// Appends `other`, whose changes all lie above those pushed here, by
    /// moving its pieces after these. This list's last piece gives back the
    /// room it did not use as it is sealed (so every sealed piece has).
    pub fn append(&mut self, mut other: PackedChanges) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other;
            return;
        }
        let (first, _) = other.iter().next().expect("a list that is not empty");
        assert!(
            u64::from(first) >= self.next_state(),
            "changes are appended in ascending order"
        );
        let mut last = std::mem::take(&mut self.last);
        last.shrink();
        self.sealed_len += last.len;
        self.sealed.push(last);
        self.sealed.append(&mut other.sealed);
        self.sealed_len += other.sealed_len;
        self.last = other.last;
    }

    /// `parts` end to end, each packed separately (in parallel, say), all
    /// of a part's changes above the part before's: their pieces moved,
    /// each moved to an allocation of the bytes it holds, so that the room
    /// a part reserved goes back to the allocator whole (in parallel when
    /// there are many).
    pub fn concatenate(mut parts: Vec<PackedChanges>) -> PackedChanges {
        const PARALLEL_FROM: usize = 1 << 16;
        if parts.iter().map(PackedChanges::len).sum::<usize>() >= PARALLEL_FROM {
            parts
                .par_iter_mut()
                .with_max_len(1)
                .for_each(|part| part.last.shrink());
        } else {
            // (Empty parts too: their room goes back for the next parts.)
            parts.iter_mut().for_each(|part| part.last.shrink());
        }
        let mut all = PackedChanges::default();
        for part in parts {
            all.append(part);
        }
        all
    }

    /// Frees the pieces whose changes all lie below `state` (cheaply: no
    /// piece is copied), as a reader that has passed them may; the changes
    /// below `state` in the piece holding `state` stay.
    pub fn release_below(&mut self, state: usize) {
        let passed = self.first_piece_from(state);
        let released: usize = self.sealed.drain(..passed).map(|piece| piece.len).sum();
        self.sealed_len -= released;
    }

    /// Drops the changes of states below `state`.
    pub fn drop_below(&mut self, state: usize) {
        *self = self.copied_from(state);
    }

    /// A copy of the changes of states from `state` on: those of the piece
    /// holding `state` packed anew, the pieces above copied as they are.
    pub fn copied_from(&self, state: usize) -> PackedChanges {
        let mut copy = PackedChanges::default();
        for (i, piece) in self.pieces_in(state, usize::MAX).enumerate() {
            let mut part = PackedChanges::default();
            if i == 0 {
                for (s, value) in piece.within(state, usize::MAX) {
                    part.push(s, value);
                }
            } else {
                part.last = piece.clone();
            }
            copy.append(part);
        }
        copy
    }

    /// Appends every change of `changes` (all above the states pushed before).
    pub fn extend(&mut self, changes: &LayerChanges) {
        for (&state, &value) in changes.states.iter().zip(&changes.values) {
            self.push(state, value);
        }
    }

    /// Number of changes.
    pub fn len(&self) -> usize {
        self.sealed_len + self.last.len
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One past the last state pushed (0 for an empty list): a list
    /// appended after this one must start there or above.
    pub fn next_state(&self) -> u64 {
        // (The last piece is empty only when the list is.)
        self.last.next_base
    }

    /// Memory held, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.pieces().map(Piece::heap_bytes).sum::<usize>()
            + self.sealed.capacity() * std::mem::size_of::<Piece>()
    }

    /// The changes of states in `start..end`, ascending, as (state, value).
    pub fn within(&self, start: usize, end: usize) -> impl Iterator<Item = (u32, i8)> + '_ {
        self.pieces_in(start, end)
            .flat_map(move |piece| piece.within(start, end))
    }

    /// Every piece, in order (the last even when empty).
    fn pieces(&self) -> impl Iterator<Item = &Piece> + '_ {
        self.sealed.iter().chain(std::iter::once(&self.last))
    }

    /// The pieces that may hold changes of states in `start..end`, in
    /// order, each with the lowest state it may hold: the `next_base` of
    /// the piece before (0 for the first).
    fn pieces_with_floor(
        &self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = (u64, &Piece)> + '_ {
        let sealed = &self.sealed;
        // Piece i (the last is number `sealed.len()`) holds states from
        // piece i - 1's `next_base` up to its own.
        let first = self.first_piece_from(start);
        let last = sealed.partition_point(|piece| piece.next_base < end as u64);
        (first..=last).map(move |i| {
            let floor = i.checked_sub(1).map_or(0, |i| sealed[i].next_base);
            (floor, sealed.get(i).unwrap_or(&self.last))
        })
    }

    /// The number of the first piece that may hold a state from `start` on
    /// (`sealed.len()` for the last piece).
    fn first_piece_from(&self, start: usize) -> usize {
        self.sealed
            .partition_point(|piece| piece.next_base <= start as u64)
    }

    /// [`PackedChanges::pieces_with_floor`] without the floors.
    fn pieces_in(&self, start: usize, end: usize) -> impl Iterator<Item = &Piece> + '_ {
        self.pieces_with_floor(start, end).map(|(_, piece)| piece)
    }

    /// Writes the new values of the changes of states in
    /// `first_state..first_state + layer.len()` into `layer` (the values of
    /// those states, in order); changes of other states are skipped. Long
    /// lists are written in parallel: the pieces and, within them, their
    /// sync points cut them into stretches whose states, and so whose bytes
    /// of `layer`, are disjoint.
    pub fn write_to(&self, layer: &mut [i8], first_state: usize) {
        let (start, end) = (first_state, first_state + layer.len());
        let syncs: usize = self
            .pieces_in(start, end)
            .map(|piece| piece.syncs_within(start, end).len())
            .sum();
        if syncs < 2 * WRITE_PIECE_SYNCS {
            for piece in self.pieces_in(start, end) {
                piece.decoder_near(start).write_range(layer, start);
            }
            return;
        }
        // Stretch k decodes from its sync point (base, byte offset) and
        // writes the states from its first (`start` for the first stretch)
        // up to the next stretch's first.
        let mut stretches: Vec<(usize, Decoder<'_>)> = Vec::new();
        for (floor, piece) in self.pieces_with_floor(start, end) {
            let points = piece.syncs_within(start, end);
            for &(base, at) in points.iter().step_by(WRITE_PIECE_SYNCS) {
                let from = (base.max(floor) as usize).clamp(start, end);
                let decoder = Decoder {
                    bytes: &piece.bytes,
                    at,
                    next_base: base,
                };
                stretches.push((from, decoder));
            }
        }
        let mut parts = Vec::with_capacity(stretches.len());
        let mut rest = layer;
        let ends = stretches.iter().skip(1).map(|&(from, _)| from).chain([end]);
        for ((from, decoder), to) in stretches.iter().cloned().zip(ends) {
            let (part, tail) = rest.split_at_mut(to - from);
            rest = tail;
            parts.push((part, from, decoder));
        }
        parts
            .into_par_iter()
            .for_each(|(part, from, decoder)| decoder.write_range(part, from));
    }

    /// A cursor over the changes of states from `start` on, to read in
    /// ascending stretches ([`ChangeCursor::take_below`]).
    pub fn cursor(&self, start: usize) -> ChangeCursor<'_> {
        let first = self.first_piece_from(start);
        let piece = self.sealed.get(first).unwrap_or(&self.last);
        let mut cursor = ChangeCursor {
            decoder: piece.decoder_near(start),
            pieces: self.sealed.get(first + 1..).unwrap_or_default(),
            last: (first < self.sealed.len()).then_some(&self.last),
            next: None,
        };
        // The first change from `start` on is in this piece, if anywhere.
        let mut next = cursor.decoder.next();
        while next.is_some_and(|(state, _)| (state as usize) < start) {
            next = cursor.decoder.next();
        }
        cursor.next = next;
        cursor
    }

    /// Every change, as (state, value).
    pub fn iter(&self) -> impl Iterator<Item = (u32, i8)> + '_ {
        self.pieces().flat_map(Piece::decoder)
    }

    /// The changes in working form.
    pub fn unpack(&self) -> LayerChanges {
        let mut changes = LayerChanges {
            states: Vec::with_capacity(self.len()),
            values: Vec::with_capacity(self.len()),
        };
        for (state, value) in self.iter() {
            changes.states.push(state);
            changes.values.push(value);
        }
        changes
    }
}

impl Piece {
    /// Appends a change; `state` must exceed every state pushed before.
    #[inline]
    fn push(&mut self, state: u32, value: i8) {
        if self.len.is_multiple_of(SYNC_EVERY) {
            self.sync.push((self.next_base, self.bytes.len()));
        }
        self.encode(state, value);
        self.len += 1;
    }

    /// Writes one change's bytes (no sync point, no count).
    #[inline]
    fn encode(&mut self, state: u32, value: i8) {
        let state = u64::from(state);
        assert!(
            state >= self.next_base,
            "changes are pushed in ascending order"
        );
        let mut gap = state - self.next_base;
        self.next_base = state + 1;
        if gap < 0x80 {
            // The common case: changes closer than 128 boards apart.
            self.bytes.extend_from_slice(&[gap as u8, value as u8]);
            return;
        }
        loop {
            let byte = (gap & 0x7f) as u8;
            gap >>= 7;
            if gap == 0 {
                self.bytes.push(byte);
                break;
            }
            self.bytes.push(byte | 0x80);
        }
        self.bytes.push(value as u8);
    }

    /// Packs the boards of a block from `first_state` whose bits are set in
    /// `differ`, with their values in `new`, straight into the list: the
    /// first gap in LEB128, then the block's (gap, value) pairs by `pairs`.
    #[inline(always)]
    fn push_block(
        &mut self,
        first_state: usize,
        differ: u64,
        new: &[i8; BLOCK],
        pairs: impl Fn(u64, &[i8; BLOCK], &mut [u8; 2 * BLOCK]),
    ) {
        // The first gap's bytes before its last (at most four), then
        // `pairs`' bytes.
        const ROOM: usize = 2 * BLOCK + 8;
        let count = differ.count_ones() as usize;
        let highest = first_state + 63 - differ.leading_zeros() as usize;
        assert!(
            highest <= u32::MAX as usize,
            "states are numbered in 32 bits"
        );
        let state = (first_state + differ.trailing_zeros() as usize) as u64;
        assert!(
            state >= self.next_base,
            "changes are pushed in ascending order"
        );
        // (Checked before anything is written: a failed push leaves the list
        // as it was.) A sync point before the block if one of its changes is
        // a SYNC_EVERY-th: decoding may start at any change.
        if self.len.div_ceil(SYNC_EVERY) * SYNC_EVERY < self.len + count {
            self.sync.push((self.next_base, self.bytes.len()));
        }
        // Room for the largest block, cut to what it takes at the end.
        let start = self.bytes.len();
        self.bytes.resize(start + ROOM, 0);
        let buffer: &mut [u8; ROOM] = (&mut self.bytes[start..]).try_into().unwrap();
        // The first change's gap from the last state pushed, in LEB128: all
        // but its last byte here, the last over the first pair's gap.
        let mut gap = state - self.next_base;
        let mut used = 0;
        while gap >= 0x80 {
            buffer[used] = (gap & 0x7f) as u8 | 0x80;
            used += 1;
            gap >>= 7;
        }
        pairs(
            differ,
            new,
            (&mut buffer[used..used + 2 * BLOCK]).try_into().unwrap(),
        );
        buffer[used] = gap as u8;
        used += 2 * count;
        self.bytes.truncate(start + used);
        self.len += count;
        self.next_base = highest as u64 + 1;
    }

    /// Gives back the room reserved past the bytes and sync points held,
    /// by moving them to an allocation of their size: the room (a sweep's
    /// part reserves two bytes a board) goes back to the allocator whole,
    /// ready for the next part. Shrinking in place left holes that only
    /// smaller allocations could reuse: at 17 seeds, a peak of 2.2 GB
    /// against 1.6 GB.
    fn shrink(&mut self) {
        if self.bytes.capacity() > self.bytes.len() + self.bytes.len() / 8 + 64 {
            let fitted = self.bytes.as_slice().to_vec();
            give_back_room(std::mem::replace(&mut self.bytes, fitted));
        }
        if self.sync.capacity() > self.sync.len() + 2 {
            self.sync = self.sync.as_slice().to_vec();
        }
    }

    /// Memory held, in bytes.
    fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.sync.capacity() * std::mem::size_of::<(u64, usize)>()
    }

    /// The changes of states in `start..end`, ascending.
    fn within(&self, start: usize, end: usize) -> impl Iterator<Item = (u32, i8)> + '_ {
        self.decoder_near(start)
            .skip_while(move |&(state, _)| (state as usize) < start)
            .take_while(move |&(state, _)| (state as usize) < end)
    }

    /// A decoder from the first change.
    fn decoder(&self) -> Decoder<'_> {
        Decoder {
            bytes: &self.bytes,
            at: 0,
            next_base: 0,
        }
    }

    /// A decoder from the last sync point whose base is at most `start`:
    /// every change before it is of a state below its base, so below `start`.
    fn decoder_near(&self, start: usize) -> Decoder<'_> {
        let sync = self.sync.partition_point(|&(base, _)| base <= start as u64);
        let (base, at) = sync.checked_sub(1).map_or((0, 0), |i| self.sync[i]);
        Decoder {
            bytes: &self.bytes,
            at,
            next_base: base,
        }
    }

    /// The sync points from the last at or below `start` to the last below
    /// `end`: decoding from the first reaches every change in `start..end`.
    fn syncs_within(&self, start: usize, end: usize) -> &[(u64, usize)] {
        // Every piece starts with a sync point at its first change.
        debug_assert!(self.sync.first().is_none_or(|&sync| sync == (0, 0)));
        let first = self
            .sync
            .partition_point(|&(base, _)| base <= start as u64)
            .saturating_sub(1);
        let last = self.sync.partition_point(|&(base, _)| base < end as u64);
        self.sync.get(first..last).unwrap_or_default()
    }
}

impl PartialEq for PackedChanges {
    fn eq(&self, other: &PackedChanges) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for PackedChanges {}

impl From<&LayerChanges> for PackedChanges {
    fn from(changes: &LayerChanges) -> PackedChanges {
        let mut packed = PackedChanges::default();
        packed.extend(changes);
        packed
    }
}

/// Reads a [`PackedChanges`] forward in stretches of states.
pub struct ChangeCursor<'a> {
    /// Where the piece being read is.
    decoder: Decoder<'a>,
    /// The pieces after it: sealed ones, then the list's last.
    pieces: &'a [Piece],
    last: Option<&'a Piece>,
    /// The first change not yet taken.
    next: Option<(u32, i8)>,
}

impl<'a> ChangeCursor<'a> {
    /// Calls `f(state, value)` for each change of a state below `end` not
    /// taken yet, in order.
    #[inline]
    pub fn take_below(&mut self, end: usize, mut f: impl FnMut(u32, i8)) {
        let Some(next) = self.next.filter(|&(s, _)| (s as usize) < end) else {
            return;
        };
        f(next.0, next.1);
        // The decoder's state in locals, not behind `self`: `f` stores bytes,
        // which could alias it, and would make every step reload it.
        let mut decoder = self.decoder.clone();
        self.next = loop {
            if let Some(after) = decoder.run_below(end as u64, &mut f) {
                break Some(after);
            }
            // This piece is done: on to the next (none is empty).
            let Some(piece) = self.next_piece() else {
                break None;
            };
            decoder = piece.decoder();
            match decoder.next() {
                Some((state, value)) if (state as usize) < end => f(state, value),
                after => break after,
            }
        };
        self.decoder = decoder;
    }

    /// The piece after those read, if any.
    fn next_piece(&mut self) -> Option<&'a Piece> {
        match self.pieces.split_first() {
            Some((piece, rest)) => {
                self.pieces = rest;
                Some(piece)
            }
            None => self.last.take(),
        }
    }

    /// Prefetches the next `lines` cache lines of the changes not taken yet.
    #[inline]
    pub fn prefetch(&self, lines: usize) {
        for line in 1..=lines {
            crate::kernels::prefetch(self.decoder.bytes, self.decoder.at + 64 * line);
        }
    }
}

#[derive(Clone)]
struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    next_base: u64,
}

impl Decoder<'_> {
    /// Calls `f(state, value)` for each change of a state below `end`, in
    /// order, and returns the first change after them (taken from the
    /// decoder), if any. Where the next 16 bytes are eight changes with
    /// one-byte gaps (most of them, in a list of more than one change in
    /// 128 states), they are decoded at once: the gaps' running sums in
    /// 16-bit lanes of two words instead of a chain of eight steps.
    #[inline(always)]
    fn run_below(&mut self, end: u64, mut f: impl FnMut(u32, i8)) -> Option<(u32, i8)> {
        /// The gaps' high bits: a one-byte gap has it clear.
        const GAP_HIGH: u64 = 0x0080_0080_0080_0080;
        const GAPS: u64 = 0x00ff_00ff_00ff_00ff;
        const ONES: u64 = 0x0001_0001_0001_0001;
        loop {
            if let Some(bytes) = self.bytes.get(self.at..self.at + 16) {
                let low = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                let high = u64::from_le_bytes(bytes[8..].try_into().unwrap());
                if (low | high) & GAP_HIGH == 0 {
                    // Per lane, the sum of `gap + 1` up to its change: the
                    // state's distance from the one before the first. Each
                    // sum is at most 4 * 128, so no lane carries into the next.
                    let sums = |word: u64| {
                        let mut x = (word & GAPS) + ONES;
                        x += x << 16;
                        x + (x << 32)
                    };
                    let (low_sums, high_sums) = (sums(low), sums(high));
                    let before = self.next_base.wrapping_sub(1);
                    let middle = before.wrapping_add(low_sums >> 48);
                    let last = middle.wrapping_add(high_sums >> 48);
                    if last < end {
                        for (word, sums, before) in
                            [(low, low_sums, before), (high, high_sums, middle)]
                        {
                            for lane in 0..4 {
                                let state = before.wrapping_add(sums >> (16 * lane) & 0xffff);
                                f(state as u32, (word >> (16 * lane + 8)) as u8 as i8);
                            }
                        }
                        self.next_base = last + 1;
                        self.at += 16;
                        continue;
                    }
                }
            }
            match self.next() {
                Some((state, value)) if u64::from(state) < end => f(state, value),
                after => return after,
            }
        }
    }

    /// Writes into `layer` (the values of states `first..first +
    /// layer.len()`) the changes of its states, from this decoder's position
    /// (at or before the first of them) on.
    #[inline]
    fn write_range(mut self, layer: &mut [i8], first: usize) {
        let end = (first + layer.len()) as u64;
        let Some((state, value)) = self.run_below(first as u64, |_, _| ()) else {
            return;
        };
        if u64::from(state) >= end {
            return;
        }
        layer[state as usize - first] = value;
        self.run_below(end, |state, value| layer[state as usize - first] = value);
    }
}

impl Iterator for Decoder<'_> {
    type Item = (u32, i8);

    #[inline]
    fn next(&mut self) -> Option<(u32, i8)> {
        // The common case: a one-byte gap.
        if let Some(&[gap, value]) = self.bytes.get(self.at..self.at + 2) {
            if gap < 0x80 {
                let state = self.next_base + u64::from(gap);
                self.at += 2;
                self.next_base = state + 1;
                return Some((state as u32, value as i8));
            }
        }
        let mut gap = 0u64;
        let mut shift = 0;
        loop {
            let byte = *self.bytes.get(self.at)?;
            self.at += 1;
            gap |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        let state = self.next_base + gap;
        let value = self.bytes[self.at] as i8;
        self.at += 1;
        self.next_base = state + 1;
        Some((state as u32, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::xorshift;

    #[test]
    fn packed_changes_round_trip_and_find_ranges() {
        // Gaps of every LEB128 length, values of both signs, across sync points.
        let mut layer = LayerChanges::default();
        let mut state = 0u64;
        for i in 0..5000u64 {
            state += [0, 1, 127, 128, 16_384, 3_000_000][(i % 6) as usize] + (i % 3);
            layer.states.push(state as u32);
            layer.values.push(((i * 37) % 255) as i8);
            state += 1;
        }
        let packed = PackedChanges::from(&layer);
        assert_eq!(packed.len(), layer.len());
        assert_eq!(packed.unpack(), layer);
        let last = *layer.states.last().unwrap() as usize;
        for (start, end) in [
            (0, 1),
            (0, last + 1),
            (5, 4_000_000),
            (1_000_000, 900_000_000),
            (last, last + 1),
            // Ending on a changed state: it is left out.
            (0, layer.states[1] as usize),
            (layer.states[10] as usize, layer.states[20] as usize),
        ] {
            let (states, values) = layer.within(start, end);
            let expected: Vec<(u32, i8)> =
                states.iter().copied().zip(values.iter().copied()).collect();
            assert_eq!(
                packed.within(start, end).collect::<Vec<_>>(),
                expected,
                "{start}..{end}"
            );
        }
        let (s10, s20) = (layer.states[10] as usize, layer.states[20] as usize);
        assert_eq!(layer.within(s10, s20).0, &layer.states[10..20]);
        assert!(packed.heap_bytes() < layer.len() * 5);

        // Packed in pieces and appended: the same changes, the same ranges.
        let mut pieces = PackedChanges::default();
        for part in layer.states.chunks(777).zip(layer.values.chunks(777)) {
            let mut piece = PackedChanges::default();
            for (&state, &value) in part.0.iter().zip(part.1) {
                piece.push(state, value);
            }
            pieces.append(piece);
        }
        pieces.append(PackedChanges::default());
        assert_eq!(pieces.len(), layer.len());
        assert_eq!(pieces.unpack(), layer);
        for (start, end) in [
            (0, 1),
            (5, 4_000_000),
            (last, last + 1),
            (1_000_000, 900_000_000),
        ] {
            assert!(pieces.within(start, end).eq(packed.within(start, end)));
        }
    }

    #[test]
    fn rooms_given_back_are_reused_empty() {
        // Larger than any other list's room, so no other room fits.
        const STATES: usize = 3_000_017;
        let mut list = PackedChanges::with_room_for(STATES);
        list.push(5, 1);
        let reserved = list.last.bytes.as_ptr();
        list.fit();
        assert!(list.last.bytes.capacity() < 1000);
        // The room comes back on this thread, emptied, and packs afresh.
        let mut next = PackedChanges::with_room_for(STATES);
        assert_eq!(next.last.bytes.as_ptr(), reserved);
        assert!(next.last.bytes.is_empty());
        next.push(7, -3);
        assert_eq!(next.iter().collect::<Vec<_>>(), [(7, -3)]);
        assert_eq!(list.iter().collect::<Vec<_>>(), [(5, 1)]);
    }

    #[test]
    fn concatenated_parts_equal_one_list() {
        // Parts packed from scratch, some empty, gaps small and large.
        let states: Vec<u32> = (0..5000u32).map(|i| i * 3 + (i / 700) * 100_000).collect();
        let mut whole = PackedChanges::default();
        for &state in &states {
            whole.push(state, (state % 90) as i8 - 45);
        }
        for cuts in [
            vec![0, 5000],
            vec![0, 0, 1, 2500, 2500, 4999, 5000],
            vec![0, 1024, 2048, 5000],
        ] {
            let parts: Vec<PackedChanges> = cuts
                .windows(2)
                .map(|w| {
                    let mut part = PackedChanges::default();
                    for &state in &states[w[0]..w[1]] {
                        part.push(state, (state % 90) as i8 - 45);
                    }
                    part
                })
                .collect();
            let joined = PackedChanges::concatenate(parts);
            assert!(joined == whole, "cuts {cuts:?}");
            // Each part that is not empty is a piece, moved as it is.
            let parts = cuts.windows(2).filter(|w| w[1] > w[0]).count();
            assert_eq!(joined.pieces().count(), parts, "cuts {cuts:?}");
            assert_eq!(joined.len(), states.len());
            // Sync points still find ranges.
            for (from, to) in [(3333, 4444), (1, 2), (2499, 2501), (1023, 4999)] {
                let (from, to) = (states[from] as usize, states[to] as usize);
                assert!(joined.within(from, to).eq(whole.within(from, to)));
            }
        }
    }

    /// Checks that `packed` (the changes `all`) written into `layer`, the
    /// values of the states from `start` on, sets the states in its range to
    /// their changes' values and leaves the others.
    fn assert_written(packed: &PackedChanges, all: &[(u32, i8)], mut layer: Vec<i8>, start: usize) {
        let len = layer.len();
        let mut expected = layer.clone();
        for &(s, v) in all {
            if (start..start + len).contains(&(s as usize)) {
                expected[s as usize - start] = v;
            }
        }
        packed.write_to(&mut layer, start);
        assert!(layer == expected, "{start} + {len}");
    }

    /// `all` (ascending) packed in parts of the sizes in `sizes`, taken in
    /// turn, and concatenated: a list of many pieces.
    fn in_pieces(all: &[(u32, i8)], sizes: &[usize]) -> PackedChanges {
        let mut parts = Vec::new();
        let mut rest = all;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (part, tail) = rest.split_at(size.min(rest.len()));
            rest = tail;
            let mut packed = PackedChanges::default();
            for &(state, value) in part {
                packed.push(state, value);
            }
            parts.push(packed);
            parts.push(PackedChanges::default());
        }
        let pieces = PackedChanges::concatenate(parts);
        assert_eq!(pieces.len(), all.len());
        pieces
    }

    /// Piece sizes for [`in_pieces`]: single changes, pieces within and
    /// across sync points and parallel stretches.
    const PIECE_SIZES: [usize; 6] = [1, 777, 3_000, 40_000, 5, 70_001];

    #[test]
    fn written_changes_are_those_in_range() {
        // Enough changes for parallel pieces, gaps of one to three bytes.
        let mut packed = PackedChanges::default();
        let mut state = 7u32;
        let mut all = Vec::new();
        for i in 0..200_000u32 {
            all.push((state, ((i % 201) as i16 - 100) as i8));
            packed.push(state, ((i % 201) as i16 - 100) as i8);
            state += 1 + [0, 3, 200, 2_000][(i % 4) as usize] * (i % 5 == 0) as u32;
        }
        let pieces = in_pieces(&all, &PIECE_SIZES);
        let last = all.last().unwrap().0 as usize;
        for (start, len) in [
            (0, last + 1),
            (7, 1),
            (5, last),
            (123_457, last / 3),
            (last / 2, last),
            (last, 1),
            (last + 1, 10),
            (3, 0),
        ] {
            let layer: Vec<i8> = (0..len).map(|i| (i % 97) as i8).collect();
            assert_written(&packed, &all, layer.clone(), start);
            assert_written(&pieces, &all, layer, start);
        }
    }

    #[test]
    fn changes_written_eight_at_once_are_those_read_one_by_one() {
        // Runs of one-byte gaps (written eight at a time) of every gap size
        // up to 127, broken by two- and three-byte gaps at varying places,
        // and values of every byte.
        let mut all = Vec::new();
        let mut packed = PackedChanges::default();
        let mut state = 0u32;
        let mut random = xorshift(0x9e37_79b9_7f4a_7c15);
        for i in 0..20_000u32 {
            let seed = random();
            let gap = match seed % 41 {
                // Around change 10,000, every gap is 0 or 1 (for the windows below).
                _ if (9_900..10_100).contains(&i) => seed >> 8 & 1,
                0 => 128 + (seed >> 8) % 1000,
                1 => 20_000 + (seed >> 8) % 100_000,
                2..=20 => 0,
                _ => (seed >> 8) % 128,
            } as u32;
            state += gap;
            let value = (i % 256) as u8 as i8;
            all.push((state, value));
            packed.push(state, value);
            state += 1;
        }
        let pieces = in_pieces(&all, &[1, 2, 999, 8, 7_000, 9]);
        let last = all.last().unwrap().0 as usize;
        // The reference read one by one: a cursor taken in stretches of
        // every kind of length, each change in its stretch, from one piece
        // and across many.
        let starts = [0, 1, all[999].0 as usize, all[1000].0 as usize + 1, last];
        for (packed, stretch) in [&packed, &pieces]
            .into_iter()
            .flat_map(|p| [1, 2, 7, 8, 9, 100, 5_000, last + 1].map(|s| (p, s)))
        {
            for start in starts {
                let mut cursor = packed.cursor(start);
                let mut taken = Vec::new();
                for end in (start..=last + stretch).step_by(stretch) {
                    cursor.take_below(end + 1, |state, value| {
                        assert!(state as usize <= end, "{state} taken below {}", end + 1);
                        taken.push((state, value));
                    });
                }
                let expected: Vec<(u32, i8)> = all
                    .iter()
                    .copied()
                    .filter(|c| c.0 as usize >= start)
                    .collect();
                assert!(taken == expected, "stretch {stretch} from {start}");
            }
        }
        // Written windows starting and ending at every offset within a
        // stretch of dense changes, and whole halves (in parallel pieces).
        let windows = (0..64).flat_map(|from| (0..64).map(move |len| (from, len)));
        let middle = all[10_000].0 as usize - 32;
        let halves = [(0, last / 2), (last / 2, last + 1 - last / 2)];
        for (start, len) in windows
            .map(|(from, len)| (middle + from, len))
            .chain(halves)
        {
            assert_written(&packed, &all, vec![i8::MIN; len], start);
            assert_written(&pieces, &all, vec![i8::MIN; len], start);
        }
    }

    #[test]
    fn dropping_keeps_the_changes_above() {
        let states: Vec<u32> = (0..3000).map(|i| i * i % 7919 + i * 8000).collect();
        let all: Vec<(u32, i8)> = states.iter().map(|&s| (s, (s % 100) as i8)).collect();
        // In one piece, and in pieces cut at, before and after the cut.
        for sizes in [&[3000][..], &[1234, 1, 1765], &[1230, 7, 3], &[1235, 5, 60]] {
            let mut packed = in_pieces(&all, sizes);
            let cut = states[1234] as usize;
            packed.drop_below(cut);
            let kept = &all[1234..];
            assert_eq!(packed.iter().collect::<Vec<_>>(), kept, "{sizes:?}");
            assert_eq!(packed.len(), kept.len());
            assert!(packed.within(cut + 9000, cut + 90_000).eq(kept
                .iter()
                .copied()
                .filter(|&(s, _)| (cut + 9000..cut + 90_000).contains(&(s as usize)))));
        }
    }

    /// Releasing below a state frees the pieces whose changes all lie below
    /// it, and keeps whole the piece holding it, or the next: cut at a
    /// piece's last change, just past it, and at the next piece's first.
    #[test]
    fn releasing_frees_only_the_pieces_wholly_below() {
        let states: Vec<u32> = (0..3000).map(|i| i * 8 + i % 7).collect();
        let all: Vec<(u32, i8)> = states.iter().map(|&s| (s, (s % 100) as i8)).collect();
        let sizes = [1234, 1, 1765];
        // Where each piece's changes start in `all`.
        let starts = [0, 1234, 1235];
        for end in [1234, 1235] {
            for cut in [states[end - 1], states[end - 1] + 1, states[end]] {
                let mut packed = in_pieces(&all, &sizes);
                packed.release_below(cut as usize);
                // The first piece kept: the one whose last change is `cut`
                // or later.
                let kept = starts
                    .iter()
                    .zip(starts.iter().skip(1).chain([&all.len()]))
                    .find(|&(_, &next)| states[next - 1] >= cut)
                    .map(|(&start, _)| start)
                    .unwrap();
                // (Compared without printing lists of thousands.)
                assert_eq!(packed.len(), all.len() - kept, "cut at {cut}");
                assert!(packed.iter().eq(all[kept..].iter().copied()), "{cut}");
                let from = || all.iter().copied().filter(|&(s, _)| s >= cut);
                assert_eq!(
                    packed.within(cut as usize, usize::MAX).next(),
                    from().next()
                );
                assert!(packed.within(cut as usize, usize::MAX).eq(from()), "{cut}");
                let mut read = Vec::new();
                packed
                    .cursor(cut as usize)
                    .take_below(usize::MAX, |s, v| read.push((s, v)));
                assert!(read.into_iter().eq(from()), "{cut}");
            }
        }
    }

    #[test]
    fn differences_are_every_changed_board() {
        let old: Vec<i8> = (0..1003).map(|i| (i % 7) as i8 - 3).collect();
        let mut new = old.clone();
        for at in [0, 7, 8, 9, 63, 64, 500, 999, 1000, 1002] {
            new[at] = -new[at] - 1;
        }
        // From state 40, and far on (gaps of several bytes between blocks).
        for first in [40, 3_000_000] {
            let mut packed = PackedChanges::default();
            packed.push_differences(first, &old, &new);
            packed.push_differences(first + 10_000_000, &old, &new);
            let mut expected: Vec<(u32, i8)> = Vec::new();
            for from in [first, first + 10_000_000] {
                for i in (0..old.len()).filter(|&i| old[i] != new[i]) {
                    expected.push(((from + i) as u32, new[i]));
                }
            }
            assert_eq!(packed.iter().collect::<Vec<_>>(), expected);
            assert_eq!(expected.len(), 20);
            let (start, end) = (first + 9_000_000, first + 10_000_501);
            assert!(packed.within(start, end).eq(expected
                .iter()
                .copied()
                .filter(|&(s, _)| (start..end).contains(&(s as usize)))));
        }
    }

    #[test]
    fn vector_packing_matches_the_portable_one_byte_for_byte() {
        use crate::kernels::Packing;
        let vectors: Vec<Packing> = Packing::available()
            .filter(|&p| p != Packing::Portable)
            .collect();
        for packing in Packing::ALL.into_iter().skip(1) {
            match vectors.contains(&packing) {
                true => crate::testing::note(&format!(
                    "push_differences: {packing} packing checked against the portable one"
                )),
                false => crate::kernels::skip_unsupported(packing.name(), "push_differences"),
            }
        }
        let mut random = xorshift(0x2545_f491_4f6c_dd1d);
        // Densities from none to every board, lengths off the block size,
        // gaps between calls of one to five LEB128 bytes, enough changes
        // for many sync points.
        for percent in [0, 1, 10, 25, 50, 90, 100] {
            let mut vector = vec![PackedChanges::default(); vectors.len()];
            let mut portable = PackedChanges::default();
            let mut expected = Vec::new();
            let mut first = 0usize;
            for call in 0..400 {
                let len = [1, 63, 64, 65, 127, 2048, 3001][call % 7];
                let old: Vec<i8> = (0..len).map(|_| random() as i8).collect();
                let new: Vec<i8> = old
                    .iter()
                    .map(|&v| match random() % 100 < percent {
                        true => v ^ ((random() % 255) as u8 + 1) as i8,
                        false => v,
                    })
                    .collect();
                for (packing, changes) in vectors.iter().zip(&mut vector) {
                    packing.push_differences(changes, first, &old, &new);
                }
                portable.push_differences_portable(first, &old, &new);
                for i in (0..len).filter(|&i| old[i] != new[i]) {
                    expected.push(((first + i) as u32, new[i]));
                }
                first += len + [0, 1, 200, 40_000, 3_000_000][call % 5];
            }
            for (packing, changes) in vectors.iter().zip(&vector) {
                // (Not assert_eq: the lists are long.)
                let (changes, portable) = (&changes.last, &portable.last);
                let first_difference = changes
                    .bytes
                    .iter()
                    .zip(&portable.bytes)
                    .position(|(a, b)| a != b);
                assert!(
                    changes.bytes == portable.bytes,
                    "{packing} {percent}%: {} bytes against {}, first difference at {first_difference:?}",
                    changes.bytes.len(),
                    portable.bytes.len()
                );
                assert!(
                    changes.sync == portable.sync,
                    "{packing} {percent}%: sync points"
                );
                assert_eq!(
                    (changes.len, changes.next_base),
                    (portable.len, portable.next_base),
                    "{packing} {percent}%"
                );
            }
            assert_eq!(portable.iter().collect::<Vec<_>>(), expected, "{percent}%");
            assert_eq!(portable.len(), expected.len());
        }
    }
}
