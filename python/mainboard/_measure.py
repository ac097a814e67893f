"""Measuring one workload and the machine around it: profile(fn), the sampler of other
processes, the meter, GPU idleness and the terminal view."""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import sys
import time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

from . import _checks, _mainboard
from ._machine import Machine
from ._models import FrozenModel
from ._snapshot import Memory
from ._profiling import Activity, Collection, Feature, Profile, Profiler


class Bound(enum.Enum):
    """Whether the dominant work is limited by memory traffic or by compute: MEMORY when copies
    dominate the GPU time or the memory controller is the busier unit, COMPUTE when kernels
    dominate or the SMs are busier, UNKNOWN with nothing to classify."""

    MEMORY = "memory"
    COMPUTE = "compute"
    UNKNOWN = "unknown"


class KernelStat(FrozenModel):
    """One kernel name over the run: its share and its last-seen launch shape, with a
    launch-shape occupancy proxy (threads per block over 1024)."""


class ProfileReport(FrozenModel):
    """The verdict on one profiled callable: memory- or compute-bound and why, the dominant
    kernel, GPU time per class, copy bandwidth, device memory, the kernel table.

    dominant_kernel / dominant_share_pct: the hottest kernel and its share of kernel time.
    bound: the verdict (Bound). total_kernel_ns / total_memcpy_ns: GPU time per class.
    achieved_bandwidth_gbps / peak_bandwidth_gbps: copy bandwidth against the device's peak.
    peak_memory_bytes / avg_memory_bytes: device memory over the run; memory_scope says whose
    ("process": this process's own; "device": the whole GPU's, where the driver gave no
    per-process figure). kernels: hottest first.
    unavailable: activity kinds the device could not trace.
    """

    _nested = {"kernels": KernelStat}

    @property
    def bound(self) -> Bound:
        """Whether the dominant work is memory- or compute-bound (or unknown)."""
        return Bound(self._data["bound"])

    @classmethod
    def from_profile(cls, profile: Profile, *, iterations: int, peak_bandwidth_gbps: float,
                     supported: Activity | None = None,
                     requested: Activity | None = None) -> ProfileReport:
        """Distils a Profile into a verdict. `iterations`: how many runs the profile holds.
        `peak_bandwidth_gbps`: the device's peak, to score copy bandwidth (0: no score).
        `supported` / `requested`: the activity kinds the device offered and the run asked
        for; the requested ones not supported are listed in `unavailable`."""
        if not isinstance(profile, Profile):
            raise TypeError(f"from_profile() takes a Profile, not {type(profile).__name__}")
        if not isinstance(iterations, int) or iterations < 1:
            raise ValueError("iterations must be a positive int")
        if peak_bandwidth_gbps < 0:
            raise ValueError("peak_bandwidth_gbps must not be negative")
        return cls(_mainboard._report_from_profile(
            profile._native, iterations, float(peak_bandwidth_gbps),
            None if supported is None else int(supported),
            None if requested is None else int(requested)))

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


