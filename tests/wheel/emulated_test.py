#!/usr/bin/env python3
"""The wheel of a cross-built tree (arm64), as a user on that machine gets it: assembled by
tools/wheel/wheelkit.py with the target's interpreter answering under the emulator, checked for
what its ELF files are and need, installed by pip into a venv of the target's CPython, and used
there: the package imports from the venv, a snapshot of a fixture host through Machine.over
reads what the fixture holds, a span session counts, and the command on the venv's PATH agrees.
Every program of the target runs under the emulator.

    emulated_test.py BUILD_DIR TARGET_PYTHON EMULATOR FAKE_NVML FAKE_CUDA FIXTURES

Exit status 0 when all of it holds; the first failure ends it with what went wrong.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "tools" / "wheel"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import install_test  # noqa: E402
import wheelkit  # noqa: E402

run = install_test.run

# Under the emulator, in the venv: what the package reads of the fixture host, as JSON.
PROBE = """
import importlib.metadata, json, platform, sys
import mainboard
from mainboard import Profiler, span
assert mainboard.__file__.startswith(sys.argv[1]), mainboard.__file__
machine = mainboard.Machine.over(sys.argv[2])
snapshot = machine.snapshot()
with Profiler() as p:
    for _ in range(3):
        with span("step"):
            pass
print(json.dumps({
    "machine": platform.machine(),
    "version": mainboard.__version__,
    "metadata": importlib.metadata.version("mainboard"),
    "cpu": snapshot.cpu.info.label,
    "cores": snapshot.cpu.info.cores,
    "gpus": [g.label for g in machine.gpus],
    "memory_total": snapshot.memory.total_bytes,
    "steps": {s.name: s.calls for s in p.stats()},
}))
"""


def main() -> int:
    build, python, emulator, nvml, cuda, fixtures = sys.argv[1:7]
    build_dir = Path(build).resolve()
    host = Path(fixtures) / "hosts" / "grace-hopper"
    env = dict(os.environ, MAINBOARD_FAKE_GPU_SCENARIO=str(Path(fixtures) / "gpus" / "gh200.json"),
               MAINBOARD_NVML_LIBRARY=nvml, MAINBOARD_CUDA_LIBRARY=cuda)
    env.pop("MAINBOARD_SYSROOT", None)
    packages = wheelkit.packages(build_dir)
    if python not in packages:
        raise SystemExit(f"FAILED: {build_dir} has no package for {python}")
    with tempfile.TemporaryDirectory(prefix="mainboard-wheel-emulated-") as tmp:
        tmp = Path(tmp)
        wheel = wheelkit.assemble(build_dir, python, packages[python], tmp / "dist", [emulator])
        print(f"{wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB")
        if not re.search(r"-cp3\d+-cp3\d+-manylinux_2_\d+_aarch64\.whl$", wheel.name):
            raise SystemExit(f"FAILED: {wheel.name} is not tagged for arm64 Linux")
        unpacked = tmp / "unpacked"
        install_test.check_elves(wheel, unpacked)
        for elf in (p for p in unpacked.rglob("*") if p.is_file()
                    and p.read_bytes()[:4] == b"\x7fELF"):
            header = run(["readelf", "-h", str(elf)]).stdout
            if "AArch64" not in header:
                raise SystemExit(f"FAILED: {elf.relative_to(unpacked)} is not an arm64 file")
        # A venv of the target's CPython, with Debian's pip (from the system's packages) to
        # install the wheel; --ignore-installed so that a system-wide mainboard is not taken.
        venv = tmp / "venv"
        run([emulator, python, "-m", "venv", "--system-site-packages", "--without-pip",
             str(venv)])
        vpython = str(venv / "bin" / "python")
        run([emulator, vpython, "-m", "pip", "install", "--no-index", "--no-deps",
             "--ignore-installed", "--disable-pip-version-check", "--no-cache-dir", "-q",
             str(wheel)], cwd=tmp)
        probe = json.loads(run([emulator, vpython, "-c", PROBE, str(venv), str(host)],
                               cwd=tmp, env=env).stdout)
        print(f"  in the venv: {probe}")
        expected = {"machine": "aarch64", "cpu": "ARM Neoverse-V2", "cores": 72,
                    "gpus": ["NVIDIA GH200 480GB"], "steps": {"step": 3}}
        for key, value in expected.items():
            if probe[key] != value:
                raise SystemExit(f"FAILED: {key} is {probe[key]!r}, the fixture says {value!r}")
        if not (probe["version"] == probe["metadata"] == wheelkit.version()):
            raise SystemExit(f"FAILED: versions disagree: {probe}")
        # The command on the venv's PATH, finding its libraries in the installed package, reads
        # the same host as the package.
        command = str(venv / "bin" / "mainboard")
        version = run([emulator, command, "--version"]).stdout.split()[-1]
        if version != probe["version"]:
            raise SystemExit(f"FAILED: the command says {version}, the package {probe['version']}")
        snapshot = json.loads(run([emulator, command, "--sysroot", str(host), "snapshot",
                                   "--json"], cwd=tmp, env=env).stdout)
        if snapshot["memory"]["total_bytes"] != probe["memory_total"]:
            raise SystemExit(f"FAILED: the command reads {snapshot['memory']['total_bytes']} "
                             f"bytes of memory, the package {probe['memory_total']}")
        print(f"  the command: mainboard {version}, the same host as the package")
    return 0


if __name__ == "__main__":
    sys.exit(main())
