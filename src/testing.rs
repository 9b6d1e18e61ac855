//! Test data shared by the unit tests.

/// A xorshift generator of test data from `seed` (not 0).
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Writes a line about what a test checked or skipped straight to stderr,
/// where the test harness does not capture it (it captures `eprintln!`),
/// so that a skipped check shows in every run.
pub(crate) fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
