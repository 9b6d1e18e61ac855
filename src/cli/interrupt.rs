//! Interrupted commands leave no half-written file: a command writing a
//! file under a temporary name registers it, and SIGINT, SIGTERM or SIGHUP
//! remove it before the process ends as the signal would have ended it.
//! (An Oware generation's checkpoint is not registered: it is kept for
//! `--resume`.)

use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The temporary file to remove on a signal, or null.
static TEMPORARY: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers; called once, first thing in `main`, before any
/// other thread exists. A signal the process was started ignoring (`nohup`
/// ignores SIGHUP, a shell's background jobs SIGINT) stays ignored.
pub fn install() {
    for signal in SIGNALS {
        // SAFETY: `current` is a valid, writable sigaction; with a null new
        // action, sigaction only reads the signal's disposition into it.
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } != 0
            || current.sa_sigaction == libc::SIG_IGN
        {
            continue;
        }
        // SAFETY: `on_signal` only calls async-signal-safe functions
        // (unlink, signal, raise) and reads an atomic; `signal` itself has
        // no other precondition.
        let handler = on_signal as extern "C" fn(libc::c_int);
        unsafe { libc::signal(signal, handler as *const () as libc::sighandler_t) };
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    let path = TEMPORARY.swap(std::ptr::null_mut(), Ordering::SeqCst);
    // SAFETY: a non-null `path` is a NUL-terminated string leaked by
    // `Temporary::new` and freed only by the guard that swaps it out first
    // (so never while this handler holds it); unlink, signal and raise are
    // async-signal-safe.
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// While it lives, a signal removes the file at its path.
pub struct Temporary(());

impl Temporary {
    /// Registers `path` (replacing any registered before).
    pub fn new(path: &Path) -> Temporary {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(name) = CString::new(path.as_os_str().as_bytes()) {
            let old = TEMPORARY.swap(name.into_raw(), Ordering::SeqCst);
            free(old);
        }
        Temporary(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        free(TEMPORARY.swap(std::ptr::null_mut(), Ordering::SeqCst));
    }
}

fn free(path: *mut libc::c_char) {
    if !path.is_null() {
        // SAFETY: every non-null pointer stored comes from
        // `CString::into_raw`, and was swapped out of `TEMPORARY` before
        // this call, so nothing else frees or reads it.
        drop(unsafe { CString::from_raw(path) });
    }
}
