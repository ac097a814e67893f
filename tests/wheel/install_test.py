#!/usr/bin/env python3
"""The wheels as a user gets them: made from the build tree (tools/wheel/wheelkit.py) for each
interpreter it has a package for, checked for what their ELF files need, installed into a fresh
venv with pip and nothing else, and the Python suite run there from outside the source tree.

    install_test.py BUILD_DIR

The fixture and fake-library variables of the suite are taken from the environment (ctest sets
them). Exit status 0 when every wheel passes; the first failure ends it with what went wrong.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "tools" / "wheel"))
import wheelkit  # noqa: E402

# Debian's pytest and what it needs, pure Python: put on the venv's path by a directory of links,
# so the venv holds the wheel and nothing else of ours.
PYTEST = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "attr", "attrs", "py.py")
DIST_PACKAGES = Path("/usr/lib/python3/dist-packages")


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(argv, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(map(str, argv))}\n{out.stdout}\n{out.stderr}")
    return out


def check_elves(wheel: Path, unpacked: Path) -> None:
    """Every ELF file needs only the system's C library family, libstdc++ and libgcc_s, or a
    library the wheel carries."""
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unpacked)
    carried = {p.name for p in (unpacked / "mainboard.libs").iterdir()}
    # Loaded with dlopen when first needed, so no ELF file names them: carried all the same.
    for later in ("libhwloc.so.15", "libdw.so.1", "libelf.so.1", "libmicrohttpd.so.12"):
        if later not in carried:
            raise SystemExit(f"FAILED: the wheel does not carry {later}, which the topology, "
                             "the profiler or serve loads when first needed")
    elves = [p for p in unpacked.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert len(elves) >= 4, elves
    for elf in elves:
        dynamic = run(["readelf", "-d", str(elf)]).stdout
        for name in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic):
            if not wheelkit.SYSTEM.match(name) and name not in carried:
                raise SystemExit(f"FAILED: {elf.relative_to(unpacked)} needs {name}, "
                                 "neither a system library nor in the wheel")
        if "NEEDED" in dynamic and "RUNPATH" not in dynamic and "RPATH" not in dynamic:
            raise SystemExit(f"FAILED: {elf.relative_to(unpacked)} has no run path")
    print(f"  {len(elves)} ELF files need only the system's libc family, libstdc++, libgcc_s "
          f"and the {len(carried)} libraries the wheel carries")


SMOKE = """
import os, sys, mainboard
from mainboard import Profiler, span
assert mainboard.__file__.startswith(sys.argv[1]), mainboard.__file__
snapshot = mainboard.Machine().snapshot()
assert snapshot.cpu.info.label
with Profiler() as p:
    with span("outer"):
        with span("inner"):
            pass
assert {s.path for s in p.path_stats()} == {"outer", "outer/inner"}, p.path_stats()
script = os.path.join(sys.argv[2], "busy.py")
with open(script, "w") as f:
    f.write("import time\\nend = time.time() + 0.3\\nwhile time.time() < end: pass\\n")
prof = Profiler.run(script, timeout=60)
print("snapshot, a session and a run of", len(prof.samples), "samples")
"""


def smoke(venv: Path, tmp: Path) -> None:
    """What an interpreter without the suite's tools still checks: the package imports from the
    venv, a snapshot, a span session and a sampled run of a script work."""
    out = run([str(venv / "bin" / "python"), "-c", SMOKE, str(venv), str(tmp)], cwd=tmp)
    print(f"  smoke test on the installed wheel: {out.stdout.strip()}")


def main() -> int:
    build = Path(sys.argv[1]).resolve()
    cli_version = run([str(build / "src" / "cli" / "mainboard"), "--version"]).stdout.split()[-1]
    packages = wheelkit.packages(build)
    with tempfile.TemporaryDirectory(prefix="mainboard-wheels-") as tmp:
        tmp = Path(tmp)
        tools = tmp / "pytest-path"
        tools.mkdir()
        for name in PYTEST:
            if (DIST_PACKAGES / name).exists():
                (tools / name).symlink_to(DIST_PACKAGES / name)
        # The whole suite on Debian's python3 and the newest; a smoke test on the others.
        facts_of = {p: wheelkit.interpreter_facts(p) for p in packages}
        versions = {p: f["version"] for p, f in facts_of.items()}
        newest = max(versions, key=lambda p: tuple(int(x) for x in versions[p].split(".")))
        full = {next(iter(packages)), newest}
        for python, package in packages.items():
            facts = facts_of[python]
            print(f"Python {facts['version']} ({python})")
            wheel = wheelkit.assemble(build, python, package, tmp / "dist")
            print(f"  {wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB")
            check_elves(wheel, tmp / f"unpacked-{facts['tag']}")
            venv = tmp / f"venv-{facts['tag']}"
            run([python, "-m", "venv", str(venv)])
            run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps",
                 "--disable-pip-version-check", "-q", str(wheel)])
            # What pip says of it, and the notices of the libraries it carries.
            shown = run([str(venv / "bin" / "python"), "-m", "pip", "show",
                         "--disable-pip-version-check", "-f", "mainboard"]).stdout
            assert f"Version: {cli_version}" in shown and "License: Apache-2.0" in shown, shown
            notices = [n for n in shown.split() if "/licenses/" in n and n.endswith(".copyright")]
            assert len(notices) >= 5 and any("hwloc" in n for n in notices), shown
            # The command on the venv's PATH, finding its libraries in the installed package.
            command = venv / "bin" / "mainboard"
            version = run([str(command), "--version"]).stdout.split()[-1]
            assert version == cli_version, (version, cli_version)
            linked = run(["ldd", str(command)]).stdout
            if "not found" in linked:
                raise SystemExit(f"FAILED: the installed command misses libraries:\n{linked}")
            assert "mainboard.libs/libmainboard" not in linked  # the command links statically
            assert run([str(venv / "bin" / "python"), "-m", "mainboard", "--version"]).stdout \
                .split()[-1] == cli_version
            snapshot = run([str(command), "snapshot", "--json"], cwd=tmp).stdout
            assert '"cpu"' in snapshot
            print(f"  installed: mainboard {version} on the venv's PATH, python -m mainboard")
            if python not in full:
                smoke(venv, tmp)
                continue
            env = dict(os.environ, PYTHONPATH=str(tools), MAINBOARD_EXPECT_INSTALLED=str(venv),
                       MAINBOARD_CLI=str(command))
            suite = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "-W", "ignore::DeprecationWarning", str(SOURCE / "python" / "tests")],
                cwd=tmp, env=env, capture_output=True, text=True)
            tail = "\n".join(suite.stdout.strip().splitlines()[-3:])
            if suite.returncode != 0:
                raise SystemExit(f"FAILED: the suite on the installed wheel:\n{suite.stdout}\n"
                                 f"{suite.stderr}")
            print(f"  the suite on the installed wheel: {tail.splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
