"""Joins the span workload's own spans to its sampled profile (threads matched by tid) and adds
GPU activity as CUPTI would record it: kernels and copies inside the steps, idle between them,
and a reading of utilisation and memory every millisecond. Only the bytes are made up: the page
reads them through Profile::load like any profile.
    pictures_gpu.py SAMPLED.json OWN.json OUT.json"""
import json
import sys

sampled, own = (json.load(open(f)) for f in sys.argv[1:3])
index = {t["tid"]: t["index"] for t in sampled["threads"]}
for t in own["threads"]:
    if t["tid"] not in index:
        index[t["tid"]] = len(sampled["threads"])
        sampled["threads"].append(dict(t, index=index[t["tid"]]))
tid_of = {t["index"]: t["tid"] for t in own["threads"]}
sampled["paths"] = own["paths"]
sampled["span_stats"] = own["span_stats"]
sampled["spans"] = [[p, index[tid_of[t]], s, e] for p, t, s, e in own["spans"]]
sampled["start_ns"] = min(sampled["start_ns"], own["start_ns"])
sampled["end_ns"] = max(sampled["end_ns"], own["end_ns"])

names = ["sgemm_128x64_nn", "elementwise_add", "memcpy HtoD (pinned → device)"]
activities, readings = [], []
steps = [s for s in sampled["spans"] if own["paths"][s[0]] == "step"]
for n, (_, _, start, end) in enumerate(steps):
    mid = start + (end - start) // 2
    activities.append(["memcpy", 2, start, start + (end - start) // 10, 0, 7, 3 * n + 1,
                       0, 0, 0, 0, 0, 0, 0, 0, 0, 64 << 20])
    activities.append(["kernel", 0, start + (end - start) // 8, mid, 0, 7, 3 * n + 2,
                       128, 64, 1, 256, 1, 1, 96, 16384, 0, 0])
    activities.append(["kernel", 1, mid, mid + (end - start) // 6, 0, 7, 3 * n + 3,
                       4096, 1, 1, 256, 1, 1, 32, 0, 0, 0])
activities.sort(key=lambda a: a[2])
t = sampled["start_ns"]
while t < sampled["end_ns"]:
    busy = any(a[2] <= t < a[3] for a in activities)
    readings.append({"t_ns": t, "gpu": 0, "process_memory_bytes": (2 << 30) + (t // 1000) % (1 << 28),
                     "device_memory_used_bytes": 3 << 30, "utilization_pct": 95.0 if busy else 0.0,
                     "memory_utilization_pct": 40.0 if busy else 0.0})
    t += 1_000_000
sampled["activity_names"] = names
sampled["activities"] = activities
sampled["device_samples"] = readings
json.dump(sampled, open(sys.argv[3], "w"))
