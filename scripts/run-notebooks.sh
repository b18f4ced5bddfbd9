#!/usr/bin/env bash
# Execute every notebook headlessly in real Jupyter with the evcxr kernel (through
# `fslab notebook run`), failing on any cell error; prints each code cell's time.
# Executed copies go to target/notebooks/ (or back into notebooks/ with --inplace, or into
# DIR with --out DIR). Notebooks named as arguments run instead of all of notebooks/*.ipynb
# (scripts/notebooks-html.sh runs the ones it publishes this way).
# The notebooks link against one fslab shared library (scripts/notebook-lib.sh, run here
# first: on a fresh machine that is where fslab and polars compile) and keep evcxr's
# build directory in target/evcxr (notebooks/evcxr.toml; EVCXR_TMPDIR is not used).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/notebooks
chosen=()
while [ $# -gt 0 ]; do
  case $1 in
    --inplace) out=notebooks ;;
    --out) out=$2; shift ;;
    -*) echo "run-notebooks: unknown option $1 (options: --inplace, --out DIR)" >&2; exit 2 ;;
    *) chosen+=("$1") ;;
  esac
  shift
done
[ ${#chosen[@]} -eq 0 ] && chosen=(notebooks/*.ipynb)
# Experiments call fslab itself ({{fslab}}: the fsstress stand-in, block maps); inside
# evcxr the running program is not fslab, so they need the executable: the one built
# from this tree, unless FSLAB_BIN names one.
if [ -z "${FSLAB_BIN:-}" ]; then
  cargo build --locked --quiet --bin fslab
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  export FSLAB_BIN="$target/debug/fslab"
fi
start=$(date +%s)
bash scripts/notebook-lib.sh
echo "run-notebooks: notebook library ready in $(( $(date +%s) - start )) s"
mkdir -p "$out"
ran=()
for nb in "${chosen[@]}"; do
  echo "run-notebooks: executing $nb"
  start=$(date +%s)
  "$FSLAB_BIN" notebook run "$nb" --timing -o "$out/$(basename "$nb")"
  ran+=("$out/$(basename "$nb")")
  echo "run-notebooks: $nb done in $(( $(date +%s) - start )) s"
done
python3 scripts/check-notebooks.py "${ran[@]}"
