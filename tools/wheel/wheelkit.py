"""Assembles self-contained wheels of mainboard from a CMake build tree (standard library only).

A wheel holds the package (the pure-Python files and the extension built for one CPython), the
`mainboard` command (installed on the environment's PATH, as py-spy's wheel does), and the
shared libraries they need beyond the C library family, libstdc++ and libgcc_s: ours
(libmainboard, libmainboard_spans) and the system's (hwloc, elfutils, fmt, spdlog,
libmicrohttpd and theirs), copied into `mainboard.libs/` with their run paths set by patchelf to
find each other there. The platform tag says the newest glibc symbol version any of its files
needs (manylinux_2_N), so it is honest about where it can run.

    wheelkit.py BUILD_DIR OUT_DIR [--python PYTHON]... [--emulator PROGRAM]

builds one wheel per interpreter the build tree has a package for (python-packages.txt), or
for the ones named. A cross-built tree (the arm64 preset) names the target's interpreter, which
runs under the emulator given: it answers for the target, and the target's dynamic loader (also
emulated) says which libraries its files pull in.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = "mainboard"
SUMMARY = ("What machine am I on, and what is it doing? Where does my code spend its time? "
           "CPU, memory, GPUs and NPUs with live telemetry, spans, a profiling session, stack "
           "sampling and GPU activity, from one C++ core.")
#: The licence (LICENSE at the top of the tree). Where the project lives: it has no public home
#: yet, so the metadata names none rather than one made up; a label -> URL here adds it.
LICENSE = "Apache-2.0"
URLS: dict[str, str] = {}

#: Libraries every Linux system has, and that a wheel must not carry (manylinux's rule).
SYSTEM = re.compile(r"^(linux-vdso|linux-gate|ld-linux[-.\w]*|libc|libm|libdl|libpthread|librt|"
                    r"libutil|libresolv|libstdc\+\+|libgcc_s)\.so(\.[\d.]+)?$")


def version() -> str:
    """The project's version, from CMakeLists.txt (the C++ `--version` is made from it)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*mainboard\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise SystemExit("CMakeLists.txt: no project(mainboard VERSION …)")
    return match.group(1)


def interpreter_facts(python: str, emulator: list[str] | None = None) -> dict[str, str]:
    code = ("import sys, sysconfig; "
            "print('%d.%d' % sys.version_info[:2]); "
            "print(sys.implementation.name); "
            "print(sysconfig.get_config_var('EXT_SUFFIX')); "
            "print(sysconfig.get_platform())")
    out = subprocess.run([*(emulator or []), python, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    version_, implementation, suffix, platform = out.split()
    if implementation != "cpython":
        raise SystemExit(f"{python}: {implementation} is not CPython")
    return {"version": version_, "suffix": suffix, "platform": platform,
            "tag": "cp" + version_.replace(".", "")}


def metadata_text(version_: str) -> str:
    readme = (ROOT / "README.md").read_text()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version_}",
        f"Summary: {SUMMARY}",
        "Author: The mainboard developers",
        f"License: {LICENSE}",
        "License-File: LICENSE",
        "Requires-Python: >=3.9",
        "Classifier: License :: OSI Approved :: Apache Software License",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Programming Language :: C++",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Topic :: System :: Hardware",
        "Classifier: Topic :: Software Development :: Testing",
        "Classifier: Typing :: Typed",
        *(f"Project-URL: {label}, {url}" for label, url in URLS.items()),
        "Provides-Extra: rich",
        "Requires-Dist: rich ; extra == 'rich'",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ]
    return "\n".join(lines)


def _needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def _loader(path: Path) -> str:
    """The dynamic loader a program asks for (its PT_INTERP)."""
    out = subprocess.run(["readelf", "-l", "--wide", str(path)], capture_output=True, text=True,
                         check=True).stdout
    match = re.search(r"Requesting program interpreter: ([^\]]+)\]", out)
    if not match:
        raise SystemExit(f"{path}: names no program interpreter")
    return match.group(1)


