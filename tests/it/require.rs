//! What a test cannot run without, said the same way everywhere. Missing, the test prints
//! `SKIPPED: …` and returns, so that `cargo test` as a user stays green; with
//! `FSLAB_REQUIRE_<NAME>=1` in the environment (scripts/test.sh sets them all) it fails
//! instead, so the suite cannot pass by skipping.
#![allow(dead_code)]

/// A precondition of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Root: loop devices, mounts, cgroups.
    Root,
    /// Block throttling: cgroup v2 with the io controller, or cgroup v1 blkio.
    Throttle,
    /// User-Mode Linux guests: root, and the `uml-bookworm` and `uml-trixie` kernels
    /// installed in fslab's tools directory (scripts/install-deps.sh installs them).
    Uml,
    /// The kernel `fslab kernels build` made from tests/fixtures/kernel-build/ (the
    /// fragment and both patches): root, and `uml-fslab-test` built from those very
    /// files (scripts/install-deps.sh builds it).
    KernelBuild,
}

/// The name of the test kernel scripts/install-deps.sh builds.
pub const TEST_KERNEL: &str = "uml-fslab-test";

/// The test kernel's inputs, in the order they are given to `fslab kernels build`:
/// the fragment, then the patches.
pub fn test_kernel_inputs() -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernel-build");
    (
        dir.join("fragment.config"),
        vec![dir.join("localversion.mbox"), dir.join("xfs-marker.diff")],
    )
}

/// The installed test kernel, if it was built from [`test_kernel_inputs`].
pub fn test_kernel() -> Option<fslab::kernels::InstalledKernel> {
    let (fragment, patches) = test_kernel_inputs();
    let sha = |p: &std::path::Path| fslab::tools::build::sha256_file(p).ok().map(|(s, _)| s);
    let want: Vec<Option<String>> = patches.iter().map(|p| sha(p)).collect();
    fslab::kernels::installed().into_iter().find(|k| {
        k.provenance.name == TEST_KERNEL
            && k.provenance.build.as_ref().is_some_and(|b| {
                b.fragment.as_ref().map(|f| f.sha256.clone()) == sha(&fragment)
                    && b.patches
                        .iter()
                        .map(|p| Some(p.file.sha256.clone()))
                        .collect::<Vec<_>>()
                        == want
            })
    })
}

impl Need {
    /// The variable that turns a missing precondition into a failure.
    pub fn variable(self) -> &'static str {
        match self {
            Need::Root => "FSLAB_REQUIRE_ROOT",
            Need::Throttle => "FSLAB_REQUIRE_THROTTLE",
            Need::Uml => "FSLAB_REQUIRE_UML",
            Need::KernelBuild => "FSLAB_REQUIRE_KERNEL_BUILD",
        }
    }

    /// Whether the precondition holds here.
    pub fn met(self) -> bool {
        match self {
            Need::Root => nix::unistd::geteuid().is_root(),
            Need::Throttle => fslab::devices::throttle::host_hierarchy().is_some(),
            Need::Uml => {
                let installed = fslab::kernels::installed();
                nix::unistd::geteuid().is_root()
                    && ["uml-bookworm", "uml-trixie"]
                        .iter()
                        .all(|n| installed.iter().any(|k| k.provenance.name == *n))
            }
            Need::KernelBuild => nix::unistd::geteuid().is_root() && test_kernel().is_some(),
        }
    }
}

/// `test` cannot run: `why`. Fails when the need's `FSLAB_REQUIRE_…` is set; else says
/// SKIPPED on stderr (the caller then returns).
pub fn skip(need: Need, test: &str, why: &str) {
    let var = need.variable();
    assert!(
        std::env::var_os(var).is_none(),
        "{var} is set but {test} cannot run here: {why}"
    );
    eprintln!("SKIPPED: {test}: {why} (set {var}=1 to fail instead)");
}

/// True when running as root; else [`skip`] (for the caller to return).
pub fn root(test: &str) -> bool {
    let met = Need::Root.met();
    if !met {
        skip(Need::Root, test, "needs root (loop devices, mount)");
    }
    met
}
