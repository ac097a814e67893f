"""Six scripts of a first day with the package, written from the docs alone (the machine and its
GPUs, spans around a PyTorch loop, Profiler.run of a training script, a metered region,
profile(fn) of a matrix product, the machine drawn with Rich): each runs clean under
`python -W error` on this host, GPU or not, and all of them pass `mypy --strict`."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from test_typing import _mypy, _where  # noqa: E402  how the package's own type tests run mypy
NEEDS = {"spans.py": "torch", "run_script.py": "torch", "region_meter.py": "torch",
         "profile_matmul.py": "torch", "rich_view.py": "rich"}
#: What each script's output must hold (its figures are this host's).
SAYS = {
    "machine.py": ["CPU: ", "memory: ", "GPUs: none on this host"],
    "spans.py": ["step", "forward", "backward", "optimizer", "threads: "],
    "run_script.py": ["exited with status 0", "train"],
    "region_meter.py": ["the region added", "peak from the kernel's high-water mark: "],
    "profile_matmul.py": ["20 iterations timed after 3 warm-up runs", "median ", "hottest: "],
    "rich_view.py": ["Memory"],
}


@pytest.mark.parametrize("script", sorted(SAYS))
def test_a_first_day_script_runs_clean_with_warnings_as_errors(script, tmp_path):
    if script in NEEDS and importlib.util.find_spec(NEEDS[script]) is None:
        pytest.skip(f"{NEEDS[script]} is not installed for this interpreter")
    done = subprocess.run([sys.executable, "-W", "error", str(HERE / script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, COLUMNS="100"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stderr, done.stderr
    gpu = "GPU: " in done.stdout or "on NVIDIA" in done.stdout
    for text in SAYS[script]:
        if gpu and ("none on this host" in text or script == "profile_matmul.py"):
            continue
        assert text in done.stdout, (text, done.stdout)
    if script == "region_meter.py" and "high-water mark: True" in done.stdout:
        # 256 MiB made and freed between two samples: the region added that much, not the
        # 64 MiB that were alive before it.
        added = float(done.stdout.split("the region added ")[1].split()[0])
        assert 0.24 <= added <= 0.40, done.stdout


def test_the_first_day_scripts_pass_mypy_strict(tmp_path):
    python = _mypy()
    probe = subprocess.run([python, "-c", "import torch, rich"], capture_output=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("the interpreter that runs mypy has no torch or rich to check the scripts "
                    "against")
    where, env = _where(tmp_path)
    scripts = sorted(str(p) for p in HERE.glob("*.py") if not p.name.startswith("test_"))
    out = subprocess.run([python, "-m", "mypy", *where, "--strict", "--no-error-summary",
                          "--cache-dir", str(tmp_path / "cache"), *scripts],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
