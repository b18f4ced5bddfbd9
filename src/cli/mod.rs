//! Subcommands, one file each.

mod blockmap;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "fslab", version, about = "Reproducible filesystem experiments")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Blockmap(blockmap::Args),
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Blockmap(args) => blockmap::run(args),
    }
}
