"""The machine's models: what a snapshot holds, with the reference's properties."""

from __future__ import annotations

import dataclasses
import enum
import re
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ._models import GIB, FrozenModel


class UnitKind(enum.Enum):
    CPU = "cpu"
    GPU = "gpu"
    NPU = "npu"


class ToolCategory(enum.StrEnum):
    """Grouping for a discovered build tool in the host toolchain."""

    C = "c"
    CXX = "cxx"
    CUDA = "cuda"
    HIP = "hip"
    FORTRAN = "fortran"
    MPI = "mpi"
    BUILD = "build"
    PYTHON = "python"


class Memory(FrozenModel):
    """Memory usage for a host, unit, or memory region.

    total_bytes: total capacity. used_bytes: currently used bytes when known. free_bytes:
    currently free bytes when known. scope: region name (system, vram, unified). unified:
    whether CPU and accelerators share the pool. source: where the figure came from.
    supported: whether this platform exposes the reading; reason: why not, when it does not.
    """

    @property
    def total_gb(self) -> float:
        """Total capacity in gibibytes."""
        return self.total_bytes / GIB

    @property
    def used_gb(self) -> float:
        """Used capacity in gibibytes (0 when unknown)."""
        return (self.used_bytes or 0) / GIB

    @property
    def free_gb(self) -> float:
        """Free capacity in gibibytes (0 when unknown)."""
        return (self.free_bytes or 0) / GIB

    @property
    def percent_used(self) -> float:
        """Share of the total in use, in percent; 0 when the total is 0."""
        if not self.total_bytes or self.used_bytes is None:
            return 0.0
        return 100.0 * self.used_bytes / self.total_bytes

    @classmethod
    def system(cls, scope: str = "system", unified: bool = False) -> Memory:
        """Live system RAM, read now (/proc/meminfo, or sysctl on a Mac)."""
        from ._machine import Machine

        data = Machine()._memory_document()
        data["scope"] = scope
        data["unified"] = unified
        return cls(data)


class ClockReading(FrozenModel):
    """One clock domain: current, minimum and maximum MHz where known."""


class Utilization(FrozenModel):
    """Compute and memory-controller utilization, in percent, where exposed."""


class Energy(FrozenModel):
    """Power now, its limit, and cumulative energy, where exposed."""


class Thermal(FrozenModel):
    """Temperature, its thresholds and the reasons clocks are held back, where exposed."""


class UnitSnapshot(FrozenModel):
    """Point-in-time neutral telemetry for one unit.

    name: caller-provided label (a profiling region). unit_name, kind, vendor, timestamp_ns,
    clocks, memory, utilization, energy, thermal.
    """

    _nested = {"clocks": ClockReading, "memory": Memory, "utilization": Utilization,
               "energy": Energy, "thermal": Thermal}

    @property
    def unit_kind(self) -> UnitKind:
        return UnitKind(self.kind)


class PcieReading(FrozenModel):
    """PCIe throughput (KB/s) and link generation and width, where exposed."""


class GpuProcess(FrozenModel):
    """A compute process on a GPU: pid, name and its GPU memory."""


class MigDevice(FrozenModel):
    """One MIG instance of a partitioned GPU."""


class GpuInfo(FrozenModel):
    """A GPU's identity: computed once."""

    _nested = {"mig_devices": MigDevice}


class GPUSnapshot(UnitSnapshot):
    """Point-in-time reading of all GPU sensors: a UnitSnapshot (its fields are this model's too)
    with the identity (`info`), PCIe, fan speed and compute processes."""

    _nested = {"info": GpuInfo, "telemetry": UnitSnapshot, "memory_regions": Memory,
               "pcie": PcieReading, "processes": GpuProcess}

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            telemetry = super().__getattr__("telemetry")
            return getattr(telemetry, name)


class NpuInfo(FrozenModel):
    """An NPU's identity: computed once."""


class NPUSnapshot(UnitSnapshot):
    """Point-in-time reading of an NPU: identity and neutral telemetry."""

    _nested = {"info": NpuInfo, "telemetry": UnitSnapshot}

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(super().__getattr__("telemetry"), name)


class CacheInfo(FrozenModel):
    """One cache level: type, size and how many instances."""


class CpuInfo(FrozenModel):
    """The CPU's identity: model, vendor, microarchitecture, topology and caches."""

    _nested = {"caches": CacheInfo}

    def cache_bytes(self, level: int, type: str = "unified") -> int | None:
        for c in self.caches:
            if c.level == level and c.type == type:
                return c.size_bytes
        return None


