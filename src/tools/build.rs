//! Building a tool from source into the tools directory.
//!
//! Sources: a Debian source package of a newer suite (fetched with apt-get using fslab's
//! own state directory and sources list under `<tools dir>/.apt`, never `/etc/apt`), an
//! upstream tarball with a known sha256, or a git checkout. Build dependencies that are
//! missing are installed with the system's `apt-get install`, like any package.
//!
//! The build happens in `<tools dir>/.build/<name>-<version>/`; `make install` goes to a
//! staging tree there, which is moved into `<tools dir>/<name>-<version>/` only once it is
//! complete (programs, `provenance.json`, `build.log`). A directory without
//! `provenance.json` is never taken for an installed tool.

use super::provenance::{Input, Provenance, SourceKind};
use super::recipe::{self, Recipe};
use super::{find_installed, Installed};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Where the source comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The Debian source package of `suite` (None: the recipe's).
    Debian { suite: Option<String> },
    /// An upstream release tarball, checked against `sha256` before it is used.
    Tarball { file: PathBuf, sha256: String },
    /// A git repository at a tag (or branch, or commit reachable from one).
    Git { url: String, reference: String },
}

/// What to build.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: String,
    /// The upstream version wanted (None: the recipe's pinned one, or the tarball's / tag's).
    pub version: Option<String>,
    pub source: Source,
    pub tools_dir: PathBuf,
    /// `make -j` (default: the number of CPUs).
    pub jobs: usize,
    /// Fetch and check the sources, build nothing.
    pub download_only: bool,
}

/// What happened.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// That version was already installed; nothing was done.
    AlreadyInstalled(Installed),
    /// `download_only`: the sources are in `dir`, with these checksums.
    Downloaded { dir: PathBuf, inputs: Vec<Input> },
    /// Built and installed.
    Built(Installed),
}

/// Progress of a build, for people.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A step starts (`apt-get update`, `configure`, `make -j2` …).
    Step(String),
    /// `make`: files compiled so far, of about `total`; the last thing linked.
    Make {
        compiled: usize,
        total: usize,
        linked: Option<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("fslab has no recipe for `{name}`; known: {known}")]
    UnknownTool { name: String, known: String },
    #[error("{suite}'s source package {name} is {found}, not version {wanted}; build {wanted} with --tarball FILE --sha256 HEX or --git URL --ref TAG")]
    VersionUnavailable {
        name: String,
        wanted: String,
        suite: String,
        found: String,
    },
    #[error("{file}: sha256 is {actual}, expected {expected}")]
    Sha256Mismatch {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("cannot tell the version of {what}; give it as NAME=VERSION")]
    NoVersion { what: String },
    #[error("installing the build dependencies failed ({packages}): {gist}")]
    BuildDeps { packages: String, gist: String },
    #[error("{step} failed{missing}: {gist} (full log: {log})")]
    Step {
        step: String,
        /// `; missing build dependency: uuid-dev (uuid/uuid.h)` when one is recognised.
        missing: String,
        gist: String,
        log: String,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> BuildError {
    let context = context.into();
    move |source| BuildError::Io { context, source }
}

/// The sha256 of a file, in hex, and its size.
pub fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((hex::encode(h.finalize()), n))
}

/// The upstream part of a Debian version: `1:6.13.0-2+deb13u1` → `6.13.0`.
pub fn upstream_version(debian: &str) -> String {
    let no_epoch = debian.split_once(':').map_or(debian, |(_, v)| v);
    no_epoch
        .rsplit_once('-')
        .map_or(no_epoch, |(u, _)| u)
        .to_string()
}

/// A version from a tarball's file name (`xfsprogs-6.13.0.tar.xz` → `6.13.0`) or a git
/// tag (`v6.13.0` → `6.13.0`).
pub fn version_from_name(name: &str, text: &str) -> Option<String> {
    let base = Path::new(text)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(text);
    let rest = base
        .strip_prefix(&format!("{name}-"))
        .or_else(|| base.strip_prefix(&format!("{name}_")))
        .unwrap_or(base);
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let v = rest[..end].trim_end_matches('.');
    (v.contains('.') && v.split('.').all(|p| !p.is_empty())).then(|| v.to_string())
}

