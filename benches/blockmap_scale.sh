#!/usr/bin/env bash
# Block maps at scale (issue 15, parts 2 and 3). As root, from the project root, with a
# release build: `cargo build --release && bash benches/blockmap_scale.sh [scale|fsmap|capture|all]`
# (FSLAB=path/to/fslab to measure another build, e.g. a debug one).
#
# scale: peak RSS (/usr/bin/time -v, "Maximum resident set size") and wall time of
#   `fslab blockmap MNT --no-dirs -o x.parquet` (FIEMAP, streamed) against batched
#   `find MNT -type f -print0 | xargs -0 filefrag -v >/dev/null`, on one ext4 (1 KiB
#   blocks) of 1 KiB files grown to 20,000, 200,000 and 2,000,000 files (SIZES to
#   change), each size measured side by side in one run, page cache warm (a first
#   untimed `find` pass). Files are written by a python loop, 1,000 per directory.
# fsmap: on one XFS (`mkfs.xfs -m rmapbt=1`, xfsprogs from ~/.cache/fslab/tools when
#   there) with 20,000 files of 8 KiB, `fslab blockmap --method getfsmap` (its default
#   `--sizes-from auto`: inode sizes from the loop device after a freeze-and-thaw), the
#   same with `--sizes-from bulkstat`, `--method fiemap` and batched `filefrag -v`,
#   alternating, REPS times each, cold (sync, then `echo 3 > /proc/sys/vm/drop_caches`
#   before each command), cold after a change (one file's mtime touched before each
#   command: the device path must freeze and thaw first) and warm; medians and ratios.
#   What each getfsmap run did for its sizes (barrier made, or not needed) is counted.
# capture: peak RSS of `fslab run` of an experiment whose one capture is `parse: blockmap`
#   (the streamed parse and the bundle writer's parts and merge), on an ext4 (1 KiB
#   blocks) of 1 KiB files grown to each of SIZES (e.g. SIZES="20000 200000"). The map is
#   made once per size by `fslab blockmap MNT --no-dirs --json` (its own peak RSS is
#   reported too) and the capture step is `cat` of it, so that the run's peak RSS
#   (/usr/bin/time -v of `fslab run`, which includes its children: `cat` here) is the
#   runner's own. BASE=path/to/another/fslab adds that build's run of the same capture
#   (e.g. the main branch's, before the streamed capture) as two more columns.
# Everything (mounts, loop devices, images) is torn down at exit, also on error.
set -euo pipefail
FSLAB=${FSLAB:-target/release/fslab}
[ -x "$FSLAB" ] || { echo "no $FSLAB: cargo build --release first" >&2; exit 2; }
FSLAB=$(realpath "$FSLAB")
WHAT=${1:-all}
SIZES=${SIZES:-"20000 200000 2000000"}
REPS=${REPS:-5}
KINDS="getfsmap bulkstat fiemap filefrag"
MKXFS=mkfs.xfs
[ -x "$HOME/.cache/fslab/tools/xfsprogs-6.13.0/sbin/mkfs.xfs" ] &&
  MKXFS=$HOME/.cache/fslab/tools/xfsprogs-6.13.0/sbin/mkfs.xfs
W=$(mktemp -d /var/tmp/fslab-bench-blockmap.XXXXXX)
LOOPS=()
cleanup() {
  for m in "$W"/mnt*; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT INT TERM

mkloop() { # image size mkfs... -> mount point $W/mnt-<name>
  local name=$1 size=$2; shift 2
  truncate -s "$size" "$W/$name.img"
  "$@" "$W/$name.img" >/dev/null
  local l; l=$(losetup --find --show "$W/$name.img"); LOOPS+=("$l")
  mkdir -p "$W/mnt-$name"; mount "$l" "$W/mnt-$name"
}

# files DIR FROM TO BYTES: files FROM..TO-1 as DIR/dNNNN/fNNN (1,000 per directory).
files() {
  python3 - "$@" <<'PY'
import os, sys
root, lo, hi, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = b"x" * size
for i in range(lo, hi):
    d = os.path.join(root, "d%04d" % (i // 1000))
    if i % 1000 == 0 or i == lo:
        os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, "f%03d" % (i % 1000)), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
PY
}

# timed LABEL CMD...: one line "LABEL wall_s maxrss_kb exit"
timed() {
  local label=$1; shift
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$W/time.txt" "$@" || rc=$?
  t1=$(date +%s.%N)
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
  awk -v l="$label" -v a="$t0" -v b="$t1" -v r="$rss" -v c="$rc" \
    'BEGIN { printf "%s %.3f %d %d\n", l, b - a, r, c }'
}

machine() {
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); kernel $(uname -r); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg); fslab $(git rev-parse --short HEAD 2>/dev/null || echo '?') ($(basename "$(dirname "$FSLAB")") build)"
  echo "- images on $(df --output=source /var/tmp | tail -1) ($(findmnt -no FSTYPE -T /var/tmp)), loop devices"
}

