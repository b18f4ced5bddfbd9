#!/usr/bin/env bash
# One command for a fresh Debian 12 machine, as root: install everything fslab needs
# (filesystem tools, fs_mark, Jupyter, the evcxr Rust kernel), build fslab, and run the
# example experiment. Prints the result bundle's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --locked --bin fslab
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
"$target/debug/fslab" run experiments/smallfiles.yaml --profile quick
