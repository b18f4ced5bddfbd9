#!/usr/bin/env bash
# Installs everything fslab needs on a fresh Debian 12 machine, as root:
# filesystem tools, Jupyter (headless execution) and the evcxr Rust kernel.
# Idempotent: anything already present is skipped.
set -euo pipefail

need_apt=()
# gcc: the C parts of dependencies (zstd, mimalloc) and the linker.
# chromium: the report test opens `fslab report` output in headless Chromium.
# fio: the fio example experiment (tests/it/fio_example.rs).
# slurm-wlm, munge: tests/it/slurm.rs runs a one-node Slurm (scripts/slurm-local.sh).
# autoconf, automake: `fslab tools install --git` (a checkout has no configure yet).
# patchelf: `fslab kernels install uml-trixie` sets the kernel's ELF interpreter.
# flex, bison, bc, make, patch, xz-utils, git: `fslab kernels build` (a kernel from Debian's source).
for pkg in patchelf flex bison bc make patch xz-utils git gcc autoconf automake xfsprogs e2fsprogs btrfs-progs fsmark fio util-linux procps kmod time fonts-dejavu-core chromium slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "fslab: installing Debian packages: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Jupyter, enough to execute notebooks headlessly (nbconvert + nbclient + a kernel spec manager).
if ! command -v jupyter >/dev/null 2>&1 || ! jupyter nbconvert --version >/dev/null 2>&1; then
  echo "fslab: installing Jupyter (pip)"
  python3 -m pip install --quiet --disable-pip-version-check nbconvert nbclient jupyter_client ipykernel polars
fi
python3 -c 'import polars' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check polars

# The evcxr Rust kernel.
if ! command -v evcxr_jupyter >/dev/null 2>&1; then
  echo "fslab: installing evcxr_jupyter (cargo install, ~8 min on 2 cores)"
  cargo install --locked evcxr_jupyter
fi
if ! jupyter kernelspec list 2>/dev/null | grep -q '^ *rust '; then
  evcxr_jupyter --install >/dev/null
fi
# xfsprogs >= 6.10 for the parent=1 points of experiments/xfs-parent-pointers*.yaml
# (`mkfs.xfs -n parent=`; Debian 12 ships 6.1). Built once per machine from Debian
# trixie's source package into fslab's tools directory ($FSLAB_TOOLS_DIR, else
# ~/.cache/fslab/tools) with fslab's own apt state (never /etc/apt); its build
# dependencies are apt-get installed. ~5-7 min on 2 cores. Skipped when the system's
# mkfs.xfs is new enough or a provisioned xfsprogs is there.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
sys_xfs=$( (mkfs.xfs -V 2>/dev/null || /usr/sbin/mkfs.xfs -V 2>/dev/null) | grep -oE '[0-9]+(\.[0-9]+)+' | head -n1 || true)
tools_dir=${FSLAB_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fslab/tools}
if [ -n "$sys_xfs" ] && version_ge "$sys_xfs" 6.10; then
  echo "fslab: mkfs.xfs $sys_xfs is new enough; no xfsprogs to provision"
elif compgen -G "$tools_dir/xfsprogs-*/provenance.json" >/dev/null; then
  echo "fslab: provisioned xfsprogs present in $tools_dir"
else
  echo "fslab: provisioning xfsprogs 6.13.0 from Debian trixie's source (fslab tools install xfsprogs)"
  (cd "$(dirname "$0")/.." && cargo run --quiet --bin fslab -- tools install xfsprogs)
fi
# User-Mode Linux kernels for `fslab run --kernel NAME` and tests/it/uml.rs: Debian 12's
# user-mode-linux package (6.1) and Debian 13's (6.12, with trixie's C library), both
# with CONFIG_XFS_RT=y, fetched with fslab's own apt state into the tools directory
# (never /etc/apt), with their provenance. ~10-30 s each.
for k in uml-bookworm uml-trixie; do
  if compgen -G "$tools_dir/kernels/$k/kernel.json" >/dev/null; then
    echo "fslab: $k kernel present in $tools_dir/kernels"
  else
    echo "fslab: installing the $k kernel (fslab kernels install $k)"
    (cd "$(dirname "$0")/.." && cargo run --quiet --bin fslab -- kernels install "$k")
  fi
done
# The test kernel tests/it/kernel_build.rs boots: `fslab kernels build` from Debian
# trixie's linux-source-6.12 (fetched with fslab's own apt state into the kernels
# directory; nothing is installed) with tests/fixtures/kernel-build/: a config fragment,
# an mbox and a diff. Once per machine: the same inputs again are a cache hit (instant).
# A fresh machine adds the build: 43 min here on 2 cores shared with other builds (load
# 9-19; 12 CPU-minutes), 17.5 min at load 6-9, about 8 min expected on an idle 2-core
# machine (docs/kernels.md).
echo "fslab: the test kernel uml-fslab-test (fslab kernels build; a cache hit once built)"
(cd "$(dirname "$0")/.." && F=tests/fixtures/kernel-build && cargo run --quiet --bin fslab -- \
  kernels build uml-fslab-test --source linux-source-6.12 --config "$F/fragment.config" \
  --patch "$F/localversion.mbox" --patch "$F/xfs-marker.diff")
echo "fslab: dependencies installed"
