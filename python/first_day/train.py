"""The training script the third first-day script samples: a few steps of a small model."""
from __future__ import annotations

import torch


def train(steps: int) -> float:
    model = torch.nn.Linear(512, 512)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = torch.zeros(())
    for _ in range(steps):
        x = torch.randn(256, 512)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        torch.autograd.backward(loss)  # Tensor.backward is untyped in torch 1.13
        opt.step()
    return float(loss.item())


if __name__ == "__main__":
    print(f"loss {train(200):.4f}")
