#!/usr/bin/env bash
# Starts a throw-away Slurm cluster on this machine for the tests: a munged, slurmctld and one
# slurmd per node (Debian's Slurm runs several slurmd on one host, each with its own port and
# spool). Waits until every node is idle.
#   scripts/slurm-up.sh DIR [NODES]      then: export SLURM_CONF=DIR/slurm.conf
# Everything is the run's own, so that two runs of the tests on one machine, or a user's own test
# Slurm, never meet: ports chosen at random among free ones, a cluster name and node names with a
# random prefix (the names, one a line, in DIR/nodes), state, spool, logs and PIDs under DIR, and
# a munged with a key and socket of its own under DIR/munge.
# scripts/slurm-down.sh DIR stops all of it by the PIDs recorded under DIR/run.
set -euo pipefail
# shellcheck source=pids.sh
source "$(dirname "$0")/pids.sh"
dir=$(realpath -m "$1") nodes=${2:-3}  # absolute: slurmctld changes directory
conf=$dir/slurm.conf
export SLURM_CONF=$conf
command -v slurmctld >/dev/null && command -v munged >/dev/null ||
  { echo "slurm-up: slurm-wlm and munge are not installed (scripts/install-deps.sh)" >&2; exit 1; }

"$(dirname "$0")/slurm-down.sh" "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
mkdir -p "$dir"/{run,log,state}
install -d -m 0755 "$dir/munge"  # the socket must be reachable by every user

# munge: a key and a daemon of this cluster's own (run as root, it wants a key root owns), on a
# socket the cluster's configuration names. A socket's path has at most 107 bytes.
socket=$dir/munge/socket
if ((${#socket} > 100)); then
  socket=$(mktemp -d /tmp/mainboard-munge.XXXXXX)/socket
  echo "${socket%/socket}" >"$dir/munge/socket-dir"
fi
mungekey --create --keyfile="$dir/munge/munge.key"
munged --socket="$socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed"
munge_answers() {
  munge --socket="$socket" -n </dev/null 2>/dev/null | unmunge --socket="$socket" >/dev/null 2>&1
}
for _ in $(seq 50); do munge_answers && break; sleep 0.1; done
munge_answers || { echo "slurm-up: munged did not answer:" >&2; tail -n 5 "$dir/log/munged.log" >&2; exit 1; }

prefix=$(tr -dc 'a-z' </dev/urandom | head -c 6) || true
read -r -a ports <<<"$(free_ports $((nodes + 1)))"
names=()
for n in $(seq 1 "$nodes"); do names+=("${prefix}n$n"); done
printf '%s\n' "${names[@]}" >"$dir/nodes"
host=$(hostname -s)
hw=$(slurmd -C | head -n1)
hw=${hw#NodeName=* }
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
hw=$(sed -e "s/RealMemory=[0-9]*/RealMemory=$((mem * 9 / 10))/" -e 's/ UpTime=.*//' <<<"$hw")
for name in "${names[@]}"; do mkdir -p "$dir/spool/$name"; done
{
  cat <<CONF
ClusterName=mainboard-test-$prefix
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
CONF
  for i in "${!names[@]}"; do
    echo "NodeName=${names[i]} NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[i + 1]} $hw State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >"$conf"

slurmctld -f "$conf"
for name in "${names[@]}"; do slurmd -f "$conf" -N "$name"; done
deadline=$((SECONDS + 30))  # sinfo waits for an absent controller: a deadline, not a count
while ((SECONDS < deadline)); do
  idle=$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$' || true)
  [[ $idle == "$nodes" ]] && { echo "slurm-up: $nodes nodes idle (${names[*]}), controller on port ${ports[0]}; SLURM_CONF=$conf"; exit 0; }
  sleep 0.25
done
echo "slurm-up: the nodes did not come up:" >&2
timeout 5 sinfo -N >&2 || true
tail -n 20 "$dir"/log/*.log >&2 || true
exit 1
