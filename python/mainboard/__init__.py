"""What machine am I on, and what is it doing? Where does my code spend its time?

The reference's Python API over the mainboard C++ library: the machine and its units, snapshots,
the meter, spans and the profiling session, stack sampling of other processes, GPU activity,
reports and traces. Nothing is measured in Python: every reading and analysis is the library's.
"""

def _extension_missing(error: ImportError) -> ImportError:
    """What a broken install is, in words: which file this interpreter wants, and what is there."""
    import os
    import sys
    import sysconfig

    here = os.path.dirname(os.path.abspath(__file__))
    wanted = "_mainboard" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    present = sorted(f for f in os.listdir(here)
                     if f.startswith("_mainboard.") and f != "_mainboard.pyi")
    version = "%d.%d" % sys.version_info[:2]
    if wanted in present:
        hint = "it is there but could not be loaded (a library it needs is missing or broken)"
    elif present:
        there = ", ".join(present)
        hint = (f"the package here was built for another Python ({there}); install the wheel "
                f"for Python {version} (or build it: pip install . with this interpreter)")
    else:
        hint = "the extension is missing: the package was copied without it"
    return ImportError(f"mainboard cannot load its extension {os.path.join(here, wanted)} "
                       f"into {sys.executable} (Python {version}): {hint}. ({error})")


try:
    from ._mainboard import MainboardError, __version__
except ImportError as _error:  # a broken install: say what is wrong, not a bare traceback
    raise _extension_missing(_error) from None
from . import _log  # noqa: F401  (the library logs through logging)
from ._machine import (
    CPU, GPU, NPU, AppleGPU, AppleNPU, ComputeCapability, Host, Machine, NvidiaGPU, Unit,
)
from ._models import (
    FieldInfo, FrozenInstanceError, FrozenModel, MainboardWarning, Registry, Singleton,
)
from ._snapshot import (
    Board, CgroupMemory, CompilerConfig, CpuInfo, CudaStack, DetectedTool, Diagnostic, Disk,
    Environment, GpuInfo, GPUSnapshot, MachineSnapshot, Memory, MemoryHardware, NpuInfo,
    NPUSnapshot, PciDevice, PciTopology, Pressure, ResourcePressure, Scratch, StallShare,
    TOOL_PROBES, Toolchain,
    ToolCategory, ToolProbe, UnitKind, UnitSnapshot,
)
from ._snapshot import (
    Infiniband, InfinibandDevice, InfinibandPort, Network, NetworkInterface,
    HugePagePool, HugePages, MemoryController, MemoryErrors, TemperatureSensor, Temperatures,
)
from ._snapshot import GpuHealth, GpuUnitActivity, HostTuning, OperatingSystem
# RAPL energy counters, and the energy of a metered region.
from ._snapshot import DomainEnergy, EnergyCounter, EnergyCounters, RegionEnergy

# What a first snapshot does not need is imported at its first use (PEP 562): the profiling
# session, the meter, the view and the tool-probe dataclass cost a fresh interpreter about as
# much again as the machine itself. A type checker reads the imports below as if they ran.
TYPE_CHECKING = False  # typing's own, without importing typing
if TYPE_CHECKING:
    from . import profiling
    from .meter import CallableMeterModule
    meter: CallableMeterModule  # the module, callable: `mainboard.meter()`
    from ._measure import (
        Bound, IterationTimes, KernelStat, ProfileReport, Reach, RunResult, Sampler, StackDump,
        TargetFailed, gpu_busy, profile, wait_for_idle,
    )
    from ._profiling import (
        Activity, Collection, Feature, FunctionStat, IdleGap, KernelCounters, KernelEfficiency,
        KernelSummary, NameStat, NativeActivity, Profile, ProfileDiff, Profiler, RankReport,
        RankSpread, RankSummary, SpanStat, StackStat, StepLag, Straggler, TargetExit, ThreadInfo,
        TimeBreakdown,
        Timeline, TraceReport, span, spanned,
    )
    from ._view import MachineView, live_frames, top
    from .meter import Meter, MemorySource, MeteredMachine

