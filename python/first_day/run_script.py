"""A first day, 3 of 6: Profiler.run of a training script, and where its time went."""
from __future__ import annotations

import pathlib

from mainboard import Profiler

script = pathlib.Path(__file__).with_name("train.py")
prof = Profiler.run(str(script), timeout=300, strict=True)  # a failed script raises TargetFailed
ended = prof.target_exit
print(ended.summary if ended is not None else "no target")
for f in prof.hot_functions(5, by="total"):
    print(f"{f.total_pct:5.1f} %  {f.function}")
print(prof.report(top=5))
