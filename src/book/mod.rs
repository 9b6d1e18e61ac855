//! The book container: a versioned binary file of checksummed sections,
//! memory-mapped and fully validated on open, or checked piece by piece as
//! lookups read it.
//!
//! Every game's book is one container. Layout (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ENDBOOK\0` |
//! | 8 | 4 | container format version: 2 ([`FORMAT_VERSION`]) where a section is checked in chunks, else 1 |
//! | 12 | 4 | game tag, four ASCII bytes (each game's in [`crate::games::GAMES`]: `OWAR` for Oware) |
//! | 16 | 4 | `P`, number of game parameters (at most [`MAX_PARAMS`]) |
//! | 20 | 4 | `S`, number of sections (at most [`MAX_SECTIONS`]) |
//! | 24 | 8·P | game parameters, `u64` each |
//! | … | 40·S | section table: offset `u64`, length `u64`, two game-defined `u64`s, CRC-32 `u32`, chunk shift `u32` (0 in version 1) |
//! | … | 4 | CRC-32 of every header byte before it |
//!
//! Sections follow the header, each at a multiple of [`SECTION_ALIGN`], in
//! table order, without overlap, with zero padding between; the file ends
//! with the last section. Writers leave room before the first section for a
//! table of [`TABLE_ROOM`] sections.
//!
//! A section's chunk shift says how its checksum is kept. Shift 0: the CRC-32
//! is that of the section's bytes. Shift `k` (from [`MIN_CHUNK_SHIFT`] to
//! [`MAX_CHUNK_SHIFT`]): the section's bytes are checked in chunks of `2^k`
//! bytes (the last one shorter), whose CRC-32s (`u32` each) follow the
//! section's last byte as its chunk table, and the CRC-32 in the section
//! table is that of the chunk table. Writers keep sections of at least
//! [`CHUNKED_FROM`] bytes in chunks of `2^`[`CHUNK_SHIFT`] bytes and smaller
//! ones whole, so a book with no section that large is written in version 1,
//! as before chunks.
//!
//! [`Container::open`] checks all of this and every checksum, so a
//! truncated, corrupt or foreign file is an error before any value is read.
//! [`Container::open_for_lookups`] checks the header, the padding and the
//! chunk tables at once, and each chunk (or unchunked section) only when a
//! reader first asks for bytes of it ([`Container::ensure`]): a lookup in a
//! book of tens of gigabytes reads a few chunks of it, not the whole file.
//! Its mapping is marked for random access, so that the kernel reads no
//! more around a page a read touches (Linux reads ahead up to the device's
//! setting, 8 MB on the project's machines, around each), and each piece is
//! asked for whole as it is checked.
//!
//! Files are written under a temporary name beside the target and renamed
//! into place once complete, so a crash never leaves a partial book behind:
//! whole by [`write()`], or section by section by an [`Appender`], whose file
//! is a complete book of the sections committed so far (a checkpoint).
//!
//! An open book maps its file into memory. Replacing the file (as these
//! writers do, by renaming a new one over it) leaves the open book reading
//! the old one; truncating or rewriting the file in place while it is open,
//! which no writer here does, is beyond what a reader can guard against (a
//! read past the new end is a `SIGBUS`).

pub mod compact;
mod direct;

use direct::DirectWriter;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// First eight bytes of every book.
pub const MAGIC: [u8; 8] = *b"ENDBOOK\0";
/// The newest version of the container layout, which this build writes
/// where a section is checked in chunks (books without one are written in
/// version 1; both are read).
pub const FORMAT_VERSION: u32 = 2;
/// Writers check sections of at least this many bytes in chunks.
pub const CHUNKED_FROM: u64 = 2 << 20;
/// An unchunked section of at least this many bytes (in a book written
/// before chunks, or while they began at 16 MiB) is checked on opening for
/// lookups, in parallel, rather than serially at its first lookup. Fixed,
/// whatever [`CHUNKED_FROM`] is: sections under it, in books written since
/// that threshold came down to 2 MiB, wait for their first lookup.
const WHOLE_ON_OPEN_FROM: u64 = 16 << 20;
/// Writers' chunks are `2^CHUNK_SHIFT` bytes (64 KiB): what a lookup's
/// first read of a chunk checks.
pub const CHUNK_SHIFT: u32 = 16;
/// The smallest chunk shift a book may have.
pub const MIN_CHUNK_SHIFT: u32 = 6;
/// The largest chunk shift a book may have.
pub const MAX_CHUNK_SHIFT: u32 = 40;
/// Most game parameters a header may have.
pub const MAX_PARAMS: u32 = 64;
/// Most sections a header may have.
pub const MAX_SECTIONS: u32 = 4096;
/// Sections start at multiples of this many bytes (a cache line).
pub const SECTION_ALIGN: u64 = 64;

const FIXED_HEADER: usize = 24;
const SECTION_ENTRY: usize = 40;

/// One section's table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionInfo {
    /// Byte offset in the file.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// Two numbers whose meaning the game defines.
    pub meta: [u64; 2],
    /// CRC-32 (IEEE) of the section's bytes, or with chunks of its chunk
    /// table.
    pub crc32: u32,
    /// 0, or the section's bytes are checked in chunks of `2^chunk_shift`
    /// bytes (see the [module docs](self)).
    pub chunk_shift: u32,
}

impl SectionInfo {
    /// The section's chunks (0 where it is checked whole).
    pub fn chunks(&self) -> u64 {
        match self.chunk_shift {
            0 => 0,
            shift => self.len.div_ceil(1 << shift),
        }
    }

    /// The pieces its checksums check one by one: its chunks, or 1 where it
    /// is checked whole.
    fn pieces(&self) -> u64 {
        match self.chunk_shift {
            0 => 1,
            _ => self.chunks(),
        }
    }

    /// Bytes of its chunk table, after its last byte.
    fn table_len(&self) -> u64 {
        4 * self.chunks()
    }

    /// Where the section ends, its chunk table included.
    fn end(&self) -> u64 {
        self.offset + self.len + self.table_len()
    }
}

/// How writers check sections: those of at least `from` bytes in chunks of
/// `2^shift` bytes, smaller ones whole.
#[derive(Clone, Copy, Debug)]
struct Chunking {
    shift: u32,
    from: u64,
}

impl Chunking {
    /// Books' chunking ([`CHUNK_SHIFT`], [`CHUNKED_FROM`]).
    const BOOKS: Chunking = Chunking {
        shift: CHUNK_SHIFT,
        from: CHUNKED_FROM,
    };

    /// The chunk shift of a section of `len` bytes (0: checked whole).
    fn shift_for(self, len: u64) -> u32 {
        if len >= self.from {
            self.shift
        } else {
            0
        }
    }
}

