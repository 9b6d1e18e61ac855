//! Bear-off books: a generated table in the crate's container (game tag `BOFF`).
//!
//! Parameters (all `u64`): the most checkers per side `C`, whether cube
//! values are stored (0 or 1), the slot count `N` of the full universe of `C`
//! checkers (padding included, see [`Universe`]), the value encoding (1 =
//! 16-bit fixed point) and the values per pair `K` (1 cubeless, 4 cubeful).
//! One section holds `N * N * K` little-endian `u16`s in the generator's
//! layout ([`table_index`]).
//!
//! **Encoding.** A probability `p` is stored as `round(p * 65535)`, an equity
//! `e` in `[-1, 1]` as `round((e + 1) / 2 * 65535)` (gnubg's 16-bit scale).
//! Decoded values are within 0.5/65535 = 7.7e-6 of the generator's for
//! probabilities and 1/65535 = 1.6e-5 for equities; the generator's own
//! values are within 1.1e-8 (see [`super::solve`]). The full 15-checker
//! cubeless book is 5.97 GB against 11.9 GB for `f32` (54,632 padded slots
//! squared, 2 bytes a value against 4).

use super::dice::{plays, Play, Roll};
use super::side::{Side, MAX_CHECKERS};
use super::solve::{cubeful, table_index, ONE};
use super::universe::{Universe, LANES};
use crate::book::{self, BookError, Container, SectionData};
use std::fmt;
use std::path::{Path, PathBuf};

/// Game tag of bear-off books.
pub const GAME_TAG: [u8; 4] = *b"BOFF";
/// The value encoding this build writes and reads.
const ENCODING_U16: u64 = 1;
/// Largest 16-bit code.
const SCALE: f64 = 65535.0;

/// A 16-bit code for a probability in `[0, 1]`.
pub fn encode_probability(p: f64) -> u16 {
    // Rounds half up; `as` truncates the non-negative sum (no libm call).
    (p.clamp(0.0, 1.0) * SCALE + 0.5) as u16
}

/// A 16-bit code for an equity in `[-1, 1]`.
pub fn encode_equity(e: f64) -> u16 {
    encode_probability((e + 1.0) / 2.0)
}

/// The 16-bit code of a cubeless fixed-point value, `round(v * 65535 / ONE)`
/// (`ONE / 65535 = 65537` exactly).
pub fn encode_fixed(v: u32) -> u16 {
    ((u64::from(v) + 32768) / 65537) as u16
}

/// A probability from its code.
pub fn decode_probability(code: u16) -> f64 {
    f64::from(code) / SCALE
}

/// An equity from its code.
pub fn decode_equity(code: u16) -> f64 {
    2.0 * f64::from(code) / SCALE - 1.0
}

/// The cubeful equities of a pair: the mover's equity when not doubling now,
/// with the cube owned by the mover, centred, and owned by the opponent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubeEquities {
    pub owned: f64,
    pub centred: f64,
    pub opponent_owns: f64,
}

/// What the mover should do with the cube, and the opponent's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubeAction {
    NoDouble,
    DoubleTake,
    DoublePass,
}

impl CubeEquities {
    /// The equity of doubling: the opponent takes (twice the opponent-owns
    /// equity) or passes (1), whichever is worse for the mover.
    pub fn double(&self) -> f64 {
        (2.0 * self.opponent_owns).min(1.0)
    }

    /// Whether the opponent should pass a double (taking loses more).
    pub fn pass(&self) -> bool {
        2.0 * self.opponent_owns > 1.0
    }

    fn action(&self, no_double: f64) -> CubeAction {
        match (self.double() > no_double, self.pass()) {
            (false, _) => CubeAction::NoDouble,
            (true, false) => CubeAction::DoubleTake,
            (true, true) => CubeAction::DoublePass,
        }
    }

    /// The action with the cube in the centre.
    pub fn centred_action(&self) -> CubeAction {
        self.action(self.centred)
    }

