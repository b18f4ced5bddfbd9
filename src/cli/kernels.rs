//! `fslab kernels install NAME`, `fslab kernels build NAME …` and `fslab kernels
//! list`: provisioned and built kernels.

use fslab::doctor::ConfigValue;
use fslab::kernels::{self, BuildOutcome, BuildRequest, Outcome};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
    /// Build a User-Mode Linux kernel from Debian's kernel source package
    /// (`linux-source-6.12`: trixie, `linux-source-6.1`: bookworm), fetched with fslab's
    /// own apt state (download only) into its cache: the patches applied in order, fslab's
    /// small base configuration with the fragment merged over it (every option of the
    /// fragment must survive `make olddefconfig`), `make ARCH=um linux`. The kernel goes
    /// to the kernels directory as NAME, with its provenance; the same inputs again are a
    /// cache hit. Phases and make's elapsed time go to stderr (docs/kernels.md).
    Build(BuildArgs),
    /// What is installed: each kernel's version, provenance and the configuration
    /// options experiments ask for.
    List,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The kernel: `uml-bookworm` or `uml-trixie`.
    pub kernel: String,
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The kernel's name for `fslab run --kernel NAME` (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// The Debian package with the kernel source: `linux-source-6.12` or
    /// `linux-source-6.1`, optionally `=VERSION` (else the version fslab's apt lists offer).
    #[arg(long, value_name = "PACKAGE[=VERSION]")]
    pub source: String,
    /// A configuration fragment (`CONFIG_XFS_DEBUG=y`, `# CONFIG_X is not set`), merged
    /// over fslab's base.
    #[arg(long = "config", value_name = "FRAGMENT")]
    pub config: Option<PathBuf>,
    /// A patch, applied in the order given: an mbox (`git format-patch`, `b4 am`) as `git
    /// am` applies it, anything else with `patch -p1`. Repeatable.
    #[arg(long = "patch", value_name = "FILE")]
    pub patches: Vec<PathBuf>,
    /// make's parallelism (default: the CPUs available).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Refresh fslab's apt lists first (`apt-get update`): a newer source version makes a
    /// new build.
    #[arg(long)]
    pub update: bool,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Install(a) => install(a),
        Command::Build(a) => build(a),
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

fn build(a: BuildArgs) -> anyhow::Result<ExitCode> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&cancel))?;
    }
    let req = BuildRequest {
        name: a.name,
        source: a.source,
        fragment: a.config,
        patches: a.patches,
        jobs: a
            .jobs
            .filter(|j| *j > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        update: a.update,
    };
    let quiet = a.quiet;
    let start = std::time::Instant::now();
    let progress = move |s: &str| {
        if !quiet {
            eprintln!("==> [{}] {s}", kernels::build::elapsed(start.elapsed()));
        }
    };
    let outcome = kernels::build(&req, &kernels::kernels_dir(), &progress, &cancel)?;
    let k = match outcome {
        BuildOutcome::Cached(k) => {
            println!(
                "cached: {} (kernel {}) in {}, built from the same inputs",
                k.provenance.name,
                k.provenance.release,
                k.dir.display()
            );
            k
        }
        BuildOutcome::Built {
            kernel,
            total,
            replaced,
        } => {
            println!(
                "built: {} (kernel {}) in {}, {}{}",
                kernel.provenance.name,
                kernel.provenance.release,
                kernel.dir.display(),
                kernels::build::elapsed(total),
                if replaced {
                    " (it replaces a build of other inputs)"
                } else {
                    ""
                }
            );
            kernel
        }
    };
    println!("  from: {}", k.provenance.source_line());
    if let Some(b) = &k.provenance.build {
        println!("  key: {}", b.key);
        if !b.fragment_options.is_empty() {
            println!("  fragment: {}", b.fragment_options.join(" "));
        }
    }
    println!("  kernel: {}", k.binary().display());
    Ok(ExitCode::SUCCESS)
}

fn list() -> anyhow::Result<ExitCode> {
    let dir = kernels::kernels_dir();
    let installed = kernels::installed();
    println!("provisioned kernels in {}:", dir.display());
    if installed.is_empty() {
        println!("  (none; `fslab kernels install uml-bookworm` fetches one, `fslab kernels build` builds one)");
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
        if let Some(b) = &p.build {
            let patches: Vec<String> = b
                .patches
                .iter()
                .map(|x| format!("{} ({}, sha256 {})", x.file.name, x.format, x.file.sha256))
                .collect();
            println!(
                "      built: make {} -j{} in {:.0} s, key {}",
                b.make_target, b.jobs, b.make_seconds, b.key
            );
            if let Some(f) = &b.fragment {
                println!(
                    "      fragment: {} (sha256 {}): {}",
                    f.name,
                    f.sha256,
                    b.fragment_options.join(" ")
                );
            }
            if !patches.is_empty() {
                println!("      patches: {}", patches.join(", "));
            }
        }
    }
    let known: Vec<&str> = kernels::KNOWN.iter().map(|k| k.name).collect();
    println!("known: {}", known.join(", "));
    let sources: Vec<&str> = kernels::source::SOURCES.iter().map(|s| s.package).collect();
    println!("fslab kernels build --source: {}", sources.join(", "));
    Ok(ExitCode::SUCCESS)
}