class CpuSnapshot(FrozenModel):
    """The CPU's identity with its clocks and load averages now."""

    _nested = {"info": CpuInfo, "clocks": ClockReading}


class Board(FrozenModel):
    """The host's motherboard and firmware identity. Unreadable means empty strings, never an
    error.

    vendor, model, version, bios_vendor, bios_version, bios_date.
    """

    @classmethod
    def probe(cls) -> Board:
        """The motherboard and BIOS of this host."""
        from ._machine import Machine

        return Machine().board


class Scheduler(FrozenModel):
    """A batch scheduler found on PATH: its name and the client command that revealed it."""


class Job(FrozenModel):
    """The batch job this process runs in: scheduler, id, name, array task."""


class Environment(FrozenModel):
    """Who is running and what scheduler is available.

    user, group, groups, scheduler (the first found on PATH), schedulers, job.
    """

    _nested = {"scheduler": Scheduler, "schedulers": Scheduler, "job": Job}

    @classmethod
    def probe(cls) -> Environment:
        """The current user, group(s), job scheduler and job."""
        from ._machine import Machine

        return Machine().environment


class DimmCard(FrozenModel):
    """One DIMM slot from dmidecode (serial numbers never kept)."""

    @property
    def populated(self) -> bool:
        return bool(self.size_bytes)


class MemoryHardware(FrozenModel):
    """Physical DIMM slots and swap space for the host."""

    _nested = {"cards": DimmCard}

    @property
    def swap_total_gb(self) -> float:
        return self.swap_total_bytes / GIB

    @property
    def swap_used_gb(self) -> float:
        return self.swap_used_bytes / GIB

    @property
    def speed_mhz(self) -> int | None:
        """The highest rated speed over the populated slots; None without cards."""
        speeds = [c.speed_mts for c in self.cards if c.populated and c.speed_mts]
        return max(speeds) if speeds else None

    @property
    def slots_total(self) -> int:
        return len(self.cards)

    @property
    def slots_used(self) -> int:
        return sum(1 for c in self.cards if c.populated)


class CgroupMemory(FrozenModel):
    """The enforced cgroup memory cap: the real OOM-kill ceiling of the job."""

    @property
    def capped(self) -> bool:
        return self.limit_bytes is not None


class BlockDevice(FrozenModel):
    """A block device from /sys/block."""


class Filesystem(FrozenModel):
    """A filesystem the process uses (working directory, home, temp) with its free space."""


class Disk(FrozenModel):
    """Block devices and the filesystems the process uses."""

    _nested = {"devices": BlockDevice, "filesystems": Filesystem}


class ScratchCandidate(FrozenModel):
    """One place considered for scratch, and why it is or is not usable."""


class Scratch(FrozenModel):
    """The fastest writable scratch place, and every candidate considered."""

    _nested = {"candidates": ScratchCandidate}


class DetectedTool(FrozenModel):
    """A build tool found on PATH: name, category, path, version, available."""

    @property
    def tool_category(self) -> ToolCategory:
        return ToolCategory(self.category)


@dataclasses.dataclass(frozen=True)
class ToolProbe:
    """Immutable recipe for finding one build tool: pure data. Adding a tool to the inventory is
    one more ToolProbe, with no change to the discovery (the C++ library's).

    name: the name reported. category: its ToolCategory. binaries: executables tried in order
    until one is on PATH. version_args: what makes it print its version. pattern: a regular
    expression (compiled, or its source) whose first group is the version. The library matches
    its source with ECMAScript rules, which Python's share for what version patterns use;
    Python-only syntax (named groups, inline flags) is refused here.
    """

    name: str
    category: ToolCategory
    binaries: tuple[str, ...]
    version_args: tuple[str, ...] = ("--version",)
    pattern: re.Pattern[str] = re.compile(r"(\d+\.\d+(?:\.\d+)?)")

    def __post_init__(self) -> None:
        if isinstance(self.binaries, str) or isinstance(self.version_args, str):
            raise TypeError("binaries and version_args are sequences of str, not one str")
        pattern = self.pattern
        if isinstance(pattern, str):
            pattern = re.compile(pattern)
        if not isinstance(pattern, re.Pattern):
            raise TypeError(f"pattern is a regular expression, not {type(pattern).__name__}")
        if "(?P" in pattern.pattern or "(?" in pattern.pattern.replace("(?:", ""):
            raise ValueError(f"pattern {pattern.pattern!r}: the library matches ECMAScript "
                             "regular expressions; leave out Python-only groups and flags")
        for field, value in (("category", ToolCategory(self.category)),
                             ("binaries", tuple(self.binaries)),
                             ("version_args", tuple(self.version_args)),
                             ("pattern", pattern)):
            object.__setattr__(self, field, value)
        if not self.binaries:
            raise ValueError("a ToolProbe needs at least one binary")

    def _document(self) -> dict[str, Any]:
        return {"name": self.name, "category": self.category.value,
                "binaries": list(self.binaries), "version_args": list(self.version_args),
                "pattern": self.pattern.pattern}

    def detect(self) -> DetectedTool:
        """The first of `binaries` on PATH, and its version."""
        from . import _mainboard

        return DetectedTool(_mainboard._detect(self._document()))


