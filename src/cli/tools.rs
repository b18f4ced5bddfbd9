//! `fslab tools install NAME[=VERSION]` and `fslab tools list`: provisioned tools.

use fslab::doctor::{self, Probe, ProbingHost};
use fslab::tools::build::{self, Outcome, Progress, Request, Source};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Build a tool from source into fslab's tools directory ($FSLAB_TOOLS_DIR, else
    /// ~/.cache/fslab/tools): by default from the Debian source package of a newer suite
    /// (xfsprogs: trixie's 6.13.0), with fslab's own apt state (never /etc/apt).
    Install(InstallArgs),
    /// What is provisioned, and what each experiment's requirements would use.
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The tool, optionally with its upstream version: `xfsprogs`, `xfsprogs=6.13.0`.
    pub tool: String,
    /// The Debian suite whose source package to build (default: the recipe's).
    #[arg(long, conflicts_with_all = ["tarball", "git"])]
    pub suite: Option<String>,
    /// Build an upstream release tarball instead (needs --sha256).
    #[arg(long, requires = "sha256", conflicts_with = "git")]
    pub tarball: Option<PathBuf>,
    /// The tarball's sha256 (hex); the build stops when it differs.
    #[arg(long)]
    pub sha256: Option<String>,
    /// Build a git checkout instead (needs --ref).
    #[arg(long, requires = "reference")]
    pub git: Option<String>,
    /// The tag (or branch) to check out.
    #[arg(long = "ref", id = "reference")]
    pub reference: Option<String>,
    /// make -j (default: the number of CPUs).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Fetch and check the sources; build nothing.
    #[arg(long)]
    pub download_only: bool,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Directory of experiment files whose requirements to show.
    #[arg(long, default_value = "experiments")]
    pub experiments: PathBuf,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Install(a) => install(a),
        Command::List(a) => list(a),
    }
}

fn install(a: InstallArgs) -> anyhow::Result<ExitCode> {
    let (name, version) = match a.tool.split_once('=') {
        Some((n, v)) if !v.trim().is_empty() => (n.trim().to_string(), Some(v.trim().to_string())),
        Some((n, _)) => (n.trim().to_string(), None),
        None => (a.tool.trim().to_string(), None),
    };
    let source = match (a.tarball, a.sha256, a.git, a.reference) {
        (Some(file), Some(sha256), _, _) => Source::Tarball { file, sha256 },
        (_, _, Some(url), Some(reference)) => Source::Git { url, reference },
        _ => Source::Debian { suite: a.suite },
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let req = Request {
        name,
        version,
        source,
        tools_dir: fslab::tools::tools_dir(),
        jobs,
        download_only: a.download_only,
    };
    let progress = |p: Progress| match p {
        Progress::Step(s) => eprintln!("==> {s}"),
        Progress::Make {
            compiled,
            total,
            linked,
        } => {
            let pct = (compiled * 100 / total.max(1)).min(99);
            match linked {
                Some(what) => eprintln!(
                    "    make: {compiled}/~{total} files compiled ({pct}%), linked {what}"
                ),
                None => eprintln!("    make: {compiled}/~{total} files compiled ({pct}%)"),
            }
        }
    };
    match build::install(&req, &progress)? {
        Outcome::AlreadyInstalled(i) => {
            println!("already installed: {}", i.describe());
        }
        Outcome::Downloaded { dir, inputs } => {
            println!("downloaded into {} (not built):", dir.display());
            for i in inputs {
                println!("  {}  {} ({} bytes)", i.sha256, i.name, i.bytes);
            }
        }
        Outcome::Built(i) => {
            println!("installed: {}", i.describe());
            println!(
                "  provenance: {}",
                i.dir.join(fslab::tools::provenance::FILE).display()
            );
            println!("  build log: {}", i.dir.join(&i.provenance.log).display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(a: ListArgs) -> anyhow::Result<ExitCode> {
    let dir = fslab::tools::tools_dir();
    let installed = fslab::tools::installed();
    println!("provisioned tools in {}:", dir.display());
    if installed.is_empty() {
        println!("  (none; `fslab tools install xfsprogs` builds one)");
    }
    for i in &installed {
        println!("  {} {}: {}", i.name, i.version, i.provenance.source_line());
        println!("      {}", i.dir.display());
        println!("      programs: {}", i.programs().join(", "));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&a.experiments)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"));
    files.sort();
    let host = ProbingHost::new(Probe::Never, fslab::run::default_work_dir());
    for f in files {
        let exp = match fslab::Experiment::load(&f) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let plan = match fslab::Plan::with_host(&exp, None, &[], &host) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let report = doctor::check(&plan, &host);
        // Each requirement's line once, with the points it applies to.
        let mut lines: Vec<(String, Vec<String>)> = Vec::new();
        for p in &report.points {
            let found = p
                .notes
                .iter()
                .filter(|n| n.starts_with("requirement "))
                .cloned()
                .chain(
                    p.problems
                        .iter()
                        .filter(|pr| pr.kind == doctor::ProblemKind::OldTool)
                        .map(|pr| format!("✗ {pr}")),
                );
            for l in found {
                match lines.iter_mut().find(|(t, _)| *t == l) {
                    Some((_, ids)) => ids.push(p.id.clone()),
                    None => lines.push((l, vec![p.id.clone()])),
                }
            }
        }
        let tools: Vec<String> = plan.tools.iter().map(|(n, t)| t.describe(n)).collect();
        println!("{} ({}):", exp.id(), f.display());
        if lines.is_empty() && tools.is_empty() {
            println!("  (no tool alternatives or version requirements)");
        }
        for t in tools {
            println!("  tool {t}");
        }
        for (l, ids) in lines {
            let at = if ids.len() == report.points.len() {
                "every point".to_string()
            } else {
                ids.join("; ")
            };
            println!("  {l} [{at}]");
        }
    }
    Ok(ExitCode::SUCCESS)
}
