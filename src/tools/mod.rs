//! Provisioned tools: programs fslab built from source into its own cache, when the
//! machine's are too old for an experiment (e.g. xfsprogs ≥ 6.10 for `mkfs.xfs -n parent=`).
//!
//! Layout of the tools directory (`$FSLAB_TOOLS_DIR`, else `$XDG_CACHE_HOME/fslab/tools`,
//! else `~/.cache/fslab/tools`):
//! ```text
//! <name>-<version>/            one installed tool (complete only once it has provenance.json)
//!     sbin/ bin/ …             its programs
//!     provenance.json          source, version, sha256 of every input, build command, compiler
//!     build.log                everything the build printed
//! .apt/                        fslab's own apt state and sources list (never /etc/apt)
//! .build/<name>-<version>/     downloads and the build tree
//! ```
//! Lookups ([`provided`], [`owner_of`]) only read the directory: a bare program name that
//! an installed tool provides resolves there before `PATH` (see `host::which`).
//! Building ([`build`]) is separate and touches the system (apt-get, make).

pub mod build;
pub mod provenance;
pub mod recipe;

pub use provenance::{Input, Provenance, SourceKind};
pub use recipe::Recipe;

use std::path::{Path, PathBuf};

/// Where provisioned tools live.
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FSLAB_TOOLS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    cache_dir().join("tools")
}

/// fslab's cache directory: `$XDG_CACHE_HOME/fslab`, else `~/.cache/fslab`.
pub fn cache_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(|| PathBuf::from("/root/.cache"));
    cache.join("fslab")
}

/// One tool installed under the tools directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    pub name: String,
    pub version: String,
    pub dir: PathBuf,
    pub provenance: Provenance,
}

/// The directories of an installed tool that hold programs.
const PROGRAM_DIRS: &[&str] = &["sbin", "bin"];

impl Installed {
    /// The program `name` of this tool, if it has one.
    pub fn program(&self, name: &str) -> Option<PathBuf> {
        PROGRAM_DIRS
            .iter()
            .map(|d| self.dir.join(d).join(name))
            .find(|p| p.is_file())
    }

    /// Every program it provides (file names), sorted.
    pub fn programs(&self) -> Vec<String> {
        let mut out: Vec<String> = PROGRAM_DIRS
            .iter()
            .flat_map(|d| std::fs::read_dir(self.dir.join(d)).into_iter().flatten())
            .flatten()
            .filter(|e| e.path().is_file())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// `xfsprogs 6.13.0 (Debian source package xfsprogs 6.13.0-2+deb13u1, trixie) in DIR`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({}) in {}",
            self.name,
            self.version,
            self.provenance.source_line(),
            self.dir.display()
        )
    }
}

/// Every complete installation under `dir` (those with a readable `provenance.json`),
/// newest version first within a name.
pub fn installed_in(dir: &Path) -> Vec<Installed> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let Some(file_name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if file_name.starts_with('.') || !e.path().is_dir() {
            continue;
        }
        let Ok(p) = Provenance::read(&e.path()) else {
            continue;
        };
        if file_name != format!("{}-{}", p.name, p.version) {
            continue;
        }
        out.push(Installed {
            name: p.name.clone(),
            version: p.version.clone(),
            dir: e.path(),
            provenance: p,
        });
    }
    out.sort_by(|a, b| {
        a.name.cmp(&b.name).then_with(|| {
            version_key(&b.version)
                .cmp(&version_key(&a.version))
                .then_with(|| b.version.cmp(&a.version))
        })
    });
    out
}

/// A dotted version as numbers for ordering (`6.13.0` → [6, 13, 0]; other parts 0).
pub fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-', '+', '~'])
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// Every complete installation in [`tools_dir`].
pub fn installed() -> Vec<Installed> {
    installed_in(&tools_dir())
}

/// The installed tool `name` at `version`, if it is complete.
pub fn find_installed(dir: &Path, name: &str, version: &str) -> Option<Installed> {
    installed_in(dir)
        .into_iter()
        .find(|i| i.name == name && i.version == version)
}

/// The provisioned executable for a bare program name (`mkfs.xfs`), from the newest
/// installed tool that provides it. Names with a `/` are never looked up here.
pub fn provided(program: &str) -> Option<(PathBuf, Installed)> {
    provided_in(&tools_dir(), program)
}

/// [`provided`] in a given tools directory.
pub fn provided_in(dir: &Path, program: &str) -> Option<(PathBuf, Installed)> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    installed_in(dir)
        .into_iter()
        .find_map(|i| i.program(program).map(|p| (p, i)))
}

/// The installed tool that `path` belongs to, if any.
pub fn owner_of(path: &Path) -> Option<Installed> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    installed().into_iter().find(|i| {
        let dir = std::fs::canonicalize(&i.dir).unwrap_or_else(|_| i.dir.clone());
        real.starts_with(&dir) || path.starts_with(&i.dir)
    })
}

#[cfg(test)]
mod tests;
