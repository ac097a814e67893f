"""A first day, 4 of 6: a metered region, and the memory it added."""
from __future__ import annotations

import torch

import mainboard

before = torch.ones(64 << 20, dtype=torch.uint8)  # 64 MiB alive before the region
with mainboard.meter() as m:
    block = torch.ones(256 << 20, dtype=torch.uint8)  # 256 MiB made in the region
    m.sample()
    del block
print(f"{m.elapsed_s:.3f} s; the region added {m.peak_rss_delta_gb:.2f} GiB at its peak "
      f"(the process then held {m.peak_rss_gb:.2f} GiB); PSS +{m.peak_pss_delta_gb:.2f} GiB")
print(f"peak from the kernel's high-water mark: {m.peak_rss_from_kernel}")
print(f"host memory {m.peak_host_gb:.1f} GiB at most; GPUs {m.peak_gpu_gb:.1f} GiB")
del before
