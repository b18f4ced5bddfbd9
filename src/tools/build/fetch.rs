//! Getting the sources and checking them: a Debian source package through fslab's own
//! apt state (its `.dsc`'s sha256 sums), a tarball against its sha256, or a git clone.

use super::apt::{apt_options, install_deps, missing_packages};
use super::builder::Builder;
use super::parse::{parse_dsc, upstream_version};
use super::{io, BuildError, Request, Source};
use crate::tools::provenance::{Input, SourceKind};
use crate::tools::recipe::Recipe;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

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

/// What [`fetch`] got.
pub(super) struct Fetched {
    pub(super) inputs: Vec<Input>,
    /// The files to unpack in order: the upstream tarball first, then Debian's packaging.
    pub(super) archives: Vec<PathBuf>,
    /// A git checkout (instead of archives).
    pub(super) checkout: Option<PathBuf>,
    pub(super) origin: String,
    pub(super) kind: SourceKind,
    pub(super) debian_version: Option<String>,
    pub(super) apt_source: Option<String>,
}

pub(super) fn fetch(
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