/// The files and sha256 sums a `.dsc` lists (`Checksums-Sha256:`), and its `Version:`.
pub fn parse_dsc(text: &str) -> (Option<String>, Vec<(String, String)>) {
    let mut version = None;
    let mut sums = Vec::new();
    let mut in_sha = false;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Version:") {
            version = Some(v.trim().to_string());
        }
        if line.starts_with("Checksums-Sha256:") {
            in_sha = true;
            continue;
        }
        if in_sha {
            if let Some(rest) = line.strip_prefix(' ') {
                let w: Vec<&str> = rest.split_whitespace().collect();
                if w.len() == 3 {
                    sums.push((w[2].to_string(), w[0].to_string()));
                }
            } else {
                in_sha = false;
            }
        }
    }
    (version, sums)
}

/// The build dependency a failed configure or compile most likely lacks, from its log:
/// `(package, what was missing)`.
pub fn missing_dependency(log: &str) -> Option<(String, String)> {
    const HEADERS: &[(&str, &str)] = &[
        ("uuid/uuid.h", "uuid-dev"),
        ("blkid/blkid.h", "libblkid-dev"),
        ("ini.h", "libinih-dev"),
        ("urcu.h", "liburcu-dev"),
        ("urcu/", "liburcu-dev"),
        ("histedit.h", "libedit-dev"),
        ("editline/readline.h", "libedit-dev"),
        ("libdevmapper.h", "libdevmapper-dev"),
        ("unicode/", "libicu-dev"),
        ("libintl.h", "gettext"),
    ];
    const CONFIGURE: &[(&str, &str)] = &[
        ("UUID", "uuid-dev"),
        ("blkid", "libblkid-dev"),
        ("inih", "libinih-dev"),
        ("liburcu", "liburcu-dev"),
        ("urcu", "liburcu-dev"),
        ("libedit", "libedit-dev"),
        ("editline", "libedit-dev"),
        ("devmapper", "libdevmapper-dev"),
        ("icu", "libicu-dev"),
        ("pkg-config", "pkg-config"),
        ("msgfmt", "gettext"),
        ("libtool", "libtool"),
        ("C compiler", "gcc"),
    ];
    for line in log.lines() {
        if let Some(i) = line.find("fatal error: ") {
            let what = line[i + "fatal error: ".len()..]
                .split(':')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            if let Some((_, pkg)) = HEADERS.iter().find(|(h, _)| what.contains(h)) {
                return Some((pkg.to_string(), what));
            }
            return Some(("(unknown package)".into(), what));
        }
        if let Some(msg) = line.strip_prefix("configure: error: ") {
            if let Some((_, pkg)) = CONFIGURE.iter().find(|(k, _)| msg.contains(k)) {
                return Some((pkg.to_string(), msg.trim().to_string()));
            }
        }
        if line.contains("command not found") || line.contains(": not found") {
            let prog = line
                .split(':')
                .rev()
                .nth(1)
                .unwrap_or_default()
                .trim()
                .to_string();
            if let Some((_, pkg)) = [
                ("libtoolize", "libtool"),
                ("autoconf", "autoconf"),
                ("aclocal", "automake"),
                ("msgfmt", "gettext"),
                ("cc", "gcc"),
                ("gcc", "gcc"),
                ("make", "make"),
            ]
            .iter()
            .find(|(p, _)| prog == *p)
            {
                return Some((pkg.to_string(), format!("{prog}: command not found")));
            }
        }
    }
    None
}

/// The last lines of a log that look like errors (or the last lines, when none do).
fn gist(log: &str) -> String {
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("not found") || l.contains("no such file")
        })
        .collect();
    let pick: Vec<&str> = if errors.is_empty() {
        log.lines()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect()
    } else {
        errors
            .into_iter()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect()
    };
    pick.iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Runs the steps of one build, appending everything to its log.
struct Builder<'a> {
    log_path: PathBuf,
    log: std::fs::File,
    commands: Vec<String>,
    progress: &'a dyn Fn(Progress),
}

