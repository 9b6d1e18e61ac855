//! Section bytes written to disk around the page cache.
//!
//! A big book's sections are hundreds of megabytes written once and not read
//! again by the writer. Written plainly, every byte is first copied into the
//! kernel's page cache, on freshly allocated pages: at 16 seeds (423 MB)
//! that copy took about 5% of a generation's CPU time, on cores the
//! generation needed. Where the file system allows it (`O_DIRECT` on Linux),
//! an [`Appender`](super::Appender) instead gathers a section's bytes in a
//! buffer of its own and hands whole aligned blocks of it to the disk; only
//! the unaligned ends of a section go through the page cache. The file's
//! bytes are the same either way; where direct writes are refused, at open
//! or later, the plain ones take over.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// File offsets, lengths and buffer addresses of direct writes are multiples
/// of this (the largest logical block size in common use).
const ALIGN: usize = 4096;

/// Bytes gathered before they are written.
const STAGE: usize = if cfg!(test) { 4 * ALIGN } else { 8 << 20 };

/// A second descriptor of a file, opened for direct writes, and the bytes
/// gathered for it.
///
/// The buffer stands for a stretch of the file that starts at an aligned
/// offset, at the same alignment in memory, so any aligned stretch of the
/// file within it is an aligned stretch of memory.
pub(super) struct DirectWriter {
    file: File,
    /// `STAGE + ALIGN` bytes; `stage[skew..]` starts on an aligned address.
    stage: Vec<u8>,
    skew: usize,
    /// The file offset (aligned) that `stage[skew]` stands for.
    start: u64,
    /// The gathered bytes are `stage[skew + from..skew + to]`.
    from: usize,
    to: usize,
}

impl DirectWriter {
    /// Opens `path` (already created) for direct writes, if its file system
    /// takes them.
    pub(super) fn open(path: &Path) -> Option<DirectWriter> {
        let file = open_direct(path)?;
        let stage = vec![0u8; STAGE + ALIGN];
        let skew = stage.as_ptr().align_offset(ALIGN);
        Some(DirectWriter {
            file,
            stage,
            skew,
            start: 0,
            from: 0,
            to: 0,
        })
    }

    /// Starts gathering the bytes from file offset `offset` on; whatever
    /// was gathered before must have been written ([`DirectWriter::flush`]).
    pub(super) fn begin(&mut self, offset: u64) {
        debug_assert_eq!(self.from, self.to, "gathered bytes left unwritten");
        self.start = offset - offset % ALIGN as u64;
        self.from = (offset - self.start) as usize;
        self.to = self.from;
    }

    /// Gathers the next bytes, writing them out as the buffer fills; the
    /// unaligned pieces go to `plain`, a descriptor of the same file.
    pub(super) fn write(&mut self, mut bytes: &[u8], plain: &File) -> io::Result<()> {
        while !bytes.is_empty() {
            let take = bytes.len().min(STAGE - self.to);
            let at = self.skew + self.to;
            self.stage[at..at + take].copy_from_slice(&bytes[..take]);
            self.to += take;
            bytes = &bytes[take..];
            if self.to == STAGE {
                self.write_out(plain, false)?;
            }
        }
        Ok(())
    }

    /// Writes every byte gathered.
    pub(super) fn flush(&mut self, plain: &File) -> io::Result<()> {
        self.write_out(plain, true)
    }

    /// Writes the gathered bytes: an unaligned head through `plain`, the
    /// aligned blocks directly, and the unaligned tail through `plain` if
    /// `all`, else kept at the front of the buffer for the bytes to come.
    fn write_out(&mut self, plain: &File, all: bool) -> io::Result<()> {
        let (skew, start) = (self.skew, self.start);
        let head_end = self.from.next_multiple_of(ALIGN).min(self.to);
        let blocks_end = self.to - self.to % ALIGN;
        let offset = |i: usize| start + i as u64;
        if self.from < head_end {
            plain.write_all_at(
                &self.stage[skew + self.from..skew + head_end],
                offset(self.from),
            )?;
        }
        if head_end < blocks_end {
            let blocks = &self.stage[skew + head_end..skew + blocks_end];
            if self.file.write_all_at(blocks, offset(head_end)).is_err() {
                // Refused (a file system that takes direct writes only in
                // part, say): the same bytes the plain way.
                plain.write_all_at(blocks, offset(head_end))?;
            }
        }
        let tail = head_end.max(blocks_end);
        if all {
            plain.write_all_at(&self.stage[skew + tail..skew + self.to], offset(tail))?;
            self.from = self.to;
        } else {
            self.stage.copy_within(skew + tail..skew + self.to, skew);
            self.start = offset(tail);
            (self.from, self.to) = (0, self.to - tail);
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> Option<File> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes gathered from odd offsets in odd pieces, across many buffer
    /// fills, land where a plain write puts them, around bytes written
    /// plainly before and after.
    #[test]
    fn gathered_bytes_land_where_plain_writes_put_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("direct");
        let plain = File::options()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let Some(mut direct) = DirectWriter::open(&path) else {
            eprintln!("direct writes skipped: the temporary directory's file system refuses them");
            return;
        };
        let mut expected = Vec::new();
        let mut byte = 0u8;
        let mut next = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    byte = byte.wrapping_mul(31).wrapping_add(7);
                    byte
                })
                .collect()
        };
        for (offset, pieces) in [
            (0u64, vec![ALIGN, 1, STAGE]),
            (3 * STAGE as u64 + 5, vec![3, 0, 2 * STAGE + 17, ALIGN - 1]),
            (7 * STAGE as u64 + 2 * ALIGN as u64, vec![10]),
            (9 * STAGE as u64 + 100, vec![STAGE - 100, 1]),
        ] {
            // A plain write before (a table or padding, as an appender does).
            let before = next(3);
            plain.write_all_at(&before, offset - offset.min(3)).unwrap();
            direct.begin(offset);
            let mut at = offset as usize;
            for len in pieces {
                let bytes = next(len);
                direct.write(&bytes, &plain).unwrap();
                if expected.len() < at + len {
                    expected.resize(at + len, 0);
                }
                expected[at..at + len].copy_from_slice(&bytes);
                at += len;
            }
            direct.flush(&plain).unwrap();
            let start = offset.min(3) as usize;
            expected[offset as usize - start..offset as usize]
                .copy_from_slice(&before[3 - start..]);
        }
        let mut written = Vec::new();
        io::Read::read_to_end(&mut &plain, &mut written).unwrap();
        assert_eq!(written.len(), expected.len());
        assert!(written == expected);
    }
}
