//! Helpers shared by the integration tests.

mod rng;
#[allow(unused_imports)] // not every test crate draws random data
pub use rng::Rng;

/// Runs the `endbook` binary with `args`.
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
