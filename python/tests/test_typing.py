"""What a type checker (Debian's mypy) sees of the package: the stub's overloads of span keep a
decorated function's signature, and models, units and results have their types."""

import os
import subprocess
import sys
import textwrap

import pytest

import mainboard

SNIPPET = textwrap.dedent('''
    import mainboard
    from mainboard import Profiler, span


    @span
    def step(batch: int) -> str:
        return str(batch)


    @span
    async def fetch(url: str) -> bytes:
        return b""


    reveal_type(step)
    reveal_type(fetch)
    reveal_type(span("x"))
    reveal_type(mainboard.Machine().cpu.label)
    with Profiler() as p:
        pass
    reveal_type(p.stats())
    reveal_type(mainboard.meter.meter())
    reveal_type(mainboard.meter())
    snap = mainboard.Machine().snapshot()
    reveal_type(snap.memory.total_bytes)
    reveal_type(snap.memory.used_bytes)
    reveal_type(snap.gpus[0].pcie.tx_kbps)
    step("not an int")
''')


def _mypy():
    """An interpreter that runs mypy: this one, else Debian's (mypy is a tool: it checks code
    for any Python version)."""
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            ok = subprocess.run([python, "-m", "mypy", "--version"], capture_output=True,
                                timeout=60).returncode == 0
        except OSError:
            ok = False
        if ok:
            return python
    pytest.skip("mypy is not installed")


def _where(tmp_path):
    """How mypy finds the package: through MYPYPATH, the build tree's folder or, for an
    installed wheel, a folder holding a link to it (mypy refuses a site-packages directory on
    MYPYPATH, and Debian's mypy cannot ask every interpreter for its paths). Rich is optional:
    where this interpreter has none, its imports are not errors."""
    import importlib.util

    package = os.path.dirname(mainboard.__file__)
    root = os.path.dirname(package)
    options = [] if importlib.util.find_spec("rich") else ["--ignore-missing-imports"]
    if os.path.basename(root) in ("site-packages", "dist-packages"):
        root = str(tmp_path / "typed")
        os.makedirs(root, exist_ok=True)
        os.symlink(package, os.path.join(root, "mainboard"))
    return options, dict(os.environ, MYPYPATH=root)


def test_mypy_sees_the_documented_types(tmp_path):
    python = _mypy()
    source = tmp_path / "client.py"
    source.write_text(SNIPPET)
    where, env = _where(tmp_path)
    out = subprocess.run([python, "-m", "mypy", *where, "--follow-imports=silent",
                          "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
                          str(source)], env=env, capture_output=True, text=True, timeout=300)
    lines = out.stdout.splitlines()
    revealed = [line.split("Revealed type is ")[1].strip('"') for line in lines
                if "Revealed type is" in line]
    assert revealed == [
        "def (batch: builtins.int) -> builtins.str",
        "def (url: builtins.str) -> typing.Awaitable[builtins.bytes]",  # the reference's overload
        "mainboard._mainboard._Span",
        "builtins.str",
        "builtins.tuple[mainboard._profiling.NameStat, ...]",
        "mainboard.meter.Meter",
        "mainboard.meter.Meter",  # the module is callable: mainboard.meter()
        "builtins.int",  # typed fields, generated from the C++ field lists
        "Union[builtins.int, None]",
        "Union[builtins.float, None]",
    ], out.stdout
    errors = [line for line in lines if ": error:" in line]
    # The one error is the deliberate one: a decorated function keeps its parameter types.
    assert len(errors) == 1 and 'incompatible type "str"' in errors[0], out.stdout


def test_the_package_type_checks(tmp_path):
    python = _mypy()
    where, env = _where(tmp_path)
    out = subprocess.run([python, "-m", "mypy", *where, "--no-error-summary", "--cache-dir",
                          str(tmp_path / "cache"), "-p", "mainboard"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_readme_examples_pass_mypy_strict(tmp_path):
    python = _mypy()
    where, env = _where(tmp_path)
    example = os.path.join(os.path.dirname(__file__), "readme_examples.py")
    out = subprocess.run([python, "-m", "mypy", *where, "--strict", "--follow-imports=silent",
                          "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), example],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_stubtest_finds_the_types_agree_with_the_objects(tmp_path):
    """mypy's stubtest imports the package and compares every class, function and property a
    type checker sees with the object at run time; what it may report is in the allowlist, each
    with its reason."""
    import importlib.util

    python = _mypy()
    where, env = _where(tmp_path)
    if python != sys.executable:
        # stubtest imports the package in its own interpreter: that one must load this build.
        probe = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True, timeout=60)
        if probe.stdout.strip() != str(tuple(sys.version_info[:2])):
            pytest.skip(f"mypy runs on {probe.stdout.strip()}, this package is built for "
                        f"{tuple(sys.version_info[:2])}")
        env["PYTHONPATH"] = os.path.dirname(os.path.dirname(mainboard.__file__))
    options = []
    if not importlib.util.find_spec("rich"):
        config = tmp_path / "mypy.ini"
        config.write_text("[mypy]\nignore_missing_imports = True\n")
        options = ["--mypy-config-file", str(config)]
    allowlist = os.path.join(os.path.dirname(__file__), "stubtest-allowlist.txt")
    out = subprocess.run([python, "-m", "mypy.stubtest", *options, "--allowlist", allowlist,
                          "mainboard"], env=dict(env, MYPY_CACHE_DIR=str(tmp_path / "cache")),
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