    /// The action with the cube owned by the mover (a redouble).
    pub fn owned_action(&self) -> CubeAction {
        self.action(self.owned)
    }

    /// The equities with correct cube action: (owned, centred, opponent owns).
    pub fn with_cube_action(&self) -> (f64, f64, f64) {
        let double = self.double();
        (
            self.owned.max(double),
            self.centred.max(double),
            self.opponent_owns,
        )
    }
}

/// One pair's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    /// P(the player to move wins).
    pub win: f64,
    /// The cubeful equities, when known.
    pub cube: Option<CubeEquities>,
}

/// Why a lookup failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// A side has more checkers than the book covers.
    NotCovered {
        side: Side,
        checkers: usize,
        max: usize,
    },
    /// An on-demand evaluation met a pair its game cannot reach.
    NotReachable { mover: Side, opponent: Side },
    /// Plays asked for where a side has no checker left: the game is over.
    GameOver { mover: Side, opponent: Side },
    /// A book opened with [`BearoffBook::open_for_lookups`]: bytes a lookup
    /// read failed their checksum ([`BearoffBook::open`] finds it on
    /// opening).
    Corrupt { path: PathBuf, reason: String },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NotCovered { side, checkers, max } => write!(
                f,
                "side \"{side}\" has {checkers} checkers; the book covers at most {max} per side"
            ),
            ProbeError::NotReachable { mover, opponent } => write!(
                f,
                "\"{mover}\" to move against \"{opponent}\" is not reachable from the evaluated position"
            ),
            ProbeError::GameOver { mover, opponent } => write!(
                f,
                "\"{mover}\" to move against \"{opponent}\": a side has no checker left, so the game is over and there is no play"
            ),
            ProbeError::Corrupt { path, reason } => {
                write!(f, "{} is corrupt: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for ProbeError {}

/// Where values come from: a book, or an on-demand evaluation.
pub trait Lookup {
    /// The values of `mover` to play against `opponent`. A pair where a
    /// side has no checker left is a finished game, with the values of its
    /// result: where the mover has borne off every checker (the empty pair
    /// too), P(win) 1 and equities +1; else, the opponent having done so,
    /// 0 and -1. A book opened for lookups reports bytes that fail their
    /// checksum as [`ProbeError::Corrupt`].
    fn entry(&self, mover: &Side, opponent: &Side) -> Result<Entry, ProbeError>;
}

/// A legal play with the mover's values after it.
#[derive(Clone, Debug)]
pub struct RankedPlay {
    pub play: Play,
    /// P(mover wins) after the play.
    pub win: f64,
    /// The mover's cubeful equities after the play, as (owned, centred,
    /// opponent owns), each for the cube state the mover had before rolling.
    pub cube: Option<(f64, f64, f64)>,
}

/// Every legal play of `roll` by `mover` against `opponent`, best first: by
/// centred cubeful equity when cube values are known (ties by P(win)), else
/// by P(win). [`ProbeError::GameOver`] where either side has no checker
/// left; the lookup's error for the position itself where it has none
/// (a side the book does not cover, whatever the roll).
///
/// ```
/// use endbook::games::bearoff::{generate, ranked_plays, BearoffBook, GenerateOptions, Roll, Side};
///
/// // A cubeful 3-checker book, written into memory and opened as a file is.
/// let bytes = generate(GenerateOptions::new(3, true), |_| {}).into_book_bytes();
/// let book = BearoffBook::from_bytes(bytes).unwrap();
/// let (mover, opponent): (Side, Side) = ("0 1 0 0 0 1".parse().unwrap(), "0 0 0 0 0 2".parse().unwrap());
/// // 6-2 bears both checkers off: that play wins at once, and comes first.
/// let plays = ranked_plays(&book, &mover, &opponent, Roll::new(6, 2).unwrap()).unwrap();
/// assert_eq!(plays[0].play.notation(), "6/off 2/off");
/// assert_eq!((plays[0].win, plays[0].cube), (1.0, Some((1.0, 1.0, 1.0))));
/// assert!(plays[1..].iter().all(|r| r.win < 1.0));
/// ```
pub fn ranked_plays(
    lookup: &impl Lookup,
    mover: &Side,
    opponent: &Side,
    roll: Roll,
) -> Result<Vec<RankedPlay>, ProbeError> {
    if mover.is_empty() || opponent.is_empty() {
        return Err(ProbeError::GameOver {
            mover: *mover,
            opponent: *opponent,
        });
    }
    // (Else a side past the book's reach was named only by a roll that
    // leaves a side it does not cover, one the caller never gave.)
    lookup.entry(mover, opponent)?;
    let mut ranked = Vec::new();
    for play in plays(mover, roll) {
        let (win, cube) = if play.result.is_empty() {
            (1.0, Some((1.0, 1.0, 1.0)))
        } else {
            let next = lookup.entry(opponent, &play.result)?;
            // The opponent moves next with the cube states swapped.
            let cube = next.cube.map(|c| {
                let (own, centred, _) = c.with_cube_action();
                (-c.opponent_owns, -centred, -own)
            });
            (1.0 - next.win, cube)
        };
        ranked.push(RankedPlay { play, win, cube });
    }
    let known_cube = ranked.iter().all(|r| r.cube.is_some());
    // Best first: by the centred cube's equity where the book has it, plays
    // equal there (all -1 where the opponent's double would be passed
    // whatever the play) by the probability of winning.
    ranked.sort_by(|a, b| {
        let centred = |r: &RankedPlay| match (known_cube, r.cube) {
            (true, Some((_, centred, _))) => centred,
            _ => r.win,
        };
        centred(b)
            .total_cmp(&centred(a))
            .then(b.win.total_cmp(&a.win))
    });
    if !known_cube {
        ranked.iter_mut().for_each(|r| r.cube = None);
    }
    Ok(ranked)
}

/// An open bear-off book.
#[derive(Debug)]
pub struct BearoffBook {
    container: Container,
    /// Whether every byte was checked on opening; if not, each lookup
    /// checks the bytes it reads ([`BearoffBook::open_for_lookups`]).
    checked: bool,
    checkers: usize,
    cube: bool,
    layout: Universe,
}

impl BearoffBook {
    /// Maps and validates the book at `path`, every byte of it against its
    /// checksums.
    pub fn open(path: impl AsRef<Path>) -> Result<BearoffBook, BookError> {
        BearoffBook::validate(Container::open(path.as_ref(), GAME_TAG)?, true)
    }

    /// Opens the book at `path` for a few lookups: its header and chunk
    /// tables are checked, its bytes against their checksums only as
    /// lookups read them (a chunk of 64 KiB at a time; a table under 2 MiB,
    /// unchunked, whole at the first lookup; [`Lookup::entry`] reports one
    /// that fails as [`ProbeError::Corrupt`]). Checking every byte is all
    /// that opening a large book takes: the 15-checker cubeless book is 5.9
    /// GB.
    ///
    /// `verify` needs every byte: on a book opened this way it panics.
    pub fn open_for_lookups(path: impl AsRef<Path>) -> Result<BearoffBook, BookError> {
        BearoffBook::validate(Container::open_for_lookups(path.as_ref(), GAME_TAG)?, false)
    }

    /// Validates a book held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<BearoffBook, BookError> {
        BearoffBook::validate(Container::from_bytes("<memory>", bytes, GAME_TAG)?, true)
    }

    fn validate(container: Container, checked: bool) -> Result<BearoffBook, BookError> {
        let params = container.params();
        if params.len() != 5 {
            return Err(container.corrupt(format!(
                "a bear-off book has 5 parameters, this one {}",
                params.len()
            )));
        }
        let (checkers, cube, slots, encoding, values) =
            (params[0], params[1], params[2], params[3], params[4]);
        if checkers == 0 || checkers > MAX_CHECKERS as u64 {
            return Err(container.corrupt(format!("{checkers} checkers per side")));
        }
        if encoding != ENCODING_U16 {
            return Err(container.corrupt(format!("unknown value encoding {encoding}")));
        }
        let expected_values = match cube {
            0 => 1,
            1 => 4,
            _ => return Err(container.corrupt(format!("cube flag {cube}"))),
        };
        if values != expected_values {
            return Err(container.corrupt(format!(
                "{values} values per pair (expected {expected_values})"
            )));
        }
        let layout = Universe::full_layout(checkers as usize);
        if slots != layout.slots() as u64 {
            return Err(container.corrupt(format!(
                "{slots} slots, {checkers} checkers need {}",
                layout.slots()
            )));
        }
        let expected_len = slots * slots * values * 2;
        if container.sections().len() != 1 || container.sections()[0].len != expected_len {
            return Err(container.corrupt(format!(
                "a {checkers}-checker book holds one section of {expected_len} bytes"
            )));
        }
        // The writer's: nothing else is defined.
        if container.sections()[0].meta != [0, 0] {
            return Err(container.corrupt("its section's two game fields are not zero".into()));
        }
        Ok(BearoffBook {
            container,
            checked,
            checkers: checkers as usize,
            cube: cube == 1,
            layout,
        })
    }

    /// Most checkers per side.
    pub fn checkers(&self) -> usize {
        self.checkers
    }

    /// Whether the book holds cubeful equities.
    pub fn has_cube(&self) -> bool {
        self.cube
    }

    /// Where the book was read from.
    pub fn path(&self) -> &Path {
        self.container.path()
    }

    /// File size in bytes.
    pub fn file_len(&self) -> u64 {
        self.container.file_len()
    }

    /// Positions per side (without padding).
    pub fn positions(&self) -> usize {
        self.layout.positions()
    }

    fn slot(&self, side: &Side) -> Result<usize, ProbeError> {
        self.layout.slot(side).ok_or(ProbeError::NotCovered {
            side: *side,
            checkers: side.checkers(),
            max: self.checkers,
        })
    }

    /// The table's 16-bit codes, read in the generator's layout, whole.
    ///
    /// # Panics
    ///
    /// On a book opened with [`BearoffBook::open_for_lookups`].
    pub(super) fn codes(&self) -> Codes<'_> {
        assert!(
            self.checked,
            "a book opened with BearoffBook::open_for_lookups is for lookups: open it with BearoffBook::open to read it whole"
        );
        self.codes_unchecked()
    }

    /// The codes, whether checked or not.
    fn codes_unchecked(&self) -> Codes<'_> {
        Codes {
            bytes: self.container.section(0),
            slots: self.layout.slots(),
            values: if self.cube { 4 } else { 1 },
        }
    }

    /// The full universe's slots the table is laid out in.
    pub(super) fn layout(&self) -> &Universe {
        &self.layout
    }

    /// Writes a cubeless table (from [`super::solve::solve`] over
    /// `Universe::full(checkers)`) as a book, narrowing it in place to 16 bits.
    ///
    /// # Panics
    ///
    /// Where `checkers` is above [`super::MAX_CHECKERS`] or `table` is not
    /// the size of that universe's table.
    pub fn write_cubeless(
        path: impl AsRef<Path>,
        checkers: usize,
        table: Vec<u32>,
    ) -> Result<(), BookError> {
        let (slots, bytes) = cubeless_codes(checkers, table);
        write_book(path.as_ref(), checkers, false, slots, &bytes)
    }

    /// Writes a cubeful table as a book, narrowing it in place to 16 bits.
    ///
    /// # Panics
    ///
    /// Where `checkers` is above [`super::MAX_CHECKERS`] or `table` is not
    /// the size of that universe's table.
    pub fn write_cubeful(
        path: impl AsRef<Path>,
        checkers: usize,
        table: Vec<f64>,
    ) -> Result<(), BookError> {
        let (slots, bytes) = cubeful_codes(checkers, table);
        write_book(path.as_ref(), checkers, true, slots, &bytes)
    }

    /// A cubeless book in memory.
    ///
    /// # Panics
    ///
    /// Where `checkers` is above [`super::MAX_CHECKERS`] or `table` is not
    /// the size of that universe's table.
    pub fn cubeless_bytes(checkers: usize, table: Vec<u32>) -> Vec<u8> {
        let (slots, bytes) = cubeless_codes(checkers, table);
        book::to_bytes(
            GAME_TAG,
            &params(checkers, false, slots),
            &[section(&bytes)],
        )
    }

    /// A cubeful book in memory.
    ///
    /// # Panics
    ///
    /// Where `checkers` is above [`super::MAX_CHECKERS`] or `table` is not
    /// the size of that universe's table.
    pub fn cubeful_bytes(checkers: usize, table: Vec<f64>) -> Vec<u8> {
        let (slots, bytes) = cubeful_codes(checkers, table);
        book::to_bytes(GAME_TAG, &params(checkers, true, slots), &[section(&bytes)])
    }
}