impl Builder<'_> {
    fn note(&mut self, text: &str) {
        let _ = writeln!(self.log, "== {text}");
    }

    /// Run a command in `dir` with `env`, streaming its output into the log; `make`
    /// lines are turned into progress when `make_total` is set.
    fn run(
        &mut self,
        step: &str,
        dir: &Path,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        make_total: Option<usize>,
    ) -> Result<String, BuildError> {
        let shown = std::iter::once(program.to_string())
            .chain(args.iter().map(|a| shell_words::quote(a).to_string()))
            .collect::<Vec<_>>()
            .join(" ");
        let env_shown: String = env
            .iter()
            .map(|(k, v)| format!("{k}={} ", shell_words::quote(v)))
            .collect();
        let line = format!("(cd {} && {env_shown}{shown})", dir.display());
        self.commands.push(line.clone());
        // For people: without apt's `-o` options (they are in the log and provenance).
        let mut brief = vec![program.to_string()];
        let mut skip = false;
        for a in args {
            if skip {
                skip = false;
            } else if a == "-o" {
                skip = true;
                if brief.last().is_none_or(|l| l != "-o …") {
                    brief.push("-o …".into());
                }
            } else {
                brief.push(shell_words::quote(a).to_string());
            }
        }
        (self.progress)(Progress::Step(format!(
            "{step}: {env_shown}{}",
            brief.join(" ")
        )));
        self.note(&line);
        let mut expr = duct::cmd(program, args)
            .dir(dir)
            .stdin_null()
            .stderr_to_stdout()
            .unchecked();
        for (k, v) in env {
            expr = expr.env(k, v);
        }
        let reader = expr.reader().map_err(|e| BuildError::Step {
            step: step.to_string(),
            missing: String::new(),
            gist: format!("cannot start `{program}`: {e}"),
            log: self.log_path.display().to_string(),
        })?;
        let mut out = String::new();
        let mut compiled = 0usize;
        let mut shown_pct = 0usize;
        let mut lines = BufReader::new(&reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lines.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(io(format!("reading the output of {step}"))(e)),
            }
            let text = String::from_utf8_lossy(&buf).to_string();
            let _ = self.log.write_all(text.as_bytes());
            if let Some(total) = make_total {
                let t = text.trim();
                if t.starts_with("[CC]") {
                    compiled += 1;
                    let pct = (compiled * 100 / total.max(1)).min(99);
                    if pct >= shown_pct + 10 {
                        shown_pct = pct - pct % 10;
                        (self.progress)(Progress::Make {
                            compiled,
                            total,
                            linked: None,
                        });
                    }
                } else if let Some(what) = t.strip_prefix("[LD]") {
                    (self.progress)(Progress::Make {
                        compiled,
                        total,
                        linked: Some(what.trim().to_string()),
                    });
                }
            }
            out.push_str(&text);
        }
        let status = reader
            .try_wait()
            .map_err(io(format!("waiting for {step}")))?
            .map(|o| o.status);
        let _ = self.log.flush();
        match status {
            Some(s) if s.success() => Ok(out),
            other => {
                let missing = missing_dependency(&out)
                    .map(|(pkg, what)| format!("; missing build dependency: {pkg} ({what})"))
                    .unwrap_or_default();
                let code = other
                    .and_then(|s| s.code())
                    .map_or("a signal".to_string(), |c| format!("exit status {c}"));
                Err(BuildError::Step {
                    step: format!("{step} ({code})"),
                    missing,
                    gist: gist(&out),
                    log: self.log_path.display().to_string(),
                })
            }
        }
    }
}

/// The options that point apt-get at fslab's own state and sources under `apt_dir`.
pub fn apt_options(apt_dir: &Path) -> Vec<String> {
    let d = apt_dir.display();
    vec![
        "-o".into(),
        format!("Dir::Etc::sourcelist={d}/sources.list"),
        "-o".into(),
        "Dir::Etc::sourceparts=/nonexistent".into(),
        "-o".into(),
        format!("Dir::State::Lists={d}/lists"),
        "-o".into(),
        format!("Dir::Cache={d}/cache"),
        "-o".into(),
        format!("Dir::State::status={d}/status"),
    ]
}

