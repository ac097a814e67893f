"""A first day, 2 of 6: spans and a profiling session around a PyTorch training loop."""
from __future__ import annotations

import torch

from mainboard import Profiler, span

model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@span
def step(x: torch.Tensor, y: torch.Tensor) -> float:
    with span("forward"):
        loss = torch.nn.functional.mse_loss(model(x), y)
    with span("backward"):
        opt.zero_grad()
        torch.autograd.backward(loss)  # Tensor.backward is untyped in torch 1.13
    with span("optimizer"):
        opt.step()
    return float(loss.item())


with Profiler() as p:
    for _ in range(10):
        step(torch.randn(128, 256), torch.randn(128, 1))
print(p.report())
for s in p.stats():
    print(f"{s.name}: {s.calls} calls, {s.total_ns / 1e6:.2f} ms")
names = [t.name for t in p.result().threads]
print(f"threads: {', '.join(names)}")
