//! The `endbook` command line: generate, probe, inspect and export endgame books.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