/// Installed Debian packages among `packages` are left out; the rest are returned.
fn missing_packages(packages: &[&str]) -> Vec<String> {
    packages
        .iter()
        .filter(|p| {
            let out = duct::cmd("dpkg-query", ["-W", "-f", "${Status}", p])
                .stdout_capture()
                .stderr_null()
                .unchecked()
                .run();
            !matches!(out, Ok(o) if String::from_utf8_lossy(&o.stdout).ends_with("install ok installed"))
        })
        .map(|p| p.to_string())
        .collect()
}

fn first_line_of(program: &str, args: &[&str]) -> String {
    duct::cmd(program, args)
        .stdin_null()
        .stdout_capture()
        .stderr_null()
        .unchecked()
        .run()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("{program}: unknown"))
}

/// The single directory a tarball unpacked into under `dir` (other than `skip`).
fn unpacked_dir(dir: &Path, skip: &[&Path]) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && !skip.contains(&p.as_path()))
}

/// Build and install `req`, reporting progress. Does nothing when that version is
/// already installed.
pub fn install(req: &Request, progress: &dyn Fn(Progress)) -> Result<Outcome, BuildError> {
    let recipe = recipe::named(&req.name).ok_or_else(|| BuildError::UnknownTool {
        name: req.name.clone(),
        known: recipe::ALL
            .iter()
            .map(|r| r.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    // The version, as far as it is known before fetching anything.
    let version = match (&req.version, &req.source) {
        (Some(v), _) => v.clone(),
        (None, Source::Debian { .. }) => recipe.version.to_string(),
        (None, Source::Tarball { file, .. }) => {
            version_from_name(recipe.name, &file.display().to_string()).ok_or_else(|| {
                BuildError::NoVersion {
                    what: file.display().to_string(),
                }
            })?
        }
        (None, Source::Git { reference, .. }) => version_from_name(recipe.name, reference)
            .ok_or_else(|| BuildError::NoVersion {
                what: format!("git ref {reference}"),
            })?,
    };
    if !req.download_only {
        if let Some(done) = find_installed(&req.tools_dir, recipe.name, &version) {
            return Ok(Outcome::AlreadyInstalled(done));
        }
    }
    // One install at a time per tools directory (they share the apt state and build
    // trees); another may have built this version meanwhile.
    std::fs::create_dir_all(&req.tools_dir).map_err(io(req.tools_dir.display().to_string()))?;
    let lock_path = req.tools_dir.join(".lock");
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(lock_path.display().to_string()))?;
    let _lock =
        match nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(l) => l,
            Err((f, _)) => {
                progress(Progress::Step(format!(
                    "waiting for another `fslab tools install` in {}",
                    req.tools_dir.display()
                )));
                nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive).map_err(
                    |(_, e)| BuildError::Io {
                        context: lock_path.display().to_string(),
                        source: std::io::Error::from(e),
                    },
                )?
            }
        };
    if !req.download_only {
        if let Some(done) = find_installed(&req.tools_dir, recipe.name, &version) {
            return Ok(Outcome::AlreadyInstalled(done));
        }
    }
    let key = format!("{}-{}", recipe.name, version);
    let build_dir = req.tools_dir.join(".build").join(&key);
    if build_dir.exists() {
        std::fs::remove_dir_all(&build_dir).map_err(io(build_dir.display().to_string()))?;
    }
    std::fs::create_dir_all(&build_dir).map_err(io(build_dir.display().to_string()))?;
    let log_path = build_dir.join("build.log");
    let log = std::fs::File::create(&log_path).map_err(io(log_path.display().to_string()))?;
    let mut b = Builder {
        log_path,
        log,
        commands: Vec::new(),
        progress,
    };
    let fetched = fetch(recipe, req, &version, &build_dir, &mut b)?;
    if req.download_only {
        return Ok(Outcome::Downloaded {
            dir: build_dir,
            inputs: fetched.inputs,
        });
    }
    build(recipe, req, &version, &build_dir, fetched, b).map(Outcome::Built)
}

/// What [`fetch`] got.
struct Fetched {
    inputs: Vec<Input>,
    /// The files to unpack in order: the upstream tarball first, then Debian's packaging.
    archives: Vec<PathBuf>,
    /// A git checkout (instead of archives).
    checkout: Option<PathBuf>,
    origin: String,
    kind: SourceKind,
    debian_version: Option<String>,
    apt_source: Option<String>,
}

