#!/usr/bin/env python3
"""The start-up order of the command's code: the functions its first-contact commands run, which
the link puts side by side at the front of .text (src/cli/startup-functions.txt; lld's
--symbol-ordering-file). Code the loader maps but never touches costs nothing; each 64 KiB window
of code a command touches costs a page fault (about 10 us on a VM). Laid out as the compiler
left them, a warm `snapshot --json` touched 51 of the 64 windows of its 4 MB of code; in order,
about 10.

  startup-order.py write MAINBOARD [FILE]   run the commands under callgrind, write the list
  startup-order.py check MAINBOARD [FILE]   how many of the functions they run the list holds
  startup-order.py layout MAINBOARD [FILE]  whether the listed functions lie together in the
                                            binary (exit 1 if not): the link took the order

MAINBOARD is a release build of the command (not a sanitizer's). `write` and `check` need
valgrind; `layout` needs nm."""
import os
import re
import subprocess
import sys
import tempfile

# The commands people run first, and most often from scripts: what they run is what comes first.
COMMANDS = [["--version"], ["snapshot", "--json"], [], ["toolchain"], ["--help"]]
DEFAULT_FILE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                             "src", "cli", "startup-functions.txt"))
HEADER = """\
# The functions mainboard's first-contact commands run, put side by side at the front of the
# command's code by the link (lld --symbol-ordering-file), so that a command touches a few pages
# of code instead of most of them. Written by scripts/startup-order.py write; a
# function missing here still links, only further away. Regenerate after changing what these
# commands run (make bench says how many of a snapshot's functions this list holds).
"""


def executed(binary, argv, cache_home):
    """Names of the functions of `binary` that `binary argv` runs, as callgrind saw them."""
    env = dict(os.environ, XDG_CACHE_HOME=cache_home, MAINBOARD_LOG="error")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                        f"--callgrind-out-file={out}", binary, *argv],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=600, check=False)
        names, objects, functions, current = [], {}, {}, None
        real = os.path.realpath(binary)
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
                if not m:
                    continue
                kind, key, name = m.groups()
                table = objects if kind in ("ob", "cob") else functions
                if name:
                    table[key] = name
                if kind == "ob":
                    current = objects.get(key)
                elif kind == "fn" and current and os.path.realpath(current) == real:
                    # callgrind marks a recursion's levels with 'N; the symbol is the same.
                    # Code without a symbol (an address) and "(below main)" cannot be listed.
                    name = re.sub(r"'\d+$", "", functions[key])
                    if re.fullmatch(r"[A-Za-z_.$][\w.$@]*", name) and not name.startswith("0x"):
                        names.append(name)
        return names


def warm(binary, cache):
    """Fills a tool cache of its own, as the commands mostly run: warm."""
    subprocess.run([binary, "snapshot", "--json"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False,
                   env=dict(os.environ, XDG_CACHE_HOME=cache))


def run_all(binary):
    """Each command's functions, in the order of COMMANDS, each name once (where first run)."""
    with tempfile.TemporaryDirectory() as cache:
        warm(binary, cache)
        seen, groups = set(), []
        for argv in COMMANDS:
            group = sorted(set(executed(binary, argv, cache)) - seen)
            seen.update(group)
            groups.append(group)
        return groups


def listed(path):
    with open(path, encoding="utf-8") as f:
        return [l.split("#", 1)[0].strip() for l in f if l.split("#", 1)[0].strip()]


def write(binary, path):
    groups = run_all(binary)
    if not any(groups):
        sys.exit(f"startup-order: callgrind saw no function of {binary} run (is valgrind there?)")
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER)
        for argv, group in zip(COMMANDS, groups):
            f.write("# " + " ".join(["mainboard", *argv]) + "\n")
            f.writelines(name + "\n" for name in group)
    print(f"startup-order: {sum(map(len, groups))} functions written to {path}")


def check(binary, path):
    want = set(listed(path))
    with tempfile.TemporaryDirectory() as cache:
        warm(binary, cache)
        ran = set(executed(binary, ["snapshot", "--json"], cache))
    if not ran:
        sys.exit(f"startup-order: callgrind saw no function of {binary} run (is valgrind there?)")
    missing = sorted(ran - want)
    print(f"start-up order: {len(ran) - len(missing)} of the {len(ran)} functions a warm "
          f"snapshot runs are in {os.path.relpath(path)}"
          + (f" (regenerate: scripts/startup-order.py write {binary})" if missing else ""))


def layout(binary, path):
    """The listed functions that the binary has must lie together at the front of its code."""
    out = subprocess.run(["nm", "--defined-only", "-S", binary], capture_output=True,
                         text=True, check=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    code = [address for address, _ in symbols.values()]
    if not code:
        sys.exit(f"startup-order: no function symbols in {binary} (stripped?)")
    present = [symbols[n] for n in dict.fromkeys(listed(path)) if n in symbols]
    if len(present) < 100:
        sys.exit(f"startup-order: only {len(present)} of the listed functions are in {binary}: "
                 "is the list this command's?")
    start = min(code)
    span = sum(size for _, size in present)
    # the listed functions, with their alignment, and a window of slack
    limit = start + span * 11 // 10 + 65536
    outside = [a for a, _ in present if a >= limit]
    share = 1 - len(outside) / len(present)
    print(f"start-up order: {len(present) - len(outside)} of {len(present)} listed functions "
          f"({span // 1024} KiB) lie in the first {(limit - start) // 1024} KiB of the code "
          f"({(max(code) - start) // 1024} KiB)")
    if share < 0.95:
        sys.exit("startup-order: the listed functions are scattered: the link did not take the "
                 "order (see src/cli/CMakeLists.txt)")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("write", "check", "layout"):
        sys.exit(__doc__)
    path = sys.argv[3] if len(sys.argv) == 4 else DEFAULT_FILE
    {"write": write, "check": check, "layout": layout}[sys.argv[1]](sys.argv[2], path)


if __name__ == "__main__":
    main()
