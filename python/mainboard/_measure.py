"""Measuring one workload and the machine around it: profile(fn), the sampler of other
processes, the meter, GPU idleness and the terminal view."""

from __future__ import annotations

import enum
import os
import sys
import time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

from . import _mainboard
from ._machine import Machine
from ._models import FrozenModel
from ._profiling import Activity, Feature, Profile, Profiler


class Bound(enum.Enum):
    """Whether the dominant work is limited by memory traffic or by compute."""

    MEMORY = "memory"
    COMPUTE = "compute"
    UNKNOWN = "unknown"


class KernelStat(FrozenModel):
    """One kernel name over the run: its share and its last-seen launch shape, with a
    launch-shape occupancy proxy (threads per block over 1024)."""


class ProfileReport(FrozenModel):
    """The verdict on one profiled callable: memory- or compute-bound and why, the dominant
    kernel, GPU time per class, copy bandwidth, device memory, the kernel table."""

    _nested = {"kernels": KernelStat}

    @property
    def verdict(self) -> Bound:
        return Bound(self._data["bound"])

    def report(self) -> str:
        """A compact plain-text verdict and the kernel table."""
        return _mainboard._report_text(self.model_dump_json())


def profile(fn: Callable[[], Any], *, iters: int = 1, warmup: int = 0,
            sync: Callable[[], Any] | None = None, kinds: Activity = Activity.DEFAULT,
            device_index: int = 0, machine: Machine | None = None) -> ProfileReport:
    """Runs `fn` (after `warmup` untimed runs) `iters` times under a profiler with GPU activity
    and device sampling, and returns the verdict. `sync` is a device barrier after each run
    (torch.cuda.synchronize), so asynchronous GPU work is captured."""
    if not callable(fn):
        raise TypeError("profile() needs a callable")
    if iters < 1 or warmup < 0:
        raise ValueError("iters must be at least 1 and warmup not negative")
    m = machine or Machine()
    report, _ = _mainboard._profile(fn, iters, warmup, sync, int(kinds), device_index, m._native)
    return ProfileReport(report)


class Reach:
    """What Profiler.measure reaches: a command to launch, a running process, or here."""

    def __init__(self, kind: str, argv: Sequence[str] = (), pid: int = 0) -> None:
        self.kind, self.argv, self.pid = kind, tuple(argv), pid

    @classmethod
    def here(cls) -> Reach:
        return cls("here")

    @classmethod
    def command(cls, argv: Sequence[str]) -> Reach:
        return cls("command", argv)

    @classmethod
    def process(cls, pid: int) -> Reach:
        return cls("process", pid=pid)


class RunResult(FrozenModel):
    """How a launched program ended: exit_code (128 + signal when killed), signal, timed_out.
    The profile is `profile`."""


def _run(target: Sequence[str], *, features: Feature = Feature.DEFAULT | Feature.STACKS,
         hz: int = 99, call_graph: str = "fp", children: bool = True, kernel: bool = True,
         timeout: float | None = None, strict: bool = False) -> tuple[Profile, RunResult]:
    argv = [os.fspath(a) for a in target]
    native, code, signal, timed_out = _mainboard._run(
        argv, call_graph, int(features), hz, children, kernel, timeout or 0.0, strict)
    return Profile(native), RunResult(exit_code=code, signal=signal, timed_out=timed_out)


def run(target: Sequence[str] | str, *, args: Sequence[str] = (),
        features: Feature = Feature.DEFAULT | Feature.STACKS, hz: int = 99,
        call_graph: str = "fp", timeout: float | None = None, strict: bool = False) -> Profile:
    """Runs `target` (a program and its arguments; no shell), samples its stacks until it
    exits, and joins its own spans and GPU activity. The target's streams are its own."""
    argv = [target] if isinstance(target, (str, os.PathLike)) else list(target)
    profile_, _ = _run([*argv, *args], features=features, hz=hz, call_graph=call_graph,
                       timeout=timeout, strict=strict)
    return profile_


def attach(pid: int, *, timeout: float | None = None, hz: int = 99, call_graph: str = "fp",
           strict: bool = False) -> Profile:
    """Samples a running process for `timeout` seconds (10 by default) or until it exits."""
    return Profile(_mainboard._attach(pid, call_graph, int(Feature.STACKS), hz,
                                      10.0 if timeout is None else timeout, strict))


class StackDump(FrozenModel):
    """One stack of every thread of a process (`text` reads like eu-stack)."""


def dump(pid: int, *, all_threads: bool = True, async_aware: bool = False,
         timeout: float = 10.0) -> StackDump:
    """One stack of every thread of `pid`; the process is always let go again."""
    d = _mainboard._dump(pid)
    if not all_threads and d["threads"]:
        d["threads"] = d["threads"][:1]
    return StackDump(d)


def measure(reach: Reach, *, timeout: float | None = None, strict: bool = False) -> Profile:
    """Measures what `reach` names: a command (run) or a process (attach). Reach.here() names
    this process, which a `with Profiler():` session measures: it raises."""
    if reach.kind == "command":
        return run(list(reach.argv), timeout=timeout, strict=strict)
    if reach.kind == "process":
        return attach(reach.pid, timeout=timeout, strict=strict)
    raise _mainboard.MainboardError(
        "Reach.here() names the calling process: measure it with a Profiler session "
        "(with Profiler(): ...), not with measure()")


