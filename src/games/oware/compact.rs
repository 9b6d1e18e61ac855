//! The compact encoding of one seed level: each board's value at turn 1 and
//! the turns at which it changes, a byte per change.
//!
//! Values change rarely (a board changes value a handful of times over 200
//! turns) and by little, so a level is stored as records, one per board in
//! rank order, grouped in blocks of [`BLOCK`] boards:
//!
//! ```text
//! section  = offsets records
//! offsets  = u32 LE per block, plus one past the end: byte offset of the
//!            block's first record within `records`
//! record   = len value1 change*
//!   len    = LEB128 byte count of `value1 change*`
//!   value1 = i8, the value with 1 turn left
//!   change = one byte: (turn delta - 1) << 4 | (value delta & 0xf), turn
//!            delta 1..=16, value delta -8..=7, the byte 0xff excluded;
//!          | 0xff, turn delta u8 (1..=255), value delta i8: any other change
//! ```
//!
//! A lookup reads the block's offset, skips at most seven records by their
//! lengths and replays the changes up to the turn asked for: about one cache
//! line. Opening a book checks every record (lengths, turn range, that each
//! block ends where the next begins), so lookups never leave the section.

use rayon::prelude::*;
use std::fmt;
use std::ops::Range;

/// Boards per block.
pub const BLOCK: usize = 8;
const ESCAPE: u8 = 0xff;

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

/// Encodes a level from each board's changes: `changes(board)` lists
/// (turn, value) with ascending turns from 1, only where the value differs
/// from the turn before (turn 0 counting as value 0).
pub fn encode(boards: usize, changes: impl Fn(usize) -> Vec<(u32, i8)> + Sync) -> Vec<u8> {
    encode_chunked(boards, |range| {
        let mut board = range.start;
        let changes = &changes;
        move |out: &mut Vec<(u32, i8)>| {
            out.extend(changes(board));
            board += 1;
        }
    })
}

/// [`encode`] with the changes streamed per chunk of boards: `chunk(range)`
/// returns the function that appends the next board's changes to a buffer,
/// called once per board of `range` in order. Chunks are encoded in parallel.
pub fn encode_chunked<C, F>(boards: usize, chunk: C) -> Vec<u8>
where
    C: Fn(Range<usize>) -> F + Sync,
    F: FnMut(&mut Vec<(u32, i8)>),
{
    let parts: Vec<(Vec<u32>, Vec<u8>)> = (0..boards.div_ceil(ENCODE_CHUNK))
        .into_par_iter()
        .map(|i| {
            let range = i * ENCODE_CHUNK..((i + 1) * ENCODE_CHUNK).min(boards);
            let changes = chunk(range.clone());
            encode_records(range, changes)
        })
        .collect();
    let blocks = boards.div_ceil(BLOCK);
    let records_len: usize = parts.iter().map(|(_, records)| records.len()).sum();
    let mut section = Vec::with_capacity((blocks + 1) * 4 + records_len);
    let mut base = 0usize;
    for (offsets, records) in &parts {
        for &offset in offsets {
            let offset =
                u32::try_from(base + offset as usize).expect("a level's records exceed 4 GiB");
            section.extend_from_slice(&offset.to_le_bytes());
        }
        base += records.len();
    }
    let end = u32::try_from(base).expect("a level's records exceed 4 GiB");
    section.extend_from_slice(&end.to_le_bytes());
    for (_, records) in parts {
        section.extend_from_slice(&records);
    }
    section
}

