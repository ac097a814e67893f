"""Measuring one workload and the machine around it: profile(fn), the sampler of other
processes, the meter, GPU idleness and the terminal view."""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import sys
import time
from typing import Any, Callable, Mapping, Sequence

from . import _checks, _mainboard
from ._machine import Machine
from ._models import FrozenModel, MainboardWarning, ReportText, html_mimebundle
from ._snapshot import Memory
from ._profiling import Activity, Collection, Feature, FunctionStat, Profile, Profiler


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

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    occupancy_pct: float
    # end of fields


class IterationTimes(FrozenModel):
    """One figure over the timed iterations of profile(), as timeit and pyperf give it: the
    fastest (min), the typical (median), mean and sample standard deviation, and the slowest,
    in nanoseconds; `count` iterations, the warm-up runs not among them."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    count: int
    min_ns: int
    median_ns: int
    mean_ns: int
    stdev_ns: int
    max_ns: int
    # end of fields

    @property
    def median_s(self) -> float:
        """The median in seconds."""
        return float(self.median_ns) / 1e9

    @property
    def min_s(self) -> float:
        """The fastest iteration in seconds."""
        return float(self.min_ns) / 1e9


class ProfileReport(FrozenModel):
    """The verdict on one profiled callable: memory- or compute-bound and why, the dominant
    kernel, GPU time per class, copy bandwidth, device memory, the kernel table.

    dominant_kernel / dominant_share_pct: the hottest kernel and its share of kernel time.
    bound: the verdict (Bound). total_kernel_ns / total_memcpy_ns: GPU time per class.
    achieved_bandwidth_gbps / peak_bandwidth_gbps: copy bandwidth against the device's peak.
    peak_memory_bytes / avg_memory_bytes: device memory over the run; memory_scope says whose
    ("process": this process's own; "device": the whole GPU's, where the driver gave no
    per-process figure). kernels: hottest first.
    unavailable: activity kinds the device could not trace ("stacks" when the stack sampler
    could not run).

    From profile(): `wall` and `cpu` (IterationTimes) over the timed iterations, each one's
    figures in `iteration_wall_ns` / `iteration_cpu_ns` (CPU time of the whole process, every
    thread), `warmup` runs left out; `hot_functions` where the iterations spent their CPU time,
    from `stack_samples` stack samples; `device` the GPU scored against, "" on a host without a
    GPU (the report then says so in one line and gives the times and functions alone).
    """

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    iterations: int
    warmup: int
    iteration_wall_ns: tuple[int, ...]
    iteration_cpu_ns: tuple[int, ...]
    wall: IterationTimes
    cpu: IterationTimes
    device: str
    hot_functions: tuple[FunctionStat, ...]
    stack_samples: int
    dominant_kernel: str
    dominant_share_pct: float
    bound_reason: str
    total_kernel_ns: int
    total_memcpy_ns: int
    memcpy_bytes: int
    achieved_bandwidth_gbps: float
    peak_bandwidth_gbps: float
    peak_memory_bytes: int
    avg_memory_bytes: int
    memory_scope: str
    sm_utilization_pct: float | None
    memory_utilization_pct: float | None
    kernels: tuple[KernelStat, ...]
    unavailable: tuple[str, ...]
    # end of fields

    _nested = {"kernels": KernelStat, "wall": IterationTimes, "cpu": IterationTimes,
               "hot_functions": FunctionStat}

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        """`unavailable` as the reference has it, activity-kind labels ("kernel", "memcpy", …;
        "device" for device sampling), with each one's reason in `unavailable_reasons`. The
        library's report says "kind: reason"; a trace that did not start at all names
        gpu_activity, and every kind requested (`requested`) is then unavailable for it."""
        if "unavailable_reasons" in document:
            return document
        requested = [k for k in document.get("requested") or []]
        labels: list[str] = []
        reasons: dict[str, str] = {}
        for entry in document.get("unavailable") or []:
            head, _, reason = str(entry).partition(": ")
            if not reason:
                head, reason = "gpu_activity", str(entry)
            if head == "gpu_activity":  # "gpu_activity: kernel: why" is the kind's own
                kind, _, why = reason.partition(": ")
                if why and kind in _ACTIVITY_LABELS:
                    head, reason = kind, why
            kinds = [k for k in requested if k not in reasons] if head == "gpu_activity" else [head]
            if head == "gpu_activity" and not kinds and not requested:
                kinds = [n.lower() for n in ("KERNEL", "MEMCPY", "MEMSET") if n.lower() not in reasons]
            for kind in kinds:
                if kind not in reasons:
                    labels.append(kind)
                    reasons[kind] = reason
        document = dict(document)
        document["unavailable"] = labels
        document["unavailable_reasons"] = reasons
        return document

    @property
    def unavailable_reasons(self) -> Mapping[str, str]:
        """Why each label of `unavailable` could not be traced ("no CUDA driver", …)."""
        return dict(self._document().get("unavailable_reasons") or {})

    def __str__(self) -> str:
        return self.report()

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
        _checks.number(peak_bandwidth_gbps, "peak_bandwidth_gbps", 0)
        document = _mainboard._report_from_profile(
            profile._native, iterations, float(peak_bandwidth_gbps),
            None if supported is None else int(Activity(supported)),
            None if requested is None else int(Activity(requested)))
        document["requested"] = _activity_names(requested if requested is not None
                                                else Activity.DEFAULT)
        return cls(document)

    _repr_mimebundle_ = html_mimebundle

    def _repr_html_(self) -> str:
        """A notebook cell shows the verdict and the kernel table."""
        import html

        return f"<pre>{html.escape(self.report())}</pre>"

    def report(self) -> ReportText:
        """A compact plain-text verdict and the kernel table (a str a notebook shows as its
        lines)."""
        import json

        document = self.model_dump()
        reasons = document.pop("unavailable_reasons", {})
        document.pop("requested", None)
        document["unavailable"] = [f"{k}: {reasons.get(k, 'not traced')}"
                                   for k in document.get("unavailable", [])]
        return ReportText(_mainboard._report_text(json.dumps(document)))


_ACTIVITY_LABELS = ("kernel", "memcpy", "memset", "synchronization", "overhead", "counters")


def _activity_names(kinds: Activity) -> list[str]:
    return [(a.name or "").lower() for a in (Activity.KERNEL, Activity.MEMCPY, Activity.MEMSET,
                                     Activity.SYNCHRONIZATION, Activity.OVERHEAD,
                                     Activity.COUNTERS) if a in Activity(kinds)]


def profile(fn: Callable[[], Any], *, iters: int = 1, warmup: int = 0,
            sync: Callable[[], Any] | None = None, kinds: Activity = Activity.DEFAULT,
            device_index: int = 0, machine: Machine | None = None,
            stack_hz: int = 199) -> ProfileReport:
    """Runs `fn` (after `warmup` untimed runs) `iters` times, timing each run (wall and CPU
    time) and sampling its stacks, under a profiler with GPU activity and device sampling where
    the host has a GPU, and returns the report: the per-iteration times (min, median, mean and
    spread), the hot functions, and on a GPU the verdict and kernels. `sync` is a device barrier
    after each run (torch.cuda.synchronize), so asynchronous GPU work is captured and timed.
    `stack_hz`: the stack sampler's rate per thread; 0 turns it off (no hot functions, and
    none of its CPU time in the iterations' CPU figures)."""
    if not callable(fn):
        raise TypeError(f"profile() needs a callable (fn), not {type(fn).__name__}")
    if sync is not None and not callable(sync):
        raise TypeError(f"sync is a callable (a device barrier) or None, not {type(sync).__name__}")
    _checks.integer(iters, "iters", 1, 2**31 - 1)
    _checks.integer(warmup, "warmup", 0, 2**31 - 1)
    _checks.integer(device_index, "device_index", 0, 2**31 - 1)
    _checks.integer(stack_hz, "stack_hz", 0, 100_000)
    kinds = _activities(kinds, "kinds")
    m = machine or Machine()
    report, _ = _mainboard._profile(fn, iters, warmup, sync, int(kinds), device_index, m._native,
                                    stack_hz)
    report["requested"] = _activity_names(kinds)
    return ProfileReport(report)