# The reference's classmethods of Profiler.
Profiler.run = staticmethod(run)  # type: ignore[attr-defined]
Profiler.attach = staticmethod(attach)  # type: ignore[attr-defined]
Profiler.dump = staticmethod(dump)  # type: ignore[attr-defined]
Profiler.measure = staticmethod(measure)  # type: ignore[attr-defined]


def gpu_busy(index: int = 0, *, util_threshold: float = 10, memory_threshold_pct: float = 90.0,
             machine: Machine | None = None) -> bool:
    """Whether GPU `index` is under load right now. A host without GPUs reads as idle."""
    return _mainboard._gpu_busy((machine or Machine())._native, index, util_threshold,
                                memory_threshold_pct)


def wait_for_idle(index: int = 0, *, timeout: float = 30.0, poll_interval: float = 0.5,
                  util_threshold: float = 10, memory_threshold_pct: float = 90.0,
                  sleep: Callable[[float], Any] = time.sleep,
                  machine: Machine | None = None) -> bool:
    """Polls gpu_busy every `poll_interval` seconds until the GPU is idle (True) or `timeout`
    passes while it stays busy (False). `sleep` is injected so tests spend no real time."""
    return _mainboard._wait_for_idle((machine or Machine())._native, index, timeout,
                                     poll_interval, util_threshold, memory_threshold_pct, sleep)


class Meter:
    """Times a region and tracks peak host and GPU memory over its samples (at enter, at each
    sample(), at exit). No background thread: the caller drives the sampling."""

    def __init__(self, machine: Machine | None = None) -> None:
        self._machine = machine or Machine()
        self._native: Any = None

    def __enter__(self) -> Meter:
        self._native = _mainboard._Meter(self._machine._native)
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._native.stop()
        return False

    def sample(self) -> None:
        self._live().sample()

    def _live(self) -> Any:
        if self._native is None:
            raise _mainboard.MainboardError("the meter is not running: use it as `with meter() as m:`")
        return self._native

    @property
    def elapsed_s(self) -> float:
        return self._live().elapsed_s

    @property
    def peak_host_gb(self) -> float:
        return self._live().peak_host_gb

    @property
    def peak_gpu_gb(self) -> float:
        return self._live().peak_gpu_gb

    @property
    def host_delta_gb(self) -> float:
        return self._live().host_delta_gb


def meter() -> Meter:
    """A meter on this machine: `with meter() as m: ...`, then m.elapsed_s, m.peak_host_gb,
    m.peak_gpu_gb, m.host_delta_gb."""
    return Meter(Machine())


class MachineView:
    """The terminal schematic of a machine: memory on the left, every unit on the right with
    an arrow labelled by the fabric between them, and a summary line. The view is of one
    snapshot, taken when it is made."""

    def __init__(self, machine: Machine | None = None) -> None:
        self.machine = machine or Machine()
        self._native = _mainboard._MachineView(self.machine._native)

    def renderable(self, *, color: bool = False, width: int = 80) -> str:
        """The schematic as text (ANSI colours when `color`)."""
        return self._native.render(color, width)

    def print(self, *, color: bool = True, width: int | None = None) -> None:
        """Prints the schematic, coloured on a terminal unless NO_COLOR is set."""
        tty = sys.stdout.isatty()
        if width is None:
            width = os.get_terminal_size().columns if tty else 80
        sys.stdout.write(self.renderable(color=color and tty and not os.environ.get("NO_COLOR"),
                                         width=width))

    def compact_summary(self) -> str:
        """One short line: host, CPU, memory, accelerators, memory cap, scratch."""
        return self._native.compact_summary()

    def memory_title(self) -> str:
        return self._native.memory_title()

    def memory_rows(self) -> list[str]:
        return self._native.memory_rows()

    def cpu_rows(self) -> list[str]:
        return self._native.cpu_rows()

    def gpu_title(self, index: int) -> str:
        return self._native.gpu_title(index)

    def gpu_rows(self, gpu: int | Any) -> list[str]:
        return self._native.gpu_rows(self._index(gpu, self.machine.gpus))

    def npu_title(self, index: int) -> str:
        return self._native.npu_title(index)

    def npu_rows(self, npu: int | Any) -> list[str]:
        return self._native.npu_rows(self._index(npu, self.machine.npus))

    def connection_label(self, kind: str, index: int = 0) -> str:
        """How memory reaches a unit of `kind` ("cpu", "gpu", "npu"): DDR5-4800, PCIe 5 x16…"""
        return self._native.connection_label(str(getattr(kind, "value", kind)), index)

    def fabric_label(self) -> str:
        return self._native.fabric_label()

    def swap_label(self) -> str:
        return self._native.swap_label()

    @staticmethod
    def metal_label(value: str) -> str:
        """A human label for a macOS Metal identifier ("spdisplays_metal3" → "Metal 3")."""
        return _mainboard._MachineView.metal_label(value)

    @staticmethod
    def _index(unit: int | Any, units: tuple[Any, ...]) -> int:
        if isinstance(unit, int):
            return unit
        return units.index(unit)
