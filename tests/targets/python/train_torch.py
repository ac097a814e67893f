"""A small PyTorch training loop on the CPU, with mainboard spans: step() (a @mainboard.span) and
inside it "forward", "backward" and "optimizer". Trains for the seconds of the first argument
(1.5 by default, at least 5 steps) on one thread, so the time goes to libtorch's and BLAS's
matrix products under the Python frames that call them. Prints the number of steps at the end."""
import sys
import time

import torch

import mainboard

torch.set_num_threads(1)
torch.manual_seed(0)

WIDTH, BATCH = 512, 256

model = torch.nn.Sequential(
    torch.nn.Linear(WIDTH, WIDTH),
    torch.nn.ReLU(),
    torch.nn.Linear(WIDTH, WIDTH),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = torch.nn.MSELoss()
inputs = torch.randn(BATCH, WIDTH)
targets = torch.randn(BATCH, WIDTH)


@mainboard.span
def step(x, y):
    optimizer.zero_grad()
    with mainboard.span("forward"):
        loss = loss_fn(model(x), y)
    with mainboard.span("backward"):
        loss.backward()
    with mainboard.span("optimizer"):
        optimizer.step()
    return loss.item()


def train(seconds):
    steps = 0
    end = time.monotonic() + seconds
    while steps < 5 or time.monotonic() < end:
        step(inputs, targets)
        steps += 1
    return steps


if __name__ == "__main__":
    print(train(float(sys.argv[1]) if len(sys.argv) > 1 else 1.5), flush=True)