/// The chunk table of `bytes` in chunks of `2^shift` bytes, and its CRC-32.
fn chunk_table(bytes: &[u8], shift: u32) -> (Vec<u8>, u32) {
    let crcs: Vec<u32> = bytes
        .par_chunks(1 << shift)
        .with_min_len(16)
        .map(crc32fast::hash)
        .collect();
    table_of(crcs)
}

/// The chunk table of chunks whose CRC-32s are `crcs`, in order, and its
/// own CRC-32.
fn table_of(crcs: impl IntoIterator<Item = u32>) -> (Vec<u8>, u32) {
    let table: Vec<u8> = crcs.into_iter().flat_map(u32::to_le_bytes).collect();
    let crc = crc32fast::hash(&table);
    (table, crc)
}

/// Why a book could not be opened or written.
#[derive(Debug)]
pub enum BookError {
    /// Reading or writing the file failed.
    Io { path: PathBuf, source: io::Error },
    /// The file does not start with the book magic.
    NotABook { path: PathBuf },
    /// A container version this build does not read.
    UnsupportedVersion { path: PathBuf, version: u32 },
    /// A book of another game.
    WrongGame {
        path: PathBuf,
        expected: [u8; 4],
        found: [u8; 4],
    },
    /// The file is shorter than its header says.
    Truncated {
        path: PathBuf,
        needed: u64,
        len: u64,
    },
    /// A checksum does not match: the header or a section was altered.
    ChecksumMismatch { path: PathBuf, what: String },
    /// The header, a section or a record holds what no book of the kind
    /// holds (the reason says which and what).
    Corrupt { path: PathBuf, reason: String },
}

/// Checks that `path` is a plain file before it is opened: opening a named
/// pipe would wait for a writer, and a folder fails with a misleading error.
fn regular_file(path: &Path) -> Result<(), BookError> {
    if path.as_os_str() == "-" {
        return Err(BookError::Io {
            path: path.to_owned(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "a book is read from a named file (it is mapped into memory), not from standard input",
            ),
        });
    }
    let metadata = std::fs::metadata(path).map_err(|source| BookError::Io {
        path: path.to_owned(),
        source,
    })?;
    if metadata.is_file() {
        return Ok(());
    }
    Err(BookError::Io {
        path: path.to_owned(),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file (a folder, a pipe or a device)",
        ),
    })
}

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BookError::NotABook { path } => {
                write!(f, "{}: not an endbook book (bad magic)", path.display())
            }
            BookError::UnsupportedVersion { path, version } => write!(
                f,
                "{}: book format version {version} is not supported (this build reads versions 1 to {FORMAT_VERSION})",
                path.display()
            ),
            BookError::WrongGame {
                path,
                expected,
                found,
            } => write!(
                f,
                "{}: a book for game '{}', expected '{}'",
                path.display(),
                found.escape_ascii(),
                expected.escape_ascii()
            ),
            BookError::Truncated { path, needed, len } => write!(
                f,
                "{}: truncated: {len} bytes, where its header describes {needed}",
                path.display()
            ),
            BookError::ChecksumMismatch { path, what } => {
                write!(f, "{}: checksum mismatch in {what}: the file is corrupt", path.display())
            }
            BookError::Corrupt { path, reason } => {
                write!(f, "{}: corrupt book: {reason}", path.display())
            }
        }
    }
}

impl BookError {
    /// What a lookup reports of a check that failed as it read a book
    /// opened for lookups ([`Container::ensure`]): the checksum and where,
    /// without the file's name, which the lookup's own error gives (other
    /// errors, which `ensure` does not return, as they are).
    pub fn read_failure(&self) -> String {
        match self {
            BookError::ChecksumMismatch { what, .. } => format!("checksum mismatch in {what}"),
            other => other.to_string(),
        }
    }
}

impl std::error::Error for BookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BookError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The bytes of an open book.
enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// For a file read in scattered pieces: no readahead around the pages
    /// a read faults in (Linux reads ahead up to the device's setting, often
    /// megabytes, around each). Each piece is then asked for whole by
    /// [`Bytes::will_read`] before it is read.
    fn random_access(&self) {
        #[cfg(unix)]
        if let Bytes::Mapped(map) = self {
            // A hint: where the kernel refuses it, reads only take longer.
            let _ = map.advise(memmap2::Advice::Random);
        }
    }

    /// Readies the bytes of `range`, about to be read: a range of up to
    /// 1 MiB is asked for whole (a request per chunk of 64 KiB, started
    /// before the first read: one for the whole range would be cut at the
    /// device's readahead, 128 KB by default, and past it each page of a
    /// range marked random read alone), a longer one (a section checked
    /// whole, or every chunk of one) read ahead as usual again.
    fn will_read(&self, range: Range<usize>) {
        #[cfg(unix)]
        if let Bytes::Mapped(map) = self {
            use memmap2::Advice;
            // Hints, as above.
            if range.len() > 1 << 20 {
                let _ = map.advise_range(Advice::Normal, range.start, range.len());
            } else {
                for start in range.clone().step_by(1 << CHUNK_SHIFT) {
                    let len = (range.end - start).min(1 << CHUNK_SHIFT);
                    let _ = map.advise_range(Advice::WillNeed, start, len);
                }
            }
        }
        #[cfg(not(unix))]
        let _ = range;
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Owned(bytes) => bytes,
        }
    }
}

/// A validated container.
pub struct Container {
    path: PathBuf,
    bytes: Bytes,
    game: [u8; 4],
    params: Vec<u64>,
    sections: Vec<SectionInfo>,
    /// For a container opened for lookups, which pieces have passed their
    /// checksums; `None` where every one did on opening.
    unchecked: Option<Vec<Pieces>>,
}

/// The pieces of one section a lookup checks at once (its chunks, or the
/// whole section where it has none), a bit each, set once it passed.
struct Pieces {
    passed: Vec<AtomicU64>,
}

/// How much of its sections' bytes [`Container::validate`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Every checksum.
    All,
    /// The chunk tables only: the rest as lookups ask ([`Container::ensure`]).
    ChunkTables,
}

impl fmt::Debug for Container {
    /// A summary: the file, its game and parameters, its sections' count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Container")
            .field("path", &self.path)
            .field("game", &String::from_utf8_lossy(&self.game))
            .field("params", &self.params)
            .field("sections", &self.sections.len())
            .field("file_len", &self.file_len())
            .field("checked_whole", &self.unchecked.is_none())
            .finish_non_exhaustive()
    }
}

impl Container {
    /// Maps and validates the book at `path`, which must be of game `game`:
    /// its every byte, by its checksums.
    pub fn open(path: &Path, game: [u8; 4]) -> Result<Container, BookError> {
        Self::open_checking(path, game, Check::All)
    }

