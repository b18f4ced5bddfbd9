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

use super::provenance::Input;
use super::recipe;
use super::{find_installed, Installed};
use builder::Builder;
use compile::build;
use fetch::fetch;
use std::path::PathBuf;

mod apt;
mod builder;
mod compile;
mod fetch;
mod parse;

pub use apt::apt_options;
pub use fetch::sha256_file;
pub use parse::{missing_dependency, parse_dsc, upstream_version, version_from_name};

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
