#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for `fslab slurm` and its test. As root.
#
#   scripts/slurm-local.sh up     install slurm-wlm and munge (Debian; skipped when
#                                 present), write a minimal slurm.conf, start munged,
#                                 slurmctld and slurmd, wait until the node is idle
#   scripts/slurm-local.sh down   stop the three daemons by the pids in their pid files
#                                 (never a kill by name) and wait until they are gone
#
# The daemons' pid files, logs, state and munge socket live under $FSLAB_SLURM_DIR
# (default /run/fslab-slurm). The config is /etc/slurm/slurm.conf, where sbatch, squeue
# and sinfo look; `up` refuses to replace one that it did not write.
set -euo pipefail

D=${FSLAB_SLURM_DIR:-/run/fslab-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by fslab scripts/slurm-local.sh"
MUNGE_SOCKET=$D/munge/munge.socket.2

log() { echo "slurm-local: $*" >&2; }

install_packages() {
  local need=()
  for pkg in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
}

# The pid in a pid file, if that process is alive and is the program we expect.
live_pid() {
  local file=$1 prog=$2 pid
  [ -s "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] || return 1
  [ -r "/proc/$pid/comm" ] || return 1
  [ "$(cat "/proc/$pid/comm")" = "$prog" ] || return 1
  echo "$pid"
}

up() {
  [ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }
  install_packages
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  mkdir -p "$D/munge" "$D/state" "$D/spool" "$D/log"
  chown munge:munge "$D/munge"
  chmod 0755 "$D/munge"
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    mungekey -c
  fi
  if [ -e "$CONF" ] && ! head -1 "$CONF" | grep -qxF "$MARK"; then
    log "$CONF exists and was not written by this script; not replacing it"
    exit 1
  fi
  mkdir -p "$(dirname "$CONF")"
  cat >"$CONF.tmp" <<EOF
$MARK
ClusterName=fslablocal
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
  if ! live_pid "$D/munged.pid" munged >/dev/null; then
    log "starting munged"
    runuser -u munge -- munged --socket="$MUNGE_SOCKET" --pid-file="$D/munge/munged.pid" \
      --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed"
    cp "$D/munge/munged.pid" "$D/munged.pid"
  fi
  if ! live_pid "$D/slurmctld.pid" slurmctld >/dev/null; then
    log "starting slurmctld"
    slurmctld -f "$CONF"
  fi
  if ! live_pid "$D/slurmd.pid" slurmd >/dev/null; then
    log "starting slurmd"
    slurmd -f "$CONF"
  fi
  local i state=""
  for i in $(seq 60); do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -1 || true)
    case $state in idle*|mix*|alloc*) break ;; esac
    sleep 1
  done
  case $state in
    idle*|mix*|alloc*) ;;
    *) log "the node is '${state:-not known}', not idle, after 60 s; see $D/log"; exit 1 ;;
  esac
  log "up: node $host idle, $cpus CPUs"
}

stop_one() {
  local file=$1 prog=$2 pid i
  pid=$(live_pid "$file" "$prog") || { rm -f "$file"; return 0; }
  log "stopping $prog ($pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 100); do
    [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$prog" ] || break
    sleep 0.1
  done
  if [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$prog" ]; then
    log "$prog ($pid) ignored SIGTERM for 10 s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$file"
}

down() {
  # Jobs first (ours: this cluster is this script's): no slurmstepd may outlive slurmd.
  if live_pid "$D/slurmctld.pid" slurmctld >/dev/null; then
    scancel --quiet --user=root 2>/dev/null || true
    local i
    for i in $(seq 30); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  stop_one "$D/slurmd.pid" slurmd
  stop_one "$D/slurmctld.pid" slurmctld
  stop_one "$D/munged.pid" munged
  rm -f "$D/munge/munged.pid"
  log "down"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
