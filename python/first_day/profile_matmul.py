"""A first day, 5 of 6: profile(fn) of a matrix product, on a CPU or a GPU."""
from __future__ import annotations

import torch

import mainboard

device = "cuda" if torch.cuda.is_available() else "cpu"
a = torch.randn(512, 512, device=device)
b = torch.randn(512, 512, device=device)
sync = torch.cuda.synchronize if device == "cuda" else None
r = mainboard.profile(lambda: a @ b, iters=20, warmup=3, sync=sync)
print(r.report())
print(f"median {r.wall.median_ns / 1e6:.3f} ms per product, "
      f"fastest {r.wall.min_s * 1e3:.3f} ms, CPU {r.cpu.median_ns / 1e6:.3f} ms")
if r.hot_functions:
    print(f"hottest: {r.hot_functions[0].function}")
if r.device:
    print(f"{r.bound.value} on {r.device}: {r.dominant_kernel}")
