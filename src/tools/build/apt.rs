//! apt: fslab's own state and sources list (for `apt-get source`), and the system's apt
//! for the build dependencies that are missing.

use super::builder::Builder;
use super::BuildError;
use std::path::Path;

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
pub(super) fn missing_packages(packages: &[&str]) -> Vec<String> {
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

/// `apt-get install` the missing build dependencies (the system's apt, like any package).
pub(super) fn install_deps(missing: &[String], b: &mut Builder) -> Result<(), BuildError> {
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
