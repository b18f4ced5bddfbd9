#!/usr/bin/env bash
# Regenerate the notebook pages under docs/notebooks/: execute each published notebook on
# its committed bundle (scripts/run-notebooks.sh: real Jupyter, evcxr kernel) into
# target/notebooks-html/, export each to one self-contained HTML page, and write the stamp
# (docs/notebooks/SOURCES.sha256) and the index (docs/notebooks/README.md).
# scripts/notebooks-html.py lists the pages and their inputs; tests/it/notebook_pages.rs
# fails while a page is stale.
#   bash scripts/notebooks-html.sh            every page
#   bash scripts/notebooks-html.sh NAME...    those pages (e.g. xfs-rt-truncate)
set -euo pipefail
cd "$(dirname "$0")/.."
notebooks=$(python3 scripts/notebooks-html.py notebooks "$@")
out=target/notebooks-html
rm -rf "$out"
# shellcheck disable=SC2086 # one word per notebook path
bash scripts/run-notebooks.sh --out "$out" $notebooks
python3 scripts/notebooks-html.py publish "$out" "$@"
python3 scripts/notebooks-html.py check