    /// Maps the book at `path`, of game `game`, for a few lookups: checks its
    /// header, padding and chunk tables, and each chunk (or section checked
    /// whole) only when [`Container::ensure`] first asks for bytes of it.
    /// A reader of such a container calls `ensure` before it reads bytes.
    pub fn open_for_lookups(path: &Path, game: [u8; 4]) -> Result<Container, BookError> {
        Self::open_checking(path, game, Check::ChunkTables)
    }

    fn open_checking(path: &Path, game: [u8; 4], check: Check) -> Result<Container, BookError> {
        let io_error = |source| BookError::Io {
            path: path.to_owned(),
            source,
        };
        regular_file(path)?;
        let file = File::open(path).map_err(io_error)?;
        let len = file.metadata().map_err(io_error)?.len();
        let bytes = if len == 0 {
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is only ever read, as plain bytes, and every byte
            // is validated below before use. As with any file mapping, another
            // process truncating or rewriting the file while it is open is
            // outside what this process can guard against; books are written
            // under a temporary name and renamed, never modified in place
            // after, but for an `Appender`'s unfinished file (a checkpoint):
            // it grows past its last commit, is cut back to it when
            // reopened, and has its header rewritten at each commit. A
            // reader of it maps no byte past the last commit it read, and
            // reads the header only once, on opening.
            Bytes::Mapped(unsafe { Mmap::map(&file) }.map_err(io_error)?)
        };
        Self::validate(path.to_owned(), bytes, game, check)
    }

    /// Validates a book held in memory; `name` is used in error messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>, game: [u8; 4]) -> Result<Container, BookError> {
        Self::validate(PathBuf::from(name), Bytes::Owned(bytes), game, Check::All)
    }

    fn validate(
        path: PathBuf,
        bytes: Bytes,
        game: [u8; 4],
        check: Check,
    ) -> Result<Container, BookError> {
        let len = bytes.len() as u64;
        let truncated = |needed: u64| BookError::Truncated {
            path: path.clone(),
            needed,
            len,
        };
        let corrupt = |reason: String| BookError::Corrupt {
            path: path.clone(),
            reason,
        };
        if check == Check::ChunkTables {
            // Lookups read a few scattered pieces: each is asked for whole
            // as it is checked (`failed_piece`), and nothing around it.
            bytes.random_access();
        }
        let Header {
            params,
            sections,
            len: header_len,
        } = Header::parse(&path, &bytes, game)?;
        let mut end = header_len as u64;
        for (i, section) in sections.iter().enumerate() {
            // Padding is covered by no checksum: it must be zero.
            let padding = bytes.get(end as usize..section.offset as usize);
            if padding.is_some_and(|p| p.iter().any(|&b| b != 0)) {
                return Err(corrupt(format!("non-zero padding before section {i}")));
            }
            end = section.end();
        }
        if len < end {
            return Err(truncated(end));
        }
        if len > end {
            return Err(corrupt(format!(
                "{} bytes after the last section",
                len - end
            )));
        }
        // Chunk tables first (a few bytes per chunk), then the sections.
        let tables = sections.iter().position(|section| {
            let (start, end) = (
                (section.offset + section.len) as usize,
                section.end() as usize,
            );
            bytes.will_read(start..end);
            section.chunk_shift != 0 && crc32fast::hash(&bytes[start..end]) != section.crc32
        });
        if let Some(i) = tables {
            return Err(BookError::ChecksumMismatch {
                path,
                what: format!("the chunk table of section {i}"),
            });
        }
        // Checked now: every section, or for lookups the large ones a book
        // written before chunks checks whole (each lookup's first read
        // would check it; in parallel here).
        let now = |section: &SectionInfo| {
            check == Check::All || (section.chunk_shift == 0 && section.len >= WHOLE_ON_OPEN_FROM)
        };
        let mismatch = sections
            .par_iter()
            .enumerate()
            .filter(|(_, section)| now(section))
            .find_map_first(|(i, section)| {
                Self::failed_piece(&bytes, section, 0..section.pieces())
                    .map(|what| format!("section {i}{what}"))
            });
        if let Some(what) = mismatch {
            return Err(BookError::ChecksumMismatch { path, what });
        }
        let unchecked = (check == Check::ChunkTables).then(|| {
            sections
                .iter()
                .map(|section| {
                    let passed = if now(section) { u64::MAX } else { 0 };
                    Pieces {
                        passed: (0..section.pieces().div_ceil(64))
                            .map(|_| AtomicU64::new(passed))
                            .collect(),
                    }
                })
                .collect()
        });
        Ok(Container {
            path,
            bytes,
            game,
            params,
            sections,
            unchecked,
        })
    }

    /// The first of pieces `pieces` of `section` (its chunks, or piece 0:
    /// the whole section where it has none) whose checksum fails, as words
    /// to follow the section's name (", bytes a..b", or nothing for the
    /// whole section); `None` if all pass. Chunks are checked in parallel.
    /// The bytes are asked for whole first ([`Bytes::will_read`]).
    fn failed_piece(bytes: &Bytes, section: &SectionInfo, pieces: Range<u64>) -> Option<String> {
        let offset = section.offset as usize;
        let data = &bytes[offset..offset + section.len as usize];
        let within = match section.chunk_shift {
            0 => 0..data.len(),
            shift => {
                let start = (pieces.start << shift) as usize;
                start.min(data.len())..((pieces.end << shift) as usize).min(data.len())
            }
        };
        bytes.will_read(offset + within.start..offset + within.end);
        if section.chunk_shift == 0 {
            return (crc32(data) != section.crc32).then(String::new);
        }
        let shift = section.chunk_shift;
        let table = &bytes[(section.offset + section.len) as usize..section.end() as usize];
        let chunk = |k: u64| {
            let start = (k << shift) as usize;
            start..(start + (1 << shift)).min(data.len())
        };
        let pieces = pieces.start as usize..pieces.end as usize;
        let failed = pieces.into_par_iter().with_min_len(16).find_first(|&k| {
            let stored = read_u32(table, 4 * k);
            crc32fast::hash(&data[chunk(k as u64)]) != stored
        })?;
        let Range { start, end } = chunk(failed as u64);
        Some(format!(", bytes {start}..{end}"))
    }

    /// Checks the checksums of every piece of every section not checked yet,
    /// in parallel: for a container opened for lookups whose lookups will
    /// reach most of it anyway.
    pub fn ensure_all(&self) -> Result<(), BookError> {
        let failed = (0..self.sections.len())
            .into_par_iter()
            .find_map_first(|i| self.ensure(i, 0..usize::MAX).err());
        failed.map_or(Ok(()), Err)
    }

    /// Checks the checksums of every piece of section `section` that holds
    /// bytes of `range` (a range within the section, cut at its end) and
    /// has not passed yet: a no-op for a container opened with
    /// [`Container::open`], and a few atomic loads for pieces that passed
    /// before.
    pub fn ensure(&self, section: usize, range: Range<usize>) -> Result<(), BookError> {
        let Some(unchecked) = &self.unchecked else {
            return Ok(());
        };
        let info = &self.sections[section];
        let end = range.end.min(info.len as usize);
        if range.start >= end {
            return Ok(());
        }
        let pieces = match info.chunk_shift {
            0 => 0..1,
            shift => (range.start >> shift) as u64..((end - 1) >> shift) as u64 + 1,
        };
        let passed = &unchecked[section].passed;
        let bit = |k: u64| (&passed[k as usize / 64], 1u64 << (k % 64));
        let pending = |k: &u64| {
            let (word, mask) = bit(*k);
            word.load(Ordering::Acquire) & mask == 0
        };
        // From the first piece not yet passed to the last, in parallel
        // (pieces between them that passed before pass again).
        let Some(first) = pieces.clone().find(pending) else {
            return Ok(());
        };
        let last = pieces.rev().find(pending).unwrap_or(first);
        if let Some(what) = Self::failed_piece(&self.bytes, info, first..last + 1) {
            return Err(BookError::ChecksumMismatch {
                path: self.path.clone(),
                what: format!("section {section}{what}"),
            });
        }
        for k in first..=last {
            let (word, mask) = bit(k);
            word.fetch_or(mask, Ordering::Release);
        }
        Ok(())
    }

    /// Where the book was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The game tag.
    pub fn game(&self) -> [u8; 4] {
        self.game
    }

    /// The game parameters.
    pub fn params(&self) -> &[u64] {
        &self.params
    }

    /// The section table.
    pub fn sections(&self) -> &[SectionInfo] {
        &self.sections
    }

    /// The bytes of section `i` (its chunk table not included). In a
    /// container opened with [`Container::open_for_lookups`], only those
    /// [`Container::ensure`] passed are checked.
    pub fn section(&self, i: usize) -> &[u8] {
        let section = &self.sections[i];
        &self.bytes[section.offset as usize..(section.offset + section.len) as usize]
    }

    /// Total file size in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// An error about this book's contents.
    pub fn corrupt(&self, reason: String) -> BookError {
        BookError::Corrupt {
            path: self.path.clone(),
            reason,
        }
    }
}

