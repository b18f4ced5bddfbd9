//! Programs on this machine: where they are installed, the versions they report, and
//! running one to capture what it prints.

use std::time::Duration;

/// The child in a process group of its own, so that a terminal's Ctrl-C reaches fslab
/// alone and fslab decides what to stop.
pub(crate) fn own_group(expr: duct::Expression) -> duct::Expression {
    expr.before_spawn(|c| {
        std::os::unix::process::CommandExt::process_group(c, 0);
        Ok(())
    })
}

/// Programs whose version flag is known; others get their Debian package version.
const VERSION_FLAGS: &[(&str, &[&str])] = &[
    ("mkfs.xfs", &["-V"]),
    ("xfs_io", &["-V"]),
    ("xfs_info", &["-V"]),
    ("xfs_bmap", &["-V"]),
    ("xfs_repair", &["-V"]),
    ("xfs_db", &["-V"]),
    ("mkfs.ext2", &["-V"]),
    ("mkfs.ext3", &["-V"]),
    ("mkfs.ext4", &["-V"]),
    ("mke2fs", &["-V"]),
    ("e2fsck", &["-V"]),
    ("fsck.ext3", &["-V"]),
    ("fsck.ext4", &["-V"]),
    ("debugfs", &["-V"]),
    ("dumpe2fs", &["-V"]),
    ("tune2fs", &["-V"]),
    ("filefrag", &["-V"]),
    ("mkfs.btrfs", &["--version"]),
    ("btrfs", &["--version"]),
    ("dd", &["--version"]),
    ("fio", &["--version"]),
    ("mount", &["--version"]),
    ("losetup", &["--version"]),
];

fn first_line(s: &str) -> Option<String> {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Run `program` with `args` in a process group of its own, with no input, and return
/// the first non-empty line it prints (stdout, then stderr); None when it cannot start,
/// takes longer than 5 s (it is then killed), or fails while `need_success`.
fn capture_inner(program: &str, args: &[&str], need_success: bool) -> Option<String> {
    let out = own_group(duct::cmd(program, args))
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .start()
        .ok()?;
    // Version queries are quick; never let one hang a run.
    match out.wait_timeout(Duration::from_secs(5)) {
        Ok(Some(o)) => {
            if need_success && !o.status.success() {
                return None;
            }
            let text = format!(
                "{}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            first_line(&text)
        }
        _ => {
            let _ = out.kill();
            None
        }
    }
}

/// The path `program` resolves to: itself when it contains a `/`, else a provisioned
/// tool's program of that name (`fslab tools install`, see [`crate::tools`]), else the
/// first match on `$PATH`, `/usr/sbin` or `/sbin` (root tools live there and `PATH` may
/// lack them).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    if let Some((p, _)) = crate::tools::provided(program) {
        return Some(p);
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The Debian package (`name version`) that owns `path`. `dpkg -S` reads every
/// package's file list (0.1–0.2 s, most of a short run's start), and its answer holds
/// until dpkg's database changes, so answers are kept in `<cache>/fslab/dpkg-owners.json`
/// with the size and modification time of `/var/lib/dpkg/status`, which every dpkg
/// operation rewrites: a different stamp discards them all.
fn dpkg_package(path: &std::path::Path) -> Option<String> {
    dpkg_package_in(&crate::tools::cache_dir().join("dpkg-owners.json"), path)
}

fn dpkg_package_in(file: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let stamp = dpkg_stamp()?;
    let key = path.display().to_string();
    let mut cache: DpkgCache = std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|c: &DpkgCache| c.stamp == stamp)
        .unwrap_or_else(|| DpkgCache {
            stamp: stamp.clone(),
            owners: Default::default(),
        });
    if let Some(known) = cache.owners.get(&key) {
        return known.clone();
    }
    let found = dpkg_package_uncached(path);
    cache.owners.insert(key, found.clone());
    write_cache(file, &cache);
    found
}

/// What [`dpkg_package`] keeps between runs.
#[derive(serde::Serialize, serde::Deserialize)]
struct DpkgCache {
    stamp: String,
    owners: std::collections::BTreeMap<String, Option<String>>,
}

/// The size and modification time of dpkg's status file; None without dpkg.
fn dpkg_stamp() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata("/var/lib/dpkg/status").ok()?;
    Some(format!("{} {}.{:09}", m.size(), m.mtime(), m.mtime_nsec()))
}

