"""Spans, the profiling session and its Profile, over the C++ library."""

from __future__ import annotations

import enum
import functools
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

if TYPE_CHECKING:  # the sampling classes live in _measure, which imports this module
    from ._measure import Reach, Sampler, StackDump

from . import _checks, _mainboard
from ._machine import Machine
from ._models import FrozenModel, ReportText, _copy, _rebuild, html_mimebundle, models_of
from ._snapshot import MachineSnapshot, RegionEnergy

span = _mainboard.span
MainboardError = _mainboard.MainboardError


class Feature(enum.IntFlag):
    """What a session may collect. Only what is observed ends up in the Profile."""

    SPANS = 1 << 0
    DEVICE = 1 << 1
    GPU_ACTIVITY = 1 << 2
    STACKS = 1 << 3
    ALL = SPANS | DEVICE | GPU_ACTIVITY | STACKS
    DEFAULT = SPANS | DEVICE


class Activity(enum.IntFlag):
    """GPU activity kinds a session may trace through CUPTI."""

    KERNEL = 1 << 0
    MEMCPY = 1 << 1
    MEMSET = 1 << 2
    SYNCHRONIZATION = 1 << 3
    OVERHEAD = 1 << 4
    COUNTERS = 1 << 5
    DEFAULT = KERNEL | MEMCPY | MEMSET
    ALL = KERNEL | MEMCPY | MEMSET | SYNCHRONIZATION | OVERHEAD | COUNTERS


NativeActivity = Activity


_CO_GENERATOR = 0x20  # inspect's code flags, without importing inspect
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200


def _decorate(fn: Callable[..., Any], name: str | None) -> Callable[..., Any]:
    """`fn` wrapped in a span named `name` (its qualified name by default). Coroutine functions
    stay coroutine functions. A generator (or async generator) function's span is open while
    its body runs: around each step of the iteration, not around the call that only makes the
    generator, so `calls` counts steps and `total` is the time spent producing items."""
    label: str = str(name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn)))
    code = getattr(fn, "__code__", None)
    flags = code.co_flags if code is not None else 0
    if flags & _CO_ASYNC_GENERATOR:
        @functools.wraps(fn)
        async def wrapper_async_gen(*args: Any, **kwargs: Any) -> Any:
            agen = fn(*args, **kwargs)
            to_send: Any = None
            to_throw: BaseException | None = None
            try:
                while True:
                    try:
                        with span(label):
                            if to_throw is not None:
                                item = await agen.athrow(to_throw)
                            else:
                                item = await agen.asend(to_send)
                    except StopAsyncIteration:
                        return
                    to_throw = None
                    try:
                        to_send = yield item
                    except GeneratorExit:
                        raise
                    except BaseException as e:  # thrown in by the consumer: into the body
                        to_throw, to_send = e, None
            finally:
                await agen.aclose()
        return wrapper_async_gen
    if flags & _CO_GENERATOR:
        @functools.wraps(fn)
        def wrapper_gen(*args: Any, **kwargs: Any) -> Any:
            gen = fn(*args, **kwargs)
            to_send: Any = None
            to_throw: BaseException | None = None
            try:
                while True:
                    try:
                        with span(label):
                            item = gen.throw(to_throw) if to_throw is not None else \
                                gen.send(to_send)
                    except StopIteration as stop:
                        return stop.value
                    to_throw = None
                    try:
                        to_send = yield item
                    except GeneratorExit:
                        raise
                    except BaseException as e:  # thrown in by the consumer: into the body
                        to_throw, to_send = e, None
            finally:
                gen.close()
        return wrapper_gen
    if flags & _CO_COROUTINE:
        @functools.wraps(fn)
        async def wrapper_async(*args: Any, **kwargs: Any) -> Any:
            with span(label):
                return await fn(*args, **kwargs)
        return wrapper_async

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with span(label):
            return fn(*args, **kwargs)
    return wrapper


_mainboard._set_decorator(_decorate)