/// A parsed header: parameters and section table, checked against each
/// other and the container's rules, but not against the file's length or
/// sections.
struct Header {
    params: Vec<u64>,
    sections: Vec<SectionInfo>,
    /// Header bytes, checksum included.
    len: usize,
}

impl Header {
    /// Parses the header at the start of `bytes`, a book of game `game`.
    fn parse(path: &Path, bytes: &[u8], game: [u8; 4]) -> Result<Header, BookError> {
        let corrupt = |reason: String| BookError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            return Err(BookError::NotABook {
                path: path.to_owned(),
            });
        }
        if bytes.len() < FIXED_HEADER {
            return Err(BookError::Truncated {
                path: path.to_owned(),
                needed: FIXED_HEADER as u64,
                len: bytes.len() as u64,
            });
        }
        let version = read_u32(bytes, 8);
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(BookError::UnsupportedVersion {
                path: path.to_owned(),
                version,
            });
        }
        let found: [u8; 4] = bytes[12..16].try_into().unwrap();
        if found != game {
            return Err(BookError::WrongGame {
                path: path.to_owned(),
                expected: game,
                found,
            });
        }
        let param_count = read_u32(bytes, 16);
        let section_count = read_u32(bytes, 20);
        if param_count > MAX_PARAMS || section_count > MAX_SECTIONS {
            return Err(corrupt(format!(
                "{param_count} parameters and {section_count} sections exceed the limits"
            )));
        }
        let header_len = header_len(param_count as usize, section_count as usize);
        if bytes.len() < header_len {
            return Err(BookError::Truncated {
                path: path.to_owned(),
                needed: header_len as u64,
                len: bytes.len() as u64,
            });
        }
        let stored_crc = read_u32(bytes, header_len - 4);
        if crc32fast::hash(&bytes[..header_len - 4]) != stored_crc {
            return Err(BookError::ChecksumMismatch {
                path: path.to_owned(),
                what: "the header".into(),
            });
        }
        let params: Vec<u64> = (0..param_count as usize)
            .map(|i| read_u64(bytes, FIXED_HEADER + 8 * i))
            .collect();
        let table = FIXED_HEADER + 8 * param_count as usize;
        let mut sections = Vec::with_capacity(section_count as usize);
        let mut end = header_len as u64;
        for i in 0..section_count as usize {
            let entry = table + SECTION_ENTRY * i;
            let section = SectionInfo {
                offset: read_u64(bytes, entry),
                len: read_u64(bytes, entry + 8),
                meta: [read_u64(bytes, entry + 16), read_u64(bytes, entry + 24)],
                crc32: read_u32(bytes, entry + 32),
                chunk_shift: read_u32(bytes, entry + 36),
            };
            match (version, section.chunk_shift) {
                (_, 0) => {}
                (1, _) => {
                    return Err(corrupt(format!(
                        "section {i}: reserved field is not zero (a version 1 book has no chunks)"
                    )))
                }
                (_, shift) if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) => {
                    return Err(corrupt(format!(
                        "section {i}: chunk shift {shift} is outside \
                         {MIN_CHUNK_SHIFT}..={MAX_CHUNK_SHIFT}"
                    )))
                }
                _ => {}
            }
            if !section.offset.is_multiple_of(SECTION_ALIGN) || section.offset < end {
                return Err(corrupt(format!(
                    "section {i} starts at {} (must be aligned and after byte {end})",
                    section.offset
                )));
            }
            end = section
                .offset
                .checked_add(section.len)
                .and_then(|end| end.checked_add(section.table_len()))
                .ok_or_else(|| corrupt(format!("section {i} is longer than any file")))?;
            sections.push(section);
        }
        Ok(Header {
            params,
            sections,
            len: header_len,
        })
    }

    /// Where the last section ends, its chunk table included (the
    /// header's end if there is none).
    fn end(&self) -> u64 {
        self.sections
            .last()
            .map_or(self.len as u64, SectionInfo::end)
    }
}

/// One section to write.
pub struct SectionData<'a> {
    /// Two numbers whose meaning the game defines.
    pub meta: [u64; 2],
    /// The section's bytes.
    pub bytes: &'a [u8],
}

