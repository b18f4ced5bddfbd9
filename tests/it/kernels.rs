//! `fslab kernels install uml-bookworm` and `fslab kernels list`, for real (root,
//! network: it fetches Debian's user-mode-linux package), and a boot of the installed
//! kernel with a trivial init through hostfs.

use crate::common::{text, Scratch};
use std::path::Path;
use std::process::{Command, Stdio};

/// Processes whose program is `binary`.
fn running(binary: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe == binary || exe.starts_with(binary))
        })
        .collect()
}

#[test]
fn uml_bookworm_installs_with_provenance_lists_and_boots() {
    let s = Scratch::new("kern");
    let tools = s.root.join("tools");
    let fslab = |args: &[&str]| {
        s.fslab()
            .env("FSLAB_TOOLS_DIR", &tools)
            .args(args)
            .output()
            .unwrap()
    };
    let o = fslab(&["kernels", "install", "uml-bookworm"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.starts_with("installed: uml-bookworm (kernel 6.1."),
        "{out}"
    );

    // The provenance: package, version, the .deb's sha256, the kernel's own release.
    let dir = tools.join("kernels/uml-bookworm");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("kernel.json")).unwrap()).unwrap();
    assert_eq!(p["package"], "user-mode-linux");
    assert_eq!(p["kind"], "uml");
    assert!(
        p["package_version"].as_str().unwrap().starts_with("6.1um"),
        "{p}"
    );
    assert!(p["release"].as_str().unwrap().starts_with("6.1."), "{p}");
    let sha = p["deb"]["sha256"].as_str().unwrap();
    assert!(
        sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()),
        "{p}"
    );
    assert!(p["deb"]["name"]
        .as_str()
        .unwrap()
        .starts_with("user-mode-linux_"));
    assert_eq!(
        p["apt_source"],
        "deb http://deb.debian.org/debian bookworm main"
    );
    // No staging tree or package file stays behind.
    assert!(!tools.join("kernels/.build/uml-bookworm").exists());

    // Again: nothing to do.
    let o = fslab(&["kernels", "install", "uml-bookworm"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("already installed: uml-bookworm"));

    let o = fslab(&["kernels", "list"]);
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    for want in [
        "uml-bookworm: kernel 6.1.",
        "CONFIG_XFS_RT=y",
        "CONFIG_BLK_DEV_UBD=y",
        "CONFIG_HOSTFS=y",
        sha,
    ] {
        assert!(listed.contains(want), "{want}: {listed}");
    }

    // Boot it: the root is the host's / through hostfs (read-only), the init writes
    // the guest's `uname -r` through a second, writable hostfs mount, then powers off.
    let binary = dir.join(p["binary"].as_str().unwrap());
    let out_dir = s.root.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let init = s.root.join("init.sh");
    std::fs::write(
        &init,
        format!(
            "#!/bin/sh\nmount -t proc proc /proc\nmount -t tmpfs tmpfs /mnt\nmkdir /mnt/out\n\
             mount -t hostfs none /mnt/out -o {}\nuname -r > /mnt/out/ran\nsync\n\
             echo o > /proc/sysrq-trigger\nsleep 60\n",
            out_dir.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let console = std::fs::File::create(s.root.join("console.log")).unwrap();
    // `timeout` only guards against a hung guest; the test does not time anything.
    // On a host whose XSAVE area is larger than the kernel's FP buffer (AVX-512, AMX),
    // the kernel needs fslab's ptrace shim, as every guest fslab boots gets it.
    let shim = fslab::run::target::uml::xstate::for_this_host().unwrap();
    let status = Command::new("timeout")
        .envs(shim.iter().map(|s| s.env()))
        .arg("300")
        .arg(&binary)
        .args([
            "mem=64M",
            "rootfstype=hostfs",
            "rootflags=/",
            "ro",
            &format!("init={}", init.display()),
            "con=null",
            "con0=fd:0,fd:1",
            "quiet",
        ])
        .stdin(Stdio::null())
        .stdout(console.try_clone().unwrap())
        .stderr(console)
        .status()
        .unwrap();
    let log = std::fs::read_to_string(s.root.join("console.log")).unwrap_or_default();
    assert!(status.success(), "{status:?}\n{log}");
    let ran = std::fs::read_to_string(out_dir.join("ran")).unwrap_or_default();
    assert_eq!(ran.trim(), p["release"].as_str().unwrap(), "{log}");
    assert!(log.contains("reboot: Power down"), "{log}");
    assert_eq!(running(&binary), Vec::<u32>::new());
}
