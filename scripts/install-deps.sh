#!/usr/bin/env bash
# Installs everything fslab needs on a fresh Debian 12 machine, as root:
# filesystem tools, Jupyter (headless execution) and the evcxr Rust kernel.
# Idempotent: anything already present is skipped.
set -euo pipefail

need_apt=()
# gcc: the C parts of dependencies (zstd, mimalloc) and the linker.
# chromium: the report test opens `fslab report` output in headless Chromium.
# slurm-wlm, munge: tests/slurm.rs runs a one-node Slurm (scripts/slurm-local.sh).
for pkg in gcc xfsprogs e2fsprogs btrfs-progs fsmark util-linux procps kmod time fonts-dejavu-core chromium slurm-wlm munge; do
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
echo "fslab: dependencies installed"
