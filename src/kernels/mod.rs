//! Provisioned kernels: other kernels than the host's, for points that run in a guest.
//!
//! Today: Debian's User-Mode Linux binary package (`uml-bookworm`), fetched with fslab's
//! own apt state (never `/etc/apt`) into the tools directory, with its provenance.
//!
//! Layout, under the tools directory ([`crate::tools::tools_dir`]):
//! ```text
//! kernels/<name>/              one installed kernel (complete only once it has kernel.json)
//!     root/usr/bin/linux.uml   the package's files, as dpkg-deb extracts them
//!     config                   the kernel's configuration (from the package's config.gz)
//!     kernel.json              package, version, sha256 of the .deb, apt source, release
//! kernels/.apt-<suite>/        fslab's own apt state and sources list for that suite
//! kernels/.build/<name>/       the download and the staging tree
//! ```
//!
//! And kernels fslab built from Debian's kernel source packages (`fslab kernels build`,
//! [`build`]), next to them:
//! ```text
//! kernels/<name>/              one built kernel (complete only once it has kernel.json)
//!     linux                    the User-Mode Linux kernel program
//!     config                   its .config
//!     kernel.json              as above, with `build`: the inputs and the cache key
//!     build.log                make's output
//!     inputs/                  copies of the fragment and the patches, numbered in order
//! kernels/.src/<package>_<version>/   the source tarball, fetched once
//! kernels/.build/built-<name>/        the staging tree (removed when the build ends)
//! ```

pub mod build;
pub mod install;
pub mod kconfig;
pub mod patches;
mod provenance;
pub mod source;

pub use build::{build, BuildError, BuildOutcome, BuildRequest};
pub use install::{install, KernelError, Outcome};
pub use provenance::{
    BuildProvenance, KernelKind, KernelProvenance, LibcProvenance, PatchProvenance,
};

use crate::host::{config_lookup, ConfigValue};
use std::path::{Path, PathBuf};

/// A kernel fslab knows how to provision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// The name experiments and `fslab kernels` use (`uml-bookworm`).
    pub name: &'static str,
    pub kind: KernelKind,
    /// The Debian binary package.
    pub package: &'static str,
    pub suite: &'static str,
    pub mirror: &'static str,
    /// The kernel program inside the package.
    pub binary: &'static str,
    /// The kernel's configuration inside the package (gzip).
    pub config_gz: &'static str,
    /// A C library package to run the kernel with, when the suite's is newer than the
    /// host's: its loader becomes the kernel's ELF interpreter (`patchelf
    /// --set-interpreter`) and its library directory is on `LD_LIBRARY_PATH` for the
    /// kernel process alone ([`InstalledKernel::kernel_env`]).
    pub libc: Option<&'static str>,
}

/// Debian 12's User-Mode Linux (6.1): `CONFIG_XFS_RT=y`, ubd and hostfs built in.
pub const UML_BOOKWORM: Known = Known {
    name: "uml-bookworm",
    kind: KernelKind::Uml,
    package: "user-mode-linux",
    suite: "bookworm",
    mirror: "http://deb.debian.org/debian",
    binary: "usr/bin/linux.uml",
    config_gz: "usr/share/doc/user-mode-linux/config.gz",
    libc: None,
};

/// Debian 13's User-Mode Linux (6.12). It needs glibc 2.38 and Debian 12 has 2.36: it
/// runs with trixie's loader and C library, which are installed with it.
pub const UML_TRIXIE: Known = Known {
    name: "uml-trixie",
    kind: KernelKind::Uml,
    package: "user-mode-linux",
    suite: "trixie",
    mirror: "http://deb.debian.org/debian",
    binary: "usr/bin/linux.uml",
    config_gz: "usr/share/doc/user-mode-linux/config.gz",
    libc: Some("libc6"),
};

/// Every kernel `fslab kernels install` knows.
pub const KNOWN: &[Known] = &[UML_BOOKWORM, UML_TRIXIE];

/// The known kernel `name`.
pub fn known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name == name)
}

/// The options `fslab kernels list` shows: what experiments ask of a kernel.
pub const SHOWN_OPTIONS: &[&str] = &[
    "CONFIG_XFS_FS",
    "CONFIG_XFS_RT",
    "CONFIG_EXT4_FS",
    "CONFIG_BTRFS_FS",
    "CONFIG_BLK_DEV_UBD",
    "CONFIG_HOSTFS",
    "CONFIG_FTRACE",
    "CONFIG_BLK_DEV_IO_TRACE",
];

/// Where provisioned kernels live: `<tools dir>/kernels`.
pub fn kernels_dir() -> PathBuf {
    crate::tools::tools_dir().join("kernels")
}

/// One installed kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct InstalledKernel {
    pub dir: PathBuf,
    pub provenance: KernelProvenance,
}

impl InstalledKernel {
    /// The kernel program (`…/root/usr/bin/linux.uml`).
    pub fn binary(&self) -> PathBuf {
        self.dir.join(&self.provenance.binary)
    }

    /// Environment variables for the kernel process alone (never for the programs
    /// the guest runs, which are the host's and break with another C library): the
    /// library path of its own C library, if it has one.
    pub fn kernel_env(&self) -> Vec<(String, String)> {
        match &self.provenance.libc {
            Some(l) => vec![(
                "LD_LIBRARY_PATH".to_string(),
                self.dir.join(&l.library_path).display().to_string(),
            )],
            None => Vec::new(),
        }
    }

    /// A configuration option of this kernel, from its `config`.
    pub fn config(&self, key: &str) -> ConfigValue {
        match std::fs::read_to_string(self.dir.join(provenance::CONFIG)) {
            Ok(text) => config_lookup(&text, key),
            Err(_) => ConfigValue::Unknown,
        }
    }
}

/// Every complete installation under `dir` (those with a readable `kernel.json` whose
/// name is the directory's), by name.
pub fn installed_in(dir: &Path) -> Vec<InstalledKernel> {
    let mut out: Vec<InstalledKernel> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let p = KernelProvenance::read(&e.path()).ok()?;
            (e.file_name().to_str() == Some(p.name.as_str())).then(|| InstalledKernel {
                dir: e.path(),
                provenance: p,
            })
        })
        .collect();
    out.sort_by(|a, b| a.provenance.name.cmp(&b.provenance.name));
    out
}

/// Every kernel installed in [`kernels_dir`].
pub fn installed() -> Vec<InstalledKernel> {
    installed_in(&kernels_dir())
}