@dataclasses.dataclass(frozen=True)
class Sampler:
    """How the stack sampler drives a program (Profiler.run, attach, measure): one value, so
    call sites cannot disagree about the policy.

    hz: stack samples per second and thread. call_graph: "fp" (along frame pointers, by the
    kernel: cheap; code built without them is cut short) or "dwarf" (a copy of the user stack
    per sample, unwound with the modules' call-frame information). children: also sample the
    processes the target starts. kernel: time spent in the kernel on the target's behalf as a
    "[kernel]" frame, where perf_event_paranoid allows. max_samples: the most samples kept.
    python: in CPython 3.9–3.13 programs, the interpreter's frames replaced by the Python frames
    it runs (read from the process), native frames of C extensions kept between them. wall:
    Python threads sampled whether they run or wait. pause: the program stopped for each read of
    its Python stacks (reads cannot tear; the program is slowed) instead of read while it runs.
    """

    hz: int = 99
    call_graph: str = "fp"
    children: bool = True
    kernel: bool = True
    max_samples: int = 10_000_000
    python: bool = True
    wall: bool = False
    pause: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.hz, int) or isinstance(self.hz, bool) or not 1 <= self.hz <= 100_000:
            raise ValueError(f"hz must be an int from 1 to 100000, not {self.hz!r}")
        if self.call_graph not in ("fp", "dwarf"):
            raise ValueError(f"call_graph is 'fp' or 'dwarf', not {self.call_graph!r}")
        _checks.integer(self.max_samples, "max_samples", 1, 2**62)
        for name in ("children", "kernel", "python", "wall", "pause"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} is a bool, not {getattr(self, name)!r}")

    def _options(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _timeout(timeout: float | None, name: str = "timeout") -> float:
    """Seconds for the library: 0.0 for no limit (None or math.inf); NaN and <= 0 refused."""
    return _checks.seconds(timeout, name) or 0.0


def _argv(target: Any, module: str | None, args: Sequence[str]) -> list[str]:
    if isinstance(args, (str, bytes)):
        raise TypeError("args is a sequence of arguments, not one str")
    more = [_checks.text(a, f"args[{i}]") for i, a in enumerate(args)]
    if module is not None:
        # `python -m module`: the target, when given, is the interpreter to run it with.
        python = sys.executable if target is None else _checks.text(target, "target")
        return [python, "-m", _checks.text(module, "module"), *more]
    if target is None:
        raise ValueError("run() needs a target (or module=)")
    if isinstance(target, (str, os.PathLike)):
        path = _checks.text(target, "target")
        # A Python script runs under this interpreter unless it can run by itself.
        if path.endswith(".py") and not os.access(path, os.X_OK):
            return [sys.executable, path, *more]
        return [path, *more]
    if isinstance(target, bytes):
        raise TypeError("target is a program (a str or path) or a sequence of arguments")
    argv = [_checks.text(a, f"target[{i}]") for i, a in enumerate(target)]
    if not argv:
        raise ValueError("run() needs a program to run")
    return [*argv, *more]


def _run(argv: list[str], *, collection: Collection, sampler: Sampler,
         timeout: float | None) -> tuple[Profile, RunResult]:
    options = sampler._options()
    options.update(features=int(collection.features | Feature.STACKS),
                   activities=int(collection.activities), max_spans=collection.max_spans,
                   strict=collection.strict, timeout_s=_timeout(timeout))
    native, code, signal, timed_out = _mainboard._run(argv, options)
    return Profile(native), RunResult(exit_code=code, signal=signal, timed_out=timed_out)


def run(target: Sequence[str] | str | os.PathLike[str] | None, *, module: str | None = None,
        args: Sequence[str] = (), features: Feature = Feature.DEFAULT,
        activities: Activity = Activity.DEFAULT, sampler: Sampler | None = None,
        timeout: float | None = None, strict: bool = False) -> Profile:
    """Runs one target once (no shell) and collects every selected capability that works: its
    stacks, sampled as `sampler` says, always; with `features`, its own spans (a program linking
    the library) and its GPU activity (`activities`). The target's streams are its own.

    target: a program, a program and its arguments, or a Python script (run by this
    interpreter unless it is executable). module: run `python -m module` instead (target, if
    given, is the interpreter). args: more arguments. timeout: seconds until the target is
    ended (None: never). strict: a capability that cannot be collected raises."""
    argv = _argv(target, module, args)
    collection = Collection(features=features, activities=activities, strict=strict)
    profile_, _ = _run(argv, collection=collection, sampler=sampler or Sampler(),
                       timeout=timeout)
    return profile_


def attach(pid: int, *, sampler: Sampler | None = None, timeout: float | None = None,
           strict: bool = False) -> Profile:
    """Samples the stacks of a running process for `timeout` seconds (10 by default) or until
    it exits, as `sampler` says. The process goes on undisturbed afterwards."""
    _checks.integer(pid, "pid", 1, _checks.PID_MAX)
    options = (sampler or Sampler())._options()
    # None: ten seconds; math.inf: until the process exits.
    duration = 10.0 if timeout is None else (_checks.seconds(timeout) or math.inf)
    options.update(features=int(Feature.STACKS), strict=strict, duration_s=duration)
    return Profile(_mainboard._attach(pid, options))


class StackDump(FrozenModel):
    """One stack of every thread of a process. For a Python process (`python` names the
    interpreter) each thread's Python frames, innermost first, with its state and whether it
    holds the GIL, and `text` reads like py-spy dump; otherwise native stacks, and `text` reads
    like eu-stack."""


def dump(pid: int, *, all_threads: bool = True, async_aware: bool = False,
         timeout: float = 10.0, native: bool = False) -> StackDump:
    """One stack of every thread of `pid` (only the main thread's without `all_threads`): its
    Python stacks when it runs CPython 3.9–3.13, read from outside without stopping it; with
    `native`, also the native frames between them (each thread stopped while it is read). Other
    processes get native stacks. The process is always let go again. Raises TimeoutError when
    the dump takes longer than `timeout` seconds (it still lets the process go when it ends).
    With `async_aware`, `tasks` lists every asyncio task (CPython 3.11–3.13): its chain of
    awaits innermost first, what it waits for, and which tasks await it."""
    _checks.integer(pid, "pid", 1, _checks.PID_MAX)
    import threading

    limit = _checks.seconds(timeout)  # None (or math.inf): no limit
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            done["dump"] = _mainboard._dump(pid, all_threads, native, bool(async_aware))
        except BaseException as e:  # handed to the caller's thread
            done["error"] = e

    worker = threading.Thread(target=work, name="mainboard-dump", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise TimeoutError(f"dump of process {pid} took longer than {limit:g} s")
    if "error" in done:
        raise done["error"]
    return StackDump(done["dump"])


def measure(reach: Reach, *, collection: Collection | None = None,
            sampler: Sampler | None = None, strict: bool = False,
            timeout: float | None = None) -> Profile:
    """Measures what `reach` names, under `collection`, driving `sampler`: a command is run,
    a process attached to. Reach.here() names this process, which has no target to launch: it
    raises (a `with Profiler():` session measures it)."""
    if not isinstance(reach, Reach):
        raise TypeError(f"measure() takes a Reach, not {type(reach).__name__}")
    c = collection or Collection()
    if strict and not c.strict:
        c = Collection(c.model_dump() | {"strict": True})
    if reach.kind == "command":
        profile_, _ = _run(list(reach.argv), collection=c, sampler=sampler or Sampler(),
                           timeout=timeout)
        return profile_
    if reach.kind == "process":
        return attach(reach.pid, sampler=sampler, timeout=timeout, strict=c.strict)
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
    _checks.integer(index, "index", 0, 2**31 - 1)
    _checks.number(util_threshold, "util_threshold", 0, 100)
    _checks.number(memory_threshold_pct, "memory_threshold_pct", 0, 100)
    return _mainboard._gpu_busy((machine or Machine())._native, index, util_threshold,
                                memory_threshold_pct)


def wait_for_idle(index: int = 0, *, timeout: float = 30.0, poll_interval: float = 0.5,
                  util_threshold: float = 10, memory_threshold_pct: float = 90.0,
                  sleep: Callable[[float], Any] = time.sleep,
                  machine: Machine | None = None) -> bool:
    """Polls gpu_busy every `poll_interval` seconds until the GPU is idle (True) or `timeout`
    passes while it stays busy (False). `sleep` is injected so tests spend no real time."""
    _checks.integer(index, "index", 0, 2**31 - 1)
    timeout = _checks.number(timeout, "timeout", 0)
    poll_interval = _checks.number(poll_interval, "poll_interval", 0)
    _checks.number(util_threshold, "util_threshold", 0, 100)
    _checks.number(memory_threshold_pct, "memory_threshold_pct", 0, 100)
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
        """One reading of host and GPU memory now, folded into the peaks."""
        self._live().sample()

    def _live(self) -> Any:
        if self._native is None:
            raise _mainboard.MainboardError("the meter is not running: use it as `with meter() as m:`")
        return self._native

    @property
    def elapsed_s(self) -> float:
        """Seconds since the region began (until it ended, once it has)."""
        return self._live().elapsed_s

    @property
    def peak_host_gb(self) -> float:
        """The highest host memory in use over the samples, in GiB."""
        return self._live().peak_host_gb

    @property
    def peak_gpu_gb(self) -> float:
        """The highest GPU memory in use over the samples (all GPUs together), in GiB."""
        return self._live().peak_gpu_gb

    @property
    def host_delta_gb(self) -> float:
        """Host memory in use at the last sample minus at the first, in GiB."""
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
        """The memory box's title: its size, and "unified" where GPUs share it."""
        return self._native.memory_title()

    def memory_rows(self) -> list[str]:
        """The memory box's lines: use, swap, cgroup cap, DIMMs."""
        return self._native.memory_rows()

    def cpu_rows(self) -> list[str]:
        """The CPU box's lines: cores, clocks, caches, load."""
        return self._native.cpu_rows()

    def gpu_title(self, index: int) -> str:
        """GPU `index`'s box title: its name and architecture."""
        return self._native.gpu_title(index)

    def gpu_rows(self, gpu: int | Any) -> list[str]:
        """A GPU box's lines (by index or GPU): memory, utilization, clocks, power, PCIe."""
        return self._native.gpu_rows(self._index(gpu, self.machine.gpus))

    def npu_title(self, index: int) -> str:
        """NPU `index`'s box title."""
        return self._native.npu_title(index)

    def npu_rows(self, npu: int | Any) -> list[str]:
        """An NPU box's lines (by index or NPU)."""
        return self._native.npu_rows(self._index(npu, self.machine.npus))

    def connection_label(self, kind: str, index: int = 0) -> str:
        """How memory reaches a unit of `kind` ("cpu", "gpu", "npu"): DDR5-4800, PCIe 5 x16…"""
        return self._native.connection_label(str(getattr(kind, "value", kind)), index)

    def fabric_label(self) -> str:
        """The dominant host-to-accelerator fabric (PCIe 5 x16, NVLink-C2C, unified); empty
        without accelerators."""
        return self._native.fabric_label()

    def swap_label(self) -> str:
        """Swap in use and its size."""
        return self._native.swap_label()

    @staticmethod
    def metal_label(value: str) -> str:
        """A human label for a macOS Metal identifier ("spdisplays_metal3" → "Metal 3")."""
        return _mainboard._MachineView.metal_label(value)

    @staticmethod
    def bytes(value: int) -> str:
        """A byte count as the view writes it ("1.5 GiB")."""
        return _mainboard._MachineView.bytes(value)

    @staticmethod
    def capacity_pair(used_bytes: int, total_bytes: int) -> str:
        """Used and total in one unit where that reads well ("12.0 / 80.0 GiB")."""
        return _mainboard._MachineView.capacity_pair(used_bytes, total_bytes)

    @staticmethod
    def memory_usage(memory: Memory) -> str:
        """A Memory reading as a gauge and its capacity pair; its total alone when use is
        unknown."""
        return _mainboard._MachineView.memory_usage(memory.model_dump_json())

    @staticmethod
    def _index(unit: int | Any, units: tuple[Any, ...]) -> int:
        if isinstance(unit, int):
            return unit
        return units.index(unit)