def _activities(value: Any, name: str) -> Activity:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} is an Activity, not {type(value).__name__}")
    if value & ~int(Activity.ALL) or value < 0:
        raise ValueError(f"{name}: {value!r} has bits that name no Activity "
                         f"(Activity.ALL is {int(Activity.ALL)})")
    return Activity(value)


class Reach:
    """What Profiler.measure reaches: a command to launch, a running process, or here."""

    def __init__(self, kind: str, argv: Sequence[str] = (), pid: int = 0) -> None:
        if kind not in ("here", "command", "process"):
            raise ValueError(f"a Reach is 'here', 'command' or 'process', not {kind!r}")
        if kind == "command":
            if isinstance(argv, (str, bytes)):
                raise TypeError("a command is a sequence of arguments, not one str")
            argv = [_checks.text(a, f"argv[{i}]") for i, a in enumerate(argv)]
            if not argv:
                raise ValueError("a command needs a program to run")
        if kind == "process":
            _checks.integer(pid, "pid", 1, _checks.PID_MAX)
        self.kind, self.argv, self.pid = kind, tuple(argv), pid

    def __repr__(self) -> str:
        if self.kind == "command":
            return f"Reach.command({list(self.argv)!r})"
        if self.kind == "process":
            return f"Reach.process({self.pid})"
        return "Reach.here()"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Reach) and (self.kind, self.argv, self.pid)
                == (other.kind, other.argv, other.pid))

    def __hash__(self) -> int:
        return hash((self.kind, self.argv, self.pid))

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

    hz: stack samples per second and thread. call_graph: "dwarf" (a copy of the user stack per
    sample, unwound with the modules' call-frame information: the frames of code built without
    frame pointers, such as libtorch and BLAS, are kept) or "fp" (along frame pointers, by the
    kernel: cheaper; such code is cut short). children: also sample the
    processes the target starts. kernel: time spent in the kernel on the target's behalf as a
    "[kernel]" frame, where perf_event_paranoid allows. max_samples: the most samples kept.
    python: in CPython 3.9–3.13 programs, the interpreter's frames replaced by the Python frames
    it runs (read from the process), native frames of C extensions kept between them. wall:
    Python threads sampled whether they run or wait. pause: the program stopped for each read of
    its Python stacks (reads cannot tear; the program is slowed) instead of read while it runs.
    gil: at each tick only the Python thread holding the GIL is sampled (py-spy's --gil).
    nonblocking: never stop it, not even a thread whose stack changed under every read (such a
    stack, from a tight loop of calls, is otherwise read once with its thread stopped; with
    nonblocking it is left out, and counted in the profile's unavailable).
    """

    hz: int = 99
    call_graph: str = "dwarf"
    children: bool = True
    kernel: bool = True
    max_samples: int = 10_000_000
    python: bool = True
    wall: bool = False
    gil: bool = False
    pause: bool = False
    nonblocking: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.hz, int) or isinstance(self.hz, bool) or not 1 <= self.hz <= 100_000:
            raise ValueError(f"hz must be an int from 1 to 100000, not {self.hz!r}")
        if self.call_graph not in ("fp", "dwarf"):
            raise ValueError(f"call_graph is 'fp' or 'dwarf', not {self.call_graph!r}")
        _checks.integer(self.max_samples, "max_samples", 1, 2**62)
        for name in ("children", "kernel", "python", "wall", "gil", "pause", "nonblocking"):
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


def _check_interpreter(argv: list[str]) -> None:
    """A target named `python3` (or python, python3.11) runs the first one on PATH, which may
    be another interpreter than this one (a pyenv shim, a system Python without this
    environment's packages): said once, as a MainboardWarning, when the two differ."""
    import re
    import shutil

    name = os.path.basename(argv[0])
    if not re.fullmatch(r"python(\d+(\.\d+)?)?", name):
        return
    found = argv[0] if os.sep in argv[0] else shutil.which(argv[0])
    if not found or os.path.realpath(found) == os.path.realpath(sys.executable):
        return
    import warnings

    warnings.warn(f"{argv[0]} runs {found}, not this interpreter ({sys.executable}): the target "
                  "may not see this environment's packages; pass sys.executable, or the script "
                  "alone (a script runs under this interpreter)", MainboardWarning, stacklevel=4)


def _run(argv: list[str], *, collection: Collection, sampler: Sampler,
         timeout: float | None) -> tuple[Profile, RunResult]:
    options = sampler._options()
    options.update(features=int(collection.features | Feature.STACKS),
                   activities=int(collection.activities), max_spans=collection.max_spans,
                   strict=collection.strict, timeout_s=_timeout(timeout))
    native, code, signal, timed_out, interrupted = _mainboard._run(argv, options)
    profile_ = Profile(native)
    _raise_if_interrupted(interrupted, profile_)
    return profile_, RunResult(exit_code=code, signal=signal, timed_out=timed_out)


class TargetFailed(_mainboard.MainboardError):
    """Profiler.run(..., strict=True): the target failed (a status other than 0, a signal, the
    timeout). What was collected until then is `profile`; how it ended, `profile.target_exit`."""

    profile: Profile


def _check_ended(profile_: Profile, argv: list[str], strict: bool) -> None:
    """A target that failed raises with strict, and warns (MainboardWarning) without: a failed
    run must not read as a quiet, nearly empty success."""
    ended = profile_.target_exit
    if ended is None or not ended.failed:
        return
    what = f"{os.path.basename(argv[0])} {' '.join(argv[1:])}".strip()
    message = f"the target ({what}) {ended.summary}: the profile holds what it did until then"
    if strict:
        error = TargetFailed(message)
        error.profile = profile_
        raise error
    import warnings

    warnings.warn(message + " (strict=True raises instead)", MainboardWarning, stacklevel=4)


def _raise_if_interrupted(signal: int, profile_: Profile) -> None:
    """Ctrl-C during a run or an attach ends it at once and keeps what was collected: the
    KeyboardInterrupt carries that Profile as `profile`."""
    if signal:
        error = KeyboardInterrupt("interrupted: what was collected until then is this "
                                  "exception's .profile")
        error.profile = profile_  # type: ignore[attr-defined]
        raise error


def run(target: Sequence[str] | str | os.PathLike[str] | None, *, module: str | None = None,
        args: Sequence[str] = (), features: Feature = Feature.DEFAULT,
        activities: Activity = Activity.DEFAULT, sampler: Sampler | None = None,
        timeout: float | None = None, strict: bool = False) -> Profile:
    """Runs one target once (no shell) and collects every selected capability that works: its
    stacks, sampled as `sampler` says, always; with `features`, its own spans (a program linking
    the library) and its GPU activity (`activities`). The target's streams are its own.

    target: a program, a program and its arguments, or a Python script (a script runs under
    this interpreter, sys.executable, unless it is executable; a program named `python3` is the
    first on PATH, which may be another one: a MainboardWarning says so when it differs). module: run `python -m module` instead (target, if
    given, is the interpreter). args: more arguments. timeout: seconds until the target is
    ended (None: never). How it ended is the profile's `target_exit`; a target that failed (a
    status other than 0, a signal, the timeout) warns (MainboardWarning) and its report says so
    first. strict: a capability that cannot be collected, or a target that failed, raises
    (TargetFailed, its `profile` what was collected)."""
    argv = _argv(target, module, args)
    _check_interpreter(argv)
    collection = Collection(features=features, activities=activities, strict=strict)
    profile_, _ = _run(argv, collection=collection, sampler=sampler or Sampler(),
                       timeout=timeout)
    _check_ended(profile_, argv, strict)
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
    native, interrupted = _mainboard._attach(pid, options)
    profile_ = Profile(native)
    _raise_if_interrupted(interrupted, profile_)
    return profile_


class StackDump(FrozenModel):
    """One stack of every thread of a process. For a Python process (`python` names the
    interpreter) each thread's Python frames, innermost first, with its state and whether it
    holds the GIL, and `text` reads like py-spy dump; otherwise native stacks, and `text` reads
    like eu-stack. Dumped with `subprocesses`, `subprocesses` holds the dump of each process it
    started (and they started), parents first."""


StackDump._nested = {"subprocesses": StackDump}
StackDump._defaults = {"subprocesses": []}


def dump(pid: int, *, all_threads: bool = True, async_aware: bool = False,
         executable: str | os.PathLike[str] | None = sys.executable, timeout: float = 10.0,
         native: bool = False, subprocesses: bool = False, nonblocking: bool = False,
         locals: bool = False) -> StackDump:
    """One stack of every thread of `pid` (only the main thread's without `all_threads`): its
    Python stacks when it runs CPython 3.9–3.13, read from outside without stopping it; with
    `native`, also the native frames between them (each thread stopped while it is read). Other
    processes get native stacks. The process is always let go again. Raises TimeoutError when
    the dump takes longer than `timeout` seconds (it still lets the process go when it ends).
    With `async_aware`, `tasks` lists every asyncio task (CPython 3.11–3.13): its chain of
    awaits innermost first, what it waits for, and which tasks await it. With `subprocesses`,
    every process `pid` started is dumped too (`subprocesses`). A thread whose stack changes
    under every read is read once with that thread stopped, unless `nonblocking`. With
    `locals`, each thread's `locals` gives per frame its arguments and local variables (name,
    repr, argument, address), read from the process's memory without running code in it.

    `executable` names the interpreter to read the stacks with (by default sys.executable):
    the library reads the target's memory itself, so it is only checked here (it must exist);
    the target's own interpreter decides the frame layout."""
    _checks.integer(pid, "pid", 1, _checks.PID_MAX)
    if executable is not None:
        path = _checks.text(executable, "executable")
        if not os.path.exists(path):
            raise FileNotFoundError(f"executable {path!r}: no such file")
    import threading

    limit = _checks.seconds(timeout)  # None (or math.inf): no limit
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            done["dump"] = _mainboard._dump(pid, all_threads, native, bool(async_aware),
                                            bool(subprocesses), bool(nonblocking), bool(locals))
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
        _check_ended(profile_, list(reach.argv), c.strict)
        return profile_
    if reach.kind == "process":
        return attach(reach.pid, sampler=sampler, timeout=timeout, strict=c.strict)
    raise _mainboard.MainboardError(
        "Reach.here() names the calling process: measure it with a Profiler session "
        "(with Profiler(): ...), not with measure()")


def run_instrumented(target: Sequence[str] | str | os.PathLike[str], *,
                     tachyon: Sampler | None = None,
                     executable: str | os.PathLike[str] | None = None,
                     features: Feature = Feature.DEFAULT,
                     activities: Activity = Activity.DEFAULT,
                     timeout: float | None = None) -> Profile:
    """Runs the target once with the local collectors (its own spans, device readings and GPU
    activity, as `features` and `activities` say) and, when `tachyon` is given, under the
    stack sampler it describes (a Sampler: the external sampler model); without it no stacks
    are sampled. `executable` is the interpreter a Python script runs under (sys.executable by
    default). `timeout`: seconds until the target is ended (None: never)."""
    if tachyon is not None and not isinstance(tachyon, Sampler):
        raise TypeError(f"tachyon is a Sampler or None, not {type(tachyon).__name__}")
    python = sys.executable if executable is None else _checks.text(executable, "executable")
    if isinstance(target, (str, os.PathLike)) and _checks.text(target, "target").endswith(".py"):
        argv = [python, _checks.text(target, "target")]
    else:
        argv = _argv(target, None, ())
    collection = Collection(features=features, activities=activities)
    options = (tachyon or Sampler())._options()
    wanted = collection.features | Feature.STACKS if tachyon is not None else \
        collection.features & ~Feature.STACKS
    options.update(features=int(wanted), activities=int(collection.activities),
                   max_spans=collection.max_spans, strict=False, timeout_s=_timeout(timeout))
    native, _code, _signal, _timed_out, interrupted = _mainboard._run(argv, options)
    profile_ = Profile(native)
    _raise_if_interrupted(interrupted, profile_)
    _check_ended(profile_, argv, False)
    return profile_


# The reference's classmethods of Profiler: run, attach, dump, measure and run_instrumented.
def _as_classmethod(fn: Callable[..., Any]) -> Any:
    import functools
    import inspect

    @functools.wraps(fn)
    def method(cls: type, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    delattr(method, "__wrapped__")  # its signature is fn's with cls first, not fn's own
    own = inspect.signature(fn)
    method.__signature__ = own.replace(parameters=[  # type: ignore[attr-defined]
        inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *own.parameters.values()])
    return classmethod(method)


Profiler.run = _as_classmethod(run)  # type: ignore
Profiler.attach = _as_classmethod(attach)  # type: ignore
Profiler.dump = _as_classmethod(dump)  # type: ignore
Profiler.measure = _as_classmethod(measure)  # type: ignore
Profiler.run_instrumented = _as_classmethod(run_instrumented)  # type: ignore


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