_LAZY = {
    **dict.fromkeys(("Bound", "IterationTimes", "KernelStat", "ProfileReport", "Reach",
                     "RunResult", "Sampler",
                     "StackDump", "TargetFailed", "gpu_busy", "profile", "wait_for_idle"),
                    "_measure"),
    **dict.fromkeys(("Activity", "Collection", "Feature", "FunctionStat", "IdleGap",
                     "KernelCounters", "KernelEfficiency", "KernelSummary", "NameStat",
                     "NativeActivity", "Profile", "ProfileDiff", "Profiler", "RankReport",
                     "RankSpread", "RankSummary", "SpanStat", "StackStat", "StepLag",
                     "Straggler", "TargetExit", "ThreadInfo", "TimeBreakdown", "Timeline", "TraceReport", "span",
                     "spanned"),
                    "_profiling"),
    **dict.fromkeys(("MachineView", "live_frames", "top"), "_view"),
    **dict.fromkeys(("Meter", "MemorySource", "MeteredMachine"), "meter"),
}


del TYPE_CHECKING


def __getattr__(name: str):  # noqa: ANN202 - PEP 562's module hook
    """The lazily imported names and submodules, imported at their first use and kept."""
    from importlib import import_module

    if name in ("meter", "profiling"):
        return import_module(f"{__name__}.{name}")  # the import binds it here too
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "_profiling":
        # Profiler.run, attach, dump, measure and run_instrumented are _measure's, bound to
        # Profiler when _measure loads (it imports _profiling): the class comes with them.
        import_module(f"{__name__}._measure")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "__version__", "Activity", "AppleGPU", "AppleNPU", "Board", "Bound", "CgroupMemory",
    "Collection", "CompilerConfig", "ComputeCapability", "CPU", "CpuInfo", "CudaStack",
    "DetectedTool", "Diagnostic", "Disk", "Environment", "Feature", "FieldInfo",
    "FrozenInstanceError", "FrozenModel", "FunctionStat", "GPU", "gpu_busy", "GpuInfo",
    "GPUSnapshot", "Host", "IdleGap", "KernelCounters", "KernelEfficiency", "KernelStat",
    "KernelSummary", "Machine", "MachineSnapshot", "MachineView", "MainboardError", "Memory",
    "MemoryHardware", "MemorySource", "Meter", "meter", "MeteredMachine", "NameStat",
    "NativeActivity", "NPU", "NpuInfo", "NPUSnapshot", "NvidiaGPU", "PciDevice", "PciTopology", "Pressure", "Profile",
    "profile", "ProfileDiff", "Profiler", "ProfileReport", "RankReport", "RankSpread", "RankSummary",
    "Reach", "Registry", "ResourcePressure",
    "RunResult", "Sampler", "Scratch", "Singleton", "span", "spanned", "SpanStat", "StackDump",
    "StackStat", "StallShare", "StepLag", "Straggler", "TimeBreakdown", "Timeline", "TOOL_PROBES", "ToolCategory", "Toolchain", "ToolProbe",
    "TraceReport", "Unit", "UnitKind", "UnitSnapshot", "wait_for_idle",
    "HugePagePool", "HugePages", "MemoryController", "MemoryErrors", "TemperatureSensor",
    "Temperatures",
]
# The live view (`mainboard top`): run it, or read its frames.
__all__ += ["live_frames", "top"]
__all__ += ["Infiniband", "InfinibandDevice", "InfinibandPort", "Network", "NetworkInterface"]
# RAPL energy counters, and the energy of a metered region.
__all__ += ["DomainEnergy", "EnergyCounter", "EnergyCounters", "RegionEnergy"]
# How a profiled target ended, and what a failed one raises (strict) or warns.
__all__ += ["MainboardWarning", "TargetExit", "TargetFailed"]
# The operating system and the host's tuning, as a snapshot holds them.
__all__ += ["GpuHealth", "GpuUnitActivity", "HostTuning", "OperatingSystem"]
# profile(fn)'s per-iteration times; a profile's threads.
__all__ += ["IterationTimes", "ThreadInfo"]