def spanned(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator that puts a function in a span named `name` (the same as @span("name") on a
    function: span("name") returns a context manager, which is also a decorator here)."""
    return lambda fn: _decorate(fn, name)


class ThreadInfo(FrozenModel):
    """A thread of a profile: its index (what spans and samples refer to), its kernel id, its
    name ("MainThread", "pt_autograd_0"), and the process of a merged job it belongs to."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    index: int
    tid: int
    name: str
    process: int
    # end of fields


class SpanStat(FrozenModel):
    """Exact statistics of one span path over the session: path, name, calls, total_ns,
    self_ns, min_ns, max_ns."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    path: str
    name: str
    calls: int
    total_ns: int
    self_ns: int
    min_ns: int
    max_ns: int
    # end of fields

    @property
    def avg_ns(self) -> float:
        """Mean time per call."""
        return self.total_ns / self.calls if self.calls else 0.0


class NameStat(FrozenModel):
    """One span name's aggregate over every path it was open on: calls, total_ns (time inside
    it, counted once where it nests in itself), avg_ns, min_ns, max_ns (the longest call: the
    peak), and how many paths it was seen on."""

    name: str
    calls: int
    total_ns: int
    avg_ns: float
    min_ns: int
    max_ns: int
    paths: int

    @property
    def peak_ns(self) -> int:
        """The longest single call (max_ns)."""
        return self.max_ns


def _per_name(stats: Iterable[SpanStat]) -> tuple[NameStat, ...]:
    """Per-path statistics folded per name, slowest total first. A path nested inside a span
    of the same name (recursion) adds its calls but not its time, which its ancestor holds."""
    by_name: dict[str, dict[str, Any]] = {}
    for st in stats:
        name = st.name
        entry = by_name.setdefault(name, {"name": name, "calls": 0, "total_ns": 0,
                                          "min_ns": None, "max_ns": 0, "paths": 0})
        entry["calls"] += st.calls
        entry["paths"] += 1
        ancestors = st.path[: len(st.path) - len(name)].rstrip("/")
        if ("/" + name + "/") not in ("/" + ancestors + "/"):
            entry["total_ns"] += st.total_ns
        if st.calls:
            entry["min_ns"] = st.min_ns if entry["min_ns"] is None else min(entry["min_ns"],
                                                                           st.min_ns)
        entry["max_ns"] = max(entry["max_ns"], st.max_ns)
    out = []
    for entry in by_name.values():
        entry["min_ns"] = entry["min_ns"] or 0
        entry["avg_ns"] = entry["total_ns"] / entry["calls"] if entry["calls"] else 0.0
        out.append(NameStat(entry))
    out.sort(key=lambda n: (-n.total_ns, n.name))
    return tuple(out)


class IdleGap(FrozenModel):
    """A window in which the observed activity stopped, and the span open during it."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    start_ns: int
    end_ns: int
    open_span: str
    # end of fields


class Timeline(FrozenModel):
    """Busy and idle time over the observed activity, and the longest idle windows."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    source: str
    start_ns: int
    end_ns: int
    busy_ns: int
    idle_ns: int
    gaps: tuple[IdleGap, ...]
    # end of fields

    _nested = {"gaps": IdleGap}

    @property
    def busy_pct(self) -> float:
        span_ns = self.end_ns - self.start_ns
        return 100.0 * self.busy_ns / span_ns if span_ns > 0 else 0.0


class KernelSummary(FrozenModel):
    """One kernel name over a profile: calls, times, share and last launch shape."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    calls: int
    total_ns: int
    min_ns: int
    max_ns: int
    share_pct: float
    # end of fields


class RegionGpuTime(FrozenModel):
    """GPU time attributed to one span path."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    path: str
    kernel_ns: int
    copy_ns: int
    activities: int
    share_pct: float
    # end of fields


class TraceReport(FrozenModel):
    """Where the GPU's time went: compute against copies, hottest kernels, GPU time per span."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    kernel_ns: int
    copy_ns: int
    kernel_count: int
    copy_count: int
    copy_bytes: int
    kernels: tuple[KernelSummary, ...]
    regions: tuple[RegionGpuTime, ...]
    # end of fields

    _nested = {"kernels": KernelSummary, "regions": RegionGpuTime}


class KernelEfficiency(FrozenModel):
    """A kernel's launch shape, wave quantisation and achieved bandwidth."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    waves: float
    last_wave_fill_pct: float
    achieved_gbs: float | None
    bandwidth_pct: float | None
    # end of fields


class KernelCounters(FrozenModel):
    """Hardware-counter readings of one kernel name."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    sm_throughput_pct: float | None
    dram_throughput_pct: float | None
    achieved_occupancy_pct: float | None
    # end of fields


class FunctionStat(FrozenModel):
    """A function's share of the stack samples."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    function: str
    module: str
    file: str
    self_samples: int
    total_samples: int
    self_pct: float
    total_pct: float
    # end of fields


class StackStat(FrozenModel):
    """One distinct sampled stack, root first, and its share."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    frames: tuple[str, ...]
    samples: int
    pct: float
    # end of fields


class RegionDiff(FrozenModel):
    """One region's change against a baseline."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    path: str
    baseline_avg_ns: float
    avg_ns: Any
    # end of fields


class KernelDiff(FrozenModel):
    """One kernel name's change against a baseline."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    # end of fields


class ProfileDiff(FrozenModel):
    """Every region's and kernel's change against a baseline, largest first."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    regions: tuple[RegionDiff, ...]
    kernels: tuple[KernelDiff, ...]
    functions: tuple[FrozenModel, ...]
    # end of fields

    _nested = {"regions": RegionDiff, "kernels": KernelDiff}


class RankSpread(FrozenModel):
    """One span path's time on each rank of a merged job, and the rank slowest in it."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    path: str
    wait: bool
    total_ns: tuple[int, ...]
    min_ns: int
    median_ns: int
    max_ns: int
    slowest_rank: int
    over_median_ns: int
    # end of fields


class StepLag(FrozenModel):
    """One step across the ranks: the rank with the most work in it and its lag."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    index: int
    slowest_rank: int
    lag_ns: int
    median_work_ns: int
    # end of fields


class RankSummary(FrozenModel):
    """One rank's share of a job: work, waits, samples in collectives, whom it waits for."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    rank: int
    node: str
    pid: int
    work_ns: int
    wait_ns: int
    samples: int
    collective_samples: int
    waits_for: int | None
    slowest_steps: int
    alignment: str
    # end of fields


