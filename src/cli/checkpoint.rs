//! A generation's checkpoint: where it lies, what is there, and the lock a
//! run holds on it while it writes (one run per checkpoint). Any game whose
//! generation checkpoints its levels in a book beside its output uses this.

use super::CliError;
use endbook::book::MAGIC;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Where a generation writing `out` keeps its checkpoint.
pub(super) fn checkpoint_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".checkpoint");
    PathBuf::from(name)
}

/// What is at a run's checkpoint path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CheckpointState {
    /// Nothing.
    Missing,
    /// A file with no committed level (a run interrupted before its
    /// first): nothing to keep.
    Empty,
    /// A book of the levels an earlier run finished.
    Levels,
    /// A file another run holds locked: it is being written.
    Busy,
}

/// Whether a checkpoint is at `path`, with finished levels, or being
/// written by another run.
///
/// A checkpoint the run could not write (not a regular file, even through a
/// symbolic link, or without write permission) is refused here, before any
/// work and by dry runs too.
pub(super) fn checkpoint_state(path: &Path) -> Result<CheckpointState, CliError> {
    // Through links: opening a named pipe would wait for a writer.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(CheckpointState::Missing),
        Ok(meta) if !meta.is_file() => {
            return Err(CliError::Input(format!(
                "{} is not a regular file (a folder, a pipe, a device, or a link to one?): it is where this run keeps its checkpoint; move it away",
                path.display()
            )))
        }
        _ => {}
    }
    // Opened for writing too (nothing written): the run writes it.
    let mut file = match File::options().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(CheckpointState::Missing),
        Err(e) => {
            return Err(CliError::Input(format!(
                "{}: {e}: the checkpoint cannot be read and written",
                path.display()
            )))
        }
    };
    match file.try_lock_shared() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(CheckpointState::Busy),
        // A file system without locks: nothing to learn from it.
        Err(std::fs::TryLockError::Error(_)) => {}
    }
    let mut magic = [0u8; 8];
    let committed = io::Read::read_exact(&mut file, &mut magic).is_ok() && magic == MAGIC;
    Ok(if committed {
        CheckpointState::Levels
    } else {
        CheckpointState::Empty
    })
}

/// Why a run stops at a checkpoint another run holds locked.
pub(super) fn being_written(checkpoint: &Path) -> String {
    format!(
        "another run is writing {}: wait for it to end, or give another --out",
        checkpoint.display()
    )
}

/// Opens (creating it if need be, its bytes left alone) and locks the
/// checkpoint at `path` for this run; the lock holds while the file lives,
/// across the rename to the output path.
pub(super) fn lock_checkpoint(path: &Path) -> Result<File, CliError> {
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| CliError::Failure(format!("{}: {e}", path.display())))?;
    // Another run's look at the file (a shared lock for a moment) is no
    // reason to stop: a few tries before taking it for a run writing it.
    for _ in 0..20 {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            // A file system without locks: nothing to hold.
            Err(std::fs::TryLockError::Error(_)) => return Ok(file),
        }
    }
    Err(CliError::Input(being_written(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpoint another run holds locked is reported as busy by a look
    /// at it, and refused by a run that would lock it, as bad input (exit
    /// code 2, not a failure); once free, the run takes it.
    #[test]
    fn a_checkpoint_locked_by_another_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.checkpoint");
        let other = File::create(&path).unwrap();
        other.lock().unwrap();
        assert_eq!(checkpoint_state(&path).unwrap(), CheckpointState::Busy);
        match lock_checkpoint(&path) {
            Err(CliError::Input(why)) => assert_eq!(why, being_written(&path)),
            Err(CliError::Failure(why)) => panic!("a failure, not bad input: {why}"),
            Ok(_) => panic!("a second lock on {}", path.display()),
        }
        drop(other);
        assert_eq!(checkpoint_state(&path).unwrap(), CheckpointState::Empty);
        assert!(lock_checkpoint(&path).is_ok());
    }
}
