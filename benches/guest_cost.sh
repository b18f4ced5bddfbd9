#!/usr/bin/env bash
# What a User-Mode Linux guest costs (issue 29, item 7), each as a ratio against the host
# in the same run: every experiment below has a `kernel: [host, uml-bookworm, uml-trixie]`
# axis, so one `fslab run` puts the host's points and the guests' side by side, in
# randomised blocks.
#
# - fixed: `/bin/true` with `repeat: 20` and no devices. A replicate's span (manifest
#   run_order: started → finished; on a guest its boot, the step and the power-off, on the
#   host its directory and spawner) and one step's fixed cost (`wall_s`, exec to reap, with
#   the clocks of the kernel it ran on). Each guest run also boots one probe guest first
#   (`environment.guests[].boot_s`: boot to the agent's first word).
# - metadata: experiments/kernels.yaml (fs_mark, 2000 files of 4 KiB on ext4, caches
#   dropped before each iteration).
# - streaming: `dd` of 128 MiB with `conv=fsync` to a file on ext4 (in a guest the fsync
#   does not reach the host's disk: docs/kernels.md).
#
# As root, with both kernels installed (`fslab kernels install uml-bookworm uml-trixie`),
# from the project root: `bash benches/guest_cost.sh` (FSLAB=path/to/fslab, default
# target/release/fslab; REPLICATES=3 by default). Prints one markdown table.
set -euo pipefail
FSLAB=${FSLAB:-target/release/fslab}
[ -x "$FSLAB" ] || { echo "no $FSLAB: cargo build --release first, or set FSLAB" >&2; exit 2; }
REPLICATES=${REPLICATES:-3}
W=$(mktemp -d /var/tmp/fslab-bench-guest.XXXXXX)
trap 'rm -rf "$W"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
cat > "$W/fixed.yaml" <<EOF
id: guest-fixed
title: "a step's fixed cost on the host and in guests"
vars:
  replicates: 3
matrix:
  kernel: [host, uml-bookworm, uml-trixie]
workload:
  run: /bin/true
  repeat: 20
  replicates: "{{replicates}}"
EOF
cat > "$W/stream.yaml" <<EOF
id: guest-stream
title: "a streaming write on the host and in guests"
devices:
  data: { size: 640MiB }
vars:
  replicates: 3
matrix:
  kernel: [host, uml-bookworm, uml-trixie]
setup:
  - run: mkfs.ext4 -F -q -E nodiscard {{dev.data}}
  - mount: data
workload:
  run: dd if=/dev/zero of={{mnt}}/f{{iteration}} bs=1M count=128 conv=fsync status=none
  repeat: 4
  replicates: "{{replicates}}"
  before_each:
    - drop_caches: true
teardown:
  - umount: "{{mnt}}"
EOF
echo "machine: $(nproc) CPUs, $(uname -r); fslab: $FSLAB ($(stat -c %s "$FSLAB") bytes); load at start: $(load); $(date -u +%FT%TZ)"
bundles=()
for e in "$W/fixed.yaml" experiments/kernels.yaml "$W/stream.yaml"; do
  t0=$(date +%s.%N)
  b=$(FSLAB_WORK_DIR=$W/w FSLAB_RESULTS_DIR=$W/r "$FSLAB" run "$e" --set replicates="$REPLICATES" -q 2>"$W/err") || {
    cat "$W/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$(basename "$e"): whole run $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, load after: $(load)"
  bundles+=("$b")
done
python3 - "${bundles[@]}" <<'PY'
import datetime, json, sys
import polars as pl

def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))

print()
print("| experiment | point | steady-state wall_s per iteration, mean ± sd over replicates (s) | × host | replicate span, mean (s) | × host | span − its iterations' wall_s (s) | guest boot to agent (s) |")
print("|---|---|---|---|---|---|---|---|")
for b in sys.argv[1:]:
    m = json.load(open(f"{b}/manifest.json"))
    boot = {g["name"]: g.get("boot_s") for g in m["environment"]["guests"]}
    runs = pl.read_parquet(f"{b}/runs.parquet").filter(pl.col("status") == "ok")
    rep = (runs.filter(pl.col("iteration") > 1)
           .group_by(["point_id", "replicate"]).agg(pl.col("wall_s").mean()))
    total = runs.group_by(["point_id", "replicate"]).agg(pl.col("wall_s").sum().alias("sum"))
    spans = {}
    for e in m["run_order"]["pairs"]:
        if e.get("finished_at") and e.get("started_at"):
            s = (ts(e["finished_at"]) - ts(e["started_at"])).total_seconds()
            t = total.filter((pl.col("point_id") == e["point_id"]) & (pl.col("replicate") == e["replicate"]))["sum"]
            spans.setdefault(e["point_id"], []).append((s, s - (t[0] if len(t) else 0.0)))
    stats = {}
    for p in [x["id"] for x in m["points"]]:
        w = rep.filter(pl.col("point_id") == p)["wall_s"]
        sp = spans.get(p, [])
        stats[p] = (w.mean(), w.std(), sum(x[0] for x in sp) / len(sp), sum(x[1] for x in sp) / len(sp))
    host = stats.get("kernel=host")
    for p, (mean, sd, span, beyond) in stats.items():
        k = p.split("=", 1)[1]
        print(f"| {m['experiment']['id']} | {p} | {mean:.4f} ± {sd or 0:.4f} | {mean / host[0]:.1f}× | {span:.2f} | {span / host[2]:.1f}× | {beyond:.2f} | "
              + (f"{boot[k]:.2f}" if boot.get(k) else "—") + " |")
PY
echo "load at end: $(load); $(date -u +%FT%TZ)"
