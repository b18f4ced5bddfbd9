//! Subcommands, one file each.

mod compare;
mod report;

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
    /// Compare two bundles point by point (mean ± σ%, % change, Welch's t-test).
    Compare(compare::CompareArgs),
    /// Write a self-contained HTML or Markdown report of a bundle.
    Report(report::ReportArgs),
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => report::run(args),
    }
}
