//! Section bytes written to disk around the page cache.
//!
//! A big book's sections are hundreds of megabytes written once and not read
//! again by the writer. Written plainly, every byte is first copied into the
//! kernel's page cache, on freshly allocated pages: at 16 seeds (423 MB)
//! that copy took about 5% of a generation's CPU time, on cores the
//! generation needed. Where the file system allows it (`O_DIRECT` on Linux),
//! an [`Appender`](super::Appender) instead gathers a section's bytes in a
//! buffer of its own and hands whole aligned blocks of it to the disk; only
//! the unaligned ends of a section's bytes (and its table, and the padding
//! before it) go through the page cache. The file's bytes are the same
//! either way; where direct writes are refused, at open or later, the plain
//! ones take over. Unix only (positional writes); elsewhere, and where the
//! file system refuses `O_DIRECT` at open, an appender writes plainly.

#[cfg(unix)]
pub(super) use unix::DirectWriter;

#[cfg(not(unix))]
pub(super) use elsewhere::DirectWriter;

#[cfg(unix)]
mod unix {
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
    pub(in crate::book) struct DirectWriter {
        file: File,
        /// `STAGE + ALIGN` bytes; `stage[skew..]` starts on an aligned address.
        stage: Vec<u8>,
        skew: usize,
        /// The file offset (aligned) that `stage[skew]` stands for.
        start: u64,
        /// The gathered bytes are `stage[skew + from..skew + to]`.
        from: usize,
        to: usize,
        /// Whether a direct write was refused (its bytes then went the plain way).
        refused: bool,
    }

    impl DirectWriter {
        /// Opens `path` (already created) for direct writes, if its file system
        /// takes them.
        pub(in crate::book) fn open(path: &Path) -> Option<DirectWriter> {
            open_direct(path).map(DirectWriter::on)
        }

        /// Direct writes through `file` (a descriptor opened for them).
        pub(in crate::book) fn on(file: File) -> DirectWriter {
            let stage = vec![0u8; STAGE + ALIGN];
            let skew = stage.as_ptr().align_offset(ALIGN);
            assert!(skew < ALIGN, "the buffer has an aligned address");
            DirectWriter {
                file,
                stage,
                skew,
                start: 0,
                from: 0,
                to: 0,
                refused: false,
            }
        }

        /// Whether a direct write was refused: the file system takes them only
        /// in part, and the appender had better write plainly from here on.
        pub(in crate::book) fn refused(&self) -> bool {
            self.refused
        }

        /// Starts gathering the bytes from file offset `offset` on; whatever
        /// was gathered before must have been written ([`DirectWriter::flush`]).
        pub(in crate::book) fn begin(&mut self, offset: u64) {
            debug_assert_eq!(self.from, self.to, "gathered bytes left unwritten");
            self.start = offset - offset % ALIGN as u64;
            self.from = (offset - self.start) as usize;
            self.to = self.from;
        }

        /// Gathers the next bytes, writing them out as the buffer fills; the
        /// unaligned pieces go to `plain`, a descriptor of the same file.
        pub(in crate::book) fn write(&mut self, mut bytes: &[u8], plain: &File) -> io::Result<()> {
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
        pub(in crate::book) fn flush(&mut self, plain: &File) -> io::Result<()> {
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
                    // part, say): the same bytes the plain way (an error that
                    // is no refusal shows there too).
                    self.refused = true;
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
        /// fills, land where plain writes put them, around bytes written plainly
        /// before and after (padding, and a table written over a section's start
        /// once its rest is in), with nothing past a section's end written:
        /// sections starting and ending on and off block boundaries, inside one
        /// block, empty, and over many buffer fills. Through `O_DIRECT` where
        /// the temporary directory's file system takes it, else through a plain
        /// second descriptor (the same logic, the same offsets).
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
            let mut direct = DirectWriter::open(&path).unwrap_or_else(|| {
                crate::testing::note(
                    "O_DIRECT refused here: the same logic checked through a plain descriptor",
                );
                DirectWriter::on(File::options().write(true).open(&path).unwrap())
            });
            // Bytes no two stretches of the test share (a position's bytes name it).
            let mut counter = 0u32;
            let mut next = |n: usize| -> Vec<u8> {
                (0..n)
                    .map(|_| {
                        counter += 1;
                        (counter.wrapping_mul(0x9e37_79b9) >> 24) as u8 ^ (counter >> 8) as u8
                    })
                    .collect()
            };
            let mut expected: Vec<u8> = Vec::new();
            let put = |expected: &mut Vec<u8>, at: usize, bytes: &[u8]| {
                if expected.len() < at + bytes.len() {
                    expected.resize(at + bytes.len(), 0);
                }
                expected[at..at + bytes.len()].copy_from_slice(bytes);
            };
            let a = ALIGN as u64;
            let mut end = 0u64;
            // (gap after the previous section, table length, piece lengths)
            for (gap, table, pieces) in [
                (0u64, 0usize, vec![ALIGN, 1, STAGE]),
                (5, 40, vec![3, 0, 2 * STAGE + 17, ALIGN - 1]),
                (0, 0, vec![]),
                (7, 3, vec![10]),
                (a - 1, 0, vec![1]),
                (1, 16, vec![ALIGN - 20, 2]),
                (2 * a, 0, vec![STAGE]),
                (100, 8, vec![STAGE - 100, 1, ALIGN]),
            ] {
                // Padding written plainly, as an appender does.
                let padding = next(gap as usize);
                plain.write_all_at(&padding, end).unwrap();
                put(&mut expected, end as usize, &padding);
                let offset = end + gap;
                direct.begin(offset + table as u64);
                let mut at = offset as usize + table;
                for len in pieces {
                    let bytes = next(len);
                    direct.write(&bytes, &plain).unwrap();
                    put(&mut expected, at, &bytes);
                    at += len;
                }
                direct.flush(&plain).unwrap();
                // The table last, over the section's start.
                let table = next(table);
                plain.write_all_at(&table, offset).unwrap();
                put(&mut expected, offset as usize, &table);
                end = at as u64;
                // Nothing past the section's end.
                assert_eq!(plain.metadata().unwrap().len(), end);
            }
            assert!(!direct.refused());
            let mut written = Vec::new();
            io::Read::read_to_end(&mut &plain, &mut written).unwrap();
            assert_eq!(written.len(), expected.len());
            let first_wrong = written.iter().zip(&expected).position(|(w, e)| w != e);
            assert_eq!(first_wrong, None, "first byte out of place");
        }
    }
}

/// Elsewhere: no direct writes (an appender writes plainly).
#[cfg(not(unix))]
mod elsewhere {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    /// Never made: [`DirectWriter::open`] gives none.
    pub(in crate::book) enum DirectWriter {}

    impl DirectWriter {
        pub(in crate::book) fn open(_: &Path) -> Option<DirectWriter> {
            None
        }

        pub(in crate::book) fn refused(&self) -> bool {
            match *self {}
        }

        pub(in crate::book) fn begin(&mut self, _: u64) {
            match *self {}
        }

        pub(in crate::book) fn write(&mut self, _: &[u8], _: &File) -> io::Result<()> {
            match *self {}
        }

        pub(in crate::book) fn flush(&mut self, _: &File) -> io::Result<()> {
            match *self {}
        }
    }
}
