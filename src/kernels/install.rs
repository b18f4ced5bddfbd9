//! `fslab kernels install NAME`: fetch a kernel's Debian binary package with fslab's own
//! apt state, unpack it, and record where it came from.
//!
//! The package is unpacked into `kernels/.build/<name>/`, which is moved to
//! `kernels/<name>/` only once it is complete (the kernel answers `--version`, its
//! configuration is read, `kernel.json` is written): a directory without `kernel.json`
//! is never taken for an installed kernel.

use super::provenance::{KernelProvenance, LibcProvenance, CONFIG};
use super::{installed_in, known, InstalledKernel, Known, KNOWN};
use crate::tools::build::{apt_options, sha256_file};
use crate::tools::Input;
use nix::fcntl::{Flock, FlockArg};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("fslab knows no kernel `{name}`; known: {known}")]
    Unknown { name: String, known: String },
    #[error("{step} failed: {gist}")]
    Step { step: String, gist: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

pub(super) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> KernelError {
    let context = context.into();
    move |source| KernelError::Io { context, source }
}

/// What happened.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// It was installed already; nothing was done.
    AlreadyInstalled(InstalledKernel),
    Installed(InstalledKernel),
}

/// Run `program args` in `dir`, returning its stdout; a failure names the step and
/// the last lines it printed.
pub(super) fn run(
    step: &str,
    dir: &Path,
    program: &str,
    args: &[String],
) -> Result<String, KernelError> {
    run_env(step, dir, program, args, &[])
}

/// Unpack the Debian package `deb` into `into` (`dpkg-deb -x`), run in `dir`.
pub(super) fn extract_deb(dir: &Path, deb: &Path, into: &Path) -> Result<(), KernelError> {
    run(
        "dpkg-deb -x",
        dir,
        "dpkg-deb",
        &[
            "-x".into(),
            deb.display().to_string(),
            into.display().to_string(),
        ],
    )
    .map(drop)
}

/// [`run`], with `env` set for that program only.
pub(super) fn run_env(
    step: &str,
    dir: &Path,
    program: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<String, KernelError> {
    let mut cmd = duct::cmd(program, args);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let out = cmd
        .dir(dir)
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| KernelError::Step {
            step: step.to_string(),
            gist: format!("cannot start `{program}`: {e}"),
        })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).to_string());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let gist = lines[lines.len().saturating_sub(3)..].join(" | ");
    Err(KernelError::Step {
        step: format!("{step} ({})", out.status),
        gist,
    })
}

/// fslab's own apt state for `k`'s suite under `kernels_dir`, with its sources list;
/// returns apt-get's options and the source line.
fn apt_state(kernels_dir: &Path, k: &Known) -> Result<(Vec<String>, String), KernelError> {
    apt_state_for(kernels_dir, k.suite, k.mirror)
}

/// fslab's own apt state for `suite` (binary packages from `mirror`) under
/// `kernels_dir`: `.apt-<suite>/`, shared by installs and builds.
pub(super) fn apt_state_for(
    kernels_dir: &Path,
    suite: &str,
    mirror: &str,
) -> Result<(Vec<String>, String), KernelError> {
    let apt = kernels_dir.join(format!(".apt-{suite}"));
    for d in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(apt.join(d)).map_err(io(format!("creating {}", apt.display())))?;
    }
    let line = format!("deb {mirror} {suite} main");
    std::fs::write(apt.join("sources.list"), format!("{line}\n"))
        .map_err(io("writing fslab's apt sources list"))?;
    // An empty dpkg status: nothing is installed as far as this state knows.
    if !apt.join("status").exists() {
        std::fs::write(apt.join("status"), "").map_err(io("creating fslab's apt status"))?;
    }
    Ok((apt_options(&apt), line))
}

