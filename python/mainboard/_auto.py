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
        self._chained: Any = None  # the profile hook there before (3.11 and older)
        self._hooked = False

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

    # The profile hook (3.11 and older), for this thread and threads started later. It sees a
    # generator's or coroutine's every resume as a call and every suspension as a return.
    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        chained = self._chained
        if chained is not None:  # the hook that was there before the session still runs
            chained(frame, event, arg)
        if event == "call":
            name = self._name(frame.f_code, frame.f_globals.get("__name__"))
            if name is not None:
                s = _mainboard.span(name)
                s.__enter__()
                self._stack().append((frame.f_code, s))
        elif event == "return":
            self._leave(frame.f_code)

    def _leave(self, code: Any) -> None:
        stack = self._stack()
        if stack and stack[-1][0] is code:
            stack.pop()[1].__exit__(None, None, None)

    # sys.monitoring (3.12+): interpreter-wide, every thread. Events of code that is not owned are
    # disabled where they occur, so only the chosen functions pay for a callback. Start and resume
    # open a span, return, yield and an exception leaving the function close it: the same spans as
    # the profile hook's.
    def _decide(self, code: Any) -> str | None:
        """The span name for `code` at a monitoring event (called from the callback, whose
        caller is the monitored frame)."""
        try:
            return self._decided[code]
        except KeyError:
            pass
        frame = sys._getframe(2)
        module = frame.f_globals.get("__name__") if frame.f_code is code else None
        return self._name(code, module)

    def _on_enter(self, code: Any, offset: int) -> Any:
        name = self._decide(code)
        if name is None:
            return self._disable
        s = _mainboard.span(name)
        s.__enter__()
        self._stack().append((code, s))
        return None

    def _on_leave(self, code: Any, offset: int, value: Any) -> Any:
        if self._decide(code) is None:
            return self._disable
        self._leave(code)
        return None

    def _on_unwind(self, code: Any, offset: int, exception: BaseException) -> None:
        self._leave(code)  # this event cannot be disabled: a cheap no-op for other code

    def start(self) -> None:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            # A profile hook set before the session (a coverage or tracing tool) is chained,
            # and put back when it ends.
            self._chained = sys.getprofile()
            self._chained_threads = getattr(threading, "_profile_hook", None)
            threading.setprofile(self._hook)
            sys.setprofile(self._hook)
            self._hooked = True
            return
        tool = next((t for t in (monitoring.PROFILER_ID, 3, 4) if monitoring.get_tool(t) is None),
                    None)
        if tool is None:
            raise RuntimeError("auto spans: every sys.monitoring tool id is taken "
                               f"({monitoring.get_tool(monitoring.PROFILER_ID)!r} holds the "
                               "profiler's)")
        monitoring.use_tool_id(tool, "mainboard")
        self._tool = tool
        self._disable = monitoring.DISABLE
        events = monitoring.events
        monitoring.register_callback(tool, events.PY_START, self._on_enter)
        monitoring.register_callback(tool, events.PY_RESUME, self._on_enter)
        monitoring.register_callback(tool, events.PY_RETURN, self._on_leave)
        monitoring.register_callback(tool, events.PY_YIELD, self._on_leave)
        monitoring.register_callback(tool, events.PY_UNWIND, self._on_unwind)
        # Locations disabled by an earlier session (of other modules) count again.
        monitoring.restart_events()
        monitoring.set_events(tool, events.PY_START | events.PY_RESUME | events.PY_RETURN |
                              events.PY_YIELD | events.PY_UNWIND)

    def stop(self) -> None:
        tool = getattr(self, "_tool", None)
        if tool is not None:
            monitoring = getattr(sys, "monitoring")  # 3.12+
            monitoring.set_events(tool, 0)
            for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME,
                          monitoring.events.PY_RETURN, monitoring.events.PY_YIELD,
                          monitoring.events.PY_UNWIND):
                monitoring.register_callback(tool, event, None)
            monitoring.free_tool_id(tool)
            self._tool = None
        elif self._hooked:
            sys.setprofile(self._chained)
            threading.setprofile(self._chained_threads)  # type: ignore[arg-type]
            self._hooked = False
            self._chained = None
        for _, s in reversed(self._stack()):
            s.__exit__(None, None, None)
        self._stack().clear()

