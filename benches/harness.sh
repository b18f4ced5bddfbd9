#!/usr/bin/env bash
# Harness cost per iteration (issue 15): `fslab run` of an experiment whose workload is
# `/bin/true` with `repeat: N` and no devices, timed as a whole, against a bash loop of
# the same command in the same run. The same experiment with `counters: all` on the
# workload (issue 17) gives what reading the kernel counters around every iteration
# costs (with no devices: vmstat and the global XFS stats; diskstats and ext4 read
# nothing). As root (fslab run needs it), from the project root, with a release build:
# `cargo build --release && bash benches/harness.sh [N...]` (`REPS=5` runs of each, fslab and
# bash alternating which goes first; a median row per N).
set -euo pipefail
FSLAB=${FSLAB:-target/release/fslab}
[ -x "$FSLAB" ] || { echo "no $FSLAB: cargo build --release first" >&2; exit 2; }
W=$(mktemp -d /var/tmp/fslab-bench-harness.XXXXXX)
trap 'rm -rf "$W"' EXIT
ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(300 3000 10000)
REPS=${REPS:-5}
now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) CPUs, $(uname -r); fslab: $FSLAB ($(stat -c %s "$FSLAB") bytes); load at start: $(load)"
printf '| iterations | fslab run (s) | bash loop (s) | **ratio** | fslab beyond bash per iteration (ms) | sum of wall_s (s) | with `counters: all` (s) | counters per iteration (ms) | load |\n|---|---|---|---|---|---|---|---|---|\n'
for n in "${ns[@]}"; do
  for c in 0 1; do
    {
      echo "id: harness"
      echo "title: harness cost"
      echo "workload:"
      echo "  run: /bin/true"
      echo "  repeat: $n"
      [ $c = 1 ] && echo "  counters: all"
    } > "$W/h$c.yaml"
  done
  : > "$W/ratios"
  # One untimed run of each first (as hyperfine's --warmup): the first run in a new
  # work directory pays for its directories and cold caches.
  FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/h0.yaml" --quiet >/dev/null 2>&1
  bash -c "for i in \$(seq $n); do /bin/true; done"
  rm -rf "$W/r"
  for rep in $(seq "$REPS"); do
    # Which of fslab and bash goes first alternates, so that a drift in the host's
    # load favours neither.
    if [ $((rep % 2)) = 1 ]; then
      t0=$(now)
      out=$(FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/h0.yaml" --quiet 2>/dev/null)
      t1=$(now)
      bash -c "for i in \$(seq $n); do /bin/true; done"
      t2=$(now)
      f=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'); b=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
    else
      t0=$(now)
      bash -c "for i in \$(seq $n); do /bin/true; done"
      t1=$(now)
      out=$(FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/h0.yaml" --quiet 2>/dev/null)
      t2=$(now)
      b=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'); f=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
    fi
    t3=$(now)
    FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/h1.yaml" --quiet >/dev/null 2>&1
    t4=$(now)
    sum=$(python3 -c "import polars as pl; print(round(pl.read_parquet('$out/runs.parquet')['wall_s'].sum(), 3))")
    awk -v f="$f" -v l2="$b" -v c="$t3" -v d="$t4" -v n="$n" -v s="$sum" -v l="$(load)" 'BEGIN {
      k = d - c;
      printf "| %d | %.2f | %.2f | **%.2fx** | %.3f | %s | %.2f | %.3f | %s |\n", n, f, l2, f / l2, (f - l2) * 1000 / n, s, k, (k - f) * 1000 / n, l }'
    awk -v f="$f" -v b="$b" 'BEGIN { print f / b }' >> "$W/ratios"
    rm -rf "$W/r"
  done
  sort -g "$W/ratios" | awk -v n="$n" '{ r[NR] = $1 } END {
    m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2;
    printf "| %d | | | **median %.2fx** (%.2f–%.2f over %d runs) | | | | | |\n", n, m, r[1], r[NR], NR }'
done
echo "load at end: $(load)"
