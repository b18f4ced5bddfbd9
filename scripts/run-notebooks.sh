#!/usr/bin/env bash
# Execute every notebook headlessly in real Jupyter with the evcxr kernel, failing on
# any cell error. Executed copies go to target/notebooks/ (or back into notebooks/ with
# --inplace). All notebooks share one evcxr build directory (EVCXR_TMPDIR), so fslab and
# polars compile once.
set -euo pipefail
cd "$(dirname "$0")/.."
export EVCXR_TMPDIR=${EVCXR_TMPDIR:-/var/tmp/fslab-evcxr}
mkdir -p "$EVCXR_TMPDIR"
# Experiments call fslab itself ({{fslab}}: the fsstress stand-in, block maps); inside
# evcxr the running program is not fslab, so they need the executable: the one built
# from this tree, unless FSLAB_BIN names one.
if [ -z "${FSLAB_BIN:-}" ]; then
  cargo build --locked --quiet --bin fslab
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  export FSLAB_BIN="$target/debug/fslab"
fi
out=target/notebooks
[ "${1:-}" = "--inplace" ] && out=notebooks
mkdir -p "$out"
for nb in notebooks/*.ipynb; do
  echo "run-notebooks: executing $nb"
  start=$(date +%s)
  (cd notebooks && jupyter nbconvert --to notebook --execute \
      --ExecutePreprocessor.timeout=2400 --ExecutePreprocessor.kernel_name=rust \
      --output-dir "../$out" "$(basename "$nb")")
  echo "run-notebooks: $nb done in $(( $(date +%s) - start )) s"
done
python3 scripts/check-notebooks.py "$out"/*.ipynb
