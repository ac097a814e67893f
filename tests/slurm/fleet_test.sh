#!/usr/bin/env bash
# `mainboard fleet` over a real Slurm cluster of three nodes on this machine (started by the
# slurm_up test fixture, stopped by slurm_down whatever happens here). Its nodes' names are the
# run's own (scripts/slurm-up.sh writes them, one a line, beside slurm.conf).
#   fleet_test.sh MAINBOARD SLURM_CONF [FAKE_NVML FAKE_CUDA GPU_SCENARIO]
set -euo pipefail
mb=$1
export SLURM_CONF=$2
mapfile -t node < <(head -n 3 "$(dirname "$SLURM_CONF")/nodes")
((${#node[@]} == 3)) || { echo "FAIL: no three node names beside $SLURM_CONF"; exit 1; }
n1=${node[0]} n2=${node[1]} n3=${node[2]}
fake_nvml=${3:-} fake_cuda=${4:-} scenario=${5:-}
fail=0
check() {  # check WHAT JSON PYTHON-EXPRESSION (over d, the fleet document)
  # The document on standard input: one argument may not exceed 128 KiB, and a fleet of GPU
  # nodes' snapshots does.
  if /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($3) else 1)" <<<"$2"; then
    echo "ok: $1"
  else
    echo "FAIL: $1"; echo "$2" | head -c 2000; echo; fail=1
  fi
}
# A fleet past its --timeout must not leave its Slurm job allocated: its srun is sent SIGTERM
# (not SIGKILL) and cancels its step. Before, a killed srun left the job for good (this cluster's
# InactiveLimit=0): two such jobs held both cores of every node, and later steps waited until
# "no node answered within 60 s". Checked here; a job still left is cancelled so that the tests
# after this one do not wait behind it.
no_leftover_jobs() {
  for _ in $(seq 120); do [[ -z $(squeue -h 2>/dev/null) ]] && { echo "ok: no job left behind"; return; }; sleep 0.25; done
  echo "FAIL: jobs left running 30 s after fleet gave up: $(squeue 2>&1)"; fail=1
  scancel --quiet --user="$(id -un)" 2>/dev/null || true
}
names='[n["name"] for n in d["nodes"]]'
answered='all(n["snapshot"] and not n["error"] for n in d["nodes"])'

check "three nodes, one task each" "$("$mb" fleet --nodes 3 --json)" \
  "$names == ['$n1', '$n2', '$n3'] and $answered and d['schema_version'] == 1"
check "--nodes 2" "$("$mb" fleet --nodes 2 --json)" "len(d['nodes']) == 2 and $answered"
check "--nodelist" "$("$mb" fleet --nodelist "$n1,$n3" --json)" "$names == ['$n1', '$n3']"
# Inside an allocation: its nodes, without saying how many.
check "inside salloc -N2" "$(salloc -N2 --quiet "$mb" fleet --json)" "len(d['nodes']) == 2 and $answered"
# Arguments after -- go to srun: here they make every task fail, and each node says why.
out=$("$mb" fleet --nodes 3 --json -- --export=ALL,MAINBOARD_SYSROOT=/nonexistent-dir) && status=0 || status=$?
[[ $status == 1 ]] && echo "ok: failing tasks exit 1" || { echo "FAIL: exit $status"; fail=1; }
check "failing tasks listed with the reason" "$out" \
  "len(d['nodes']) == 3 and all(not n['snapshot'] and 'nonexistent-dir' in n['error'] for n in d['nodes'])"
# A deadline no node can meet: exit 1 and said so.
if "$mb" fleet --nodes 3 --timeout 0.001 >/dev/null 2>/tmp/fleet-timeout.$$; then
  echo "FAIL: a run past its deadline exited 0"; fail=1
else
  echo "ok: past the deadline: $(cat /tmp/fleet-timeout.$$)"
fi
rm -f /tmp/fleet-timeout.$$
no_leftover_jobs
text=$("$mb" fleet --nodes 3)
grep -q "3 nodes, 3 answered, 1 group of alike nodes" <<<"$text" && echo "ok: the table" ||
  { echo "FAIL: the table"; echo "$text"; fail=1; }
# fleet gather: every node recorded under its name; read back as alike nodes; again without
# --force each node refuses to write over its tree.
gdir=$(mktemp -d)
"$mb" fleet gather "$gdir/rec" --nodes 3 2>/dev/null && echo "ok: fleet gather" || { echo "FAIL: fleet gather"; fail=1; }
check "gathered nodes read back" "$("$mb" fleet --from "$gdir/rec" --json)" \
  "$names == ['$n1', '$n2', '$n3'] and $answered and len(set(json.dumps(n['snapshot']['cpu']['info']) for n in d['nodes'])) == 1"
if "$mb" fleet gather "$gdir/rec" --nodes 3 2>"$gdir/err"; then
  echo "FAIL: fleet gather wrote over recorded trees"; fail=1
else
  grep -q "$n2: .*is not empty (use --force" "$gdir/err" && echo "ok: no tree written over" ||
    { echo "FAIL: the refusal"; cat "$gdir/err"; fail=1; }
fi
rm -rf "$gdir"
# fleet check on every node (this machine's own load decides the verdict: only the shape is sure).
check "fleet check: every node judged" "$("$mb" fleet check --nodes 3 --json || true)" \
  "len(d) == 3 and all('ready' in r and r['node'] in ('$n1', '$n2', '$n3') for r in d)"
# fleet check with GPUs: through the fake NVIDIA libraries each node has eight H100s of its own
# (the scenario is chosen by node name); on the second node another process is using GPU 3.
if [[ -n $scenario ]]; then
  sdir=$(mktemp -d)
  /usr/bin/python3 - "$scenario" "$sdir" "$n1" "$n2" "$n3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n1, n2, n3 = sys.argv[3:6]
for d in s["devices"]:  # an idle, healthy machine
    d["processes"], d["utilization"], d["clock_event_reasons"] = [], {"gpu": 0, "memory": 0}, 1
    d["memory"]["used"] = 1 << 20
    d["persistence"] = 1
    d["ecc"].update(uncorrected_volatile=0, uncorrected_aggregate=0)
    d["remapped_rows"].update(uncorrectable=0, pending=0)
for node in (n1, n3):
    json.dump(s, open(f"{sys.argv[2]}/{node}.json", "w"))
s["devices"][3]["processes"] = [{"pid": 4242, "used_memory": 40 << 30}]
s["devices"][3]["utilization"] = {"gpu": 97, "memory": 41}
json.dump(s, open(f"{sys.argv[2]}/{n2}.json", "w"))
PY
  gpus="--export=ALL,MAINBOARD_NVML_LIBRARY=$fake_nvml,MAINBOARD_CUDA_LIBRARY=$fake_cuda,MAINBOARD_FAKE_GPU_SCENARIO=$sdir/%n.json"
  out=$("$mb" fleet check --nodes 3 --json -- "$gpus" || true)
  check "fleet check: $n2's GPU 3 is in use" "$out" \
    "any(r['node'] == '$n2' and any(f['id'] == 'gpu.processes' and f['subject'] == 'GPU 3' for f in r['findings']) for r in d) and not any(f['id'] == 'gpu.processes' for r in d if r['node'] != '$n2' for f in r['findings'])"
  text=$("$mb" fleet check --nodes 3 -- "$gpus" || true)
  grep -q "$n2: NOT READY" <<<"$text" && echo "ok: $n2 not ready" || { echo "FAIL: $text"; fail=1; }
  # One node's driver hangs: it is listed as timed out, the others answer.
  /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s['init_delay_ms']=30000; json.dump(s, open(sys.argv[1],'w'))" "$sdir/$n3.json"
  out=$("$mb" fleet --nodes 3 --timeout 5 --json -- "$gpus" || true)
  check "one node timing out" "$out" \
    "[(n['name'], bool(n['snapshot'])) for n in d['nodes']] == [('$n1', True), ('$n2', True), ('$n3', False)] and d['nodes'][2]['error'] == 'timed out after 5 s'"
  no_leftover_jobs
  # One node's driver crashes: it is listed with what Slurm said, the others answer.
  /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s.pop('init_delay_ms'); s['abort_on_init']=True; json.dump(s, open(sys.argv[1],'w'))" "$sdir/$n3.json"
  out=$("$mb" fleet --nodes 3 --json -- "$gpus" || true)
  check "one node failing" "$out" \
    "sum(1 for n in d['nodes'] if n['snapshot']) == 2 and any(not n['snapshot'] and n['error'] for n in d['nodes'])"

  rm -rf "$sdir"
fi
no_leftover_jobs  # none is left for the tests that come next (tests/ranks)
exit $fail
