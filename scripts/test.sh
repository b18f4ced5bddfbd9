#!/usr/bin/env bash
# The test suite, as root on a machine prepared by scripts/install-deps.sh:
# formatting, lints, unit and integration tests on real loop devices (nextest when
# installed, cargo test otherwise), then every notebook executed headlessly in Jupyter
# with the evcxr kernel. Ends by checking that nothing was left attached or mounted.
set -euo pipefail
cd "$(dirname "$0")/.."
export EVCXR_TMPDIR=${EVCXR_TMPDIR:-/var/tmp/fslab-evcxr}
# The report test must really render the report in headless Chromium (install-deps installs it).
export FSLAB_REQUIRE_CHROMIUM=1

before_loops=$(losetup -a | wc -l)
before_mounts=$(grep -c '^/dev/loop' /proc/mounts || true)

cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --locked --no-fail-fast
else
  cargo test --locked --no-fail-fast
fi
bash scripts/run-notebooks.sh

after_loops=$(losetup -a | wc -l)
after_mounts=$(grep -c '^/dev/loop' /proc/mounts || true)
if [ "$after_loops" -gt "$before_loops" ] || [ "$after_mounts" -gt "$before_mounts" ]; then
  echo "test.sh: loop devices or mounts were left behind:" >&2
  losetup -a >&2; grep loop /proc/mounts >&2 || true
  exit 1
fi
echo "test.sh: all checks passed"
