//! The `fslab` command line: a thin face over the library. Each subcommand lives in
//! `src/cli/<name>.rs`; errors become anyhow only here, at the binary's edge.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fslab: error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
