#!/usr/bin/env python3
"""The same readings as `mainboard snapshot --json`, the way a Python tool would take them:
psutil for CPU, memory, swap and disks; platform for identity; subprocess for tool versions and
dmidecode. Used only as the baseline in scripts/run-benchmarks.sh."""
import getpass
import grp
import json
import os
import platform
import pwd
import re
import shutil
import socket
import subprocess
import time

import psutil

TOOLS = [
    ("gcc", ["gcc"]), ("clang", ["clang"]), ("icx", ["icx"]), ("nvc", ["nvc"]),
    ("g++", ["g++"]), ("clang++", ["clang++"]), ("icpx", ["icpx"]), ("nvc++", ["nvc++"]),
    ("nvcc", ["nvcc"]), ("hipcc", ["hipcc"]), ("gfortran", ["gfortran"]), ("ifx", ["ifx"]),
    ("flang", ["flang", "flang-new"]), ("mpicc", ["mpicc"]), ("mpicxx", ["mpicxx", "mpic++"]),
    ("mpifort", ["mpifort", "mpif90"]), ("mpirun", ["mpirun", "mpiexec"]), ("cmake", ["cmake"]),
    ("ninja", ["ninja", "ninja-build"]), ("make", ["make", "gmake"]), ("meson", ["meson"]),
    ("bazel", ["bazel", "bazelisk"]), ("python", ["python3", "python"]),
]
SCHEDULERS = {"slurm": ["sbatch", "srun", "squeue"], "pbs": ["pbsnodes", "qmgr"],
              "lsf": ["bsub", "bjobs"], "sge": ["qconf", "qhost"],
              "htcondor": ["condor_submit", "condor_q"], "flux": ["flux"]}
VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def cpu():
    model = ""
    for line in read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    freq = psutil.cpu_freq()
    return {"label": model or platform.processor(), "architecture": platform.machine(),
            "threads": psutil.cpu_count(logical=True), "cores": psutil.cpu_count(logical=False),
            "current_mhz": freq.current if freq else None, "load": os.getloadavg()}


def toolchain():
    out = []
    for name, binaries in TOOLS:
        path = next((p for p in map(shutil.which, binaries) if p), None)
        if not path:
            continue
        try:
            r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5)
            m = VERSION.search(r.stdout + r.stderr)
            out.append({"name": name, "path": path, "version": m.group(1) if m else None})
        except (OSError, subprocess.TimeoutExpired):
            out.append({"name": name, "path": path, "version": None})
    return out


def dimms():
    exe = shutil.which("dmidecode")
    if not exe:
        return []
    r = subprocess.run([exe, "-t", "17"], capture_output=True, text=True, timeout=5)
    return r.stdout.count("Memory Device") if r.returncode == 0 else []


def cgroup():
    for line in read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "memory" in parts[1].split(","):
            return {"limit": read("/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes")
                    or read("/sys/fs/cgroup/memory/memory.limit_in_bytes")}
        if len(parts) == 3 and parts[0] == "0":
            return {"limit": read("/sys/fs/cgroup" + parts[2] + "/memory.max")}
    return {}


def scratch():
    best = None
    for path in [os.environ.get("TMPDIR", ""), "/dev/shm", "/local/scratch", "/tmp", "/var/tmp"]:
        if path and os.path.isdir(path) and os.access(path, os.W_OK):
            usage = shutil.disk_usage(path)
            if best is None:
                best = {"path": path, "free": usage.free}
    return best


def main():
    user = getpass.getuser()
    pw = pwd.getpwnam(user)
    vm, swap = psutil.virtual_memory(), psutil.swap_memory()
    snapshot = {
        "timestamp_ns": time.monotonic_ns(),
        "hostname": socket.gethostname(),
        "cpu": cpu(),
        "memory": {"total": vm.total, "used": vm.total - vm.available, "free": vm.available},
        "swap": {"total": swap.total, "used": swap.used},
        "dimms": dimms(),
        "board": {k: read("/sys/class/dmi/id/" + k) for k in
                  ("board_vendor", "board_name", "board_version", "bios_vendor", "bios_version")},
        "environment": {"user": user, "group": grp.getgrgid(pw.pw_gid).gr_name,
                        "groups": [grp.getgrgid(g).gr_name for g in os.getgrouplist(user, pw.pw_gid)],
                        "schedulers": [n for n, bins in SCHEDULERS.items()
                                       if any(shutil.which(b) for b in bins)]},
        "toolchain": toolchain(),
        "cgroup_memory": cgroup(),
        "disk": [{"mount": p.mountpoint, "type": p.fstype, "free": shutil.disk_usage(p.mountpoint).free}
                 for p in psutil.disk_partitions() if p.mountpoint in ("/", os.path.expanduser("~"))],
        "scratch": scratch(),
    }
    print(json.dumps(snapshot, indent=2))


if __name__ == "__main__":
    main()
