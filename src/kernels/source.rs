//! Debian's kernel source packages (`linux-source-6.12`: a binary package holding the
//! source tarball) for `fslab kernels build`: which version fslab's apt state offers,
//! fetching it once into fslab's cache (download only, nothing is installed), and
//! unpacking it for a build.
//!
//! ```text
//! kernels/.src/<package>_<version>/   complete only once it has source.json
//!     <package>.tar.xz                the tarball from the package's usr/src/
//!     source.json                     package, version, apt source line, the .deb's sha256
//! ```

use super::install::{
    apt_state_for, debian_package, extract_deb, file_name, io, lock, run, KernelError,
};
use crate::tools::build::sha256_file;
use crate::tools::provenance::{read_record, write_record};
use crate::tools::Input;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A kernel source package fslab can build from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownSource {
    /// `linux-source-6.12`.
    pub package: &'static str,
    pub suite: &'static str,
    pub mirror: &'static str,
}

/// Debian 13's 6.12 and Debian 12's 6.1.
pub const SOURCES: &[KnownSource] = &[
    KnownSource {
        package: "linux-source-6.12",
        suite: "trixie",
        mirror: "http://deb.debian.org/debian",
    },
    KnownSource {
        package: "linux-source-6.1",
        suite: "bookworm",
        mirror: "http://deb.debian.org/debian",
    },
];

/// `linux-source-6.12` or `linux-source-6.12=6.12.117-1`: the known source package and
/// the version asked for, if any; `None` when the package is not known.
pub fn parse_source(spec: &str) -> Option<(&'static KnownSource, Option<String>)> {
    let (name, version) = match spec.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
        None => (spec.trim(), None),
    };
    let known = SOURCES.iter().find(|s| s.package == name)?;
    match version {
        Some(v) if v.is_empty() => None,
        v => Some((known, v)),
    }
}

/// The candidate version of `package` in `apt-cache policy` output (apt-cache matches
/// names as patterns too, so only the block headed `package:` counts).
pub fn candidate_version(policy: &str, package: &str) -> Option<String> {
    let header = format!("{package}:");
    let mut inside = false;
    for line in policy.lines() {
        if !line.starts_with(' ') {
            inside = line.trim() == header;
        } else if inside {
            if let Some(v) = line.trim().strip_prefix("Candidate:") {
                let v = v.trim();
                return (v != "(none)" && !v.is_empty()).then(|| v.to_string());
            }
        }
    }
    None
}

/// The version fslab's apt state offers for `src` (read offline from its lists; they
/// are fetched with `apt-get update` when they are missing, have no such package, or
/// `update` asks for it). Holds the kernels directory's lock while it works.
pub fn resolve_version(
    kernels_dir: &Path,
    src: &KnownSource,
    update: bool,
    progress: &dyn Fn(&str),
) -> Result<String, KernelError> {
    let _lock = lock(kernels_dir, progress)?;
    let (apt, line) = apt_state_for(kernels_dir, src.suite, src.mirror)?;
    let policy = || -> Result<Option<String>, KernelError> {
        let mut args = apt.clone();
        args.extend(["policy".into(), src.package.into()]);
        let out = run("apt-cache policy", kernels_dir, "apt-cache", &args)?;
        Ok(candidate_version(&out, src.package))
    };
    if !update {
        if let Some(v) = policy()? {
            return Ok(v);
        }
    }
    progress(&format!("apt-get update ({line})"));
    let mut args = apt.clone();
    args.push("update".into());
    run("apt-get update", kernels_dir, "apt-get", &args)?;
    policy()?.ok_or_else(|| KernelError::Step {
        step: "apt-cache policy".into(),
        gist: format!("{} is not in {line}", src.package),
    })
}

/// A source package fetched into fslab's cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedSource {
    pub package: String,
    pub version: String,
    pub apt_source: String,
    pub deb: Input,
    /// The tarball's file name in the cache directory.
    pub tarball: String,
}

const RECORD: &str = "source.json";

/// Where `package` `version` is cached.
fn cache_dir(kernels_dir: &Path, package: &str, version: &str) -> PathBuf {
    kernels_dir
        .join(".src")
        .join(format!("{package}_{}", version.replace([':', '/'], "_")))
}

/// The cached tarball of `cached`.
pub fn tarball(kernels_dir: &Path, cached: &CachedSource) -> PathBuf {
    cache_dir(kernels_dir, &cached.package, &cached.version).join(&cached.tarball)
}

