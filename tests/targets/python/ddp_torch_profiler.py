"""Data-parallel training with PyTorch's DistributedDataParallel over gloo, on the CPU, profiled
the way PyTorch users do it: torch.profiler with a schedule and tensorboard_trace_handler, one
trace per rank in TRACE_DIR (worker_name "rankN"), no mainboard in the process. Batches come from
a DataLoader; on SLOW_RANK each batch takes DELAY_S seconds longer to load, and the other ranks
wait for it in the gradients' all-reduce.

The rank and world size come from the launcher: RANK/WORLD_SIZE (torchrun's), else Slurm's
SLURM_PROCID/SLURM_NTASKS. MASTER_ADDR and MASTER_PORT must be set. STEPS (default 8) steps are
recorded, after one skipped and one of warm-up. Prints "rank R: S steps, loss L" at the end."""
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.profiler as profiler


def env_int(*names, default=None):
    for name in names:
        if os.environ.get(name, "") != "":
            return int(os.environ[name])
    return default


rank = env_int("RANK", "SLURM_PROCID", default=0)
world = env_int("WORLD_SIZE", "SLURM_NTASKS", default=1)
slow = env_int("SLOW_RANK", default=-1)
delay = float(os.environ.get("DELAY_S", "0.1"))
steps = env_int("STEPS", default=8)
batch = 32

torch.set_num_threads(1)
torch.manual_seed(rank)
dist.init_process_group("gloo", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=120))


class Samples(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        if rank == slow and i % batch == 0:
            time.sleep(delay)  # a slow disk, a slow decoder: once per batch
        return torch.randn(64), torch.randn(1)


loader = iter(torch.utils.data.DataLoader(Samples(), batch_size=batch))
model = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = torch.nn.MSELoss()

with profiler.profile(
        activities=[profiler.ProfilerActivity.CPU],
        schedule=profiler.schedule(wait=1, warmup=1, active=steps),
        on_trace_ready=profiler.tensorboard_trace_handler(os.environ["TRACE_DIR"],
                                                          worker_name=f"rank{rank}")) as prof:
    for _ in range(steps + 2):
        x, y = next(loader)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()  # DDP's all-reduce of the gradients ends here
        optimizer.step()
        prof.step()

dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: {steps} steps, loss {loss.item():.4f}", flush=True)
