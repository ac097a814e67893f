"""The PEP 517 build backend of mainboard, in the tree (pyproject.toml's backend-path).

`pip install .` and `python -m pip wheel .` call it. It needs nothing beyond the standard
library and what `make run` installs (CMake, Ninja, a C++ compiler, the libraries, patchelf):
no backend is downloaded, so it works offline with `--no-build-isolation`, and with build
isolation too (it requires no packages). It configures a CMake build for the interpreter that
runs it (build/pip-cp3X), builds the extension and the command, and hands the tree to wheelkit,
which makes the self-contained wheel. Why not setuptools with a CMake extension: that is a
second build description to keep in step with CMake's, for one copy step; see docs/python.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wheelkit  # noqa: E402

ROOT = wheelkit.ROOT


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = wheelkit.version()
    dist_info = Path(metadata_directory) / f"{wheelkit.NAME}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(wheelkit.metadata_text(version))
    return dist_info.name


def _build_tree(config_settings) -> Path:
    settings = config_settings or {}
    tag = "cp%d%d" % sys.version_info[:2]
    build = Path(settings.get("build-dir") or ROOT / "build" / f"pip-{tag}")
    if not (build / "build.ninja").exists():
        subprocess.run([
            "cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_UNITY_BUILD=ON", "-DCMAKE_UNITY_BUILD_BATCH_SIZE=8",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DMAINBOARD_BUILD_TESTS=OFF", "-DMAINBOARD_BUILD_BENCH=OFF",
            "-DMAINBOARD_INSTALL=OFF", "-DMAINBOARD_BUILD_PYTHON=ON", "-DMAINBOARD_BUILD_CLI=ON",
        ], check=True, stdout=sys.stderr)
    subprocess.run(["cmake", "--build", str(build), "--target", "mainboard_python",
                    "mainboard_cli"], check=True, stdout=sys.stderr)
    return build


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = _build_tree(config_settings)
    packages = wheelkit.packages(build)
    package = packages.get(sys.executable) or next(iter(packages.values()))
    wheel = wheelkit.assemble(build, sys.executable, package, Path(wheel_directory))
    return wheel.name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the source tree (git ls-files), with PKG-INFO."""
    version = wheelkit.version()
    base = f"{wheelkit.NAME}-{version}"
    out = Path(sdist_directory) / f"{base}.tar.gz"
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                            check=True).stdout.decode().split("\0")
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in filter(None, listed):
            path = ROOT / name
            if path.is_file():
                tar.add(path, arcname=f"{base}/{name}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = wheelkit.metadata_text(version).encode()
        info.size = len(data)
        import io

        tar.addfile(info, io.BytesIO(data))
    return out.name