/// Install the kernel `name` into `kernels_dir` (see [`super::kernels_dir`]);
/// `progress` is told each step.
pub fn install(
    name: &str,
    kernels_dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<Outcome, KernelError> {
    let k = known(name).ok_or_else(|| KernelError::Unknown {
        name: name.to_string(),
        known: KNOWN.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
    })?;
    let done = || {
        installed_in(kernels_dir)
            .into_iter()
            .find(|i| i.provenance.name == k.name)
    };
    if let Some(i) = done() {
        return Ok(Outcome::AlreadyInstalled(i));
    }
    // One install at a time per kernels directory (they share the apt state and the
    // staging trees); another may have installed this kernel meanwhile.
    let _lock = lock(kernels_dir, progress)?;
    if let Some(i) = done() {
        return Ok(Outcome::AlreadyInstalled(i));
    }
    let (apt, source) = apt_state(kernels_dir, k)?;
    let staging = kernels_dir.join(".build").join(k.name);
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(format!("removing {}", staging.display())))?;
    }
    std::fs::create_dir_all(&staging).map_err(io(format!("creating {}", staging.display())))?;

    progress(&format!("apt-get update ({source})"));
    let mut args = apt.clone();
    args.push("update".into());
    run("apt-get update", &staging, "apt-get", &args)?;
    progress(&format!("apt-get download {}", k.package));
    let mut args = apt.clone();
    args.extend(["download".into(), k.package.into()]);
    run("apt-get download", &staging, "apt-get", &args)?;
    let deb = debian_package(&staging, k.package)?;
    let libc_deb = match k.libc {
        Some(pkg) => {
            progress(&format!("apt-get download {pkg}"));
            let mut args = apt;
            args.extend(["download".into(), pkg.into()]);
            run("apt-get download", &staging, "apt-get", &args)?;
            Some((pkg, debian_package(&staging, pkg)?))
        }
        None => None,
    };
    let (sha256, bytes) = sha256_file(&deb).map_err(io(format!("reading {}", deb.display())))?;
    let field = |f: &str| -> Result<Option<String>, KernelError> {
        let v = run(
            "dpkg-deb -f",
            &staging,
            "dpkg-deb",
            &["-f".into(), deb.display().to_string(), f.into()],
        )?;
        Ok(Some(v.trim().to_string()).filter(|v| !v.is_empty()))
    };
    let package_version = field("Version")?.unwrap_or_default();
    let built_using = field("Built-Using")?;

    progress(&format!("dpkg-deb -x {}", file_name(&deb)));
    let root = staging.join("root");
    extract_deb(&staging, &deb, &root)?;
    let binary = Path::new("root").join(k.binary);
    let final_dir = kernels_dir.join(k.name);
    let libc = match &libc_deb {
        Some((pkg, libc_deb)) => Some(use_libc(&staging, &root, &binary, pkg, libc_deb, progress)?),
        None => None,
    };
    // The kernel answers, with its C library (the loader as staged).
    let env: Vec<(String, String)> = libc
        .iter()
        .map(|l| {
            (
                "LD_LIBRARY_PATH".to_string(),
                staging.join(&l.library_path).display().to_string(),
            )
        })
        .collect();
    let release = run_env(
        "the kernel's --version",
        &staging,
        &staging.join(&binary).display().to_string(),
        &["--version".into()],
        &env,
    )?
    .trim()
    .to_string();
    if let Some(l) = &libc {
        // Now the interpreter where the kernel will live.
        set_interpreter(&staging, &binary, &final_dir.join(&l.interpreter))?;
    }
    let config = run(
        "reading the kernel's configuration",
        &staging,
        "gzip",
        &["-dc".into(), root.join(k.config_gz).display().to_string()],
    )?;
    std::fs::write(staging.join(CONFIG), config).map_err(io("writing the kernel's config"))?;
    let provenance = KernelProvenance {
        name: k.name.to_string(),
        kind: k.kind,
        release,
        package: k.package.to_string(),
        package_version,
        built_using,
        apt_source: source,
        deb: Input {
            name: file_name(&deb),
            sha256,
            bytes,
        },
        binary: binary.display().to_string(),
        libc,
        build: None,
        installed_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    // The package's files and what was read from them are kept; the .deb is not (its
    // sha256 is).
    std::fs::remove_file(&deb).map_err(io(format!("removing {}", deb.display())))?;
    provenance
        .write(&staging)
        .map_err(io("writing kernel.json"))?;
    let dir = final_dir;
    // An incomplete installation (no kernel.json) is replaced.
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(format!("removing {}", dir.display())))?;
    }
    std::fs::rename(&staging, &dir).map_err(io(format!(
        "moving {} to {}",
        staging.display(),
        dir.display()
    )))?;
    Ok(Outcome::Installed(InstalledKernel { dir, provenance }))
}

