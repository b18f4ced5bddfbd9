//! `fslab kernels build NAME --source linux-source-6.12 [--config FRAGMENT] [--patch
//! FILE …]`: a User-Mode Linux kernel built from Debian's kernel source package.
//!
//! Phases: fetch the source package into fslab's cache (once per version, download
//! only: [`super::source`]), unpack it into a staging directory, apply the patches in
//! order ([`super::patches`]), configure (`make ARCH=um defconfig`, fslab's base
//! fragment and the user's merged with `scripts/kconfig/merge_config.sh -m`, then `make
//! olddefconfig`; every option of both fragments must have survived), `make ARCH=um
//! linux`. The result (`linux`, `config`, `kernel.json`, the build log and a copy of the
//! inputs) is moved to `kernels/NAME/` only when complete, so an interrupted or failed
//! build leaves no half-built kernel; the staging directory is removed.
//!
//! The cache key is the sha256 of the inputs: the source package and version, fslab's
//! base configuration, the fragment, each patch in order, the compiler. A build whose
//! key matches `kernels/NAME/kernel.json` is a cache hit and does nothing.

use super::install::{file_name, io, lock_file, run, run_env, KernelError};
use super::kconfig::{defines, dropped, parse_fragment, Dropped, FragmentOption};
use super::patches;
use super::provenance::{BuildProvenance, KernelKind, KernelProvenance, PatchProvenance, CONFIG};
use super::source::{self, SOURCES};
use super::{installed_in, known, InstalledKernel};
use crate::tools::build::sha256_file;
use crate::tools::Input;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// fslab's base configuration, merged over `make ARCH=um defconfig`.
pub const BASE_CONFIG: &str = include_str!("base.config");

/// Bumped when the way fslab builds changes, so that older builds are not cache hits.
const RECIPE: &str = "fslab-kernels-build-1";

/// The make target: the UML kernel program.
const MAKE_TARGET: &str = "linux";

/// The kernel program in a built kernel's directory.
const BINARY: &str = "linux";

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error("`{name}` cannot name a built kernel: {why}")]
    BadName { name: String, why: String },
    #[error("fslab cannot build from `{spec}`: known sources are {known} (optionally `=VERSION`)")]
    UnknownSource { spec: String, known: String },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: `{text}` is not a configuration line (want `CONFIG_X=y`, `CONFIG_X=\"text\"` or `# CONFIG_X is not set`)")]
    Fragment {
        path: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{fragment}: `make olddefconfig` dropped {}: {}", plural(dropped.len()), dropped.join("; "))]
    Dropped {
        /// The fragment (or "fslab's base configuration").
        fragment: String,
        /// Each option, what it became, and why if known.
        dropped: Vec<String>,
    },
    #[error("patch {n}/{total} {}{} does not apply: {detail}", path.display(), message.as_ref().map_or_else(String::new, |(i, m, s)| format!(" (message {i}/{m}: \"{s}\")")))]
    Patch {
        n: usize,
        total: usize,
        path: PathBuf,
        message: Option<(usize, usize, String)>,
        detail: String,
    },
    #[error(
        "`{step}` failed ({status}) after {elapsed}; its last lines:\n{tail}\nthe whole log: {log}"
    )]
    Make {
        step: String,
        status: String,
        elapsed: String,
        tail: String,
        log: PathBuf,
    },
    #[error("`fslab kernels build` needs {missing} on PATH (Debian: apt-get install {packages})")]
    MissingTools { missing: String, packages: String },
    #[error("interrupted during {phase}: nothing was cached (the staging directory was removed)")]
    Interrupted { phase: String },
}

fn plural(n: usize) -> String {
    if n == 1 {
        "an option".into()
    } else {
        format!("{n} options")
    }
}

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub name: String,
    /// `linux-source-6.12`, or `linux-source-6.12=6.12.117-1`.
    pub source: String,
    pub fragment: Option<PathBuf>,
    pub patches: Vec<PathBuf>,
    /// `make -j`.
    pub jobs: usize,
    /// Refresh fslab's apt lists before resolving the source version.
    pub update: bool,
}

