//! `kernel.json`: where a provisioned kernel came from.

use crate::tools::provenance::{read_record, write_record};
use crate::tools::Input;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name in an installed kernel's directory.
pub const FILE: &str = "kernel.json";
/// The kernel's configuration, as text, next to it.
pub const CONFIG: &str = "config";

/// How a kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// User-Mode Linux: the kernel is an ordinary program.
    Uml,
}

impl KernelKind {
    /// For people: `User-Mode Linux`.
    pub fn describe(self) -> &'static str {
        match self {
            KernelKind::Uml => "User-Mode Linux",
        }
    }
}

/// Where an installed kernel came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelProvenance {
    /// `uml-bookworm`.
    pub name: String,
    pub kind: KernelKind,
    /// What the kernel says it is (`linux.uml --version`: `6.1.176`).
    pub release: String,
    /// The Debian binary package and its version (`user-mode-linux` `6.1um4+b13`).
    pub package: String,
    pub package_version: String,
    /// The package's `Built-Using` (`linux (= 6.1.176-1)`): the kernel source it was
    /// built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_using: Option<String>,
    /// The apt source line it was fetched with (`deb URL bookworm main`).
    pub apt_source: String,
    /// The `.deb` and its sha256.
    pub deb: Input,
    /// The kernel program, relative to the kernel's directory.
    pub binary: String,
    /// The C library the kernel runs with, when it is not the host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libc: Option<LibcProvenance>,
    /// How fslab built the kernel from a Debian kernel source package (`fslab kernels
    /// build`); then `package` is that source package (`linux-source-6.12`) and `deb`
    /// its `.deb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildProvenance>,
    pub installed_at: String,
}

/// How `fslab kernels build` made a kernel: what went into it, in order, and the
/// cache key those inputs make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildProvenance {
    /// sha256 of [`key_text`](Self::key_text): a build with the same key is a cache hit.
    pub key: String,
    /// The inputs the key is made of, one a line (source package and version, sha256
    /// of the base configuration, of the fragment and of each patch, the compiler).
    pub key_text: String,
    /// `ARCH=um`.
    pub arch: String,
    /// fslab's base configuration (merged over `make ARCH=um defconfig`).
    pub base_config: Input,
    /// The user's configuration fragment, and its options as they are in the
    /// resulting configuration (each one checked after `make olddefconfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<Input>,
    #[serde(default)]
    pub fragment_options: Vec<String>,
    /// The patches, in the order they were applied.
    #[serde(default)]
    pub patches: Vec<PatchProvenance>,
    /// sha256 of the resulting `.config` (kept as `config`).
    pub config_sha256: String,
    /// `gcc --version`'s first line.
    pub compiler: String,
    /// The make target and its parallelism (`linux`, 2).
    pub make_target: String,
    pub jobs: usize,
    /// How long `make` took, and the host's load average when it started.
    pub make_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_before: Option<String>,
}

/// One patch file of a build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchProvenance {
    pub file: Input,
    /// `mbox` (applied as `git am` would: split, `git mailinfo`, `git apply`) or `diff`
    /// (`patch -p1`).
    pub format: String,
    /// The subjects of an mbox's messages that were applied, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
}

/// The C library a kernel runs with instead of the host's: its package, and where its
/// loader (the kernel's ELF interpreter, set with `patchelf`) and libraries are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibcProvenance {
    /// `libc6` and its version (`2.41-12`).
    pub package: String,
    pub package_version: String,
    pub deb: Input,
    /// The loader, relative to the kernel's directory.
    pub interpreter: String,
    /// The directory on the kernel's `LD_LIBRARY_PATH`, relative to its directory.
    pub library_path: String,
    /// The kernel program's sha256 before its interpreter was set.
    pub binary_sha256_before: String,
}

impl KernelProvenance {
    /// Read `<dir>/kernel.json`.
    pub fn read(dir: &Path) -> std::io::Result<KernelProvenance> {
        read_record(&dir.join(FILE))
    }

    /// Write `<dir>/kernel.json`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        write_record(&dir.join(FILE), self)
    }

    /// `user-mode-linux 6.1um4+b13 (Debian bookworm, built using linux (= 6.1.176-1))`.
    pub fn source_line(&self) -> String {
        let line = self.package_line();
        match &self.libc {
            Some(l) => format!(
                "{line}; runs with {} {} (its loader set as the interpreter)",
                l.package, l.package_version
            ),
            None => line,
        }
    }

    fn package_line(&self) -> String {
        if let Some(b) = &self.build {
            let patches: Vec<&str> = b.patches.iter().map(|p| p.file.name.as_str()).collect();
            return format!(
                "built by fslab from {} {} ({}), ARCH={}{}{}, {}",
                self.package,
                self.package_version,
                self.apt_source,
                b.arch,
                b.fragment
                    .as_ref()
                    .map_or_else(String::new, |f| format!(", config fragment {}", f.name)),
                if patches.is_empty() {
                    String::new()
                } else {
                    format!(", patches {}", patches.join(", "))
                },
                b.compiler
            );
        }
        match &self.built_using {
            Some(b) => format!(
                "{} {} ({}, built using {b})",
                self.package, self.package_version, self.apt_source
            ),
            None => format!(
                "{} {} ({})",
                self.package, self.package_version, self.apt_source
            ),
        }
    }
}
