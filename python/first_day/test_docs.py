"""Every Python block of the README and docs/ runs, as a reader would paste it, in a folder
holding the files it names (a training script, a program to sample, a package's module, rank
profiles), on this host: a GPU-only line is guarded in the block itself, as a user would."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the source tree
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

TRAIN = textwrap.dedent("""\
    import torch

    model = torch.nn.Linear(128, 128)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(30):
        loss = model(torch.randn(64, 128)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("trained")
""")
BUSY = textwrap.dedent("""\
    import time

    def main():
        end = time.monotonic() + 3
        while time.monotonic() < end:
            sum(i * i for i in range(1000))

    if __name__ == "__main__":
        main()
""")
# A rank of a data-parallel job: rank 1 is slow in its data loading, and the others wait for it
# in the step's all-reduce (as a synchronized job does: an unsynchronized one leaves the analysis
# to infer which phase is the wait, which a loaded machine's noise can turn).
RANK = textwrap.dedent("""\
    import os, sys, time
    from mainboard import Profiler, span

    rank = int(os.environ["RANK"])
    with Profiler() as p:
        for _ in range(5):
            with span("step"):
                with span("data"):
                    time.sleep(0.05 if rank == 1 else 0.001)
                with span("forward"):
                    time.sleep(0.002)
                with span("allreduce"):
                    time.sleep(0.001 if rank == 1 else 0.05)
    p.result().save(os.path.join(sys.argv[1], f"rank{rank}.json"))
""")


def blocks():
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if not path.is_file():
            continue
        text = path.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 2
            out.append(pytest.param(m.group(1), id=f"{path.name}:{line}"))
    return out


def _folder(tmp_path):
    """The files the blocks name, as a reader's project would have them."""
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "serve.py").write_text(BUSY)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "__init__.py").write_text("")
    (tmp_path / "bench" / "suite.py").write_text(BUSY)
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (tmp_path / "rank.py").write_text(RANK)
    for rank in range(3):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="3", LOCAL_RANK=str(rank))
        done = subprocess.run([sys.executable, str(tmp_path / "rank.py"), str(profiles)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("code", blocks())
def test_a_python_block_of_the_docs_runs_as_written(code, tmp_path):
    if "import torch" in code:
        pytest.importorskip("torch")
    if re.search(r"\bProfiler\.run\b|train\.py", code):
        pytest.importorskip("torch")  # the blocks' train.py is a PyTorch script
    _folder(tmp_path)
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, code + "\n" + done.stdout + done.stderr


def test_every_block_is_found():
    ids = [p.id for p in blocks()]
    assert len(ids) >= 7 and any(i.startswith("README.md") for i in ids), ids