/// The records of the boards of `range` (starting at a block boundary) and
/// each block's offset within them.
fn encode_records(
    range: Range<usize>,
    mut changes: impl FnMut(&mut Vec<(u32, i8)>),
) -> (Vec<u32>, Vec<u8>) {
    let mut offsets = Vec::with_capacity(range.len().div_ceil(BLOCK));
    let mut records = Vec::new();
    let mut body = Vec::new();
    let mut board_changes = Vec::new();
    for board in range {
        if board % BLOCK == 0 {
            offsets.push(u32::try_from(records.len()).expect("a chunk's records exceed 4 GiB"));
        }
        body.clear();
        board_changes.clear();
        changes(&mut board_changes);
        let mut list = board_changes.iter().copied().peekable();
        let first = list.next_if(|&(turn, _)| turn == 1).map_or(0, |(_, v)| v);
        body.push(first as u8);
        let (mut turn, mut value) = (1u32, first);
        for (at, new) in list {
            let dt = at - turn;
            let dv = i16::from(new) - i16::from(value);
            debug_assert!(dt >= 1 && dv != 0);
            let code = ((dt as i32 - 1) << 4) | (dv as i32 & 0xf);
            if (1..=16).contains(&dt) && (-8..=7).contains(&dv) && code != i32::from(ESCAPE) {
                body.push(code as u8);
            } else {
                let dt = u8::try_from(dt).expect("compact books cover at most 255 turns");
                body.extend_from_slice(&[ESCAPE, dt, dv as i8 as u8]);
            }
            (turn, value) = (at, new);
        }
        write_leb128(&mut records, body.len());
        records.extend_from_slice(&body);
    }
    (offsets, records)
}

fn write_leb128(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
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

/// An encoded level, validated.
#[derive(Clone, Copy)]
pub struct Level<'a> {
    boards: usize,
    offsets: &'a [u8],
    records: &'a [u8],
}

/// Walks one record's changes.
struct Changes<'a> {
    body: &'a [u8],
    at: usize,
    turn: u32,
    value: i8,
}

impl Iterator for Changes<'_> {
    /// (turn, value) of the next change.
    type Item = Result<(u32, i8), Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        let &code = self.body.get(self.at)?;
        let (dt, dv) = if code == ESCAPE {
            let Some(&[dt, dv]) = self.body.get(self.at + 1..self.at + 3) else {
                return Some(Err(Malformed(
                    "a change escape runs past its record".into(),
                )));
            };
            self.at += 3;
            (u32::from(dt), i16::from(dv as i8))
        } else {
            self.at += 1;
            (
                u32::from(code >> 4) + 1,
                i16::from(((code << 4) as i8) >> 4),
            )
        };
        let value = i16::from(self.value) + dv;
        if dt == 0 || dv == 0 || !(-127..=127).contains(&value) {
            return Some(Err(Malformed(format!(
                "change byte {code:#04x} is not a change"
            ))));
        }
        self.turn += dt;
        self.value = value as i8;
        Some(Ok((self.turn, self.value)))
    }
}

