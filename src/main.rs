//! The `fslab` command line: a thin face over the library. Each subcommand lives in
//! `src/cli/<name>.rs`; errors become anyhow only here, at the binary's edge.

mod cli;

use clap::Parser;

/// mimalloc: the block-map walk allocates rows on several threads at once, where glibc's
/// per-thread arenas cost (measured in `benches/blockmap.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Like other Unix filters, end quietly when the reader of our output goes away
    // (`fslab plan X | head`) instead of panicking on a broken pipe.
    // SAFETY: called first thing, before any thread exists; SIG_DFL installs no handler.
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
    let args = cli::Cli::parse();
    match cli::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fslab: error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
