//! A User-Mode Linux kernel on a host whose XSAVE area is larger than the kernel's FP
//! buffer (a CPU with AVX-512 or AMX): the ptrace shim `xstate_shim.c`, compiled once
//! into fslab's tools directory and preloaded into the kernel process only.
//!
//! UML 6.1 and 6.12 move a guest thread's FP state with `PTRACE_SETREGSET` of
//! `NT_X86_XSTATE` in an 832-byte buffer; the host refuses any size but its whole XSAVE
//! area (11,008 bytes on an AMX Xeon), and the guest's init dies at its first system
//! call ("userspace - ptrace set fp regs failed, errno = 14"). The shim keeps the whole
//! area for each of UML's buffers. A guest that runs with it says so in the manifest
//! ([`caveat`]).

use super::GuestError;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::process::Command;

/// The FP buffer of UML's x86_64 kernels: x87/SSE (512), the XSAVE header (64), AVX (256).
pub const UML_FP_BYTES: u32 = 832;

const SOURCE: &str = include_str!("xstate_shim.c");

/// The shim a guest's kernel process preloads, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shim {
    pub path: PathBuf,
    /// The host's XSAVE area for its enabled features (CPUID leaf 0xD, EBX).
    pub host_bytes: u32,
}

impl Shim {
    /// The kernel process's environment entry.
    pub fn env(&self) -> (String, String) {
        ("LD_PRELOAD".to_string(), self.path.display().to_string())
    }

    /// What the manifest's guest caveats say about it.
    pub fn caveat(&self) -> String {
        format!(
            "the host's XSAVE area is {} bytes (AVX-512 or AMX) and the UML kernel's FP buffer {UML_FP_BYTES}: fslab preloads a ptrace shim into the kernel process that keeps each guest thread's whole FP state (src/run/target/uml/xstate_shim.c); the guest's programs are unchanged",
            self.host_bytes
        )
    }
}

/// The host's XSAVE area in bytes for the features its kernel enabled, or None when the
/// CPU has no XSAVE (or is not x86_64).
pub fn host_xsave_bytes() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid_count;
        // SAFETY: CPUID exists on every x86_64 CPU (a safe function since Rust 1.87;
        // `unsafe` for the crate's rust-version, 1.85): leaf 1 first, leaf 0xD only
        // when XSAVE is there and the OS enabled it (OSXSAVE).
        #[allow(unused_unsafe)]
        let one = unsafe { __cpuid_count(1, 0) };
        let (xsave, osxsave) = (one.ecx & (1 << 26) != 0, one.ecx & (1 << 27) != 0);
        #[allow(unused_unsafe)]
        let max_leaf = unsafe { __cpuid_count(0, 0) }.eax;
        if !(xsave && osxsave && max_leaf >= 0xD) {
            return None;
        }
        #[allow(unused_unsafe)]
        let area = unsafe { __cpuid_count(0xD, 0) }.ebx;
        Some(area)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Whether a UML kernel needs the shim on a host with an XSAVE area of `host_bytes`.
pub fn needed(host_bytes: Option<u32>) -> bool {
    host_bytes.is_some_and(|b| b > UML_FP_BYTES)
}

/// The shim for this host: None when the host's XSAVE area fits the kernel's buffer;
/// else the compiled shim (compiled with `cc` on first use, kept in
/// `<tools dir>/kernels/.xstate-shim/`, named by the source's sha256).
pub fn for_this_host() -> Result<Option<Shim>, GuestError> {
    let host = host_xsave_bytes();
    if !needed(host) {
        return Ok(None);
    }
    let host_bytes = host.unwrap_or_default();
    let sha = hex::encode(Sha256::digest(SOURCE.as_bytes()));
    let dir = crate::kernels::kernels_dir().join(".xstate-shim");
    let path = dir.join(format!("xstate-{}.so", &sha[..12]));
    if path.is_file() {
        return Ok(Some(Shim { path, host_bytes }));
    }
    std::fs::create_dir_all(&dir).map_err(GuestError::io(format!("creating {}", dir.display())))?;
    let tag = format!("{}.{}", std::process::id(), crate::store::short_id());
    let src = dir.join(format!(".xstate-{tag}.c"));
    let tmp = dir.join(format!(".xstate-{tag}.so"));
    std::fs::write(&src, SOURCE).map_err(GuestError::io(format!("writing {}", src.display())))?;
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&tmp)
        .arg(&src)
        .arg("-ldl")
        .output();
    let _ = std::fs::remove_file(&src);
    let failed = |why: String| {
        let _ = std::fs::remove_file(&tmp);
        Err(GuestError::Shim { host_bytes, why })
    };
    match out {
        Err(e) => return failed(format!("`cc` could not be started: {e}")),
        Ok(o) if !o.status.success() => {
            return failed(format!(
                "`cc` failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
        Ok(_) => {}
    }
    std::fs::rename(&tmp, &path)
        .map_err(GuestError::io(format!("renaming to {}", path.display())))?;
    Ok(Some(Shim { path, host_bytes }))
}

#[cfg(test)]
mod tests {
    use super::{needed, UML_FP_BYTES};

    #[test]
    fn the_shim_is_needed_only_when_the_hosts_area_is_larger_than_umls() {
        assert!(!needed(None));
        assert!(!needed(Some(UML_FP_BYTES)));
        assert!(!needed(Some(576)));
        assert!(needed(Some(2696)));
        assert!(needed(Some(11008)));
    }
}