/// What happened.
#[derive(Debug, Clone)]
pub enum BuildOutcome {
    /// A kernel built from the same inputs was there; nothing was done.
    Cached(InstalledKernel),
    /// Built (replacing `replaced`, a build of other inputs, if any).
    Built {
        kernel: InstalledKernel,
        total: Duration,
        replaced: bool,
    },
}

/// One input file: its bytes' sha256 and size, and where it was.
struct InputFile {
    path: PathBuf,
    input: Input,
}

fn input(path: &Path) -> Result<InputFile, BuildError> {
    let read = |source| BuildError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Absolute: the tools that read it run in the source tree.
    let path = &std::path::absolute(path).map_err(read)?;
    let (sha256, bytes) = sha256_file(path).map_err(read)?;
    Ok(InputFile {
        path: path.to_path_buf(),
        input: Input {
            name: file_name(path),
            sha256,
            bytes,
        },
    })
}

fn sha256_text(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A name for `kernels/NAME`: not `host`, not a kernel `fslab kernels install` knows,
/// letters, digits, `.`, `_`, `-`.
fn check_name(name: &str) -> Result<(), BuildError> {
    let bad = |why: &str| BuildError::BadName {
        name: name.to_string(),
        why: why.to_string(),
    };
    if name == "host" {
        return Err(bad("`host` is the host's own kernel"));
    }
    if known(name).is_some() {
        return Err(bad("it is a kernel `fslab kernels install` provisions"));
    }
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(bad(
            "use up to 64 letters, digits, `.`, `_` and `-`, starting with a letter or digit",
        ));
    }
    Ok(())
}

/// The programs a build runs, and the Debian package of each.
const TOOLS: &[(&str, &str)] = &[
    ("make", "make"),
    ("gcc", "gcc"),
    ("flex", "flex"),
    ("bison", "bison"),
    ("bc", "bc"),
    ("patch", "patch"),
    ("git", "git"),
    ("tar", "tar"),
    ("xz", "xz-utils"),
    ("apt-get", "apt"),
    ("dpkg-deb", "dpkg"),
];

