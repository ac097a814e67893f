"""The library's log lines, through Python's logging: the "mainboard" logger.

The C++ library logs why a reading is missing (at debug level) and what went wrong in the
background (warnings): in a Python program these go to logging.getLogger("mainboard"), where
the program's own configuration decides what is shown. MAINBOARD_LOG still sets the lowest
level the library produces (warn by default).

`logging` is imported at the first line the library gives, not at `import mainboard`: with the
default level most programs never see one, and logging (with traceback and string, which it
pulls in) is a large part of what a bare import would cost.
"""

from __future__ import annotations

import atexit

from . import _mainboard

# The library's levels (trace, debug, info, warn, error, critical) as logging's numbers.
_LEVELS = (5, 10, 20, 30, 40, 50)


def _forward(level: int, message: str) -> None:
    import logging  # after the first line: a look-up in sys.modules

    logging.getLogger("mainboard").log(_LEVELS[level] if 0 <= level < len(_LEVELS) else 40,
                                       "%s", message)


_mainboard._set_log_handler(_forward)
# Back to stderr before the interpreter goes: a thread that logs later finds no Python to call.
atexit.register(_mainboard._set_log_handler, None)