fn dpkg_package_uncached(path: &std::path::Path) -> Option<String> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = path.file_name()?.to_string_lossy().to_string();
    // Debian 12 merged /usr, but dpkg may know a file under its old /sbin or /bin path.
    let candidates = [
        path.to_path_buf(),
        real,
        std::path::PathBuf::from("/sbin").join(&name),
        std::path::PathBuf::from("/bin").join(&name),
    ];
    for p in candidates {
        if let Some(line) = capture_inner("dpkg", &["-S", &p.display().to_string()], true) {
            if let Some((pkg, _)) = line.split_once(':') {
                let pkg = pkg.trim().to_string();
                if let Some(v) =
                    capture_inner("dpkg-query", &["-W", "-f", "${Version}", &pkg], true)
                {
                    return Some(format!("{pkg} {v}"));
                }
            }
        }
    }
    None
}

/// What `program --version` (or its known version flag) prints first, e.g.
/// `mkfs.xfs version 6.1.0`; None when it prints nothing or cannot run.
pub fn version_line(path: &std::path::Path) -> Option<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match VERSION_FLAGS.iter().find(|(n, _)| *n == name) {
        Some((_, flags)) => version_of(path, flags, false),
        None => version_of(path, &["--version"], true).or_else(|| version_of(path, &["-V"], true)),
    }
}

/// What `path args…` prints first, asked once per build of the program: a compiled
/// program's answer (an ELF file's) is kept in `<cache>/fslab/versions.json` with the
/// file's identity (device, inode, size, modification and change times) and the
/// locale variables, which together decide what it prints. Starting a program to ask
/// it was most of a short run's fixed cost (a `/bin/true` micro-benchmark: a spawn of
/// a large process and a wait, 3–8 ms). Scripts are asked every time (their answer may
/// come from other files); an empty answer is not kept (it may be a timeout on a busy
/// host).
fn version_of(path: &std::path::Path, args: &[&str], need_success: bool) -> Option<String> {
    version_of_in(
        &crate::tools::cache_dir().join("versions.json"),
        path,
        args,
        need_success,
    )
}

fn version_of_in(
    file: &std::path::Path,
    path: &std::path::Path,
    args: &[&str],
    need_success: bool,
) -> Option<String> {
    let ask = || capture_inner(&path.display().to_string(), args, need_success);
    let Some(stamp) = program_stamp(path) else {
        return ask();
    };
    let key = format!("{}\0{}\0{need_success}", path.display(), args.join("\0"));
    let mut cache: std::collections::BTreeMap<String, VersionEntry> = std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Some(e) = cache.get(&key).filter(|e| e.stamp == stamp) {
        return Some(e.answer.clone());
    }
    let answer = ask()?;
    // Programs replaced since (another stamp) are asked again anyway: keep the file
    // small by starting over when it grows past what one machine's tools need.
    if cache.len() >= 1024 {
        cache.clear();
    }
    cache.insert(
        key,
        VersionEntry {
            stamp,
            answer: answer.clone(),
        },
    );
    write_cache(file, &cache);
    Some(answer)
}

/// One kept answer of [`version_of`].
#[derive(serde::Serialize, serde::Deserialize)]
struct VersionEntry {
    stamp: String,
    answer: String,
}

/// What identifies one build of a compiled program, with the locale it answers in;
/// None when `path` is not an ELF file (a script) or cannot be read.
fn program_stamp(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let mut f = std::fs::File::open(path).ok()?;
    let mut magic = [0u8; 4];
    f.read_exact(&mut magic).ok()?;
    if magic != *b"\x7fELF" {
        return None;
    }
    let m = f.metadata().ok()?;
    let locale: Vec<String> = ["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"]
        .iter()
        .map(|v| std::env::var(v).unwrap_or_default())
        .collect();
    Some(format!(
        "{} {} {} {}.{:09} {}.{:09} {}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        locale.join(":")
    ))
}

