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
from ._measure import (
    Bound, KernelStat, ProfileReport, Reach, RunResult, Sampler, StackDump,
    gpu_busy,
    profile, wait_for_idle,
)
from ._models import FieldInfo, FrozenInstanceError, FrozenModel, Registry, Singleton
from ._view import MachineView
from . import meter, profiling
from .meter import Meter, MemorySource, MeteredMachine
from ._profiling import (
    Activity, Collection, Feature, FunctionStat, IdleGap, KernelCounters, KernelEfficiency,
    KernelSummary, NameStat, NativeActivity, Profile, ProfileDiff, Profiler, SpanStat, StackStat,
    Timeline, TraceReport, span, spanned,
)
from ._snapshot import (
    Board, CgroupMemory, CompilerConfig, CpuInfo, CudaStack, DetectedTool, Diagnostic, Disk,
    Environment, GpuInfo, GPUSnapshot, MachineSnapshot, Memory, MemoryHardware, NpuInfo,
    NPUSnapshot, Scratch, TOOL_PROBES, Toolchain, ToolCategory, ToolProbe, UnitKind, UnitSnapshot,
)

__all__ = [
    "Activity", "AppleGPU", "AppleNPU", "Board", "Bound", "CPU", "CgroupMemory", "Collection",
    "CompilerConfig", "ComputeCapability", "CpuInfo", "CudaStack", "DetectedTool", "Diagnostic",
    "Disk", "Environment", "Feature", "FieldInfo", "FrozenInstanceError", "FrozenModel", "FunctionStat", "GPU", "GPUSnapshot",
    "GpuInfo", "Host", "IdleGap", "KernelCounters", "KernelEfficiency", "KernelStat",
    "KernelSummary", "Machine", "MachineSnapshot", "MachineView", "MainboardError", "Memory",
    "MemoryHardware", "MemorySource", "Meter", "MeteredMachine", "NameStat", "NPU", "NPUSnapshot", "NativeActivity", "NpuInfo", "NvidiaGPU",
    "Profile", "ProfileDiff", "ProfileReport", "Profiler", "Reach", "Registry", "RunResult",
    "Sampler", "Scratch", "Singleton",
    "SpanStat", "StackDump", "StackStat", "TOOL_PROBES", "Timeline", "ToolCategory", "ToolProbe",
    "Toolchain", "TraceReport",
    "Unit", "UnitKind", "UnitSnapshot", "gpu_busy", "meter", "profile", "span", "spanned",
    "wait_for_idle", "__version__",
]
