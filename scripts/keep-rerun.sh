#!/bin/bash
# Keep a result bundle of a `repro` run under data/reruns/<seed>/, small enough to commit:
# every parquet table, the manifest, the experiment and runs.jsonl are kept; raw logs and
# captures larger than LIMIT bytes are dropped and listed (path, bytes, sha256) in the
# bundle's DROPPED.md. NOTES is appended to the bundle's NOTES.md (how it was run).
#
#   scripts/keep-rerun.sh BUNDLE SEED [LIMIT] [NOTES]
#
# Then regenerate REPRODUCTION.md with the command in README.md (tests/it/reproduction.rs
# holds the order: other scales of a scale_check and a second rerun next to their first).
set -euo pipefail
src=${1:?bundle directory}
seed=${2:?seed number, e.g. 000}
limit=${3:-65536}
notes=${4:-}
here=$(cd "$(dirname "$0")/.." && pwd)
dst="$here/data/reruns/$seed"
rm -rf "$dst"
mkdir -p "$dst"
cp -a "$src"/. "$dst"/
dropped=()
while IFS= read -r -d '' f; do
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$limit" ]; then
    rel=${f#"$dst"/}
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    dropped+=("| \`$rel\` | $size | \`$sum\` |")
    rm -f "$f"
  fi
done < <(find "$dst/logs" "$dst/captures" -type f -print0 2>/dev/null)
{
  echo "# What was dropped from this bundle"
  echo
  echo "Copied from \`$(basename "$src")\` by scripts/keep-rerun.sh: raw logs and captures"
  echo "over $limit bytes were removed to keep the repository small; every parquet table,"
  echo "manifest.json, experiment.yaml and runs.jsonl are as the run wrote them."
  echo
  if [ ${#dropped[@]} -eq 0 ]; then
    echo "Nothing was dropped."
  else
    echo "| file | bytes | sha256 |"
    echo "|---|---|---|"
    printf '%s\n' "${dropped[@]}"
  fi
} > "$dst/DROPPED.md"
if [ -n "$notes" ]; then
  printf '%s\n' "$notes" > "$dst/NOTES.md"
fi
du -sh "$dst"
