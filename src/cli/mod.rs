//! Subcommands, one file each.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod parse;

#[derive(Debug, Parser)]
#[command(name = "fslab", version, about = "Reproducible filesystem experiments")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse a tool's text output into rows (table, --json or --csv)
    Parse(parse::ParseArgs),
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Parse(args) => parse::run(args),
    }
}