scale() {
  echo "### ext4, 1 KiB files: fslab blockmap (FIEMAP, streamed) vs batched filefrag -v"
  machine
  echo
  echo "| files | extents | fslab time (s) | fslab peak RSS (MB) | filefrag time (s) | filefrag peak RSS (MB, largest process) | time ratio filefrag ÷ fslab |"
  echo "|---|---|---|---|---|---|---|"
  local biggest=0
  for n in $SIZES; do [ "$n" -gt "$biggest" ] && biggest=$n; done
  local inodes=$((biggest + biggest / 10 + 10000))
  local gb=$(( (biggest * 1300 + biggest / 1000 * 4096) / 1000000000 + 2 ))
  mkloop ext4 "${gb}G" mkfs.ext4 -q -F -b 1024 -N "$inodes" -E lazy_itable_init=0,lazy_journal_init=0
  local M=$W/mnt-ext4 have=0
  for n in $SIZES; do
    local t0; t0=$(date +%s)
    files "$M" "$have" "$n" 1024; have=$n; sync -f "$M"
    echo "<!-- wrote $n files in total, $(( $(date +%s) - t0 )) s for this step -->"
    find "$M" -type f >/dev/null # warm the dentry and inode caches for both
    local a b
    a=$(timed fslab "$FSLAB" blockmap "$M" --no-dirs --method fiemap -o "$W/x.parquet" 2>/dev/null)
    b=$(timed filefrag bash -c "find '$M' -type f -print0 | xargs -0 filefrag -v >/dev/null")
    local ext; ext=$(python3 -c "import polars as pl; print(pl.scan_parquet('$W/x.parquet').select(pl.len()).collect().item())" 2>/dev/null || echo '?')
    read -r _ fw fr fc <<<"$a"; read -r _ gw gr gc <<<"$b"
    [ "$fc" = 0 ] || echo "<!-- fslab exited $fc -->"
    [ "$gc" = 0 ] || echo "<!-- filefrag pipeline exited $gc -->"
    awk -v n="$n" -v e="$ext" -v fw="$fw" -v fr="$fr" -v gw="$gw" -v gr="$gr" 'BEGIN {
      printf "| %d | %s | %.2f | %.0f | %.2f | %.0f | %.2f× |\n", n, e, fw, fr / 1024, gw, gr / 1024, gw / fw }'
  done
  umount "$M"
}

capture() {
  echo "### parse: blockmap in fslab run: peak RSS of the run, ext4 of 1 KiB files"
  machine
  echo
  local bh="" bs=""
  [ -n "${BASE:-}" ] && { bh=" BASE run time (s) | BASE run peak RSS (MB) |"; bs="---|---|"; echo "- BASE: $BASE"; }
  echo "| files | extents | JSON (MB) | fslab blockmap --json peak RSS (MB) | fslab run time (s) | fslab run peak RSS (MB) |$bh"
  echo "|---|---|---|---|---|---|$bs"
  local biggest=0
  for n in $SIZES; do [ "$n" -gt "$biggest" ] && biggest=$n; done
  local inodes=$((biggest + biggest / 10 + 10000))
  local gb=$(( (biggest * 1300 + biggest / 1000 * 4096) / 1000000000 + 2 ))
  mkloop cap "${gb}G" mkfs.ext4 -q -F -b 1024 -N "$inodes" -E lazy_itable_init=0,lazy_journal_init=0
  local M=$W/mnt-cap have=0
  cat >"$W/capture.yaml" <<EOF
id: capture-scale
title: A block map captured by fslab run
workload:
  run: /bin/true
capture:
  - name: map
    run: cat $W/map.json
    parse: blockmap
EOF
  for n in $SIZES; do
    files "$M" "$have" "$n" 1024; have=$n; sync -f "$M"
    local a r
    a=$(timed blockmap bash -c "'$FSLAB' blockmap '$M' --no-dirs --method fiemap --json >'$W/map.json' 2>/dev/null")
    rm -rf "$W/results" "$W/work"
    r=$(timed run env FSLAB_RESULTS_DIR="$W/results" FSLAB_WORK_DIR="$W/work" "$FSLAB" run "$W/capture.yaml" --quiet 2>"$W/run.err" | tail -1)
    read -r _ _ br bc <<<"$a"; read -r _ rw rr rc <<<"$r"
    [ "$bc" = 0 ] || echo "<!-- fslab blockmap exited $bc -->"
    [ "$rc" = 0 ] || echo "<!-- fslab run exited $rc -->"
    local ext; ext=$(grep -c '"path"' "$W/map.json" || true)
    local mb; mb=$(stat -c %s "$W/map.json")
    local extra=""
    if [ -n "${BASE:-}" ]; then
      rm -rf "$W/results" "$W/work"
      local q; q=$(timed base env FSLAB_RESULTS_DIR="$W/results" FSLAB_WORK_DIR="$W/work" "$BASE" run "$W/capture.yaml" --quiet 2>"$W/base.err" | tail -1)
      local qw qr qc; read -r _ qw qr qc <<<"$q"
      [ "$qc" = 0 ] || echo "<!-- BASE run exited $qc -->"
      extra=$(awk -v w="$qw" -v r="$qr" 'BEGIN { printf " %.2f | %.0f |", w, r / 1024 }')
    fi
    awk -v n="$n" -v e="$ext" -v mb="$mb" -v br="$br" -v rw="$rw" -v rr="$rr" -v x="$extra" 'BEGIN {
      printf "| %d | %s | %.0f | %.0f | %.2f | %.0f |%s\n", n, e, mb / 1e6, br / 1024, rw, rr / 1024, x }'
  done
  umount "$M"
}