def _builtin_probes() -> tuple[ToolProbe, ...]:
    from . import _mainboard

    return tuple(ToolProbe(**p) for p in _mainboard._tool_probes())


#: The built-in table of the C++ library: compilers, CUDA/HIP, Fortran, MPI, build systems, Python.
TOOL_PROBES: tuple[ToolProbe, ...] = _builtin_probes()


class Toolchain(FrozenModel):
    """Build tools found on the host PATH, in the order of TOOL_PROBES."""

    _nested = {"tools": DetectedTool}

    @classmethod
    def probe(cls, probes: tuple[ToolProbe, ...] = TOOL_PROBES) -> Toolchain:
        """Runs every probe (their version commands in parallel) and keeps the tools on PATH."""
        from . import _mainboard

        return cls(_mainboard._probe_toolchain([p._document() for p in probes]))

    @property
    def by_category(self) -> dict[ToolCategory, tuple[DetectedTool, ...]]:
        out: dict[ToolCategory, list[DetectedTool]] = {}
        for t in self.tools:
            out.setdefault(ToolCategory(t.category), []).append(t)
        return {k: tuple(v) for k, v in out.items()}

    def find(self, name: str) -> DetectedTool | None:
        for t in self.tools:
            if t.name == name and t.available:
                return t
        return None


class CompilerConfig(FrozenModel):
    """The compilers a build should use, and CMake's arguments for them."""

    def cmake_args(self) -> tuple[str, ...]:
        args = []
        for var, value in (("CMAKE_C_COMPILER", self.c_compiler),
                           ("CMAKE_CXX_COMPILER", self.cxx_compiler),
                           ("CMAKE_CUDA_COMPILER", self.cuda_compiler),
                           ("CMAKE_CUDA_ARCHITECTURES", self.cuda_architectures)):
            if value:
                args.append(f"-D{var}={value}")
        return tuple(args)


class LibraryInfo(FrozenModel):
    """A CUDA library: found, where, which version, or why not."""


class CudaStack(FrozenModel):
    """The NVIDIA driver libraries and toolkit found on the host."""

    _nested = {"nvml": LibraryInfo, "cuda_driver": LibraryInfo, "cupti": LibraryInfo,
               "cuda_runtime": LibraryInfo}


class Diagnostic(FrozenModel):
    """One probe's report: probe, status (ok, unsupported, failed), reason, duration_ns."""


class MachineSnapshot(FrozenModel):
    """One JSON-serializable probe of a host's compute resources: the document
    `mainboard snapshot --json` prints."""

    _nested = {"cpu": CpuSnapshot, "memory": Memory, "memory_hardware": MemoryHardware,
               "gpus": GPUSnapshot, "npus": NPUSnapshot, "cuda": CudaStack,
               "environment": Environment, "board": Board, "toolchain": Toolchain,
               "compilers": CompilerConfig, "cgroup_memory": CgroupMemory, "disk": Disk,
               "scratch": Scratch, "diagnostics": Diagnostic}

    @property
    def unit_count(self) -> int:
        """The CPU plus every GPU and NPU."""
        return 1 + len(self.gpus) + len(self.npus)

    @property
    def kinds(self) -> tuple[UnitKind, ...]:
        """Distinct unit kinds present on the host."""
        out = [UnitKind.CPU]
        if self.gpus:
            out.append(UnitKind.GPU)
        if self.npus:
            out.append(UnitKind.NPU)
        return tuple(out)

    def diagnostic(self, probe: str) -> Diagnostic | None:
        for d in self.diagnostics:
            if d.probe == probe:
                return d
        return None