/// Write a cache file whole (a temporary file renamed over it); best effort: without
/// it the next run asks again.
fn write_cache<T: serde::Serialize>(file: &std::path::Path, value: &T) {
    if let Ok(bytes) = serde_json::to_vec(value) {
        let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
        let written = std::fs::create_dir_all(file.parent().unwrap_or(std::path::Path::new("/")))
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The version of one program as fslab records it.
pub fn tool_version(program: &str) -> String {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    if name == "fslab" {
        return format!("fslab {}", env!("CARGO_PKG_VERSION"));
    }
    let Some(path) = which(program) else {
        return "not installed".into();
    };
    let flag_version = VERSION_FLAGS
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, flags)| version_of(&path, flags, false));
    if let Some(tool) = crate::tools::owner_of(&path) {
        let v = flag_version
            .or_else(|| version_line(&path))
            .unwrap_or_else(|| "version unknown".into());
        return format!("{v} (provisioned by fslab: {})", tool.describe());
    }
    let pkg = dpkg_package(&path);
    match (flag_version, pkg) {
        (Some(v), Some(p)) => format!("{v} ({p})"),
        (Some(v), None) => v,
        (None, Some(p)) => p,
        // Not a known tool and not a package (a build of one's own, a script): ask it.
        (None, None) => {
            version_line(&path).unwrap_or_else(|| format!("{} (version unknown)", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_programs_version_is_asked_once_per_build_and_scripts_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("versions.json");
        // A copy of a compiled program that prints a version.
        let prog = dir.path().join("prog");
        std::fs::copy(which("true").unwrap(), &prog).unwrap();
        let asked = version_of_in(&file, &prog, &["--version"], true);
        assert!(
            asked.as_deref().is_some_and(|l| l.contains("true")),
            "{asked:?}"
        );
        // Kept: the file's answer is the answer while the program is the same build.
        let mut c: std::collections::BTreeMap<String, VersionEntry> =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(c.len(), 1);
        for e in c.values_mut() {
            e.answer = "planted 1".into();
        }
        std::fs::write(&file, serde_json::to_vec(&c).unwrap()).unwrap();
        assert_eq!(
            version_of_in(&file, &prog, &["--version"], true).as_deref(),
            Some("planted 1")
        );
        // Another build (the file replaced): asked again.
        std::fs::remove_file(&prog).unwrap();
        std::fs::copy(which("echo").unwrap(), &prog).unwrap();
        let again = version_of_in(&file, &prog, &["--version"], true);
        assert!(
            again.as_deref().is_some_and(|l| l.contains("echo")),
            "{again:?}"
        );
        // A script is asked every time, and nothing of it is kept.
        let script = dir.path().join("script");
        std::fs::write(&script, "#!/bin/sh\ncat \"$0.v\"\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::write(dir.path().join("script.v"), "script 1\n").unwrap();
        assert_eq!(
            version_of_in(&file, &script, &["--version"], true).as_deref(),
            Some("script 1")
        );
        std::fs::write(dir.path().join("script.v"), "script 2\n").unwrap();
        assert_eq!(
            version_of_in(&file, &script, &["--version"], true).as_deref(),
            Some("script 2")
        );
    }

    #[test]
    fn dpkg_answers_are_kept_until_dpkgs_database_changes() {
        if dpkg_stamp().is_none() {
            return; // not a Debian machine: nothing to ask
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("owners.json");
        let t = which("true").unwrap();
        let asked = dpkg_package_in(&file, &t);
        assert!(
            asked
                .as_deref()
                .is_some_and(|p| p.starts_with("coreutils ")),
            "{asked:?}"
        );
        // Kept: while the stamp matches, the file's answer is the answer.
        let mut c: DpkgCache = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(c.owners.get(&t.display().to_string()), Some(&asked));
        c.owners
            .insert(t.display().to_string(), Some("planted 1".into()));
        std::fs::write(&file, serde_json::to_vec(&c).unwrap()).unwrap();
        assert_eq!(dpkg_package_in(&file, &t).as_deref(), Some("planted 1"));
        // dpkg's database changed: every answer is asked again.
        c.stamp = "0 0.000000000".into();
        std::fs::write(&file, serde_json::to_vec(&c).unwrap()).unwrap();
        assert_eq!(dpkg_package_in(&file, &t), asked);
    }
}