# sizes_of STATE <stderr: one line saying what a getfsmap run did for its inode sizes.
sizes_of() {
  local e; e=$(cat)
  local ms; ms=$(grep -o 'barrier of [0-9.]* ms' <<<"$e" | grep -o '[0-9.]*' | head -1 || true)
  if [ -n "$ms" ]; then echo "$1 made $ms"
  elif grep -q 'no barrier' <<<"$e"; then echo "$1 unchanged"
  else echo "$1 other"; fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

fsmap() {
  echo "### XFS (rmapbt=1), 20,000 files of 8 KiB: GETFSMAP (sizes from the device, from BULKSTAT) vs FIEMAP vs batched filefrag -v"
  machine
  echo "- mkfs: $MKXFS -m rmapbt=1 ($("$MKXFS" -V)); $REPS alternating repetitions per cache state, medians"
  echo
  mkloop xfs 2G "$MKXFS" -q -f -m rmapbt=1
  local M=$W/mnt-xfs
  files "$M" 0 20000 8192; sync -f "$M"
  local -A t
  : >"$W/sizes.log"
  for state in cold changed warm; do
    for k in $KINDS; do : >"$W/$state.$k"; done
    [ $state = warm ] && find "$M" -type f -print0 | xargs -0 filefrag -v >/dev/null
    for r in $(seq "$REPS"); do
      for k in $KINDS; do
        [ $state = changed ] && touch "$M/d0000/f000"
        if [ $state != warm ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
        case $k in
          filefrag) l=$(timed $k bash -c "find '$M' -type f -print0 | xargs -0 filefrag -v >/dev/null") ;;
          bulkstat) l=$(timed $k "$FSLAB" blockmap "$M" --no-dirs --method getfsmap --sizes-from bulkstat -o "$W/$k.parquet" 2>/dev/null) ;;
          getfsmap) l=$(timed $k "$FSLAB" blockmap "$M" --no-dirs --method $k -o "$W/$k.parquet" 2>"$W/err.txt")
            sizes_of "$state" <"$W/err.txt" >>"$W/sizes.log" ;;
          *) l=$(timed $k "$FSLAB" blockmap "$M" --no-dirs --method $k -o "$W/$k.parquet" 2>/dev/null) ;;
        esac
        read -r _ w _ c <<<"$l"
        [ "$c" = 0 ] || echo "<!-- $k exited $c -->"
        echo "$w" >>"$W/$state.$k"
      done
    done
    for k in $KINDS; do t[$state.$k]=$(median <"$W/$state.$k"); done
  done
  python3 - "$W/getfsmap.parquet" "$W/bulkstat.parquet" "$W/fiemap.parquet" <<'PY'
import sys, polars as pl
a, b, c = (pl.read_parquet(p) for p in sys.argv[1:4])
print(f"<!-- frames equal: {a.equals(b) and a.equals(c)}; {a.height} extents -->")
PY
  echo
  echo "| caches | getfsmap, sizes from the device (s) | getfsmap, sizes from BULKSTAT (s) | fiemap (s) | filefrag -v (s) | **filefrag ÷ getfsmap** | filefrag ÷ getfsmap with BULKSTAT | filefrag ÷ fiemap |"
  echo "|---|---|---|---|---|---|---|---|"
  for state in cold changed warm; do
    awk -v s=$state -v g="${t[$state.getfsmap]}" -v b="${t[$state.bulkstat]}" -v f="${t[$state.fiemap]}" -v x="${t[$state.filefrag]}" 'BEGIN {
      printf "| %s | %.3f | %.3f | %.3f | %.3f | **%.2f×** | %.2f× | %.2f× |\n", s, g, b, f, x, x / g, x / b, x / f }'
  done
  for state in cold changed warm; do
    for k in $KINDS; do echo "<!-- $state $k: $(tr '\n' ' ' <"$W/$state.$k")-->"; done
    echo "<!-- $state getfsmap sizes: $(awk -v s=$state '$1 == s && $2 == "made" { m = m " " $3 } $1 == s && $2 == "unchanged" { u++ } $1 == s && $2 == "other" { o++ }
      END { printf "barrier made %d times (ms:%s), not needed %d times, other %d", split(m, x, " "), m, u, o }' "$W/sizes.log") -->"
  done
  umount "$M"
}

case $WHAT in
  scale) scale ;;
  fsmap) fsmap ;;
  capture) capture ;;
  all) fsmap; echo; scale ;;
  *) echo "usage: $0 [scale|fsmap|capture|all]" >&2; exit 2 ;;
esac
