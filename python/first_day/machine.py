"""A first day, 1 of 6: the machine this runs on and its GPUs (README, "From Python")."""
from __future__ import annotations

import mainboard

m = mainboard.Machine()
print(f"CPU: {m.cpu.label}")
print(f"memory: {m.memory.used_gb:.1f} of {m.memory.total_gb:.1f} GiB used")
cap = m.cgroup_memory
if cap is not None and cap.capped:
    print(f"capped by the cgroup at {cap.limit_bytes} bytes")
snap = m.snapshot(toolchain=False)
if snap.os is not None:
    kernel: str = snap.os.kernel
    print(f"OS: {snap.os.name}, kernel {kernel}")
for g in m.gpus:
    s = g.snapshot("now")
    print(f"GPU: {g.label}, fan {s.fan_speed_pct:.0f} %")
if not m.gpus:
    print("GPUs: none on this host")
