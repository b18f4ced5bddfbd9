//! The build itself: unpack and patch (Debian's series), configure, `make`, `make
//! install` into a staging tree, check that every program finds its libraries, write the
//! provenance and move the tree into place.

use super::apt::{install_deps, missing_packages};
use super::builder::Builder;
use super::fetch::Fetched;
use super::{io, BuildError, Request};
use crate::tools::provenance::{Provenance, SourceKind};
use crate::tools::recipe::Recipe;
use crate::tools::{find_installed, Installed};
use std::io::Write;
use std::path::{Path, PathBuf};

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

pub(super) fn build(
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
