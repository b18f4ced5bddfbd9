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
    pub installed_at: String,
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
