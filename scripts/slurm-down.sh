#!/usr/bin/env bash
# Stops what scripts/slurm-up.sh DIR started, by the PIDs it recorded: jobs first (so no
# slurmstepd outlives its slurmd), then every slurmd, slurmctld, and the cluster's munged.
# Safe to run twice, and after a failed start.
set -uo pipefail
# shellcheck source=pids.sh
source "$(dirname "$0")/pids.sh"
dir=$(realpath -m "$1")
export SLURM_CONF=$dir/slurm.conf
if pid_of "$dir/run/slurmctld.pid" slurmctld >/dev/null; then
  scancel --full --quiet --user="$(id -un)" 2>/dev/null
  for _ in $(seq 40); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.25; done
fi
pids=()
for f in "$dir"/run/slurmd-*.pid; do p=$(pid_of "$f" slurmd) && pids+=("$p"); done
p=$(pid_of "$dir/run/slurmctld.pid" slurmctld) && pids+=("$p")
stop "${pids[@]}"
# A slurmstepd of this cluster that outlived its slurmd (found by its SLURM_CONF).
for d in /proc/[0-9]*; do
  [[ $(cat "$d/comm" 2>/dev/null) == slurmstepd ]] || continue
  tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qx "SLURM_CONF=$dir/slurm.conf" && kill -9 "${d#/proc/}" 2>/dev/null
done
p=$(pid_of "$dir/run/munged.pid" munged) && stop "$p"
rm -f "$dir"/run/*.pid
# munged's socket, when DIR's path was too long for one: in a directory slurm-up.sh made.
if [[ -s $dir/munge/socket-dir && $(<"$dir/munge/socket-dir") == /tmp/mainboard-munge.* ]]; then
  rm -rf "$(<"$dir/munge/socket-dir")" "$dir/munge/socket-dir"
fi
echo "slurm-down: stopped ${#pids[@]} Slurm daemons"
