"""Data-parallel training with PyTorch's DistributedDataParallel over gloo, on the CPU, with
mainboard spans around each step's phases: "step" holding "data", "forward", "backward" and
"optimizer". One rank (SLOW_RANK) takes DELAY_S seconds longer to load each batch; the others
wait for it in the gradients' all-reduce at the end of their backward pass.

The rank and world size come from the launcher: RANK/WORLD_SIZE (torchrun's), else Slurm's
SLURM_PROCID/SLURM_NTASKS. MASTER_ADDR and MASTER_PORT must be set. STEPS (default 10) steps.
Prints one line per rank at the end: "rank R: S steps, loss L"."""
import datetime
import os
import time

import torch
import torch.distributed as dist

import mainboard


def env_int(*names, default=None):
    for name in names:
        if os.environ.get(name, "") != "":
            return int(os.environ[name])
    return default


rank = env_int("RANK", "SLURM_PROCID", default=0)
world = env_int("WORLD_SIZE", "SLURM_NTASKS", default=1)
slow = env_int("SLOW_RANK", default=-1)
delay = float(os.environ.get("DELAY_S", "0.2"))
steps = env_int("STEPS", default=10)

torch.set_num_threads(1)
torch.manual_seed(rank)
dist.init_process_group("gloo", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=120))
model = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = torch.nn.MSELoss()

for _ in range(steps):
    with mainboard.span("step"):
        with mainboard.span("data"):
            x, y = torch.randn(32, 64), torch.randn(32, 1)
            if rank == slow:
                time.sleep(delay)
        with mainboard.span("forward"):
            loss = loss_fn(model(x), y)
        with mainboard.span("backward"):
            optimizer.zero_grad()
            loss.backward()  # DDP's all-reduce of the gradients ends here
        with mainboard.span("optimizer"):
            optimizer.step()

dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: {steps} steps, loss {loss.item():.4f}", flush=True)
