#!/usr/bin/env bash
# The test suite, as root on a machine prepared by scripts/install-deps.sh:
# formatting, lints, unit and integration tests on real loop devices (nextest when
# installed, cargo test otherwise), then every notebook executed headlessly in Jupyter
# with the evcxr kernel, and their outputs compared with the pages of docs/notebooks/.
# Ends by checking that nothing was left attached or mounted.
set -euo pipefail
cd "$(dirname "$0")/.."
export EVCXR_TMPDIR=${EVCXR_TMPDIR:-/var/tmp/fslab-evcxr}
# The report test must really render the report in headless Chromium (install-deps installs it).
export FSLAB_REQUIRE_CHROMIUM=1
# The notebook tests must really run Jupyter with the evcxr kernel (install-deps installs both).
export FSLAB_REQUIRE_JUPYTER=1
# The root-only tests (loop devices, mounts) and the cgroup throttle tests must really run:
# without root or a blkio/io hierarchy they fail instead of saying SKIPPED (tests/it/require.rs;
# the unit tests' devices::test_needs_root).
export FSLAB_REQUIRE_ROOT=1
export FSLAB_REQUIRE_THROTTLE=1
# The guest tests must really boot a User-Mode Linux guest (install-deps installs uml-bookworm).
export FSLAB_REQUIRE_UML=1
# The kernel-build test must really boot the kernel install-deps builds (uml-fslab-test).
export FSLAB_REQUIRE_KERNEL_BUILD=1

# Test output kept for inspection (bundles, screenshots): keep a day's worth.
if [ -d /var/tmp/fslab-test-stats ]; then
  find /var/tmp/fslab-test-stats -mindepth 1 -maxdepth 1 -mtime +1 -exec rm -rf {} +
fi

# What fslab's tests attach and mount lives under paths named fslab (/var/tmp/fslab…);
# compare those before and after, so other jobs' loop devices cannot raise a false alarm.
fslab_loops() { losetup -n -O NAME,BACK-FILE --list 2>/dev/null | grep fslab | sort || true; }
fslab_mounts() { grep fslab /proc/mounts | sort || true; }
before_loops=$(fslab_loops)
before_mounts=$(fslab_mounts)

cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --locked --no-fail-fast
else
  cargo test --locked --no-fail-fast
fi
bash scripts/run-notebooks.sh
# The pages of docs/notebooks/ still show what this run's notebooks output (their inputs'
# stamp is tests/it/notebook_pages.rs's; this catches a change in what the code computes).
python3 scripts/notebooks-html.py compare target/notebooks

left_loops=$(comm -13 <(echo "$before_loops") <(fslab_loops))
left_mounts=$(comm -13 <(echo "$before_mounts") <(fslab_mounts))
if [ -n "$left_loops$left_mounts" ]; then
  echo "test.sh: loop devices or mounts were left behind:" >&2
  printf '%s\n' "$left_loops" "$left_mounts" >&2
  exit 1
fi
echo "test.sh: all checks passed"