/// Every program of [`TOOLS`] is on PATH, or an error naming the missing ones.
fn check_tools() -> Result<(), BuildError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = |p: &str| std::env::split_paths(&path).any(|d| d.join(p).is_file());
    let missing: Vec<&(&str, &str)> = TOOLS.iter().filter(|(p, _)| !found(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(BuildError::MissingTools {
        missing: missing
            .iter()
            .map(|(p, _)| *p)
            .collect::<Vec<_>>()
            .join(", "),
        packages: missing
            .iter()
            .map(|(_, d)| *d)
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// `gcc --version`'s first line.
fn compiler(dir: &Path) -> Result<String, KernelError> {
    let out = run("gcc --version", dir, "gcc", &["--version".into()])?;
    Ok(out.lines().next().unwrap_or("").trim().to_string())
}

/// The inputs, one a line, in the order they act.
fn key_text(
    source: &str,
    version: &str,
    fragment: Option<&InputFile>,
    patches: &[InputFile],
    compiler: &str,
) -> String {
    let mut t = format!(
        "recipe {RECIPE}\narch um\nsource {source} {version}\nbase-config sha256:{}\n",
        sha256_text(BASE_CONFIG)
    );
    match fragment {
        Some(f) => t.push_str(&format!("fragment sha256:{}\n", f.input.sha256)),
        None => t.push_str("fragment none\n"),
    }
    for (i, p) in patches.iter().enumerate() {
        t.push_str(&format!("patch {} sha256:{}\n", i + 1, p.input.sha256));
    }
    t.push_str(&format!("compiler {compiler}\nmake-target {MAKE_TARGET}\n"));
    t
}

/// The built kernel `name` in `kernels_dir` if its key is `key`.
fn cached(kernels_dir: &Path, name: &str, key: &str) -> Option<InstalledKernel> {
    installed_in(kernels_dir).into_iter().find(|k| {
        k.provenance.name == name
            && k.provenance.build.as_ref().is_some_and(|b| b.key == key)
            && k.binary().is_file()
    })
}

/// Removes the staging directory when dropped (error, interruption, panic), unless
/// the build finished.
struct Staging<'a> {
    dir: PathBuf,
    progress: &'a dyn Fn(&str),
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        if self.dir.exists() {
            (self.progress)(&format!("removing {}", self.dir.display()));
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn check_cancel(cancel: &AtomicBool, phase: &str) -> Result<(), BuildError> {
    if cancel.load(Ordering::SeqCst) {
        return Err(BuildError::Interrupted {
            phase: phase.to_string(),
        });
    }
    Ok(())
}

/// `12m05s`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Build `req` into `kernels_dir` (see [`super::kernels_dir`]). `progress` is told each
/// phase; `cancel` (set by SIGINT/SIGTERM) stops the build, which then leaves nothing.
pub fn build(
    req: &BuildRequest,
    kernels_dir: &Path,
    progress: &dyn Fn(&str),
    cancel: &AtomicBool,
) -> Result<BuildOutcome, BuildError> {
    let start = Instant::now();
    check_name(&req.name)?;
    let (src, pinned) =
        source::parse_source(&req.source).ok_or_else(|| BuildError::UnknownSource {
            spec: req.source.clone(),
            known: SOURCES
                .iter()
                .map(|s| s.package)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let fragment = match &req.fragment {
        Some(p) => {
            let f = input(p)?;
            let text = std::fs::read_to_string(&f.path).map_err(|source| BuildError::Read {
                path: p.clone(),
                source,
            })?;
            let options = parse_fragment(&text).map_err(|b| BuildError::Fragment {
                path: p.clone(),
                line: b.line,
                text: b.text,
            })?;
            Some((f, options))
        }
        None => None,
    };
    let patches: Vec<InputFile> = req
        .patches
        .iter()
        .map(|p| input(p))
        .collect::<Result<_, _>>()?;
    check_tools()?;
    std::fs::create_dir_all(kernels_dir)
        .map_err(io(format!("creating {}", kernels_dir.display())))?;
    let compiler = compiler(kernels_dir)?;
    let version = match pinned {
        Some(v) => v,
        None => source::resolve_version(kernels_dir, src, req.update, progress)?,
    };
    let key_text = key_text(
        src.package,
        &version,
        fragment.as_ref().map(|(f, _)| f),
        &patches,
        &compiler,
    );
    let key = sha256_text(&key_text);
    if let Some(k) = cached(kernels_dir, &req.name, &key) {
        return Ok(BuildOutcome::Cached(k));
    }
    // One build of a name at a time; another may have finished it meanwhile.
    let _lock = lock_file(
        kernels_dir,
        &format!(".build/built-{}.lock", req.name),
        progress,
    )?;
    if let Some(k) = cached(kernels_dir, &req.name, &key) {
        return Ok(BuildOutcome::Cached(k));
    }
    let replaced = kernels_dir.join(&req.name).exists();
    let staging = Staging {
        dir: kernels_dir
            .join(".build")
            .join(format!("built-{}", req.name)),
        progress,
    };
    if staging.dir.exists() {
        // Left by a build that was killed.
        std::fs::remove_dir_all(&staging.dir)
            .map_err(io(format!("removing {}", staging.dir.display())))?;
    }
    std::fs::create_dir_all(&staging.dir)
        .map_err(io(format!("creating {}", staging.dir.display())))?;

    let t = Instant::now();
    progress(&format!("fetch: {} {version}", src.package));
    let (cached_src, was_cached) = source::fetch(kernels_dir, src, &version, progress)?;
    progress(&format!(
        "fetch: {} ({}, {:.0} MiB, sha256 {}): {}",
        cached_src.deb.name,
        if was_cached { "cached" } else { "downloaded" },
        cached_src.deb.bytes as f64 / (1 << 20) as f64,
        &cached_src.deb.sha256[..12],
        elapsed(t.elapsed())
    ));
    check_cancel(cancel, "fetch")?;

    let t = Instant::now();
    progress(&format!(
        "unpack: {} into {}",
        cached_src.tarball,
        staging.dir.display()
    ));
    let tree = source::unpack(kernels_dir, &cached_src, &staging.dir)?;
    progress(&format!("unpack: {}", elapsed(t.elapsed())));
    check_cancel(cancel, "unpack")?;

    let patch_records = apply_patches(&tree, &staging.dir, &patches, progress, cancel)?;

    let options = configure(&tree, &staging.dir, fragment.as_ref(), progress)?;
    check_cancel(cancel, "config")?;

    let log = staging.dir.join("build.log");
    let load_before = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let make_time = make(
        &tree,
        req.jobs,
        &log,
        progress,
        cancel,
        kernels_dir,
        &req.name,
    )?;

    let out = staging.dir.join("out");
    std::fs::create_dir_all(out.join("inputs")).map_err(io("creating the kernel's directory"))?;
    std::fs::rename(tree.join(BINARY), out.join(BINARY)).map_err(io("moving the kernel"))?;
    let release = run(
        "the kernel's --version",
        &out,
        &out.join(BINARY).display().to_string(),
        &["--version".into()],
    )?
    .trim()
    .to_string();
    let config_text =
        std::fs::read_to_string(tree.join(".config")).map_err(io("reading .config"))?;
    std::fs::write(out.join(CONFIG), &config_text).map_err(io("writing config"))?;
    std::fs::rename(&log, out.join("build.log")).map_err(io("keeping the build log"))?;
    if let Some((f, _)) = &fragment {
        std::fs::copy(&f.path, out.join("inputs").join(&f.input.name))
            .map_err(io("copying the fragment"))?;
    }
    for (i, p) in patches.iter().enumerate() {
        std::fs::copy(
            &p.path,
            out.join("inputs")
                .join(format!("{:02}-{}", i + 1, p.input.name)),
        )
        .map_err(io("copying a patch"))?;
    }
    let provenance = KernelProvenance {
        name: req.name.clone(),
        kind: KernelKind::Uml,
        release,
        package: cached_src.package.clone(),
        package_version: cached_src.version.clone(),
        built_using: None,
        apt_source: cached_src.apt_source.clone(),
        deb: cached_src.deb.clone(),
        binary: BINARY.to_string(),
        libc: None,
        build: Some(BuildProvenance {
            key,
            key_text,
            arch: "um".into(),
            base_config: Input {
                name: "fslab's base configuration (src/kernels/base.config)".into(),
                sha256: sha256_text(BASE_CONFIG),
                bytes: BASE_CONFIG.len() as u64,
            },
            fragment: fragment.as_ref().map(|(f, _)| f.input.clone()),
            fragment_options: options,
            patches: patch_records,
            config_sha256: sha256_text(&config_text),
            compiler,
            make_target: MAKE_TARGET.into(),
            jobs: req.jobs,
            make_seconds: make_time.as_secs_f64(),
            load_before,
        }),
        installed_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    provenance.write(&out).map_err(io("writing kernel.json"))?;
    check_cancel(cancel, "make")?;
    let dir = kernels_dir.join(&req.name);
    if dir.exists() {
        // The earlier build of this name (other inputs) goes into the staging
        // directory, removed below.
        std::fs::rename(&dir, staging.dir.join("replaced"))
            .map_err(io(format!("moving {} aside", dir.display())))?;
    }
    std::fs::rename(&out, &dir).map_err(io(format!("moving the kernel to {}", dir.display())))?;
    drop(staging);
    Ok(BuildOutcome::Built {
        kernel: InstalledKernel { dir, provenance },
        total: start.elapsed(),
        replaced,
    })
}

/// Apply `patches` to `tree` in order.
fn apply_patches(
    tree: &Path,
    staging: &Path,
    patches: &[InputFile],
    progress: &dyn Fn(&str),
    cancel: &AtomicBool,
) -> Result<Vec<PatchProvenance>, BuildError> {
    let total = patches.len();
    let mut out = Vec::new();
    for (i, p) in patches.iter().enumerate() {
        let scratch = staging.join(format!("patch-{}", i + 1));
        std::fs::create_dir_all(&scratch).map_err(io(format!("creating {}", scratch.display())))?;
        let t = Instant::now();
        progress(&format!("patch {}/{total}: {}", i + 1, p.path.display()));
        let applied =
            patches::apply(tree, &p.path, &scratch, progress).map_err(|f| BuildError::Patch {
                n: i + 1,
                total,
                path: p.path.clone(),
                message: f.message,
                detail: f.detail,
            })?;
        progress(&format!(
            "patch {}/{total}: applied ({}{}), {}",
            i + 1,
            applied.format.as_str(),
            if applied.subjects.is_empty() {
                String::new()
            } else {
                format!(", {} message(s)", applied.subjects.len())
            },
            elapsed(t.elapsed())
        ));
        out.push(PatchProvenance {
            file: p.input.clone(),
            format: applied.format.as_str().to_string(),
            subjects: applied.subjects,
        });
        check_cancel(cancel, "patch")?;
    }
    Ok(out)
}

/// `make ARCH=um defconfig`, merge fslab's base and the fragment, `make olddefconfig`,
/// then check every option of both; returns the fragment's options as they are.
fn configure(
    tree: &Path,
    staging: &Path,
    fragment: Option<&(InputFile, Vec<FragmentOption>)>,
    progress: &dyn Fn(&str),
) -> Result<Vec<String>, BuildError> {
    let t = Instant::now();
    let um = [("ARCH".to_string(), "um".to_string())];
    progress("config: make ARCH=um defconfig, fslab's base, the fragment, olddefconfig");
    run(
        "make ARCH=um defconfig",
        tree,
        "make",
        &["ARCH=um".into(), "defconfig".into()],
    )?;
    let base = staging.join("fslab-base.config");
    std::fs::write(&base, BASE_CONFIG).map_err(io("writing fslab's base configuration"))?;
    let mut args = vec![
        "-m".to_string(),
        "-O".into(),
        tree.display().to_string(),
        tree.join(".config").display().to_string(),
        base.display().to_string(),
    ];
    if let Some((f, _)) = fragment {
        args.push(f.path.display().to_string());
    }
    run_env(
        "scripts/kconfig/merge_config.sh -m",
        tree,
        &tree
            .join("scripts/kconfig/merge_config.sh")
            .display()
            .to_string(),
        &args,
        &um,
    )?;
    run(
        "make ARCH=um olddefconfig",
        tree,
        "make",
        &["ARCH=um".into(), "olddefconfig".into()],
    )?;
    let config = std::fs::read_to_string(tree.join(".config")).map_err(io("reading .config"))?;
    let base_options = parse_fragment(BASE_CONFIG).unwrap_or_default();
    let lost = dropped(&base_options, &config);
    if !lost.is_empty() {
        return Err(BuildError::Dropped {
            fragment: "fslab's base configuration (src/kernels/base.config)".into(),
            dropped: explain(tree, &lost),
        });
    }
    let mut kept = Vec::new();
    if let Some((f, options)) = fragment {
        let lost = dropped(options, &config);
        if !lost.is_empty() {
            return Err(BuildError::Dropped {
                fragment: f.path.display().to_string(),
                dropped: explain(tree, &lost),
            });
        }
        kept = options.iter().map(|o| o.as_line()).collect();
    }
    progress(&format!("config: {}", elapsed(t.elapsed())));
    Ok(kept)
}

/// Each dropped option, and whether any Kconfig of the tree defines it.
fn explain(tree: &Path, lost: &[Dropped]) -> Vec<String> {
    let kconfigs: Vec<String> = walkdir::WalkDir::new(tree)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_type().is_file() && e.file_name().to_string_lossy().starts_with("Kconfig")
        })
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    lost.iter()
        .map(|d| {
            let symbol = d.option.key.trim_start_matches("CONFIG_");
            let why = if kconfigs.iter().any(|k| defines(k, symbol)) {
                "its dependencies are not met (see `make ARCH=um menuconfig`, then `/` and the symbol)"
            } else {
                "no Kconfig of this source defines it"
            };
            format!("{}: {why}", d.describe())
        })
        .collect()
}

/// `make ARCH=um -jN linux`, its output into `log`, in its own process group (killed on
/// `cancel`), telling `progress` the elapsed time and the file it is at every 30 s.
fn make(
    tree: &Path,
    jobs: usize,
    log: &Path,
    progress: &dyn Fn(&str),
    cancel: &AtomicBool,
    kernels_dir: &Path,
    name: &str,
) -> Result<Duration, BuildError> {
    use std::os::unix::process::CommandExt;
    let step = format!("make ARCH=um -j{jobs} {MAKE_TARGET}");
    progress(&format!("make: {step} (log: {})", log.display()));
    let file = std::fs::File::create(log).map_err(io(format!("creating {}", log.display())))?;
    let err = file.try_clone().map_err(io("the build log"))?;
    let start = Instant::now();
    let mut child = std::process::Command::new("make")
        .args(["ARCH=um", &format!("-j{jobs}"), MAKE_TARGET])
        .current_dir(tree)
        .stdin(std::process::Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| KernelError::Step {
            step: step.clone(),
            gist: format!("cannot start make: {e}"),
        })?;
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let mut told = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => {
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                return Err(KernelError::Io {
                    context: "waiting for make".into(),
                    source: e,
                }
                .into());
            }
        }
        if cancel.load(Ordering::SeqCst) {
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGTERM);
            std::thread::sleep(Duration::from_millis(500));
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            return Err(BuildError::Interrupted {
                phase: format!("make (after {})", elapsed(start.elapsed())),
            });
        }
        if told.elapsed() >= Duration::from_secs(30) {
            told = Instant::now();
            let text = tail_of(log, 4096);
            let at = text
                .lines()
                .rev()
                .find(|l| l.starts_with("  ") && l.trim().contains(' '))
                .map(|l| {
                    format!(
                        ", at {}",
                        l.split_whitespace().collect::<Vec<_>>().join(" ")
                    )
                })
                .unwrap_or_default();
            progress(&format!("make: {} elapsed{at}", elapsed(start.elapsed())));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let took = start.elapsed();
    if !status.success() {
        // Keep the log where the next build does not remove it.
        let kept = kernels_dir
            .join(".build")
            .join(format!("built-{name}.failed.log"));
        let _ = std::fs::copy(log, &kept);
        let text = tail_of(log, 64 * 1024);
        let errors: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("error:") || l.contains("Error "))
            .collect();
        let tail = if errors.is_empty() {
            last_n(&text, 25)
        } else {
            format!(
                "{}\n…\n{}",
                errors[..errors.len().min(10)].join("\n"),
                last_n(&text, 10)
            )
        };
        return Err(BuildError::Make {
            step,
            status: status.to_string(),
            elapsed: elapsed(took),
            tail,
            log: kept,
        });
    }
    progress(&format!("make: done in {}", elapsed(took)));
    Ok(took)
}

fn last_n(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last `bytes` of a file, as text.
fn tail_of(path: &Path, bytes: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(bytes)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).to_string()
}

#[cfg(test)]
mod tests {
    use super::{check_name, elapsed, BASE_CONFIG};
    use crate::kernels::kconfig::parse_fragment;
    use std::time::Duration;

    #[test]
    fn names_and_the_base_configuration() {
        assert!(check_name("uml-6.12-rt").is_ok());
        for bad in ["host", "uml-bookworm", "", "-x", "a/b", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let base = parse_fragment(BASE_CONFIG).unwrap();
        assert!(base.iter().any(|o| o.as_line() == "CONFIG_XFS_RT=y"));
        assert!(base
            .iter()
            .any(|o| o.as_line() == "# CONFIG_MODULES is not set"));
        assert_eq!(elapsed(Duration::from_secs(725)), "12m05s");
    }
}
