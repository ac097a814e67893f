"""A PyTorch training step for the pictures check, as a user's script runs it: `import torch`
(its long chain of import frames), then a small model trained on the CPU on one thread for the
seconds of the first argument (1 by default), the time in libtorch's matrix products."""
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(128, 256), torch.randn(128, 256)


def train_step():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def main(seconds):
    end = time.monotonic() + seconds
    steps = 0
    while steps < 5 or time.monotonic() < end:
        train_step()
        steps += 1
    print(steps)


main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