fn fetch(
    recipe: &Recipe,
    req: &Request,
    version: &str,
    build_dir: &Path,
    b: &mut Builder,
) -> Result<Fetched, BuildError> {
    match &req.source {
        Source::Debian { suite } => {
            let suite = suite.clone().unwrap_or_else(|| recipe.suite.to_string());
            let apt_dir = req.tools_dir.join(".apt");
            for d in ["lists/partial", "cache/archives/partial"] {
                std::fs::create_dir_all(apt_dir.join(d))
                    .map_err(io(apt_dir.join(d).display().to_string()))?;
            }
            let line = format!("deb-src {} {suite} main", recipe.mirror);
            std::fs::write(apt_dir.join("sources.list"), format!("{line}\n"))
                .map_err(io(apt_dir.join("sources.list").display().to_string()))?;
            // An empty dpkg status: fslab's apt needs none of the system's (and so never
            // reads or locks it).
            let status = apt_dir.join("status");
            if !status.exists() {
                std::fs::write(&status, "").map_err(io(status.display().to_string()))?;
            }
            let opts = apt_options(&apt_dir);
            let mut args = opts.clone();
            args.push("update".into());
            b.run(
                "apt-get update (fslab's own sources list)",
                build_dir,
                "apt-get",
                &args,
                &[],
                None,
            )?;
            let mut args = opts.clone();
            args.extend(["source".into(), "--download-only".into()]);
            args.push(format!("{}/{suite}", recipe.name));
            b.run("apt-get source", build_dir, "apt-get", &args, &[], None)?;
            let dsc = std::fs::read_dir(build_dir)
                .map_err(io(build_dir.display().to_string()))?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "dsc"))
                .ok_or_else(|| BuildError::Step {
                    step: "apt-get source".into(),
                    missing: String::new(),
                    gist: "no .dsc was downloaded".into(),
                    log: b.log_path.display().to_string(),
                })?;
            let text = std::fs::read_to_string(&dsc).map_err(io(dsc.display().to_string()))?;
            let (deb_version, sums) = parse_dsc(&text);
            let deb_version = deb_version.unwrap_or_default();
            let upstream = upstream_version(&deb_version);
            if upstream != version {
                return Err(BuildError::VersionUnavailable {
                    name: recipe.name.into(),
                    wanted: version.into(),
                    suite,
                    found: deb_version,
                });
            }
            let (dsc_sum, dsc_bytes) = sha256_file(&dsc).map_err(io(dsc.display().to_string()))?;
            let mut inputs = vec![Input {
                name: dsc.file_name().unwrap_or_default().to_string_lossy().into(),
                sha256: dsc_sum,
                bytes: dsc_bytes,
            }];
            let mut archives = Vec::new();
            for (file, expected) in &sums {
                let path = build_dir.join(file);
                let (actual, bytes) = sha256_file(&path).map_err(io(path.display().to_string()))?;
                if &actual != expected {
                    return Err(BuildError::Sha256Mismatch {
                        file: path.display().to_string(),
                        expected: expected.clone(),
                        actual,
                    });
                }
                inputs.push(Input {
                    name: file.clone(),
                    sha256: actual,
                    bytes,
                });
                if file.contains(".orig.tar.") {
                    archives.insert(0, path);
                } else if file.contains(".debian.tar.") {
                    archives.push(path);
                }
            }
            Ok(Fetched {
                inputs,
                archives,
                checkout: None,
                origin: format!(
                    "Debian source package {} {deb_version} ({suite})",
                    recipe.name
                ),
                kind: SourceKind::DebianSource,
                debian_version: Some(deb_version),
                apt_source: Some(line),
            })
        }
        Source::Tarball { file, sha256 } => {
            let (actual, bytes) = sha256_file(file).map_err(io(file.display().to_string()))?;
            if !actual.eq_ignore_ascii_case(sha256.trim()) {
                return Err(BuildError::Sha256Mismatch {
                    file: file.display().to_string(),
                    expected: sha256.trim().to_ascii_lowercase(),
                    actual,
                });
            }
            let abs = std::fs::canonicalize(file).map_err(io(file.display().to_string()))?;
            Ok(Fetched {
                inputs: vec![Input {
                    name: abs.display().to_string(),
                    sha256: actual,
                    bytes,
                }],
                archives: vec![abs.clone()],
                checkout: None,
                origin: format!("upstream tarball {}", abs.display()),
                kind: SourceKind::Tarball,
                debian_version: None,
                apt_source: None,
            })
        }
        Source::Git { url, reference } => {
            let missing = missing_packages(&["git"]);
            install_deps(&missing, b)?;
            let dest = build_dir.join(format!("{}-{version}", recipe.name));
            let args: Vec<String> = vec![
                "clone".into(),
                "--depth".into(),
                "1".into(),
                "--branch".into(),
                reference.clone(),
                url.clone(),
                dest.display().to_string(),
            ];
            b.run("git clone", build_dir, "git", &args, &[], None)?;
            let commit = b
                .run(
                    "git rev-parse",
                    &dest,
                    "git",
                    &["rev-parse".into(), "HEAD".into()],
                    &[],
                    None,
                )?
                .trim()
                .to_string();
            Ok(Fetched {
                inputs: vec![Input {
                    name: format!("{url} {reference}"),
                    sha256: format!("git commit {commit}"),
                    bytes: 0,
                }],
                archives: Vec::new(),
                checkout: Some(dest),
                origin: format!("git {url} at {reference} (commit {commit})"),
                kind: SourceKind::Git,
                debian_version: None,
                apt_source: None,
            })
        }
    }
}