/// A book's table of little-endian 16-bit codes in the generator's layout
/// ([`table_index`]): what lookups and `verify` read.
#[derive(Clone, Copy)]
pub(super) struct Codes<'a> {
    /// The table's bytes.
    pub(super) bytes: &'a [u8],
    /// Slots per side, padding included.
    pub(super) slots: usize,
    /// Values per pair: 1, or 4 with the cube.
    pub(super) values: usize,
}

impl Codes<'_> {
    /// The code of value `k` of (`mover`, `opponent`).
    #[inline]
    pub(super) fn code(&self, mover: usize, opponent: usize, k: usize) -> u16 {
        let at = self.at(mover, opponent, k);
        u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// Where that code's two bytes start.
    #[inline]
    fn at(&self, mover: usize, opponent: usize, k: usize) -> usize {
        2 * table_index(self.slots, self.values, mover, opponent, k)
    }

    /// The codes of value `k` of the 8 movers of block `block` against
    /// `opponent`: one vector of the table.
    #[inline]
    pub(super) fn lanes(&self, block: usize, opponent: usize, k: usize) -> [u16; LANES] {
        let at = 2 * table_index(self.slots, self.values, block * LANES, opponent, k);
        let bytes: &[u8; 2 * LANES] = self.bytes[at..at + 2 * LANES].try_into().unwrap();
        std::array::from_fn(|lane| u16::from_le_bytes([bytes[2 * lane], bytes[2 * lane + 1]]))
    }
}