def _resolved(path: Path, extra_dirs: list[Path], lister: list[str]) -> dict[str, Path]:
    """What the loader finds for `path` and everything it pulls in: name -> file. `lister`
    prints that as ldd does: ldd, or the target's loader with --list under the emulator."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [str(d) for d in extra_dirs] + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep)
                                        if p])
    out = subprocess.run([*lister, str(path)], capture_output=True, text=True, env=env).stdout
    found: dict[str, Path] = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if not match:
            continue
        name, target = match.groups()
        if target == "not":
            raise SystemExit(f"{path}: {name} is not found")
        found[name] = Path(target)
    return found


def glibc_floor(paths: list[Path]) -> tuple[int, int]:
    """The newest GLIBC_2.N symbol version any of the files needs."""
    newest = (2, 17)
    for path in paths:
        out = subprocess.run(["readelf", "-V", "--wide", str(path)], capture_output=True,
                             text=True).stdout
        for major, minor in re.findall(r"GLIBC_(\d+)\.(\d+)", out):
            newest = max(newest, (int(major), int(minor)))
        # Packed relative relocations (DT_RELR) are read by the loader from glibc 2.36 on.
        if "GLIBC_ABI_DT_RELR" in out:
            newest = max(newest, (2, 36))
    return newest


def notices(libraries: list[Path], into: Path) -> list[str]:
    """The copyright and licence notices of the system libraries a wheel carries: each one's
    Debian package's copyright file (hwloc, elfutils, fmt, … each under its own licence), into
    `into`. Returns the packages, or says which library has no package to take a notice from."""
    packages: set[str] = set()
    for lib in libraries:
        # dpkg knows a file by the path its package gave, with /lib or /usr/lib (merged /usr).
        candidates = []
        for path in (str(lib), str(lib.resolve())):
            candidates += [path, path[4:] if path.startswith("/usr/") else "/usr" + path]
        for path in candidates:
            out = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True)
            if out.returncode == 0:
                packages.add(out.stdout.split(":", 1)[0].split(",")[0].strip())
                break
        else:
            raise SystemExit(f"{lib}: no Debian package owns it, so the wheel would carry it "
                             "without its licence notice")
    into.mkdir(parents=True, exist_ok=True)
    for package in sorted(packages):
        copyright_file = Path("/usr/share/doc") / package / "copyright"
        if not copyright_file.exists():
            raise SystemExit(f"{package}: no {copyright_file} to carry as its notice")
        shutil.copy2(copyright_file, into / f"{package}.copyright")
    return sorted(packages)


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def assemble(build: Path, python: str, package: Path, out_dir: Path,
             emulator: list[str] | None = None) -> Path:
    """One wheel for `python`, from the build tree `build` whose package for it is `package`
    (run under `emulator` where the tree is cross-built)."""
    emulator = emulator or []
    facts = interpreter_facts(python, emulator)
    machine = facts["platform"].split("-", 1)[1]
    version_ = version()
    extension = package / f"_mainboard{facts['suffix']}"
    cli = build / "src" / "cli" / "mainboard"
    # Links what the libraries load with dlopen when first needed (elfutils, libmicrohttpd).
    later = build / "src" / "libmainboard_loaded_later.so"
    for needed in (extension, cli, later):
        if not needed.exists():
            raise SystemExit(f"{needed} is not built (build mainboard_python and mainboard_cli)")
    with tempfile.TemporaryDirectory(prefix="mainboard-wheel-") as tmp:
        stage = Path(tmp)
        target = stage / NAME
        libs = stage / f"{NAME}.libs"
        data = stage / f"{NAME}-{version_}.data" / "scripts"
        libs.mkdir(parents=True)
        data.mkdir(parents=True)
        # The package: its Python files and this interpreter's extension only.
        for path in package.rglob("*"):
            rel = path.relative_to(package)
            if "__pycache__" in rel.parts or path.is_dir():
                continue
            if path.name.startswith("_mainboard.") and path.suffix == ".so" and path != extension:
                continue
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / rel)
        shutil.copy2(cli, data / "mainboard")
        # Every library the loader finds for them, beyond the system's, by its soname.
        search = [build / "src"]
        lister = [*emulator, _loader(cli), "--list"] if emulator else ["ldd"]
        bundled: dict[str, Path] = {}
        for elf in (extension, cli, later):
            for name, found in _resolved(elf, search, lister).items():
                if not SYSTEM.match(name):
                    bundled[name] = found
        for name, found in sorted(bundled.items()):
            shutil.copy2(found.resolve(), libs / name)
            os.chmod(libs / name, 0o755)
        elves = [target / extension.name, data / "mainboard", *sorted(libs.iterdir())]
        strip = f"{machine}-linux-gnu-strip" if emulator else "strip"
        for elf in elves:
            subprocess.run([strip, "--strip-unneeded", str(elf)], check=True)
        site = f"lib/python{facts['version']}"
        run_paths = {
            target / extension.name: "$ORIGIN/../mainboard.libs",
            # bin/ beside lib/pythonX.Y/{site,dist}-packages: a venv, --user, conda, /usr/local
            data / "mainboard": ":".join(f"$ORIGIN/../{site}/{d}/mainboard.libs"
                                         for d in ("site-packages", "dist-packages")),
        }
        for lib in libs.iterdir():
            run_paths[lib] = "$ORIGIN"
        for elf, run_path in run_paths.items():
            subprocess.run(["patchelf", "--set-rpath", run_path, str(elf)], check=True)
        # Nothing outside the wheel but the system's own libraries.
        for elf in elves:
            for name in _needed(elf):
                if not SYSTEM.match(name) and not (libs / name).exists():
                    raise SystemExit(f"{elf.name} needs {name}, which the wheel does not carry")
        major, minor = glibc_floor(elves)
        arch = machine.replace("-", "_").replace(".", "_")
        platform = f"manylinux_{major}_{minor}_{arch}"
        tag = f"{facts['tag']}-{facts['tag']}-{platform}"
        dist_info = stage / f"{NAME}-{version_}.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(metadata_text(version_))
        (dist_info / "WHEEL").write_text(
            "Wheel-Version: 1.0\nGenerator: mainboard wheelkit\nRoot-Is-Purelib: false\n"
            f"Tag: {tag}\n")
        (dist_info / "top_level.txt").write_text(f"{NAME}\n")
        shutil.copy2(ROOT / "LICENSE", dist_info / "LICENSE")
        theirs = [found for found in bundled.values()
                  if build.resolve() not in found.resolve().parents]
        notices(theirs, dist_info / "licenses")
        (dist_info / "INSTALLER").unlink(missing_ok=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        wheel = out_dir / f"{NAME}-{version_}-{tag}.whl"
        files = sorted(p for p in stage.rglob("*") if p.is_file())
        # The dist-info last, RECORD last of all (as the wheel format asks).
        files.sort(key=lambda p: (p.is_relative_to(dist_info), str(p)))
        records = []
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in files:
                rel = path.relative_to(stage).as_posix()
                payload = path.read_bytes()
                info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
                mode = 0o755 if _is_elf(path) or rel.endswith("/scripts/mainboard") else 0o644
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, payload)
                records.append((rel, _hash(payload), str(len(payload))))
            record = f"{NAME}-{version_}.dist-info/RECORD"
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerows(records)
            writer.writerow((record, "", ""))
            info = zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100644) << 16
            zf.writestr(info, buffer.getvalue())
        return wheel


def packages(build: Path) -> dict[str, Path]:
    """The interpreters the build tree has a package for, and where it is."""
    listing = build / "python-packages.txt"
    if not listing.exists():
        raise SystemExit(f"{listing}: not a build tree with the Python package")
    out = {}
    for line in listing.read_text().splitlines():
        if "=" in line:
            interpreter, package = line.split("=", 1)
            out[interpreter] = Path(package)
    return out


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--python", action="append", default=[],
                        help="an interpreter of the build tree (default: all of them)")
    parser.add_argument("--emulator", default=None,
                        help="runs the target's programs, for a cross-built tree (qemu-aarch64)")
    args = parser.parse_args(argv)
    known = packages(args.build)
    chosen = args.python or list(known)
    for python in chosen:
        if python not in known:
            raise SystemExit(f"{python}: the build tree has no package for it "
                             f"(it has: {', '.join(known)})")
        wheel = assemble(args.build, python, known[python], args.out,
                         [args.emulator] if args.emulator else [])
        print(f"{wheel} ({wheel.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
