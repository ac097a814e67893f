"""Spans for every function of chosen modules, without changing their code (Profiler.auto).

Python 3.12+ has sys.monitoring, whose events can be turned on for the chosen code objects only;
3.11 has the profile hook, which sees every call and keeps the chosen ones. Either way a span is
named by the function's qualified name and opens and closes with the call.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from . import _mainboard


def _owned(module_name: str, modules: tuple[str, ...]) -> bool:
    return any(module_name == m or module_name.startswith(m + ".") for m in modules)


class AutoSpans:
    """Spans for the functions of `modules` while started."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        self.modules = modules
        self._local = threading.local()
        self._decided: dict[Any, str | None] = {}

    def _name(self, code: Any, module_name: str | None) -> str | None:
        try:
            return self._decided[code]
        except KeyError:
            pass
        name = None
        if module_name and _owned(module_name, self.modules):
            name = getattr(code, "co_qualname", code.co_name)
        self._decided[code] = name
        return name

    def _stack(self) -> list[Any]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    # The profile hook (3.11), for this thread and threads started later.
    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = self._name(frame.f_code, frame.f_globals.get("__name__"))
            if name is not None:
                s = _mainboard.span(name)
                s.__enter__()
                self._stack().append((frame, s))
        elif event == "return":
            stack = self._stack()
            if stack and stack[-1][0] is frame:
                stack.pop()[1].__exit__(None, None, None)

    def start(self) -> None:
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)

    def stop(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        for _, s in reversed(self._stack()):
            s.__exit__(None, None, None)
        self._stack().clear()
