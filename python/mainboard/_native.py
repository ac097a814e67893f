"""The extension, as the package's layers reach it.

The package is ordered in three layers, each importing only those before it: the models
(`_models`, `_snapshot`: frozen values over the library's JSON documents), the extension
(`_mainboard`, and this module), and the facades over both (`_machine`, `_profiling`,
`_measure`, `_view`, `meter`). A model's factory that reads the host (`Memory.system()`,
`Board.probe()`) asks this module for the process's native machine, the same one `Machine()`
holds, rather than importing the facade back.
"""

from __future__ import annotations

import threading

from . import _mainboard

_lock = threading.Lock()
_machine: _mainboard._Machine | None = None


def process_machine() -> _mainboard._Machine:
    """The native machine of this process (MAINBOARD_SYSROOT or /), made at the first call."""
    global _machine
    machine = _machine
    if machine is None:
        with _lock:
            if _machine is None:
                _machine = _mainboard._Machine()
            machine = _machine
    return machine
