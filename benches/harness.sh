#!/usr/bin/env bash
# Harness cost per iteration (issue 15): `fslab run` of an experiment whose workload is
# `/bin/true` with `repeat: N` and no devices, timed as a whole, against a bash loop of
# the same command in the same run. As root (fslab run needs it), from the project root,
# with a release build: `cargo build --release && bash benches/harness.sh [N...]`.
set -euo pipefail
FSLAB=${FSLAB:-target/release/fslab}
[ -x "$FSLAB" ] || { echo "no $FSLAB: cargo build --release first" >&2; exit 2; }
W=$(mktemp -d /var/tmp/fslab-bench-harness.XXXXXX)
trap 'rm -rf "$W"' EXIT
ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(300 1000 3000)
now() { date +%s.%N; }
printf '| iterations | fslab run (s) | bash loop (s) | ratio | fslab per iteration beyond bash (ms) | sum of wall_s (s) |\n|---|---|---|---|---|---|\n'
for n in "${ns[@]}"; do
  cat > "$W/h.yaml" <<YAML
id: harness
title: harness cost
workload:
  run: /bin/true
  repeat: $n
YAML
  for rep in 1 2 3; do
    t0=$(now)
    out=$(FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/h.yaml" --quiet)
    t1=$(now)
    bash -c "for i in \$(seq $n); do /bin/true; done"
    t2=$(now)
    sum=$(python3 -c "import polars as pl; print(round(pl.read_parquet('$out/runs.parquet')['wall_s'].sum(), 3))")
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" -v s="$sum" 'BEGIN {
      f = b - a; l = c - b;
      printf "| %d | %.2f | %.2f | %.1fx | %.2f | %s |\n", n, f, l, f / l, (f - l) * 1000 / n, s }'
  done
done
