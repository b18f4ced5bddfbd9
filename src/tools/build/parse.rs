//! What a build reads from text: the version in a Debian version, a tarball's name or a
//! tag; a `.dsc`'s checksums; the missing dependency and the gist of a failed step's log.
//! Pure.

use std::path::Path;

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
pub(super) fn gist(log: &str) -> String {
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