impl<'a> Level<'a> {
    /// Checks `section` as the encoding of `boards` boards whose values change
    /// at turns up to `last_change` and lie within `-bound..=bound`.
    pub fn parse(
        section: &'a [u8],
        boards: usize,
        last_change: u32,
        bound: i8,
    ) -> Result<Level<'a>, Malformed> {
        let check = |value: i8| {
            if (-bound..=bound).contains(&value) {
                Ok(())
            } else {
                Err(Malformed(format!(
                    "value {value} is outside -{bound}..={bound}"
                )))
            }
        };
        let blocks = boards.div_ceil(BLOCK);
        let index_len = (blocks + 1) * 4;
        if section.len() < index_len {
            return Err(Malformed(format!(
                "{} bytes cannot hold the offsets of {blocks} blocks",
                section.len()
            )));
        }
        let (offsets, records) = section.split_at(index_len);
        let level = Level {
            boards,
            offsets,
            records,
        };
        if level.offset(0) != 0 || level.offset(blocks) != records.len() {
            return Err(Malformed("block offsets do not span the records".into()));
        }
        for block in 0..blocks {
            let mut at = level.offset(block);
            let in_block = BLOCK.min(boards - block * BLOCK);
            for _ in 0..in_block {
                let body = level.record(&mut at).ok_or_else(|| {
                    Malformed(format!("a record of block {block} runs past the section"))
                })?;
                if body.is_empty() {
                    return Err(Malformed(format!("an empty record in block {block}")));
                }
                check(body[0] as i8)?;
                let mut last = 1;
                for change in level.changes(body) {
                    let (turn, value) = change?;
                    check(value)?;
                    last = turn;
                }
                if last > last_change {
                    return Err(Malformed(format!(
                        "a value changes at turn {last}, after the level's last change {last_change}"
                    )));
                }
            }
            if at != level.offset(block + 1) {
                return Err(Malformed(format!(
                    "block {block} does not end where the next begins"
                )));
            }
        }
        Ok(level)
    }

    fn offset(&self, block: usize) -> usize {
        u32::from_le_bytes(self.offsets[block * 4..block * 4 + 4].try_into().unwrap()) as usize
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
        let mut at = 0;
        (0..self.boards).map(move |board| {
            if board % BLOCK == 0 {
                at = self.offset(board / BLOCK);
            }
            self.record(&mut at).expect("validated on open")
        })
    }

    fn changes(&self, body: &'a [u8]) -> Changes<'a> {
        Changes {
            body,
            at: 1,
            turn: 1,
            value: body[0] as i8,
        }
    }

    /// The value of board `rank` with `turns_left` turns left.
    pub fn value(&self, rank: usize, turns_left: u32) -> i8 {
        assert!(rank < self.boards);
        let mut at = self.offset(rank / BLOCK);
        for _ in 0..rank % BLOCK {
            self.record(&mut at).expect("validated on open");
        }
        let body = self.record(&mut at).expect("validated on open");
        let mut value = body[0] as i8;
        for change in self.changes(body) {
            let (turn, new) = change.expect("validated on open");
            if turn > turns_left {
                break;
            }
            value = new;
        }
        value
    }

    /// Every layer `1..=layers` of the level, layer-major.
    pub fn layers(&self, layers: u32) -> Vec<i8> {
        let boards = self.boards;
        let mut out = vec![0i8; boards * layers as usize];
        // Writes `value` for turns `from..until` (clipped to the layers asked for).
        let mut fill = |board: usize, from: u32, until: u32, value: i8| {
            for turn in from..until.min(layers + 1) {
                out[(turn as usize - 1) * boards + board] = value;
            }
        };
        for (board, body) in self.bodies().enumerate() {
            let (mut from, mut value) = (1u32, body[0] as i8);
            for change in self.changes(body) {
                let (turn, new) = change.expect("validated on open");
                fill(board, from, turn, value);
                (from, value) = (turn, new);
            }
            fill(board, from, layers + 1, value);
        }
        out
    }

    /// Calls `f(board, turn, value)` for every change, board by board, turns
    /// ascending; a value other than 0 with 1 turn left counts as a change at
    /// turn 1.
    pub fn for_each_change(&self, mut f: impl FnMut(usize, u32, i8)) {
        for (board, body) in self.bodies().enumerate() {
            if body[0] != 0 {
                f(board, 1, body[0] as i8);
            }
            for change in self.changes(body) {
                let (turn, value) = change.expect("validated on open");
                f(board, turn, value);
            }
        }
    }

    /// Each board's number of changes after turn 1 and its final value.
    pub fn summaries(&self) -> impl Iterator<Item = (u32, i8)> + '_ {
        self.bodies().map(|body| {
            let (mut changes, mut value) = (0, body[0] as i8);
            for change in self.changes(body) {
                value = change.expect("validated on open").1;
                changes += 1;
            }
            (changes, value)
        })
    }

    /// A level already validated by [`Level::parse`] (from the same bytes):
    /// no checks repeated. Malformed bytes could only make lookups panic.
    pub fn trusted(section: &'a [u8], boards: usize) -> Level<'a> {
        let (offsets, records) = section.split_at((boards.div_ceil(BLOCK) + 1) * 4);
        Level {
            boards,
            offsets,
            records,
        }
    }
}