/// Unpack the C library package `deb` into `root` and make it the kernel's: its loader
/// becomes the kernel program's ELF interpreter (here, in `staging`; the caller sets it
/// again for the kernel's final directory once the kernel answered). Starting the kernel through the
/// loader as a program does not work: UML then sees another memory layout ("Too few
/// physical memory!").
fn use_libc(
    staging: &Path,
    root: &Path,
    binary: &Path,
    pkg: &str,
    deb: &Path,
    progress: &dyn Fn(&str),
) -> Result<LibcProvenance, KernelError> {
    let (sha256, bytes) = sha256_file(deb).map_err(io(format!("reading {}", deb.display())))?;
    let version = run(
        "dpkg-deb -f",
        staging,
        "dpkg-deb",
        &["-f".into(), deb.display().to_string(), "Version".into()],
    )?
    .trim()
    .to_string();
    progress(&format!("dpkg-deb -x {}", file_name(deb)));
    extract_deb(staging, deb, root)?;
    let found = |name: &str| -> Result<PathBuf, KernelError> {
        [
            "usr/lib/x86_64-linux-gnu",
            "lib/x86_64-linux-gnu",
            "usr/lib64",
            "lib64",
        ]
        .iter()
        .map(|d| Path::new("root").join(d).join(name))
        .find(|p| staging.join(p).exists())
        .ok_or_else(|| KernelError::Step {
            step: format!("unpacking {pkg}"),
            gist: format!("no {name} in the package"),
        })
    };
    let interpreter = found("ld-linux-x86-64.so.2")?;
    let libc_so = found("libc.so.6")?;
    let library_path = libc_so.parent().map(Path::to_path_buf).unwrap_or_default();
    let (before, _) =
        sha256_file(&staging.join(binary)).map_err(io(format!("reading {}", binary.display())))?;
    progress("patchelf --set-interpreter (the kernel runs with its own C library)");
    set_interpreter(staging, binary, &staging.join(&interpreter))?;
    std::fs::remove_file(deb).map_err(io(format!("removing {}", deb.display())))?;
    Ok(LibcProvenance {
        package: pkg.to_string(),
        package_version: version,
        deb: Input {
            name: file_name(deb),
            sha256,
            bytes,
        },
        interpreter: interpreter.display().to_string(),
        library_path: library_path.display().to_string(),
        binary_sha256_before: before,
    })
}

/// `patchelf --set-interpreter LOADER BINARY` (Debian's `patchelf` package).
fn set_interpreter(staging: &Path, binary: &Path, loader: &Path) -> Result<(), KernelError> {
    run(
        "patchelf --set-interpreter (apt-get install patchelf)",
        staging,
        "patchelf",
        &[
            "--set-interpreter".into(),
            loader.display().to_string(),
            staging.join(binary).display().to_string(),
        ],
    )
    .map(|_| ())
}

/// The exclusive lock on `<kernels_dir>/.lock` (the apt state, the staging trees),
/// waiting (and saying so) for another install to finish.
pub(super) fn lock(
    kernels_dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<Flock<std::fs::File>, KernelError> {
    lock_file(kernels_dir, ".lock", progress)
}

/// The exclusive lock on `<kernels_dir>/<name>`, waiting (and saying so) for whoever
/// holds it.
pub(super) fn lock_file(
    kernels_dir: &Path,
    name: &str,
    progress: &dyn Fn(&str),
) -> Result<Flock<std::fs::File>, KernelError> {
    let path = kernels_dir.join(name);
    let parent = path.parent().unwrap_or(kernels_dir);
    std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(path.display().to_string()))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => Ok(l),
        Err((f, _)) => {
            progress(&format!(
                "waiting for another fslab holding {} (an install or a build)",
                path.display()
            ));
            Flock::lock(f, FlockArg::LockExclusive).map_err(|(_, e)| KernelError::Io {
                context: path.display().to_string(),
                source: std::io::Error::from(e),
            })
        }
    }
}

pub(super) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// The one `<package>_*.deb` that `apt-get download` left in `dir`.
pub(super) fn debian_package(dir: &Path, package: &str) -> Result<PathBuf, KernelError> {
    let prefix = format!("{package}_");
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(format!("reading {}", dir.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = file_name(p);
            n.starts_with(&prefix) && n.ends_with(".deb")
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(KernelError::Step {
            step: "apt-get download".into(),
            gist: format!(
                "expected one {prefix}*.deb in {}, found {}",
                dir.display(),
                found.len()
            ),
        }),
    }
}
