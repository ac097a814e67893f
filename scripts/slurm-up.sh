#!/usr/bin/env bash
# Starts a throw-away Slurm cluster on this machine for the tests: munged (unless one already
# answers), slurmctld and one slurmd per node (Debian's Slurm runs several slurmd on one host:
# nodes n1..nN on ports 17001.., each with its own spool). Waits until every node is idle.
#   scripts/slurm-up.sh DIR [NODES]      then: export SLURM_CONF=DIR/slurm.conf
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

# munge: its key from the package, a daemon of our own only if none answers.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey -c -f -k /etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  cp /run/munge/munged.pid "$dir/run/munged.pid"
fi

host=$(hostname -s)
hw=$(slurmd -C | head -n1)
hw=${hw#NodeName=* }
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
hw=$(sed -e "s/RealMemory=[0-9]*/RealMemory=$((mem * 9 / 10))/" -e 's/ UpTime=.*//' <<<"$hw")
for n in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/n$n"; done
cat >"$conf" <<CONF
ClusterName=mainboard-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
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
NodeName=n[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 Port=[17001-$((17000 + nodes))] $hw State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -f "$conf"
for n in $(seq 1 "$nodes"); do slurmd -f "$conf" -N "n$n"; done
deadline=$((SECONDS + 30))  # sinfo waits for an absent controller: a deadline, not a count
while ((SECONDS < deadline)); do
  idle=$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$' || true)
  [[ $idle == "$nodes" ]] && { echo "slurm-up: $nodes nodes idle; SLURM_CONF=$conf"; exit 0; }
  sleep 0.25
done
echo "slurm-up: the nodes did not come up:" >&2
timeout 5 sinfo -N >&2 || true
tail -n 20 "$dir"/log/*.log >&2 || true
exit 1