/// `apt-get install` the missing build dependencies (the system's apt, like any package).
fn install_deps(missing: &[String], b: &mut Builder) -> Result<(), BuildError> {
    if missing.is_empty() {
        return Ok(());
    }
    let mut args: Vec<String> = vec![
        "install".into(),
        "-y".into(),
        "--no-install-recommends".into(),
    ];
    args.extend(missing.iter().cloned());
    let env = [("DEBIAN_FRONTEND".to_string(), "noninteractive".to_string())];
    b.run(
        "apt-get install (build dependencies)",
        Path::new("/"),
        "apt-get",
        &args,
        &env,
        None,
    )
    .map(|_| ())
    .map_err(|e| match e {
        BuildError::Step { gist, .. } => BuildError::BuildDeps {
            packages: missing.join(" "),
            gist,
        },
        other => other,
    })
}

fn build(
    recipe: &Recipe,
    req: &Request,
    version: &str,
    build_dir: &Path,
    fetched: Fetched,
    mut b: Builder,
) -> Result<Installed, BuildError> {
    let mut deps: Vec<&str> = recipe.build_deps.to_vec();
    if fetched.kind == SourceKind::Git {
        deps.extend(recipe.git_build_deps);
    }
    let missing = missing_packages(&deps);
    install_deps(&missing, &mut b)?;

    // Unpack (tarballs) and patch (Debian's series).
    let mut patches = Vec::new();
    let src = match &fetched.checkout {
        Some(dir) => dir.clone(),
        None => {
            let unpack = build_dir.join("src");
            std::fs::create_dir_all(&unpack).map_err(io(unpack.display().to_string()))?;
            let first = &fetched.archives[0];
            b.run(
                "unpack",
                &unpack,
                "tar",
                &["-xf".into(), first.display().to_string()],
                &[],
                None,
            )?;
            let src = unpacked_dir(&unpack, &[]).ok_or_else(|| BuildError::Step {
                step: "unpack".into(),
                missing: String::new(),
                gist: format!("{} holds no directory", first.display()),
                log: b.log_path.display().to_string(),
            })?;
            for extra in &fetched.archives[1..] {
                b.run(
                    "unpack Debian's packaging",
                    &src,
                    "tar",
                    &["-xf".into(), extra.display().to_string()],
                    &[],
                    None,
                )?;
            }
            let series = src.join("debian/patches/series");
            if let Ok(text) = std::fs::read_to_string(&series) {
                for p in text
                    .lines()
                    .map(|l| l.split('#').next().unwrap_or_default().trim())
                    .filter(|l| !l.is_empty())
                {
                    let name = p.split_whitespace().next().unwrap_or(p).to_string();
                    b.run(
                        &format!("patch {name}"),
                        &src,
                        "patch",
                        &[
                            "-p1".into(),
                            "--forward".into(),
                            "-i".into(),
                            format!("debian/patches/{name}"),
                        ],
                        &[],
                        None,
                    )?;
                    patches.push(name);
                }
            }
            src
        }
    };

    let final_dir = req.tools_dir.join(format!("{}-{version}", recipe.name));
    let prefix = std::path::absolute(&final_dir).map_err(io(final_dir.display().to_string()))?;
    let mut configure: Vec<String> = vec![format!("--prefix={}", prefix.display())];
    configure.extend(recipe.configure.iter().map(|s| s.to_string()));
    match recipe.configure_env {
        Some(var) => {
            b.run(
                "configure",
                &src,
                "make",
                &["include/builddefs".into()],
                &[(var.to_string(), configure.join(" "))],
                None,
            )?;
        }
        None => {
            b.run("configure", &src, "./configure", &configure, &[], None)?;
        }
    }
    let total = walkdir::WalkDir::new(&src)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "c"))
        .count();
    b.run(
        &format!("make -j{}", req.jobs),
        &src,
        "make",
        &[format!("-j{}", req.jobs)],
        &[],
        Some(total),
    )?;
    let stage = build_dir.join("stage");
    b.run(
        "make install",
        &src,
        "make",
        &[
            "install".into(),
            format!("{}={}", recipe.destdir_var, stage.display()),
        ],
        &[],
        None,
    )?;
    let staged = stage.join(prefix.strip_prefix("/").unwrap_or(&prefix));
    let sbin = prefix.join("sbin");
    // The tool's shell scripts (xfs_info, xfs_admin …) call sibling programs by name:
    // make them find this build's before PATH's.
    let mut scripts = Vec::new();
    for dir in ["sbin", "bin"] {
        for e in std::fs::read_dir(staged.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = e.path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if let Some((shebang, rest)) = text.split_once('\n') {
                if shebang.starts_with("#!") && (shebang.contains("sh")) {
                    let patched = format!(
                        "{shebang}\n# fslab: this build's programs first\nPATH=\"{}:$PATH\"; export PATH\n{rest}",
                        sbin.display()
                    );
                    std::fs::write(&path, patched).map_err(io(path.display().to_string()))?;
                    scripts.push(e.file_name().to_string_lossy().to_string());
                }
            }
        }
    }
    if !scripts.is_empty() {
        scripts.sort();
        let line = format!(
            "put {} first on PATH in the shell scripts {}",
            sbin.display(),
            scripts.join(", ")
        );
        b.note(&line);
        b.commands.push(line);
    }
    // Every program must run from here: no library it links may be missing.
    for e in std::fs::read_dir(staged.join("sbin"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let out = duct::cmd("ldd", [e.path()])
            .stdout_capture()
            .stderr_null()
            .unchecked()
            .run();
        if let Ok(o) = out {
            let text = String::from_utf8_lossy(&o.stdout);
            if let Some(l) = text.lines().find(|l| l.contains("not found")) {
                return Err(BuildError::Step {
                    step: "checking the installed programs".into(),
                    missing: String::new(),
                    gist: format!(
                        "{} links a library that is not found: {}",
                        e.path().display(),
                        l.trim()
                    ),
                    log: b.log_path.display().to_string(),
                });
            }
        }
    }

    let compiler = first_line_of("cc", &["--version"]);
    let dep_versions = duct::cmd(
        "dpkg-query",
        ["-W", "-f", "${Package} ${Version}\n"]
            .iter()
            .map(|s| s.to_string())
            .chain(deps.iter().map(|s| s.to_string()))
            .collect::<Vec<_>>(),
    )
    .stdout_capture()
    .stderr_null()
    .unchecked()
    .run()
    .map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default();
    let uname = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().to_string())
        .unwrap_or_default();
    let distro = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    let provenance = Provenance {
        name: recipe.name.to_string(),
        version: version.to_string(),
        source: fetched.kind,
        origin: fetched.origin,
        debian_version: fetched.debian_version,
        apt_source: fetched.apt_source,
        inputs: fetched.inputs,
        patches,
        build_commands: b.commands.clone(),
        compiler,
        build_dependencies: missing,
        build_dependency_versions: dep_versions,
        prefix: prefix.display().to_string(),
        built_on: format!("{distro}, kernel {uname}"),
        built_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        log: "build.log".into(),
    };
    let _ = b.log.flush();
    provenance
        .write(&staged)
        .map_err(io(staged.display().to_string()))?;
    std::fs::copy(&b.log_path, staged.join("build.log"))
        .map_err(io(staged.display().to_string()))?;
    if final_dir.exists() {
        // An incomplete earlier attempt (no provenance.json): replace it.
        std::fs::remove_dir_all(&final_dir).map_err(io(final_dir.display().to_string()))?;
    }
    std::fs::rename(&staged, &final_dir).map_err(io(format!(
        "moving {} to {}",
        staged.display(),
        final_dir.display()
    )))?;
    // The sources and build tree are not needed any more.
    let _ = std::fs::remove_dir_all(build_dir);
    find_installed(&req.tools_dir, recipe.name, version).ok_or_else(|| BuildError::Io {
        context: final_dir.display().to_string(),
        source: std::io::Error::other("installed, but not readable back"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_debian_tarballs_and_tags() {
        assert_eq!(upstream_version("6.13.0-2+deb13u1"), "6.13.0");
        assert_eq!(upstream_version("1:2.38.1-5"), "2.38.1");
        assert_eq!(upstream_version("6.13.0"), "6.13.0");
        assert_eq!(
            version_from_name("xfsprogs", "/x/xfsprogs-6.13.0.tar.xz").as_deref(),
            Some("6.13.0")
        );
        assert_eq!(
            version_from_name("xfsprogs", "xfsprogs_6.13.0.orig.tar.xz").as_deref(),
            Some("6.13.0")
        );
        assert_eq!(
            version_from_name("xfsprogs", "v6.14.0").as_deref(),
            Some("6.14.0")
        );
        assert_eq!(version_from_name("xfsprogs", "for-next"), None);
    }

    #[test]
    fn dsc_checksums_are_read() {
        let dsc = "Format: 3.0 (quilt)\nSource: xfsprogs\nVersion: 6.13.0-2+deb13u1\nChecksums-Sha1:\n 31d4 1506676 xfsprogs_6.13.0.orig.tar.xz\nChecksums-Sha256:\n 0459 1506676 xfsprogs_6.13.0.orig.tar.xz\n 7d68 16100 xfsprogs_6.13.0-2+deb13u1.debian.tar.xz\nFiles:\n 42b0 1506676 xfsprogs_6.13.0.orig.tar.xz\n";
        let (v, sums) = parse_dsc(dsc);
        assert_eq!(v.as_deref(), Some("6.13.0-2+deb13u1"));
        assert_eq!(
            sums,
            [
                (
                    "xfsprogs_6.13.0.orig.tar.xz".to_string(),
                    "0459".to_string()
                ),
                (
                    "xfsprogs_6.13.0-2+deb13u1.debian.tar.xz".to_string(),
                    "7d68".to_string()
                )
            ]
        );
    }

    #[test]
    fn a_failed_build_names_the_missing_dependency() {
        let log = "checking for uuid.h... no\nconfigure: error: could not find a valid UUID header.\nInstall the Universally Unique Identifiers development package.\n";
        assert_eq!(
            missing_dependency(log).map(|(p, _)| p).as_deref(),
            Some("uuid-dev")
        );
        let log = "    [CC]     xfs_io.o\nio/main.c:12:10: fatal error: urcu.h: No such file or directory\ncompilation terminated.\n";
        let (pkg, what) = missing_dependency(log).unwrap();
        assert_eq!(pkg, "liburcu-dev");
        assert_eq!(what, "urcu.h");
        let log = "make: libtoolize: command not found\n";
        assert_eq!(
            missing_dependency(log).map(|(p, _)| p).as_deref(),
            Some("libtool")
        );
        assert_eq!(missing_dependency("all fine\n"), None);
    }
}
