//! The tools fslab knows how to build, and how.

/// How to build one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The tool's name (`xfsprogs`), also its Debian source package.
    pub name: &'static str,
    /// The version `fslab tools install NAME` builds (the pinned one).
    pub version: &'static str,
    /// The Debian suite whose source package has that version.
    pub suite: &'static str,
    /// The Debian mirror for `deb-src`.
    pub mirror: &'static str,
    /// Build dependencies, as Debian 12 (bookworm) names them.
    pub build_deps: &'static [&'static str],
    /// Extra build dependencies for a git checkout (it has no `configure` yet).
    pub git_build_deps: &'static [&'static str],
    /// Arguments to `configure` besides `--prefix`.
    pub configure: &'static [&'static str],
    /// The environment variable the tool's Makefile passes to `configure` (xfsprogs:
    /// `LOCAL_CONFIGURE_OPTIONS`); None: run `./configure` directly.
    pub configure_env: Option<&'static str>,
    /// The make variable that installs into a staging root (`DESTDIR`; xfsprogs: `DIST_ROOT`).
    pub destdir_var: &'static str,
    /// The programs it provides (what the plan, doctor and run look up here first).
    pub programs: &'static [&'static str],
}

/// xfsprogs, as measured on Debian 12: trixie's source package builds with bookworm's
/// build dependencies. Internal libraries are linked statically (`--enable-shared=no`),
/// so the programs need only the system libraries the build dependencies bring.
pub const XFSPROGS: Recipe = Recipe {
    name: "xfsprogs",
    version: "6.13.0",
    suite: "trixie",
    mirror: "http://deb.debian.org/debian",
    build_deps: &[
        "make",
        "gcc",
        "libc6-dev",
        "patch",
        "xz-utils",
        "libinih-dev",
        "uuid-dev",
        "gettext",
        "libtool",
        "libedit-dev",
        "libblkid-dev",
        "libdevmapper-dev",
        "libicu-dev",
        "pkg-config",
        "liburcu-dev",
    ],
    git_build_deps: &["git", "autoconf", "automake"],
    configure: &[
        "--enable-shared=no",
        "--enable-editline=yes",
        "--with-systemd-unit-dir=no",
        "--with-crond-dir=no",
        "--with-udev-rule-dir=no",
    ],
    configure_env: Some("LOCAL_CONFIGURE_OPTIONS"),
    destdir_var: "DIST_ROOT",
    programs: &[
        "mkfs.xfs",
        "xfs_io",
        "xfs_info",
        "xfs_bmap",
        "xfs_db",
        "xfs_repair",
        "xfs_growfs",
        "xfs_admin",
        "xfs_freeze",
        "xfs_spaceman",
        "xfs_logprint",
        "xfs_metadump",
        "xfs_mdrestore",
        "xfs_quota",
        "xfs_copy",
        "xfs_fsr",
        "xfs_estimate",
        "xfs_ncheck",
        "xfs_scrub",
        "xfs_rtcp",
        "xfs_mkfile",
    ],
};

/// Every recipe.
pub const ALL: &[Recipe] = &[XFSPROGS];

/// The recipe named `name`.
pub fn named(name: &str) -> Option<&'static Recipe> {
    ALL.iter().find(|r| r.name == name)
}

/// The recipe that provides `program` (a name or a path; its file name counts).
pub fn providing(program: &str) -> Option<&'static Recipe> {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    ALL.iter().find(|r| r.programs.contains(&name))
}

/// The `fslab tools install …` command that provisions `program`, when a recipe's
/// pinned version is at least `min` (dotted numbers compared numerically).
pub fn install_command(program: &str, min: &str) -> Option<String> {
    let r = providing(program)?;
    (super::version_key(r.version) >= super::version_key(min))
        .then(|| format!("fslab tools install {}", r.name))
}
