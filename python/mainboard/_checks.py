"""Arguments checked before they reach the C++ library, with a ValueError that names the
parameter: a NUL byte in a string (C strings would cut it there: `"a\\x00b"` ran as `"a"`), an
int past what the library takes (pybind11 would raise an unhelpful TypeError), a NaN or infinite
number of seconds where a finite one is needed."""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INT64_MAX = 2**63 - 1
PID_MAX = 2**31 - 1


def text(value: Any, name: str) -> str:
    """`value` (a str or an os.PathLike) as a str without NUL bytes."""
    if isinstance(value, bytes):
        raise TypeError(f"{name} is a str or a path, not bytes")
    try:
        s = os.fspath(value)
    except TypeError:
        raise TypeError(f"{name} is a str or a path, not {type(value).__name__}") from None
    if isinstance(s, bytes):
        raise TypeError(f"{name} is a str or a path, not bytes")
    if "\x00" in s:
        raise ValueError(f"{name} holds a NUL byte: {s!r}")
    return s


def integer(value: Any, name: str, low: int = 0, high: int = INT64_MAX) -> int:
    """`value` as an int from `low` to `high` (bool is not an int here)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an int from {low} to {high}, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be an int from {low} to {high}, not {value}")
    return value


def number(value: Any, name: str, low: float = -math.inf, high: float = math.inf) -> float:
    """`value` as a finite float from `low` to `high`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, not {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    if not low <= v <= high:
        raise ValueError(f"{name} must be from {low:g} to {high:g}, not {value!r}")
    return v


def seconds(value: Any, name: str = "timeout") -> float | None:
    """A duration in seconds: positive, or None / math.inf for "no limit" (returned as None).
    NaN, zero and negative numbers are refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    v = float(value)
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    return None if math.isinf(v) else v
