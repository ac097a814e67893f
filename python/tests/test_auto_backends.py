"""Profiler(auto=...) spans come from the profile hook on 3.11 and older and from sys.monitoring
on 3.12+: the same enters and exits either way, checked on every Python installed here (the
pyenv interpreters, where present; an absent one is skipped). The backend's own code runs; only
the span extension is a recording stand-in, as the extension is built for Debian's Python."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent / "auto_backends"
AUTO = pathlib.Path(__file__).parents[1] / "mainboard" / "_auto.py"

FIRST = ("+K.m +leaf -leaf -K.m +rec +rec +rec -rec -rec -rec +catcher +boom -boom +leaf -leaf "
         "-catcher +gen -gen +gen -gen +gen -gen +co -co +co -co +leaf -leaf +leaf -leaf")
SECOND = "+f -f"


def interpreters():
    found = [("debian", sys.executable)]
    root = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    for minor in (11, 12, 13):
        versions = sorted(root.glob(f"versions/3.{minor}.*/bin/python3"))
        found.append((f"3.{minor}", str(versions[-1]) if versions else None))
    return found


@pytest.mark.parametrize("label,python", interpreters(), ids=[n for n, _ in interpreters()])
def test_auto_spans_are_the_same_on_every_backend(tmp_path, label, python):
    if python is None:
        pytest.skip(f"no Python {label} here")
    for f in ("drive.py", "target.py", "other.py"):
        shutil.copy(HERE / f, tmp_path / f)
    (tmp_path / "fakemb").mkdir()
    (tmp_path / "fakemb" / "__init__.py").write_text("")
    shutil.copy(HERE / "fakemb_mainboard.py", tmp_path / "fakemb" / "_mainboard.py")
    shutil.copy(AUTO, tmp_path / "fakemb" / "_auto.py")
    out = subprocess.run([python, "drive.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={"PATH": os.environ.get("PATH", "")})
    assert out.returncode == 0, out.stderr
    backend, first, second = out.stdout.splitlines()
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[1])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert backend == ("monitoring" if int(version) >= 12 else "profile-hook")
    assert first == FIRST
    assert second == SECOND