/// Writes a container to `path`: first to a temporary file beside it, then
/// renamed into place (through a symbolic link at `path`, and never over
/// anything but a regular file: see [`output_path`]).
pub fn write(
    path: &Path,
    game: [u8; 4],
    params: &[u64],
    sections: &[SectionData<'_>],
) -> Result<(), BookError> {
    let path = &output_path(path).map_err(|source| BookError::Io {
        path: path.to_owned(),
        source,
    })?;
    let temporary = temporary_path(path);
    let result = write_to(&temporary, game, params, sections)
        .and_then(|()| std::fs::rename(&temporary, path));
    result.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        BookError::Io {
            path: path.to_owned(),
            source,
        }
    })
}

/// Where a book written to `path` goes: `path`, or the file a symbolic link
/// there points to, so that the link stays and its target gets the book.
/// A book is written under a temporary name and renamed into place, which
/// would replace whatever is at `path`: anything there but a regular file
/// (a folder, a named pipe, a device) is refused with
/// [`io::ErrorKind::InvalidInput`], a link to nothing with
/// [`io::ErrorKind::NotFound`], a link that cannot be followed (a loop) with
/// the system's error.
pub fn output_path(path: &Path) -> io::Result<PathBuf> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => {
                    io::Error::new(io::ErrorKind::NotFound, "a symbolic link to nothing")
                }
                _ => e,
            })?
        }
        _ => path.to_owned(),
    };
    match std::fs::metadata(&target) {
        Ok(meta) if !meta.is_file() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a pipe or a device): a book is written under a \
             temporary name and renamed into place, which would replace it",
        )),
        _ => Ok(target),
    }
}

/// The temporary name a book is written under before being renamed to `path`.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".partial");
    path.with_file_name(name)
}

