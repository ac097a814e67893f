"""The library's log lines, through Python's logging: the "mainboard" logger.

The C++ library logs why a reading is missing (at debug level) and what went wrong in the
background (warnings): in a Python program these go to logging.getLogger("mainboard"), where
the program's own configuration decides what is shown. MAINBOARD_LOG still sets the lowest
level the library produces (warn by default).
"""

from __future__ import annotations

import atexit
import logging

from . import _mainboard

logger = logging.getLogger("mainboard")
_LEVELS = (5, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)


def _forward(level: int, message: str) -> None:
    logger.log(_LEVELS[level] if 0 <= level < len(_LEVELS) else logging.ERROR, "%s", message)


_mainboard._set_log_handler(_forward)
# Back to stderr before the interpreter goes: a thread that logs later finds no Python to call.
atexit.register(_mainboard._set_log_handler, None)