/// `src` at `version`, from the cache or fetched into it (`apt-get download`, then the
/// tarball is taken out of the `.deb`); returns the record and whether it was cached.
pub fn fetch(
    kernels_dir: &Path,
    src: &KnownSource,
    version: &str,
    progress: &dyn Fn(&str),
) -> Result<(CachedSource, bool), KernelError> {
    let dir = cache_dir(kernels_dir, src.package, version);
    if let Ok(c) = read_record::<CachedSource>(&dir.join(RECORD)) {
        return Ok((c, true));
    }
    let _lock = lock(kernels_dir, progress)?;
    if let Ok(c) = read_record::<CachedSource>(&dir.join(RECORD)) {
        return Ok((c, true));
    }
    let (apt, line) = apt_state_for(kernels_dir, src.suite, src.mirror)?;
    let staging = kernels_dir
        .join(".src")
        .join(format!(".fetch-{}", src.package));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(format!("removing {}", staging.display())))?;
    }
    std::fs::create_dir_all(&staging).map_err(io(format!("creating {}", staging.display())))?;
    progress(&format!(
        "apt-get download {}={version} ({line})",
        src.package
    ));
    let mut args = apt;
    args.extend(["download".into(), format!("{}={version}", src.package)]);
    run("apt-get download", &staging, "apt-get", &args)?;
    let deb = debian_package(&staging, src.package)?;
    let (sha256, bytes) = sha256_file(&deb).map_err(io(format!("reading {}", deb.display())))?;
    let root = staging.join("root");
    extract_deb(&staging, &deb, &root)?;
    let inner = root.join("usr/src").join(format!("{}.tar.xz", src.package));
    if !inner.is_file() {
        return Err(KernelError::Step {
            step: format!("unpacking {}", file_name(&deb)),
            gist: format!("no usr/src/{}.tar.xz in the package", src.package),
        });
    }
    let name = file_name(&inner);
    std::fs::rename(&inner, staging.join(&name)).map_err(io("moving the source tarball"))?;
    std::fs::remove_dir_all(&root).map_err(io(format!("removing {}", root.display())))?;
    std::fs::remove_file(&deb).map_err(io(format!("removing {}", deb.display())))?;
    let cached = CachedSource {
        package: src.package.to_string(),
        version: version.to_string(),
        apt_source: line,
        deb: Input {
            name: file_name(&deb),
            sha256,
            bytes,
        },
        tarball: name,
    };
    write_record(&staging.join(RECORD), &cached).map_err(io("writing source.json"))?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(format!("removing {}", dir.display())))?;
    }
    std::fs::rename(&staging, &dir).map_err(io(format!(
        "moving {} to {}",
        staging.display(),
        dir.display()
    )))?;
    Ok((cached, false))
}

/// Unpack the cached tarball into `into`; returns the tree (`into/linux-source-6.12`).
pub fn unpack(
    kernels_dir: &Path,
    cached: &CachedSource,
    into: &Path,
) -> Result<PathBuf, KernelError> {
    run(
        "tar -xJf (unpacking the kernel source)",
        into,
        "tar",
        &[
            "-xJf".into(),
            tarball(kernels_dir, cached).display().to_string(),
            "-C".into(),
            into.display().to_string(),
        ],
    )?;
    let tree = into.join(&cached.package);
    if !tree.join("Makefile").is_file() {
        return Err(KernelError::Step {
            step: "unpacking the kernel source".into(),
            gist: format!("no {}/Makefile in {}", cached.package, cached.tarball),
        });
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::{candidate_version, parse_source};

    #[test]
    fn sources_and_candidates_are_read() {
        let (s, v) = parse_source("linux-source-6.12").unwrap();
        assert_eq!((s.suite, v), ("trixie", None));
        let (s, v) = parse_source("linux-source-6.1=6.1.170-1").unwrap();
        assert_eq!((s.suite, v.as_deref()), ("bookworm", Some("6.1.170-1")));
        assert!(parse_source("linux-source-5.10").is_none());
        assert!(parse_source("linux-source-6.1=").is_none());
        // apt-cache matches `linux-source-6.1` as a pattern too: only its own block counts.
        let policy = "linux-source-6.12:\n  Installed: (none)\n  Candidate: 6.12.117-1\n\
                      linux-source-6.1:\n  Installed: (none)\n  Candidate: (none)\n";
        assert_eq!(
            candidate_version(policy, "linux-source-6.12").as_deref(),
            Some("6.12.117-1")
        );
        assert_eq!(candidate_version(policy, "linux-source-6.1"), None);
        assert_eq!(candidate_version("", "linux-source-6.1"), None);
    }
}
