//! Quiet spells: background work pauses while a kernel trial is timed.
//!
//! Under `--kernel auto` the solver times each kernel on a few real layers
//! and keeps the fastest ([`super::KernelPicker`]). A generation also
//! encodes the levels already solved on threads of its own, as many as the
//! solver's, so a trial layer that overlaps a burst of encoding measures
//! the contention, not the kernel: on a 16-core machine the top level of a
//! 20-seed book once timed `avx2` at 0.43 ns a state against `scalar` at
//! 0.23 and swept with `scalar` (that run took 15.9 s, two that kept `avx2`
//! 10.2 and 11.2 s), and on two cores, with the encoder at work, the same
//! dense layers took twice to five times as long as without it.
//!
//! A trial holds a [`Spell`] for the layer it times. Background work wraps
//! each piece (an encoder chunk, a few milliseconds) in [`piece`], which
//! waits while any spell is held; a spell, once cast, waits for the pieces
//! under way to end, so the timed layer has the machine to itself. The
//! background work is not lost, only moved after the layer: its threads
//! are otherwise busy at the same time as the solver's.
//!
//! Only threads marked with [`mark_background_thread`] wait: the threads of
//! a pool that runs background work alone (the book encoder's). Elsewhere
//! [`piece`] is free. A rayon worker that holds a spell may, while it waits
//! for its sweep's tasks, take on any task of its pool; were that an
//! encoder chunk that waited for the spell to end, neither would go on.
//!
//! The state is process-wide: the solver and the encoder meet nowhere else,
//! and whatever else runs in the background should pause the same way.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Spells held, and background pieces under way.
struct State {
    spells: usize,
    pieces: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    spells: 0,
    pieces: 0,
});
/// Signalled when the last spell ends or the last piece under way ends.
static CHANGED: Condvar = Condvar::new();

thread_local! {
    /// Whether this thread's pieces yield to spells.
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as a background worker's, whose [`piece`]s
/// wait for spells to end. Only for threads that run nothing else: never a
/// trial, nor a task that a trial waits for.
pub fn mark_background_thread() {
    BACKGROUND.with(|background| background.set(true));
}

fn state() -> MutexGuard<'static, State> {
    // The lock guards two counters updated in place: a panic elsewhere
    // cannot leave them half-written.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A quiet spell: while one is held, no background piece starts.
#[must_use = "the spell ends when dropped"]
#[derive(Debug)]
pub struct Spell(());

impl Spell {
    /// Casts a spell and waits for the background pieces under way to end.
    pub fn cast() -> Spell {
        let mut state = state();
        state.spells += 1;
        while state.pieces > 0 {
            state = CHANGED.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        Spell(())
    }
}

impl Drop for Spell {
    fn drop(&mut self) {
        let mut state = state();
        state.spells -= 1;
        if state.spells == 0 {
            CHANGED.notify_all();
        }
    }
}

/// A piece of background work under way (see [`piece`]).
#[must_use = "the piece ends when dropped"]
#[derive(Debug)]
pub struct Piece(());

/// Starts a piece of background work on a thread marked as a background
/// worker's, once no spell is held; the piece ends when the returned guard
/// drops. On any other thread, `None` at once.
pub fn piece() -> Option<Piece> {
    if !BACKGROUND.with(Cell::get) {
        return None;
    }
    let mut state = state();
    while state.spells > 0 {
        state = CHANGED.wait(state).unwrap_or_else(|p| p.into_inner());
    }
    state.pieces += 1;
    Some(Piece(()))
}

impl Drop for Piece {
    fn drop(&mut self) {
        let mut state = state();
        state.pieces -= 1;
        if state.pieces == 0 && state.spells > 0 {
            CHANGED.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    // The state is process-wide: these tests run one after another (other
    // tests' generations may cast spells and start pieces meanwhile, which
    // only delays these).
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn a_spell_waits_for_the_pieces_under_way() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        mark_background_thread();
        let piece_done = Arc::new(AtomicBool::new(false));
        let started = piece().expect("a background thread's piece");
        let done = piece_done.clone();
        let background = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            done.store(true, Ordering::SeqCst);
            drop(started);
        });
        let spell = Spell::cast();
        assert!(
            piece_done.load(Ordering::SeqCst),
            "the spell began before the piece under way ended"
        );
        drop(spell);
        background.join().unwrap();
    }

    #[test]
    fn other_threads_pieces_never_wait() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let spell = Spell::cast();
        // A thread not marked, say a rayon worker holding this very spell.
        let piece = std::thread::spawn(piece).join().unwrap();
        assert!(piece.is_none());
        drop(spell);
    }

    #[test]
    fn no_piece_starts_under_a_spell() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let spell = Spell::cast();
        let second = Spell::cast();
        let spell_over = Arc::new(AtomicBool::new(false));
        let over = spell_over.clone();
        let background = std::thread::spawn(move || {
            mark_background_thread();
            let _piece = piece();
            over.load(Ordering::SeqCst)
        });
        std::thread::sleep(Duration::from_millis(20));
        drop(second);
        std::thread::sleep(Duration::from_millis(30));
        spell_over.store(true, Ordering::SeqCst);
        drop(spell);
        assert!(
            background.join().unwrap(),
            "a piece started while a spell was held"
        );
    }
}