/// Serialises a container into memory (used by tests and small books).
pub fn to_bytes(game: [u8; 4], params: &[u64], sections: &[SectionData<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    write_container(&mut out, game, params, sections, Chunking::BOOKS)
        .expect("writing to memory cannot fail");
    out
}

fn write_to(
    path: &Path,
    game: [u8; 4],
    params: &[u64],
    sections: &[SectionData<'_>],
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    write_container(&mut out, game, params, sections, Chunking::BOOKS)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()
}

fn write_container(
    out: &mut impl Write,
    game: [u8; 4],
    params: &[u64],
    sections: &[SectionData<'_>],
    chunking: Chunking,
) -> io::Result<()> {
    assert!(params.len() <= MAX_PARAMS as usize && sections.len() <= MAX_SECTIONS as usize);
    let mut offset = first_section(params.len(), sections.len());
    let mut table = Vec::with_capacity(sections.len());
    let mut chunk_tables = Vec::with_capacity(sections.len());
    for section in sections {
        let mut info = placed(offset, section.bytes.len() as u64, chunking);
        let (chunk_table, crc32) = match info.chunk_shift {
            0 => (Vec::new(), crc32(section.bytes)),
            shift => chunk_table(section.bytes, shift),
        };
        (info.meta, info.crc32) = (section.meta, crc32);
        table.push(info);
        chunk_tables.push(chunk_table);
        offset = info.end();
    }
    let header = header_bytes(game, params, &table);
    out.write_all(&header)?;
    let mut position = header.len() as u64;
    for ((section, info), chunk_table) in sections.iter().zip(&table).zip(&chunk_tables) {
        out.write_all(&vec![0u8; (info.offset - position) as usize])?;
        out.write_all(section.bytes)?;
        out.write_all(chunk_table)?;
        position = info.end();
    }
    out.flush()
}

/// The length of the container [`write()`] and [`to_bytes`] make of
/// `params` parameters and sections of `section_lens` bytes: the header,
/// the room left for its table, and each section aligned, with its chunk
/// table where it has one.
pub fn container_len(params: usize, section_lens: &[u64]) -> u64 {
    if section_lens.is_empty() {
        return header_len(params, 0) as u64;
    }
    let mut end = first_section(params, section_lens.len());
    for &len in section_lens {
        end = placed(end, len, Chunking::BOOKS).end();
    }
    end
}

/// A section of `len` bytes as the writers place it after `end`: aligned,
/// chunked as `chunking` says (its meta and checksum left to fill).
fn placed(end: u64, len: u64, chunking: Chunking) -> SectionInfo {
    SectionInfo {
        offset: end.next_multiple_of(SECTION_ALIGN),
        len,
        meta: [0; 2],
        crc32: 0,
        chunk_shift: chunking.shift_for(len),
    }
}

/// Writers leave room for a table of at least this many sections before the
/// first section (zero padding), so that a book written section by section
/// with [`Appender`] can put its final header in front and comes out byte for
/// byte as [`write()`] writes it. Readers accept padding of any length, if
/// it is zero.
pub const TABLE_ROOM: usize = 32;

/// Where the first section of a container with `params` parameters and
/// `sections` sections starts.
fn first_section(params: usize, sections: usize) -> u64 {
    (header_len(params, sections.max(TABLE_ROOM)) as u64).next_multiple_of(SECTION_ALIGN)
}

/// The header describing `sections`, checksum included.
fn header_bytes(game: [u8; 4], params: &[u64], sections: &[SectionInfo]) -> Vec<u8> {
    let header_len = header_len(params.len(), sections.len());
    let mut header = Vec::with_capacity(header_len);
    header.extend_from_slice(&MAGIC);
    // Version 1 where no section has chunks: what books were before them.
    let version = if sections.iter().any(|section| section.chunk_shift != 0) {
        FORMAT_VERSION
    } else {
        1
    };
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&game);
    header.extend_from_slice(&(params.len() as u32).to_le_bytes());
    header.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for param in params {
        header.extend_from_slice(&param.to_le_bytes());
    }
    for section in sections {
        header.extend_from_slice(&section.offset.to_le_bytes());
        header.extend_from_slice(&section.len.to_le_bytes());
        header.extend_from_slice(&section.meta[0].to_le_bytes());
        header.extend_from_slice(&section.meta[1].to_le_bytes());
        header.extend_from_slice(&section.crc32.to_le_bytes());
        header.extend_from_slice(&section.chunk_shift.to_le_bytes());
    }
    header.extend_from_slice(&crc32fast::hash(&header).to_le_bytes());
    debug_assert_eq!(header.len(), header_len);
    header
}

/// A book written section by section, for long generations.
///
/// Each [`Appender::append`] adds a section at the end of the file; each
/// [`Appender::commit`] rewrites the header to cover every section appended
/// so far and syncs, so after a commit the file is a complete book of those
/// sections: a checkpoint. [`Appender::finish`] renames it into place. The
/// finished file is byte for byte what [`write()`] writes for the same
/// sections. At most [`TABLE_ROOM`] sections.
///
/// A crash between commits leaves sections past the committed header;
/// [`Appender::reopen`] cuts them off.
pub struct Appender {
    path: PathBuf,
    file: File,
    /// The same file opened for direct writes of section bytes, where the
    /// file system takes them (see [`direct`]).
    direct: Option<DirectWriter>,
    game: [u8; 4],
    params: usize,
    sections: Vec<SectionInfo>,
    /// Where the next section may start (before alignment).
    end: u64,
    /// The section being written, if one was begun and not yet ended.
    open: Option<OpenSection>,
    chunking: Chunking,
}

/// A section being written piece by piece ([`Appender::begin_section`]).
struct OpenSection {
    offset: u64,
    meta: [u64; 2],
    /// Bytes at the start of the section written last.
    table_len: u64,
    /// Bytes written after the table so far.
    written: u64,
    /// The checksum state of those bytes in each chunk of the appender's
    /// chunking (from the section's start: the chunks the table overlaps
    /// get its bytes at the end).
    chunks: Vec<crc32fast::Hasher>,
    /// Of those, how many the disk was told to take ([`start_writeback`]).
    flushing: u64,
}

/// Bytes of a section written before the disk is told to take them.
const WRITEBACK_STEP: u64 = 8 << 20;

/// Starts writing `len` bytes of `file` from `offset` to disk, without
/// waiting: the next sync then waits only for what is still in flight (a
/// section of hundreds of megabytes would otherwise all go to disk at its
/// commit, with the generation waiting). Only a hint: failures are left to
/// that sync to report.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range reads no memory of ours; a bad range or
    // descriptor makes it fail, not misbehave.
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

impl Appender {
    /// The game parameters of the book an appender committed at `path`,
    /// and the checks [`Appender::reopen`] makes before it cuts off what
    /// follows the last committed section, without cutting it: what a run
    /// resuming from it can be told before it starts.
    pub fn committed_params(path: &Path, game: [u8; 4]) -> Result<Vec<u64>, BookError> {
        regular_file(path)?;
        let mut file = File::open(path).map_err(|source| BookError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self::committed_header(path, &mut file, game)?.params)
    }

    /// The header of `file` (at `path`), laid out for appending, with every
    /// committed section within the file.
    fn committed_header(path: &Path, file: &mut File, game: [u8; 4]) -> Result<Header, BookError> {
        let io_error = |source| BookError::Io {
            path: path.to_owned(),
            source,
        };
        let most = header_len(MAX_PARAMS as usize, MAX_SECTIONS as usize) as u64;
        let mut start = Vec::new();
        file.take(most).read_to_end(&mut start).map_err(io_error)?;
        let header = Header::parse(path, &start, game)?;
        if header.sections.len() > TABLE_ROOM
            || header.sections.first().is_some_and(|first| {
                first.offset != first_section(header.params.len(), header.sections.len())
            })
        {
            return Err(BookError::Corrupt {
                path: path.to_owned(),
                reason: "not laid out for appending sections".into(),
            });
        }
        let (end, len) = (header.end(), file.metadata().map_err(io_error)?.len());
        if len < end {
            return Err(BookError::Truncated {
                path: path.to_owned(),
                needed: end,
                len,
            });
        }
        Ok(header)
    }

    /// Creates (or empties) the file at `path` for a book of game `game`
    /// with `params` parameters: a regular file, or the one a symbolic link
    /// there points to (anything else is refused, as by [`output_path`]: a
    /// named pipe would have held the call up until a reader came).
    pub fn create(path: &Path, game: [u8; 4], params: usize) -> Result<Appender, BookError> {
        assert!(params <= MAX_PARAMS as usize);
        let io_error = |source| BookError::Io {
            path: path.to_owned(),
            source,
        };
        let path = &output_path(path).map_err(io_error)?;
        let file = File::create(path).map_err(io_error)?;
        Ok(Appender {
            path: path.to_owned(),
            file,
            direct: DirectWriter::open(path),
            game,
            params,
            sections: Vec::new(),
            end: first_section(params, 0),
            open: None,
            chunking: Chunking::BOOKS,
        })
    }

    /// Opens a book written by an appender to append more sections: cuts off
    /// whatever follows its last committed section, and returns the
    /// appender with its committed parameters. The caller validates the
    /// sections (by opening the book) before trusting them.
    pub fn reopen(path: &Path, game: [u8; 4]) -> Result<(Appender, Vec<u64>), BookError> {
        let io_error = |source| BookError::Io {
            path: path.to_owned(),
            source,
        };
        regular_file(path)?;
        let mut file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_error)?;
        let header = Self::committed_header(path, &mut file, game)?;
        let end = header.end();
        file.set_len(end).map_err(io_error)?;
        let end = end.max(first_section(header.params.len(), 0));
        Ok((
            Appender {
                path: path.to_owned(),
                file,
                direct: DirectWriter::open(path),
                game,
                params: header.params.len(),
                sections: header.sections,
                end,
                open: None,
                chunking: Chunking::BOOKS,
            },
            header.params,
        ))
    }

    /// Sections appended so far.
    pub fn sections(&self) -> usize {
        self.sections.len()
    }

    /// Whether every section so far is checked as this build's writers
    /// check sections of its length (in chunks of [`CHUNK_SHIFT`] from
    /// [`CHUNKED_FROM`] bytes, whole below): not so in a book an earlier
    /// build began, whose sections a book written whole now would hold
    /// otherwise.
    pub fn laid_out_as_written(&self) -> bool {
        self.sections
            .iter()
            .all(|section| section.chunk_shift == self.chunking.shift_for(section.len))
    }

    /// Appends a section (not yet part of the book until the next commit).
    pub fn append(&mut self, section: SectionData<'_>) -> Result<(), BookError> {
        self.append_pieces(section.meta, &[section.bytes])
    }

    /// Appends a section given as pieces laid end to end (encoded in
    /// parallel, say): written one after the other, never joined in memory.
    pub fn append_pieces<P: AsRef<[u8]>>(
        &mut self,
        meta: [u64; 2],
        pieces: &[P],
    ) -> Result<(), BookError> {
        self.begin_section(meta, 0)?;
        for piece in pieces {
            self.write_section(piece.as_ref())?;
        }
        self.end_section(&[])
    }

    /// Begins a section whose first `table_len` bytes are only known once
    /// the rest is written (a table of where its parts start, say): the
    /// rest follows by [`Appender::write_section`] as it is made, the table
    /// by [`Appender::end_section`].
    pub fn begin_section(&mut self, meta: [u64; 2], table_len: usize) -> Result<(), BookError> {
        assert!(self.open.is_none(), "the section before was not ended");
        assert!(
            self.sections.len() < TABLE_ROOM,
            "an appender holds at most {TABLE_ROOM} sections"
        );
        let offset = self.end.next_multiple_of(SECTION_ALIGN);
        let table_len = table_len as u64;
        let start = |file: &mut File| {
            file.seek(SeekFrom::Start(self.end))?;
            file.write_all(&vec![0u8; (offset - self.end) as usize])?;
            file.seek(SeekFrom::Start(offset + table_len)).map(drop)
        };
        start(&mut self.file).map_err(|source| self.io_error(source))?;
        if let Some(direct) = &mut self.direct {
            direct.begin(offset + table_len);
        }
        self.open = Some(OpenSection {
            offset,
            meta,
            table_len,
            written: 0,
            chunks: Vec::new(),
            flushing: 0,
        });
        Ok(())
    }

    /// Writes the next bytes of the section begun, after its table.
    pub fn write_section(&mut self, bytes: &[u8]) -> Result<(), BookError> {
        let Appender {
            file,
            open,
            direct,
            chunking,
            ..
        } = self;
        let open = open.as_mut().expect("a section begun");
        // On the appender's thread, not shared with the thread pool.
        let (mut at, mut rest) = (open.table_len + open.written, bytes);
        while !rest.is_empty() {
            let chunk = at >> chunking.shift;
            let room = ((chunk + 1) << chunking.shift) - at;
            let (piece, after) = rest.split_at(rest.len().min(room as usize));
            if open.chunks.len() <= chunk as usize {
                open.chunks
                    .resize(chunk as usize + 1, crc32fast::Hasher::new());
            }
            open.chunks[chunk as usize].update(piece);
            (at, rest) = (at + piece.len() as u64, after);
        }
        open.written += bytes.len() as u64;
        if let Some(writer) = direct {
            let end = open.offset + open.table_len + open.written;
            let mut written = writer.write(bytes, file);
            if written.is_ok() && writer.refused() {
                // Refused after all: the rest the plain way, from where
                // these bytes end.
                written = writer.flush(file);
                if written.is_ok() {
                    *direct = None;
                    open.flushing = open.written;
                    written = file.seek(SeekFrom::Start(end)).map(drop);
                }
            }
            return written.map_err(|source| self.io_error(source));
        }
        if let Err(source) = file.write_all(bytes) {
            return Err(self.io_error(source));
        }
        if open.written - open.flushing >= WRITEBACK_STEP {
            let first = open.offset + open.table_len + open.flushing;
            start_writeback(file, first, open.written - open.flushing);
            open.flushing = open.written;
        }
        Ok(())
    }

    /// Ends the section begun with its table (of the length given then),
    /// written before the rest; the section is appended, not yet part of
    /// the book until the next commit.
    pub fn end_section(&mut self, table: &[u8]) -> Result<(), BookError> {
        let open = self.open.take().expect("a section begun");
        assert_eq!(table.len() as u64, open.table_len, "the table's length");
        if let Some(direct) = &mut self.direct {
            direct
                .flush(&self.file)
                .map_err(|source| self.io_error(source))?;
        }
        let len = open.table_len + open.written;
        let shift = self.chunking.shift;
        let mut chunks = open.chunks;
        chunks.resize(len.div_ceil(1 << shift) as usize, crc32fast::Hasher::new());
        // Each chunk's checksum: the table's bytes in it, then the rest's.
        let chunks = chunks.into_iter().zip(0u64..).map(|(rest, chunk)| {
            let start = (chunk << shift).min(open.table_len) as usize;
            let end = ((chunk + 1) << shift).min(open.table_len) as usize;
            let mut crc = crc32fast::Hasher::new();
            crc.update(&table[start..end]);
            crc.combine(&rest);
            crc
        });
        let chunk_shift = self.chunking.shift_for(len);
        let (chunk_table, crc32) = match chunk_shift {
            0 => {
                let mut whole = crc32fast::Hasher::new();
                chunks.for_each(|chunk| whole.combine(&chunk));
                (Vec::new(), whole.finalize())
            }
            _ => table_of(chunks.map(crc32fast::Hasher::finalize)),
        };
        let info = SectionInfo {
            offset: open.offset,
            len,
            meta: open.meta,
            crc32,
            chunk_shift,
        };
        let write = |file: &mut File| {
            file.seek(SeekFrom::Start(open.offset))?;
            file.write_all(table)?;
            file.seek(SeekFrom::Start(open.offset + len))?;
            file.write_all(&chunk_table)
        };
        write(&mut self.file).map_err(|source| self.io_error(source))?;
        self.sections.push(info);
        self.end = info.end();
        Ok(())
    }

    /// Writes the header over every section appended so far, with `params`,
    /// and syncs the file: from here on it opens as that book.
    pub fn commit(&mut self, params: &[u64]) -> Result<(), BookError> {
        assert!(self.open.is_none(), "a section begun and not ended");
        assert_eq!(
            params.len(),
            self.params,
            "parameter count fixed at creation"
        );
        let header = header_bytes(self.game, params, &self.sections);
        let end = self.end;
        let write = |file: &mut File| {
            file.sync_data()?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&header)?;
            // Where no byte was written past the header (empty sections
            // only), the room before the first section too.
            if file.metadata()?.len() < end {
                file.set_len(end)?;
            }
            file.sync_data()
        };
        write(&mut self.file).map_err(|source| self.io_error(source))
    }

    /// Gives the file another name, replacing a regular file there, or
    /// writing through a symbolic link there (never over anything else:
    /// see [`output_path`]); appending goes on.
    pub fn rename(&mut self, path: &Path) -> Result<(), BookError> {
        let io_error = |source| BookError::Io {
            path: path.to_owned(),
            source,
        };
        let target = output_path(path).map_err(io_error)?;
        std::fs::rename(&self.path, &target).map_err(io_error)?;
        self.path = target;
        Ok(())
    }

    /// Commits with `params` and renames the book to `path`.
    pub fn finish(mut self, params: &[u64], path: &Path) -> Result<(), BookError> {
        self.commit(params)?;
        self.rename(path)
    }

    fn io_error(&self, source: io::Error) -> BookError {
        BookError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// CRC-32 (IEEE) of `data`, in parallel pieces combined.
pub fn crc32(data: &[u8]) -> u32 {
    const PIECE: usize = 1 << 24;
    if data.len() <= PIECE {
        return crc32fast::hash(data);
    }
    data.par_chunks(PIECE)
        .map(|piece| {
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(piece);
            hasher
        })
        .collect::<Vec<_>>()
        .into_iter()
        .reduce(|mut all, piece| {
            all.combine(&piece);
            all
        })
        .map_or(0, |hasher| hasher.finalize())
}

fn header_len(params: usize, sections: usize) -> usize {
    FIXED_HEADER + 8 * params + SECTION_ENTRY * sections + 4
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// `bytes` opened for lookups: only the chunk tables checked.
    fn for_lookups(bytes: Vec<u8>) -> Result<Container, BookError> {
        Container::validate(
            "test".into(),
            Bytes::Owned(bytes),
            *b"TEST",
            Check::ChunkTables,
        )
    }

    /// Sections of these bytes, their meta zero.
    fn section_data<'a>(sections: &[&'a [u8]]) -> Vec<SectionData<'a>> {
        sections
            .iter()
            .map(|&bytes| SectionData {
                meta: [0, 0],
                bytes,
            })
            .collect()
    }

    fn written(sections: &[&[u8]], chunking: Chunking) -> Vec<u8> {
        let mut out = Vec::new();
        write_container(&mut out, *b"TEST", &[], &section_data(sections), chunking).unwrap();
        out
    }

    /// [`container_len`] is the length of the container written, whatever
    /// its sections: none, empty, small, chunked.
    #[test]
    fn container_len_is_the_length_written() {
        let lens: [&[usize]; 6] = [
            &[],
            &[0],
            &[1, 2, 3],
            &[CHUNKED_FROM as usize],
            &[7, CHUNKED_FROM as usize + 5, 0, 100],
            &[(3 << 20) + 1],
        ];
        for lens in lens {
            let data: Vec<Vec<u8>> = lens.iter().map(|&len| vec![1u8; len]).collect();
            let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let sections = section_data(&slices);
            for params in [0, 5] {
                let written = to_bytes(*b"TEST", &vec![9; params], &sections).len() as u64;
                let lens: Vec<u64> = lens.iter().map(|&len| len as u64).collect();
                assert_eq!(
                    container_len(params, &lens),
                    written,
                    "{lens:?}, {params} params"
                );
            }
        }
    }

    /// Empty ranges check nothing, empty chunked sections have no chunk to
    /// check, and a range ending exactly on a chunk boundary checks no chunk
    /// past it (chunks of 64 bytes, every section chunked).
    #[test]
    fn empty_ranges_and_sections_and_chunk_boundaries() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 5) as u8).collect();
        let every = Chunking { shift: 6, from: 0 };
        let bytes = written(&[&[], &data], every);
        let container = for_lookups(bytes.clone()).unwrap();
        assert_eq!(container.sections()[0].chunk_shift, 6);
        for range in [0..0, 0..usize::MAX, 5..5, usize::MAX..usize::MAX] {
            container.ensure(0, range).unwrap();
        }
        // A bit flipped in chunk 1 (bytes 64..128) of the second section.
        let mut damaged = bytes;
        damaged[container.sections()[1].offset as usize + 100] ^= 2;
        let container = for_lookups(damaged).unwrap();
        let fails = |range: Range<usize>| container.ensure(1, range).is_err();
        for ok in [0..64, 128..200, 100..100, 64..64, 128..usize::MAX] {
            assert!(!fails(ok.clone()), "{ok:?}");
        }
        for bad in [63..65, 64..65, 127..128, 0..usize::MAX] {
            assert!(fails(bad.clone()), "{bad:?}");
        }
    }

    /// Sections checked whole, as in a book written before chunks.
    const NEVER: Chunking = Chunking {
        shift: CHUNK_SHIFT,
        from: u64::MAX,
    };

    /// A book written before chunks (version 1) whose section is large
    /// checks it on opening for lookups, in parallel, as before chunks; one
    /// under 16 MiB (over [`CHUNKED_FROM`], as books held while chunks began
    /// at 16 MiB) waits for its first lookup.
    #[test]
    fn large_unchunked_sections_are_checked_on_opening_for_lookups() {
        for (len, on_opening) in [(WHOLE_ON_OPEN_FROM, true), (2 * CHUNKED_FROM, false)] {
            let data: Vec<u8> = (0..len as u32).map(|i| (i ^ (i >> 9)) as u8).collect();
            let mut bytes = written(&[&data], NEVER);
            assert_eq!(read_u32(&bytes, 8), 1, "version 1");
            let at = bytes.len() - 1000;
            bytes[at] ^= 1;
            match for_lookups(bytes) {
                Err(BookError::ChecksumMismatch { .. }) => assert!(on_opening, "{len} bytes"),
                Ok(container) => {
                    assert!(!on_opening, "{len} bytes");
                    assert!(container.ensure(0, 0..1).is_err());
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// A book whose sections are checked otherwise than this build's
    /// writers would check them (one an earlier build began) is not laid
    /// out as written; one they wrote is.
    #[test]
    fn appenders_tell_a_layout_of_another_build() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..CHUNKED_FROM as u32).map(|i| (i * 7) as u8).collect();
        for (chunking, as_written) in [(NEVER, false), (Chunking::BOOKS, true)] {
            let path = dir.path().join("book");
            std::fs::write(&path, written(&[&[1, 2, 3], &data], chunking)).unwrap();
            let (appender, _) = Appender::reopen(&path, *b"TEST").unwrap();
            assert_eq!(appender.laid_out_as_written(), as_written);
        }
    }

    /// An appender's book of empty sections alone (no byte written past its
    /// header) is committed at its full length and opens.
    #[test]
    fn a_book_of_empty_sections_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        let mut appender = Appender::create(&path, *b"TEST", 0).unwrap();
        for _ in 0..2 {
            appender
                .append(SectionData {
                    meta: [0, 0],
                    bytes: &[],
                })
                .unwrap();
        }
        appender.commit(&[]).unwrap();
        let opened = Container::open(&path, *b"TEST").unwrap();
        assert_eq!(opened.sections().len(), 2);
        assert!(std::fs::read(&path).unwrap() == written(&[&[], &[]], Chunking::BOOKS));
    }

    /// An appender whose direct writes are refused part way through a
    /// section (here: a descriptor that cannot write) goes on plainly, from
    /// where the refused bytes end, and its book is byte for byte the one
    /// written whole.
    #[test]
    fn refused_direct_writes_fall_back_to_plain_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book");
        let game = *b"TEST";
        let first: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let second: Vec<u8> = (0..5_000u32).map(|i| (i * 13 + 1) as u8).collect();
        let mut appender = Appender::create(&path, game, 1).unwrap();
        appender.direct = Some(DirectWriter::on(File::open(&path).unwrap()));
        appender.begin_section([1, 2], 40).unwrap();
        for piece in first[40..].chunks(999) {
            appender.write_section(piece).unwrap();
        }
        assert!(appender.direct.is_none(), "refused, then given up");
        appender.end_section(&first[..40]).unwrap();
        appender
            .append(SectionData {
                meta: [3, 4],
                bytes: &second,
            })
            .unwrap();
        appender.finish(&[9], &dir.path().join("done")).unwrap();
        let sections = [
            SectionData {
                meta: [1, 2],
                bytes: &first,
            },
            SectionData {
                meta: [3, 4],
                bytes: &second,
            },
        ];
        let written = std::fs::read(dir.path().join("done")).unwrap();
        assert!(written == to_bytes(game, &[9], &sections));
    }
}
