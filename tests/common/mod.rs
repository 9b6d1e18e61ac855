//! Helpers shared by the integration tests.

mod rng;
#[allow(unused_imports)] // not every test crate draws random data
pub use rng::Rng;

/// SHA-256 of the `endSeeds` array that the program in
/// `000-oware-endgame-books.md` writes (9 seeds, 146 layers, 42,913,634
/// bytes).
#[allow(dead_code)] // for the tests that check against the article
pub const ARTICLE_FLAT_9_SHA256: &str =
    "70d9caa6035222a644b8e1c6894c3cfc996c9f2e14dc59cf6c8bb2f76e397d36";

/// `|a - b|`, or infinity where either is not a number: a largest error
/// taken with `f64::max`, which passes over NaN, cannot then hide one.
#[allow(dead_code)] // for the tests that compare probabilities
pub fn error(a: f64, b: f64) -> f64 {
    let d = (a - b).abs();
    if d.is_nan() {
        f64::INFINITY
    } else {
        d
    }
}

/// Lower-case hexadecimal.
#[allow(dead_code)]
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every way to sweep a book: each sweep mode, level by level and (but for
/// run sweeps, which solve one level at a time) all levels at once.
#[allow(dead_code)] // for the tests that compare sweeps
pub const EVERY_SWEEP: [(endbook::games::oware::Sweep, bool); 7] = {
    use endbook::games::oware::Sweep::{Dense, Frontier, Hybrid, Runs};
    [
        (Runs, true),
        (Dense, true),
        (Dense, false),
        (Frontier, true),
        (Frontier, false),
        (Hybrid, true),
        (Hybrid, false),
    ]
};

/// Runs the `endbook` binary with `args`, `stdin` written to its standard
/// input.
#[cfg(feature = "cli")]
#[allow(dead_code)] // not every test crate runs the binary
pub fn endbook_with_stdin(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the endbook binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs the `endbook` binary with `args` and `stdin` as its input, its
/// standard output a pipe whose read end is closed before it starts (a
/// reader that has gone: its first print finds it so), and asserts that it
/// ends by SIGPIPE, as other command-line tools do, with nothing on stderr
/// (no panic at a failed print, no exit code of its own).
#[allow(dead_code)]
#[cfg(target_os = "linux")]
pub fn assert_ends_by_sigpipe(args: &[&str], stdin: &str) {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    const SIGPIPE: i32 = 13;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the endbook binary runs");
    // (The command may end before it reads all of it.)
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(SIGPIPE),
        "{args:?}: {:?}",
        out.status
    );
    assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
}

/// `book` (of game `game`) with a bit of byte `flip` changed in the middle
/// of section `section`, which must be checked in chunks, written as
/// `damaged.book` in `dir`: a book whose lookups fail in that chunk alone.
#[allow(dead_code)]
pub fn damaged_in_a_chunk(
    book: Vec<u8>,
    game: [u8; 4],
    section: usize,
    flip: u8,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let info = endbook::book::Container::from_bytes("book", book.clone(), game)
        .unwrap()
        .sections()[section];
    assert_ne!(info.chunk_shift, 0, "section {section} chunked");
    let mut damaged = book;
    damaged[info.offset as usize + info.len as usize / 2] ^= flip;
    let path = dir.join("damaged.book");
    std::fs::write(&path, &damaged).unwrap();
    path
}

/// Asserts that a command refused a corrupt book as bad input (exit code
/// 2, saying it is corrupt) and printed nothing on stdout.
#[allow(dead_code)]
pub fn assert_refused_as_corrupt(out: &std::process::Output) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is corrupt"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

/// Runs the `endbook` binary with `args` (built with the default feature
/// `cli`; without it, the test crates that run it are left out).
#[cfg(feature = "cli")]
#[allow(dead_code)] // not every test crate runs the binary
pub fn endbook(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_endbook"))
        .args(args)
        .output()
        .expect("the endbook binary runs")
}

/// A command's output as text.
#[allow(dead_code)]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The arguments of `endbook oware generate --max-seeds SEEDS --out OUT`
/// followed by `extra`.
#[allow(dead_code)]
pub fn generate_args<'a>(
    seeds: &'a str,
    out: &'a std::path::Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "oware",
        "generate",
        "--max-seeds",
        seeds,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

/// An Oware book's section, to tamper with: its two meta numbers and its bytes.
#[allow(dead_code)]
pub type Section = ([u64; 2], Vec<u8>);

/// The parameters and sections of the Oware book `bytes`.
#[allow(dead_code)]
pub fn sections_of(bytes: Vec<u8>) -> (Vec<u64>, Vec<Section>) {
    use endbook::book::Container;
    use endbook::games::oware::book::GAME_TAG;
    let container = Container::from_bytes("sections", bytes, GAME_TAG).unwrap();
    let sections = (0..container.sections().len())
        .map(|i| (container.sections()[i].meta, container.section(i).to_vec()))
        .collect();
    (container.params().to_vec(), sections)
}

/// A freshly serialised Oware book (all checksums right) with these
/// parameters and sections.
#[allow(dead_code)]
pub fn rebuilt(params: &[u64], sections: &[Section]) -> Vec<u8> {
    use endbook::book::{self, SectionData};
    use endbook::games::oware::book::GAME_TAG;
    let sections: Vec<SectionData<'_>> = sections
        .iter()
        .map(|(meta, bytes)| SectionData { meta: *meta, bytes })
        .collect();
    book::to_bytes(GAME_TAG, params, &sections)
}