/// The value of code `code` of value `k` of a pair: P(win) as a
/// probability, the equities as equities ([`encode_value`] undone).
pub(super) fn decode_value(k: usize, code: u16) -> f64 {
    match k {
        cubeful::WIN => decode_probability(code),
        _ => decode_equity(code),
    }
}

/// The code of value `k` of a cubeful pair.
fn encode_value(k: usize, value: f64) -> u16 {
    match k {
        cubeful::WIN => encode_probability(value),
        _ => encode_equity(value),
    }
}

/// A cubeless table's 16-bit codes, as a book stores them (in place), and
/// its slot count: what the writers write and `verify` compares.
pub(super) fn cubeless_codes(checkers: usize, table: Vec<u32>) -> (usize, Narrowed<u32>) {
    narrow(checkers, 1, table, |v, _| encode_fixed(v))
}

/// [`cubeless_codes`] for a cubeful table: P(win) as a probability, the
/// three equities as equities.
pub(super) fn cubeful_codes(checkers: usize, table: Vec<f64>) -> (usize, Narrowed<f64>) {
    narrow(checkers, 4, table, |value, k| encode_value(k, value))
}

/// Parameters in a bear-off book's header.
pub(super) const PARAMS: usize = 5;

fn params(checkers: usize, cube: bool, slots: usize) -> [u64; PARAMS] {
    let values = if cube { 4 } else { 1 };
    [
        checkers as u64,
        u64::from(cube),
        slots as u64,
        ENCODING_U16,
        values,
    ]
}

