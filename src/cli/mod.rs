//! Subcommands, one file each.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "fslab", version, about = "Reproducible filesystem experiments")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {}
}
