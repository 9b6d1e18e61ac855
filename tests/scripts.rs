//! The scripts that time the command stay in step with it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Every end-to-end run of `scripts/timings.py` (as `--print-commands`
/// lists them, for the book sizes it times by default) is one the command
/// accepts: its dry run exits 0. The script had passed `--movegen` to run
/// sweeps, which the command refuses, and stopped at its first run.
#[test]
fn the_timing_scripts_runs_are_accepted_by_the_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = match Command::new("python3")
        .arg(root.join("scripts/timings.py"))
        .arg("--print-commands")
        .output()
    {
        Ok(listed) => listed,
        Err(error) => {
            // The scripts need Python; a machine without it cannot run them.
            eprintln!("timing script's runs: skipped (python3 could not be started: {error})");
            return;
        }
    };
    assert!(
        listed.status.success(),
        "timings.py --print-commands failed: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oware.book");
    let (mut sweeps, mut sizes) = (BTreeSet::new(), BTreeSet::new());
    for line in String::from_utf8(listed.stdout).unwrap().lines() {
        let args = parse_string_list(line);
        let value = |option: &str| {
            let at = args.iter().position(|a| a == option);
            args[at.unwrap_or_else(|| panic!("{args:?} has no {option}")) + 1].clone()
        };
        sweeps.insert(value("--sweep"));
        sizes.insert(value("--max-seeds"));
        let dry = Command::new(env!("CARGO_BIN_EXE_endbook"))
            .args(&args)
            .arg("--out")
            .arg(&out)
            .arg("--dry-run")
            .output()
            .unwrap();
        assert!(
            dry.status.success(),
            "the command refuses the script's run {args:?}: {}",
            String::from_utf8_lossy(&dry.stderr)
        );
    }
    // Every sweep, for every size the script times by default.
    assert_eq!(
        sweeps.into_iter().collect::<Vec<_>>(),
        ["dense", "frontier", "hybrid", "runs"]
    );
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        ["10", "11", "12", "9"]
    );
    assert!(!out.exists(), "a dry run wrote the book");
}

/// A line of the script's output: a JSON list of plain strings.
fn parse_string_list(line: &str) -> Vec<String> {
    let inner = line
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .unwrap_or_else(|| panic!("not a JSON list: {line}"));
    inner
        .split(", ")
        .map(|item| {
            let item = item
                .strip_prefix('"')
                .and_then(|i| i.strip_suffix('"'))
                .unwrap_or_else(|| panic!("not a plain string: {item} in {line}"));
            assert!(!item.contains(['"', '\\']), "an escaped string in {line}");
            item.to_string()
        })
        .collect()
}