fn section(bytes: &[u8]) -> SectionData<'_> {
    SectionData {
        meta: [0, 0],
        bytes,
    }
}

fn write_book(
    path: &Path,
    checkers: usize,
    cube: bool,
    slots: usize,
    bytes: &[u8],
) -> Result<(), BookError> {
    book::write(
        path,
        GAME_TAG,
        &params(checkers, cube, slots),
        &[section(bytes)],
    )
}

/// Plain numbers whose every bit pattern is a value: a table of them may be
/// overwritten byte by byte.
pub(super) trait Plain: Copy {}
impl Plain for u32 {}
impl Plain for f64 {}

/// A table narrowed in place to little-endian `u16` codes, kept in its own
/// allocation (whose values are meaningless afterwards).
pub(super) struct Narrowed<T> {
    table: Vec<T>,
}

impl<T: Plain> std::ops::Deref for Narrowed<T> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the table's allocation holds `size_of::<T>() * len >= 2 * len`
        // initialised bytes, and `u8` has no alignment or validity requirements.
        unsafe {
            std::slice::from_raw_parts(self.table.as_ptr().cast::<u8>(), 2 * self.table.len())
        }
    }
}

/// Replaces each value of `table` (`values` per pair, in the generator's
/// layout) by its 16-bit code, in place: code `i` takes bytes `2i..2i + 2`,
/// which lie at or before value `i`, so every value is read before its bytes
/// are overwritten. Returns the slot count and the codes.
fn narrow<T: Plain>(
    checkers: usize,
    values: usize,
    mut table: Vec<T>,
    encode: impl Fn(T, usize) -> u16,
) -> (usize, Narrowed<T>) {
    assert!(std::mem::size_of::<T>() >= 2);
    let slots = Universe::full_layout(checkers).slots();
    assert_eq!(
        table.len(),
        slots * slots * values,
        "a full table of {checkers} checkers"
    );
    let base = table.as_mut_ptr();
    for i in 0..table.len() {
        let k = (i / super::universe::LANES) % values;
        // SAFETY: `i < len`; value `i` is intact, since the codes written so far
        // cover bytes `0..2i` and value `i` starts at byte `size_of::<T>() * i >= 2i`.
        let value = unsafe { base.add(i).read() };
        let code = encode(value, k).to_le_bytes();
        // SAFETY: bytes `2i..2i + 2` lie inside the allocation, in values already
        // read; any bytes form a valid `T` (`Plain`).
        unsafe {
            base.cast::<u8>()
                .add(2 * i)
                .copy_from_nonoverlapping(code.as_ptr(), 2)
        };
    }
    (slots, Narrowed { table })
}

impl Lookup for BearoffBook {
    fn entry(&self, mover: &Side, opponent: &Side) -> Result<Entry, ProbeError> {
        let (m, o) = (self.slot(mover)?, self.slot(opponent)?);
        let codes = self.codes_unchecked();
        let value = |k| {
            if !self.checked {
                let at = codes.at(m, o, k);
                self.container
                    .ensure(0, at..at + 2)
                    .map_err(|e| ProbeError::Corrupt {
                        path: self.path().to_owned(),
                        reason: e.read_failure(),
                    })?;
            }
            Ok(decode_value(k, codes.code(m, o, k)))
        };
        let win = value(cubeful::WIN)?;
        let cube = if self.cube {
            Some(CubeEquities {
                owned: value(cubeful::OWNED)?,
                centred: value(cubeful::CENTRED)?,
                opponent_owns: value(cubeful::OPPONENT_OWNS)?,
            })
        } else {
            None
        };
        Ok(Entry { win, cube })
    }
}

/// The value `P(win)` of a cubeless fixed-point table entry.
pub fn fixed_to_probability(v: u32) -> f64 {
    f64::from(v) / f64::from(ONE)
}