class Straggler(FrozenModel):
    """The rank that holds a job back, the phase that makes it slow, and the others' wait."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    rank: int
    node: str
    phase: str
    phase_kind: str
    phase_excess_ns: int
    lag_ns: int
    lag_pct: float
    wait_phase: str
    others_wait_ns: int
    slowest_steps: int
    steps: int
    # end of fields


class TimeBreakdown(FrozenModel):
    """How one rank spent its time, as Holistic Trace Analysis breaks it down: computation,
    communication, memory operations and idle over its window, and how much of the
    communication overlapped computation (`overlap_pct`)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    rank: int
    source: str
    window_ns: int
    compute_ns: int
    communication_ns: int
    memory_ns: int
    idle_ns: int
    compute_pct: float
    non_compute_pct: Any
    idle_pct: Any
    overlap_pct: float | None
    # end of fields


class RankReport(FrozenModel):
    """Which rank holds a distributed job back: its ranks compared phase by phase and step by
    step (`Profile.ranks()` of a merged profile)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    verdict: str
    straggler: Straggler | None
    ranks: tuple[RankSummary, ...]
    world_size: int | None
    missing_ranks: tuple[int, ...]
    step: str
    spans: tuple[RankSpread, ...]
    steps: tuple[StepLag, ...]
    warnings: tuple[str, ...]
    breakdown: tuple[TimeBreakdown, ...]
    # end of fields

    _nested = {"straggler": Straggler, "ranks": RankSummary, "spans": RankSpread,
               "steps": StepLag, "breakdown": TimeBreakdown}

    def __str__(self) -> str:
        return self._text if hasattr(self, "_text") else self.verdict


class TargetExit(FrozenModel):
    """How a launched target ended (Profiler.run): exit_code (128 + the signal when one ended
    it), signal (0 when it exited), timed_out (ended by the run's timeout). `failed` says
    whether any of them is set; `summary` says how it ended in words."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    exit_code: int
    signal: int
    timed_out: bool
    # end of fields

    @property
    def failed(self) -> bool:
        return self.exit_code != 0 or self.signal != 0 or self.timed_out

    @property
    def summary(self) -> str:
        """"exited with status 2", "was killed by signal 9 (Killed)", "was ended by its
        timeout": the library's words, as the report's first line has them."""
        return _mainboard._target_exit_summary(self.exit_code, self.signal, self.timed_out)


class Profile(FrozenModel):
    """One immutable result containing only evidence that was observed: span statistics and
    stored spans, device samples, GPU activity, stack samples, the machine, and what could not
    be collected and why.

    Its fields are those of the saved JSON (`model_dump()`); it pickles and copies as that
    document, and `model_validate()` / `model_validate_json()` / `load()` read one back.
    """

    #: How a launched target ended (Profiler.run); None for an attach or a session here.
    target_exit: TargetExit | None
    #: The profiled process, its program's name, and the session's span on the monotonic clock.
    pid: int
    command: str
    start_ns: int
    end_ns: int
    #: Every thread seen, by the index spans and samples carry.
    threads: tuple[ThreadInfo, ...]
    #: Exact per-path statistics (path_stats() orders them).
    span_stats: tuple[SpanStat, ...]
    #: The machine it ran on, and the energy over the session (host-wide), where read.
    machine: MachineSnapshot | None
    energy: RegionEnergy | None
    sample_hz: int
    #: What could not be collected, and why.
    unavailable: tuple[str, ...]

    def __init__(self, native: Any = None) -> None:
        if isinstance(native, dict):  # Profile(document), as every model takes one
            native = _native_of_document(native)
        object.__setattr__(self, "_native", native if native is not None else _mainboard._Profile())
        object.__setattr__(self, "_data", None)
        object.__setattr__(self, "_cache", {})

    def _document(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            data = self._native.document()
            object.__setattr__(self, "_data", data)
        return data

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        doc = self._document()
        if name not in doc:
            raise AttributeError(f"Profile has no field {name!r} (its fields: "
                                 f"{', '.join(sorted(doc))})")
        value = doc[name]
        if name == "machine" and value is not None:
            return MachineSnapshot(value)
        if name == "energy" and value is not None:  # host-wide, over the session: RegionEnergy
            return RegionEnergy(value)
        if name == "target_exit" and value is not None:  # how a launched target ended
            return TargetExit(value)
        if name == "span_stats":
            return tuple(SpanStat(v) for v in value)
        if name == "threads":
            return tuple(ThreadInfo(v) for v in value)
        return tuple(value) if isinstance(value, list) else value

    @classmethod
    def model_validate(cls, data: Any) -> Profile:
        """A profile of a document (a mapping, as `model_dump()` or `json.load` of a saved
        profile gives it), checked as `load()` checks a file."""
        if isinstance(data, Profile):
            return data
        if not isinstance(data, dict):
            from collections.abc import Mapping

            if not isinstance(data, Mapping):
                raise TypeError(f"Profile.model_validate() needs a mapping, "
                                f"not {type(data).__name__}")
            data = dict(data)
        return cls(_native_of_document(data))

    @classmethod
    def model_validate_json(cls, text: str | bytes | bytearray) -> Profile:
        """A profile of JSON text (what save() writes)."""
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        if not isinstance(text, str):
            raise TypeError(f"Profile.model_validate_json() needs str or bytes, "
                            f"not {type(text).__name__}")
        return cls(_mainboard._Profile.parse(text))

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Profile:
        """A copy; with `update`, of the document with those fields replaced (checked again)."""
        if not update:
            return self
        return Profile.model_validate({**self.model_dump(), **dict(update)})

    def __reduce__(self) -> Any:
        return (_profile_from_json, (self.model_dump_json(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Profile) and self._document() == other._document()

    __hash__ = None  # type: ignore[assignment]

    def stats(self) -> tuple[NameStat, ...]:
        """Per-name aggregates (calls, total, avg, min, peak), slowest total first: a name
        open on several paths (step/forward and eval/forward) is one entry. path_stats() gives
        each path."""
        return _per_name(self.path_stats())

    def path_stats(self) -> tuple[SpanStat, ...]:
        """Per-path statistics (calls, total, self, min, max), slowest total first."""
        return models_of(SpanStat, self._native.stats())

    def bottlenecks(self, top: int = 10) -> tuple[SpanStat, ...]:
        """The `top` slowest paths by total time."""
        return models_of(SpanStat, self._native.bottlenecks(_top(top)))

    def timeline(self, top_gaps: int = 10) -> Timeline:
        """Busy/idle accounting over the best evidence, with the longest idle windows."""
        return Timeline((self._native.timeline(_top(top_gaps, "top_gaps"))))

    def trace_report(self, top: int = 10) -> TraceReport:
        """GPU time split into compute and copies, hottest kernels, GPU time per span."""
        return TraceReport((self._native.trace_report(_top(top))))

    def efficiency(self, *, sm_count: int, peak_bandwidth_gbs: float = 0.0, bytes_moved: int = 0,
                   blocks_per_sm: int = 1, top: int = 12) -> tuple[KernelEfficiency, ...]:
        """Per kernel: launch shape, waves and last-wave fill, achieved bandwidth."""
        return models_of(KernelEfficiency, self._native.efficiency(
            sm_count, peak_bandwidth_gbs, bytes_moved, blocks_per_sm, top))

    def counter_bottlenecks(self, top: int = 10) -> tuple[KernelCounters, ...]:
        """Kernels ranked by their replayed hardware counters (Activity.COUNTERS): what limits
        each, from its throughput counters."""
        return models_of(KernelCounters, self._native.counter_bottlenecks(_top(top)))

    def hot_functions(self, top: int = 20, by: str = "self") -> tuple[FunctionStat, ...]:
        """The functions seen most in the stack samples, with their self samples (as the leaf)
        and total samples (on the stack): the most by `by`, "self" (where the time is spent)
        or "total" (the callers that spend it, `main` and `train_step` among them)."""
        if by not in ("self", "total"):
            raise ValueError(f"by={by!r}: 'self' or 'total'")
        return models_of(FunctionStat, self._native.hot_functions(_top(top), by == "total"))

    def hot_stacks(self, top: int = 10) -> tuple[StackStat, ...]:
        """The stack samples' most frequent whole stacks."""
        return models_of(StackStat, self._native.hot_stacks(_top(top)))

    def diff(self, baseline: Profile) -> ProfileDiff:
        """Regions and kernels against `baseline`, largest absolute change first."""
        return ProfileDiff((self._native.diff(baseline._native)))

    @classmethod
    def merge(cls, profiles: Iterable[Profile | str | os.PathLike[str]]) -> Profile:
        """One profile of a distributed job from its ranks' profiles (Profile objects, saved
        files or PyTorch profiler traces, a directory's *.json and *.json.gz included): a
        process per rank on the first rank's time axis (traces aligned by their collectives).
        What could not be done right (a missing rank, clocks that cannot be aligned, another
        mainboard version) is in `unavailable`, as lines that begin "merge: "."""
        natives: list[Any] = []
        names: list[str] = []
        for item in profiles:
            if isinstance(item, Profile):
                natives.append(item._native)
                names.append(f"profile {len(names) + 1}")
                continue
            path = _checks.text(item, "profiles")
            if os.path.isdir(path):
                for name in sorted(os.listdir(path)):
                    if name.endswith((".json", ".json.gz")) and not name.startswith("."):
                        natives.append(_mainboard._Profile.load(os.path.join(path, name)))
                        names.append(os.path.join(path, name))
                continue
            natives.append(_mainboard._Profile.load(path))
            names.append(path)
        if not natives:
            raise ValueError("Profile.merge() needs at least one profile")
        return cls(_mainboard._Profile.merge_ranks(natives, names))

    def ranks(self, *, step: str = "", collectives: Sequence[str] = (),
              threshold_pct: float = 5.0, top: int = 10) -> RankReport:
        """A merged job's ranks compared: per phase, per step, the waits in collectives, and the
        rank that holds the job back (`verdict`, one line). `step`: the span that is one step
        (default: the shallowest span every rank repeats); `collectives`: more span names whose
        time is waiting for other ranks."""
        args = (_checks.text(step, "step"), [_checks.text(c, "collectives") for c in collectives],
                float(threshold_pct), _top(top))
        report = RankReport(self._native.ranks(*args))
        object.__setattr__(report, "_text", self._native.ranks_report(*args))
        return report

    def folded(self, per_process: bool = False, *, roots: str | None = None,  # noqa: FBT001
               function: bool = False) -> str:
        """The stack samples as folded stacks (flamegraph.pl, speedscope, inferno), each line
        rooted at the command's name so runs add up; with `per_process`, at each thread.
        `roots`: "command", "thread" or "process" (a merged job's rank, a child's "pid N").
        Python frames read "function (file:line)", as py-spy writes them; with `function`,
        "function (file)": a function's lines are one frame."""
        return self._native.folded(roots or ("thread" if per_process else "command"),
                                   not function)

    def flamegraph_svg(self, path: str | os.PathLike[str] | None = None, *,
                       roots: str = "command", title: str = "", width: int = 1200,
                       function: bool = False) -> str:
        """The interactive SVG flame graph (click to zoom, search, reset), as flamegraph.pl and
        py-spy draw one; written to `path` (atomically) when given. `roots`: "command", "thread"
        or "process". Python frames by line, or with `function` one per function."""
        return self._native.flamegraph_svg(
            _checks.text(roots, "roots"), _checks.text(title, "title"), int(width),
            "" if path is None else _checks.text(path, "path"), not function)

    def to_html(self, path: str | os.PathLike[str] | None = None, *, title: str = "",
                top: int = 50, function: bool = False) -> str:
        """The report as one self-contained HTML page (nothing fetched: open it offline): the
        machine, a flame graph per thread with zoom and search, the spans' timeline with the
        GPU under it, sortable tables; written to `path` (atomically) when given. Its flame
        graph names Python frames by line, or with `function` by function (it switches)."""
        return self._native.html_report(_checks.text(title, "title"), _top(top),
                                        "" if path is None else _checks.text(path, "path"),
                                        not function)

    _repr_mimebundle_ = html_mimebundle

    def _repr_html_(self) -> str:
        """A notebook cell shows the HTML report, in a frame of its own (its script and style
        kept from the notebook's)."""
        import html

        return ('<iframe style="width: 100%; height: 820px; border: 1px solid #ccc" '
                f'sandbox="allow-scripts" srcdoc="{html.escape(self.to_html(), quote=True)}"></iframe>')

    def speedscope_json(self) -> str:
        """The stack samples as a speedscope document."""
        return self._native.speedscope()

    def pprof(self, path: str | os.PathLike[str] | None = None) -> bytes:
        """A gzipped pprof profile (what `go tool pprof`, Grafana Pyroscope, Parca and Google
        Cloud Profiler read): the stack samples, Python frames as functions with their file and
        line; a profile without samples (a PyTorch profiler trace) gives its operators' time.
        Written to `path` (atomically) when given."""
        return self._native.pprof("" if path is None else _checks.text(path, "path"))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the profile (JSON) to `path`, atomically."""
        self._native.save(_checks.text(path, "path"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Profile:
        """Reads a profile saved by save() (plain or gzipped), or a PyTorch profiler trace
        (`*.pt.trace.json`, plain or gzipped: its steps and operators as spans, its kernels as
        GPU activity, its rank from distributedInfo or the file's name; `source` says which);
        auto-instrumented functions are named on the way."""
        return cls(_mainboard._Profile.load(_checks.text(path, "path")))

    def perfetto(self, path: str | os.PathLike[str]) -> None:
        """Writes a Chrome/Perfetto trace (open it at ui.perfetto.dev)."""
        self._native.perfetto(_checks.text(path, "path"))

    def report(self, top: int | None = None) -> ReportText:
        """A plain-text report of only the sections with evidence (a str that a notebook shows
        as its lines)."""
        return ReportText(self._native.report(sys.maxsize if top is None else _top(top)))

    def show(self, *, color: bool = True, console: Any = None) -> None:
        """Prints the region statistics as a Rich table (and the rest of the report under it)
        where Rich is installed; the plain-text report otherwise. `console`: a rich Console to
        print to (a new one on standard output by default)."""
        try:
            import rich.console as rich_console
            from rich.table import Table
        except ImportError:
            rich_console = None  # type: ignore[assignment]
        if rich_console is not None:
            out = console or rich_console.Console(
                no_color=not color or bool(os.environ.get("NO_COLOR")))
            stats = self.path_stats()
            if stats:
                total = sum(s.total_ns for s in stats if "/" not in s.path) or 1
                table = Table(title="Regions (slowest total first)", title_justify="left")
                for column in ("path", "calls", "total", "avg", "max", "self", "share"):
                    table.add_column(column, justify="left" if column == "path" else "right")
                for s in stats:
                    table.add_row(s.path, str(s.calls), _duration(s.total_ns),
                                  _duration(s.avg_ns), _duration(s.max_ns), _duration(s.self_ns),
                                  f"{100.0 * s.total_ns / total:.1f}%")
                out.print(table)
            rest: str = self.report()
            if stats:  # the regions are the table's: the other sections as text
                sections = rest.split("\n\n")
                rest = "\n\n".join(x for x in sections if not x.lstrip().startswith("Regions")
                                   and not x.startswith("Profile:"))
            if rest.strip():
                out.print(rest, markup=False, highlight=False)
            return
        text: str = self.report()
        if color and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
            text = "\n".join(f"\x1b[1m{line}\x1b[0m" if line and not line.startswith(" ") else line
                             for line in text.splitlines()) + "\n"
        sys.stdout.write(text)

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        doc = self._document()
        return (f"Profile(pid={doc['pid']}, paths={len(doc['paths'])}, "
                f"spans={len(doc['spans'])}, samples={len(doc['samples'])})")




def _native_of_document(document: dict[str, Any]) -> Any:
    import json

    return _mainboard._Profile.parse(json.dumps(document))


def _profile_from_json(text: str) -> Profile:
    return Profile(_mainboard._Profile.parse(text))


def _duration(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def _top(value: Any, name: str = "top") -> int:
    """How many entries a ranking keeps: an int from 0 to 2**31 - 1."""
    return _checks.integer(value, name, 0, 2**31 - 1)


def _with_nested(roots: list[Any]) -> tuple[Any, ...]:
    """The code objects and every code object nested in them (closures, comprehensions)."""
    out: dict[Any, None] = {}
    stack = list(reversed(roots))
    while stack:
        code = stack.pop()
        if code in out:
            continue
        out[code] = None
        stack.extend(c for c in reversed(code.co_consts) if hasattr(c, "co_code"))
    return tuple(out)


class SpanToken(tuple):
    """The handle of a span opened with Profiler.enter."""


class Collection(FrozenModel):
    """How a session collects, as one value: the six choices of Profiler (and `strict`), for
    code that holds a policy rather than passing six arguments. Profiler.under(collection) and
    Profiler.measure(reach, collection=...) take it; Profiler.collection gives it back.

    features: what may be collected (Feature). activities: the GPU activity kinds traced when
    GPU_ACTIVITY is on (Activity). device_index: the GPU sampled. sample_interval_ms: how often
    it is. max_spans: how many spans are stored for the timeline (statistics stay exact past
    it). auto: modules whose functions all get spans. strict: a feature that cannot be collected
    raises instead of being listed in Profile.unavailable.
    """

    def __init__(self, data: dict[str, Any] | None = None, /, *,
                 features: Feature = Feature.DEFAULT, activities: Activity = Activity.DEFAULT,
                 device_index: int = 0, sample_interval_ms: int = 50, max_spans: int = 100_000,
                 auto: Iterable[str] = (), strict: bool = False) -> None:
        fields: dict[str, Any] = dict(features=features, activities=activities, device_index=device_index,
                      sample_interval_ms=sample_interval_ms, max_spans=max_spans, auto=auto,
                      strict=strict)
        if data is not None:
            unknown = set(data) - set(fields)
            if unknown:
                raise TypeError(f"Collection has no field {sorted(unknown)[0]!r}")
            fields.update(data)
        for name, high in (("device_index", 2**31 - 1), ("sample_interval_ms", 2**31 - 1),
                           ("max_spans", 2**62)):
            value = fields[name]
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            _checks.integer(value, name, 0, high)
        if isinstance(fields["auto"], str):
            raise TypeError("auto is a sequence of module names, not one str")
        for name, kind, all_bits in (("features", "Feature", int(Feature.ALL)),
                                     ("activities", "Activity", int(Activity.ALL))):
            value = fields[name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} is a {kind}, not {type(value).__name__}")
            if value < 0 or value & ~all_bits:
                raise ValueError(f"{name}: {value!r} has bits that name no {kind} "
                                 f"({kind}.ALL is {all_bits})")
        super().__init__({
            "features": int(Feature(fields["features"])),
            "activities": int(Activity(fields["activities"])),
            "device_index": fields["device_index"],
            "sample_interval_ms": fields["sample_interval_ms"],
            "max_spans": fields["max_spans"],
            "auto": [str(m) for m in fields["auto"]],
            "strict": bool(fields["strict"]),
        })

    def __repr__(self) -> str:
        return (f"Collection(features={self.features!r}, activities={self.activities!r}, "
                f"device_index={self.device_index}, sample_interval_ms={self.sample_interval_ms}, "
                f"max_spans={self.max_spans}, auto={self.auto!r}, strict={self.strict})")

    @property
    def features(self) -> Feature:
        return Feature(self._data["features"])

    @property
    def activities(self) -> Activity:
        return Activity(self._data["activities"])

    @property
    def auto(self) -> tuple[str, ...]:
        return tuple(self._data["auto"])


def _notebook_name() -> str | None:
    """The notebook this process runs as a Jupyter kernel, as its user names it (its file, where
    the server or the editor says it: JPY_SESSION_NAME, VS Code's __vsc_ipynb_file__), else
    "Jupyter notebook"; None outside a kernel."""
    if "ipykernel" not in sys.modules:
        return None
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    path = os.environ.get("JPY_SESSION_NAME") or shell.user_ns.get("__vsc_ipynb_file__")
    return os.path.basename(str(path)) if path else "Jupyter notebook"


class Profiler:
    """A bounded profiling session. Spans anywhere in the process are recorded while it is
    active: from entering its context (`with Profiler() as p:`, or `p.start()`) until the
    context ends (or `p.stop()`). Made but not entered, it records nothing, and only one can
    be active at a time. A stopped profiler keeps its result; it cannot be started again (make
    a new one). `features` controls what may be collected; the Profile holds only what was
    observed. Stack sampling applies to Profiler.run, attach and dump, not to this process.
    """

    def __init__(self, *, features: Feature = Feature.DEFAULT,
                 activities: Activity = Activity.DEFAULT, device_index: int = 0,
                 sample_interval_ms: int = 50, max_spans: int = 100_000,
                 auto: Iterable[str] = (), strict: bool = False,
                 machine: Machine | None = None) -> None:
        c = Collection(features=features, activities=activities, device_index=device_index,
                       sample_interval_ms=sample_interval_ms, max_spans=max_spans, auto=auto,
                       strict=strict)
        if machine is not None and not isinstance(machine, Machine):
            raise TypeError(f"machine is a mainboard.Machine, not {type(machine).__name__}")
        if c.auto:
            _check_modules(c.auto)
        self._collection = c
        self._machine = machine
        self._native: Any = None
        self._state = "new"  # new, active, stopped
        self._auto: Any = None

    def __repr__(self) -> str:
        c = self._collection
        return (f"Profiler(state={self._state!r}, features={c.features!r}, "
                f"activities={c.activities!r}, device_index={c.device_index}, "
                f"sample_interval_ms={c.sample_interval_ms}, max_spans={c.max_spans}, "
                f"auto={c.auto!r}, strict={c.strict})")

    @property
    def collection(self) -> Collection:
        """The session's collection policy."""
        return self._collection

    @classmethod
    def under(cls, collection: Collection | dict[str, Any], *,
              machine: Machine | None = None) -> Profiler:
        """A profiler from one collection policy (a Collection, or a dict of its fields)."""
        if not isinstance(collection, (Collection, dict)):
            raise TypeError(f"under() takes a Collection (or a dict of its fields), "
                            f"not {type(collection).__name__}")
        c = collection if isinstance(collection, Collection) else Collection(dict(collection))
        return cls(features=c.features, activities=c.activities, device_index=c.device_index,
                   sample_interval_ms=c.sample_interval_ms, max_spans=c.max_spans, auto=c.auto,
                   strict=c.strict, machine=machine)

    def start(self) -> Profiler:
        """Starts the session (what entering its context does) and returns the profiler.
        Raises MainboardError when another session is active or this one has stopped."""
        if self._state == "active":
            raise _mainboard.MainboardError("this Profiler is already active")
        if self._state == "stopped":
            raise _mainboard.MainboardError(
                "this Profiler has stopped (its result() is kept); make a new Profiler to "
                "profile again")
        c = self._collection
        machine = self._machine
        self._native = _mainboard._Profiler(
            int(c.features), int(c.activities), c.device_index, c.sample_interval_ms,
            c.max_spans, c.strict, False, machine._native if machine is not None else None)
        self._state = "active"
        if c.auto:
            try:
                self.auto(c.auto)
            except BaseException:
                self.stop()
                raise
        return self

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def active(self) -> bool:
        """Whether the session records now: between start (entering the context) and stop."""
        return self._state == "active" and self._native.active

    if TYPE_CHECKING:
        # Defined in _measure (they drive the sampler) and set on the class there: declared
        # here for type checkers.
        @classmethod
        def run(cls, target: Sequence[str] | str | os.PathLike[str] | None, *,
                module: str | None = None, args: Sequence[str] = (),
                features: Feature = Feature.DEFAULT, activities: Activity = Activity.DEFAULT,
                sampler: Sampler | None = None, timeout: float | None = None,
                strict: bool = False) -> Profile: ...

        @classmethod
        def attach(cls, pid: int, *, sampler: Sampler | None = None,
                   timeout: float | None = None, strict: bool = False) -> Profile: ...

        @classmethod
        def dump(cls, pid: int, *, all_threads: bool = True, async_aware: bool = False,
                 executable: str | os.PathLike[str] | None = ..., timeout: float = 10.0,
                 native: bool = False, subprocesses: bool = False,
                 nonblocking: bool = False, locals: bool = False) -> StackDump: ...

        @classmethod
        def measure(cls, reach: Reach, *, collection: Collection | None = None,
                    sampler: Sampler | None = None, strict: bool = False,
                    timeout: float | None = None) -> Profile: ...

        @classmethod
        def run_instrumented(cls, target: Sequence[str] | str | os.PathLike[str], *,
                             tachyon: Sampler | None = None,
                             executable: str | os.PathLike[str] | None = None,
                             features: Feature = Feature.DEFAULT,
                             activities: Activity = Activity.DEFAULT,
                             timeout: float | None = None) -> Profile: ...

    def stop(self) -> None:
        """Ends the session: spans stop recording, the sampler stops, the Profile is frozen.
        Stopping a profiler that never started or has stopped does nothing."""
        if self._auto is not None:
            self._auto.stop()
            self._auto = None
        if self._native is not None:
            self._native.stop()
        if self._state == "active":
            self._state = "stopped"

    def stop_sampler(self) -> None:
        """Stops the session's device sampler and releases it; spans go on recording."""
        if self._native is not None:
            self._native.stop_sampler()

    def sample(self) -> None:
        """One device reading now, when the device feature is on."""
        if self._native is not None:
            self._native.sample()

    def enter(self, name: str) -> SpanToken:
        """Opens a span named at run time; returns the token that closes it (a token that
        closes nothing when the session is not active)."""
        name = _checks.text(name, "name")
        if self._native is None:
            return SpanToken((0, 0, None))
        token = self._native.enter(name)
        return SpanToken((token.depth, token.session, token))

    def exit(self, token: SpanToken, wall_ns: int | None = None) -> None:
        """Closes the span of `token` (and any opened inside it since), folding its time into
        the session. With `wall_ns`, the span took that long by the caller's own measure: it
        is recorded with that duration (ending wall_ns after it began) instead of the time
        until this call."""
        if wall_ns is not None:
            _checks.integer(wall_ns, "wall_ns")
        if not isinstance(token, SpanToken):
            raise TypeError(f"exit() takes the token enter() returned, not {type(token).__name__}")
        if token[2] is None or self._native is None:
            return
        if wall_ns is None:
            self._native.exit(token[2])
        else:
            self._native.exit_after(token[2], wall_ns)

    def auto(self, modules: Iterable[str]) -> None:
        """A span for every function and method owned by `modules` (qualified names)."""
        from ._auto import AutoSpans

        if self._auto is not None:
            self._auto.stop()
        self._auto = AutoSpans(tuple(modules))
        self._auto.start()

    def result(self) -> Profile:
        """The evidence observed so far, frozen into one Profile; the session goes on. GPU
        activity is what CUPTI has delivered so far (a buffer it is still filling comes later).
        Before the session starts, an empty Profile."""
        if self._native is None:
            return Profile()
        native = self._native.result()
        notebook = _notebook_name()
        if notebook:
            native.set_command(notebook)
        return Profile(native)

    def stats(self) -> tuple[NameStat, ...]:
        """Per-name aggregates of the spans so far (exact past max_spans), slowest total
        first."""
        return self.result().stats()

    def path_stats(self) -> tuple[SpanStat, ...]:
        """Per-path statistics of the spans so far, slowest total first."""
        return self.result().path_stats()

    def bottlenecks(self, top: int = 10) -> tuple[SpanStat, ...]:
        """The `top` slowest span paths so far, by total wall time."""
        return self.result().bottlenecks(top)

    def trace_report(self, top: int = 10) -> TraceReport:
        """GPU activity so far attributed to the spans open while it ran."""
        return self.result().trace_report(top)

    def report(self) -> ReportText:
        """The result so far as plain text: only the sections with evidence."""
        return self.result().report()

    def show(self, *, color: bool = True) -> None:
        """Prints report() (in color on a terminal when `color`)."""
        self.result().show(color=color)

    def target_snapshot(self, name: str) -> Any:
        """One reading of the session's GPU (`device_index`) labelled `name`, only when this
        process is among its compute processes; None when it is not (or there is no such GPU),
        so a region that never touched the GPU records no GPU reading."""
        from ._machine import Machine as _Machine

        gpus = (self._machine or _Machine()).gpus
        index = self._collection.device_index
        if index >= len(gpus):
            return None
        snapshot = gpus[index].snapshot(name)
        me = os.getpid()
        return snapshot if any(p.pid == me for p in snapshot.processes) else None

    @staticmethod
    def owned_codes(module: Any) -> tuple[Any, ...]:
        """The code of every function `module` owns: its functions, its classes' methods
        (static, class and property accessors too) and the functions nested in them. Imported
        names owned by other modules are left out."""
        name = module.__name__
        roots: list[Any] = []

        def add(fn: Any) -> None:
            fn = getattr(fn, "__func__", fn)
            code = getattr(fn, "__code__", None)
            if code is not None and getattr(fn, "__module__", None) == name:
                roots.append(code)

        def add_class(cls: type, seen: set[int]) -> None:
            if id(cls) in seen or getattr(cls, "__module__", None) != name:
                return
            seen.add(id(cls))
            for value in vars(cls).values():
                if isinstance(value, property):
                    for accessor in (value.fget, value.fset, value.fdel):
                        if accessor is not None:
                            add(accessor)
                elif isinstance(value, type):
                    add_class(value, seen)
                else:
                    add(value)

        seen: set[int] = set()
        for value in list(vars(module).values()):
            if isinstance(value, type):
                add_class(value, seen)
            else:
                add(value)
        return _with_nested(roots)

    @staticmethod
    def module_codes(modules: Iterable[str]) -> tuple[Any, ...]:
        """The code owned by the imported modules named and their submodules: owned_codes() of
        each, once. (Profiler.auto switches events on for all code and off where the code is not
        owned, so functions made later, by exec or a decorator, are found too.)"""
        names = tuple(modules)
        out: list[Any] = []
        for name, module in sorted(sys.modules.items()):
            if module is None or not any(name == m or name.startswith(m + ".") for m in names):
                continue
            out.extend(Profiler.owned_codes(module))
        return tuple(dict.fromkeys(out))

    @property
    def traced_activities(self) -> Activity:
        """The GPU activity kinds CUPTI accepted for this session (none before it starts)."""
        if self._native is None:
            return Activity(0)
        names = self._native.traced_activities()
        out = Activity(0)
        for n in names.split("|") if names else ():
            out |= Activity[n.upper()]
        return out


def _check_modules(modules: Sequence[str]) -> None:
    """Profiler(auto=...) names modules by their import names: each must be a dotted name, and
    importable (imported, or found by the import system) so that a typo is not silently a
    session without its spans."""
    import importlib.util

    for name in modules:
        if not isinstance(name, str) or not name or not all(
                part.isidentifier() for part in name.split(".")):
            raise ValueError(f"auto: {name!r} is not a module name")
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise ValueError(f"auto: no module named {name!r} (import it, or check the name)")

