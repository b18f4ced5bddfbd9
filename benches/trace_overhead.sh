#!/usr/bin/env bash
# What `trace: io` costs a metadata-heavy workload (issue 11): the same experiment run
# with and without `trace: io` on its workload, alternately, in the same session; the
# ratio of the workloads' median wall time (traced ÷ untraced) per round, and of the
# whole `fslab run`. Two workloads:
#   e2fsck — `e2fsck -f -n` of an ext4 holding 30,000 files, the device's buffer cache
#            flushed before each pass (cold reads: seed 001's traced step);
#   create — `fs_mark -S 1`: 1,000 empty files, each fsync'd (small journal writes).
# As root, from the project root: `bash benches/trace_overhead.sh [ROUNDS]` (default 3;
# WORKLOADS="e2fsck" runs one of them).
# FEATURE=counters measures `counters: all` (issue 17) instead of `trace: io` the same way:
# the kernel counters read before and after every timed iteration.
# FEATURE=log_items measures the `xfs_log_items` counters (issue 28: two XFS tracepoints
# enabled for the whole run, counted in their own tracefs instances) on the `pptr`
# workload, against the same experiment with only `xfs` counters (both with `sync`).
# FSLAB=… picks the binary (default target/release/fslab, else target/debug/fslab; the
# workload's wall time does not depend on it, the whole run's does).
set -euo pipefail
FSLAB=${FSLAB:-target/release/fslab}
[ -x "$FSLAB" ] || FSLAB=target/debug/fslab
[ -x "$FSLAB" ] || { echo "no fslab binary: cargo build first" >&2; exit 2; }
ROUNDS=${1:-3}
FEATURE=${FEATURE:-trace}
LINE0=""
case $FEATURE in
  trace) LINE="  trace: io" ;;
  counters) LINE="  counters: all" ;;
  log_items)
    LINE0="  counters: { sources: [xfs], sync: true }"
    LINE="  counters: { sources: [xfs, xfs_log_items], sync: true }"
    WORKLOADS=${WORKLOADS:-pptr} ;;
  *) echo "FEATURE is trace, counters or log_items, not $FEATURE" >&2; exit 2 ;;
esac
WORKLOADS=${WORKLOADS:-e2fsck create}
W=$(mktemp -d /var/tmp/fslab-bench-trace.XXXXXX)
trap 'rm -rf "$W"' EXIT
now() { date +%s.%N; }

experiment() { # NAME TRACE(0|1)
  local extra="$LINE0"
  [ "$2" = 1 ] && extra="$LINE"
  case $1 in
    e2fsck) cat <<YAML
id: trace-overhead-e2fsck
title: e2fsck with and without trace io
devices:
  data: { size: 1GiB }
setup:
  - run: mkfs.ext4 -F -q {{dev.data}}
  - mount: data
  - run: fs_mark -d ../mnt/f -D 64 -N 1 -n 30000 -s 4096 -S 0 -L 1 -k
  - umount: "{{mnt}}"
workload:
  name: e2fsck
  run: e2fsck -f -n {{dev.data}}
  repeat: 9
  before_each:
    # Only this device's cache: the kernel-wide drop_caches takes minutes on a shared
    # host with a large page cache, and would dominate the run.
    - run: blockdev --flushbufs {{dev.data}}
$extra
YAML
    ;;
    create) cat <<YAML
id: trace-overhead-create
title: fsync'd creates with and without trace io
devices:
  data: { size: 512MiB }
setup:
  - run: mkfs.ext4 -F -q {{dev.data}}
  - mount: data
workload:
  name: create
  run: fs_mark -d ../mnt/c{{iteration}} -D 16 -N 1 -n 1000 -s 0 -S 1 -L 1 -k
  repeat: 9
$extra
YAML
    ;;
    pptr) cat <<YAML
id: trace-overhead-pptr
title: fsstress on XFS with parent pointers, with and without the log-item tracepoints
devices:
  data: { size: 2GiB }
tools:
  mkfs_xfs:
    choices:
      - run: [mkfs.xfs, -n, parent=1]
        requires:
          - { tool: mkfs.xfs, min_version: "6.10", package: xfsprogs }
setup:
  - run: "{{mkfs_xfs}} -q -f {{dev.data}}"
  - mount: data
workload:
  name: pptr
  run: "{{fslab}} stress -n 5000 -p 4 -z -f creat=1,mkdir=1,mknod=1,rmdir=1,unlink=1,link=1,rename=1 -d {{mnt}}/s{{iteration}} -s 1"
  repeat: 9
$extra
YAML
    ;;
  esac
}

# One run: prints "<whole run s> <median workload wall_s> <median user_s + sys_s>
# <mean requests per iteration>".
one() { # NAME TRACE
  experiment "$1" "$2" > "$W/$1-$2.yaml"
  local t0 t1 out
  t0=$(now)
  out=$(FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$W/$1-$2.yaml" --quiet 2>>"$W/fslab.log")
  t1=$(now)
  python3 - "$out" "$t0" "$t1" <<'PY'
import sys, os, polars as pl
out, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
runs = pl.read_parquet(os.path.join(out, "runs.parquet")).filter(pl.col("status") == "ok")
req = "-"
p = os.path.join(out, "io_summary.parquet")
if os.path.exists(p):
    s = pl.read_parquet(p)
    req = f"{s['requests'].mean():.0f}"
cpu = (runs["user_s"] + runs["sys_s"]).median()
print(f"{t1 - t0:.2f} {runs['wall_s'].median():.4f} {cpu:.4f} {req}")
PY
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) CPUs, $(uname -r); fslab: $FSLAB; feature: $FEATURE ($LINE); load average at start: $(load)"
printf '| workload | round | without: run (s) | without: median wall_s | with: run (s) | with: median wall_s | requests traced / iteration | **wall_s ratio** | CPU (user+sys) ratio | run ratio | load (1, 5, 15 min) |\n|---|---|---|---|---|---|---|---|---|---|---|\n'
for name in $WORKLOADS; do
  for r in $(seq "$ROUNDS"); do
    # Alternate which goes first, so that a drift in the host's load favours neither.
    if [ $((r % 2)) = 1 ]; then
      read -r ur uw uc _ < <(one "$name" 0); read -r tr tw tc req < <(one "$name" 1)
    else
      read -r tr tw tc req < <(one "$name" 1); read -r ur uw uc _ < <(one "$name" 0)
    fi
    awk -v n="$name" -v r="$r" -v ur="$ur" -v uw="$uw" -v uc="$uc" -v tr="$tr" -v tw="$tw" -v tc="$tc" -v q="$req" -v l="$(load)" 'BEGIN {
      printf "| %s | %d | %.2f | %.4f | %.2f | %.4f | %s | **%.3f** | %.3f | %.3f | %s |\n", n, r, ur, uw, tr, tw, q, tw / uw, tc / uc, tr / ur, l }'
  done
done
echo "load average at end: $(load)"
