//! `fslab kernels install NAME` and `fslab kernels list`: provisioned kernels.

use fslab::doctor::ConfigValue;
use fslab::kernels::{self, Outcome};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Fetch a kernel into fslab's tools directory ($FSLAB_TOOLS_DIR, else
    /// ~/.cache/fslab/tools), with fslab's own apt state (never /etc/apt): `uml-bookworm`
    /// is Debian 12's User-Mode Linux package (6.1), `uml-trixie` Debian 13's (6.12,
    /// with trixie's C library: its loader is set as the kernel's interpreter with
    /// `patchelf`, and its library path is given to the kernel process alone).
    Install(InstallArgs),
    /// What is installed: each kernel's version, provenance and the configuration
    /// options experiments ask for.
    List,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The kernel: `uml-bookworm` or `uml-trixie`.
    pub kernel: String,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Install(a) => install(a),
        Command::List => list(),
    }
}

fn install(a: InstallArgs) -> anyhow::Result<ExitCode> {
    let dir = kernels::kernels_dir();
    let outcome = kernels::install(&a.kernel, &dir, &|s| eprintln!("==> {s}"))?;
    let (what, k) = match outcome {
        Outcome::AlreadyInstalled(k) => ("already installed", k),
        Outcome::Installed(k) => ("installed", k),
    };
    println!(
        "{what}: {} (kernel {}) in {}",
        k.provenance.name,
        k.provenance.release,
        k.dir.display()
    );
    println!("  from: {}", k.provenance.source_line());
    println!(
        "  sha256: {}  {}",
        k.provenance.deb.sha256, k.provenance.deb.name
    );
    println!("  kernel: {}", k.binary().display());
    Ok(ExitCode::SUCCESS)
}

fn list() -> anyhow::Result<ExitCode> {
    let dir = kernels::kernels_dir();
    let installed = kernels::installed();
    println!("provisioned kernels in {}:", dir.display());
    if installed.is_empty() {
        println!("  (none; `fslab kernels install uml-bookworm` fetches one)");
    }
    for k in &installed {
        let p = &k.provenance;
        println!("  {}: kernel {} ({})", p.name, p.release, p.kind.describe());
        println!("      from: {}", p.source_line());
        println!("      sha256: {}  {}", p.deb.sha256, p.deb.name);
        println!("      kernel: {}", k.binary().display());
        if let Some(l) = &p.libc {
            println!(
                "      C library: {} {} ({}), sha256 {}",
                l.package, l.package_version, l.deb.name, l.deb.sha256
            );
        }
        let options: Vec<String> = kernels::SHOWN_OPTIONS
            .iter()
            .map(|o| {
                let v = match k.config(o) {
                    ConfigValue::BuiltIn => "y",
                    ConfigValue::Module => "m",
                    ConfigValue::NotSet => "n",
                    ConfigValue::Unknown => "?",
                };
                format!("{o}={v}")
            })
            .collect();
        println!("      config: {}", options.join(" "));
    }
    let known: Vec<&str> = kernels::KNOWN.iter().map(|k| k.name).collect();
    println!("known: {}", known.join(", "));
    Ok(ExitCode::SUCCESS)
}
