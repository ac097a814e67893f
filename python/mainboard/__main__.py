"""`python -m mainboard ARGS` does what the `mainboard` command does: it runs it.

The command is the C++ program the wheel installs beside the interpreter (the environment's
scripts directory); outside an installed wheel, the first `mainboard` on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig


def command() -> str | None:
    """The mainboard command of this environment, else of PATH; None when there is none."""
    here = os.path.join(sysconfig.get_path("scripts"), "mainboard")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mainboard")


def main() -> int:
    program = command()
    if program is None:
        sys.stderr.write("python -m mainboard: the mainboard command is not installed here "
                         "(install the wheel, or put the command on PATH)\n")
        return 127
    os.execv(program, [program, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
