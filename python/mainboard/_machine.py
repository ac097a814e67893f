"""The machine and its units, over the C++ library's Machine."""

from __future__ import annotations

import functools
import os
import threading
from collections import namedtuple
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from . import _checks, _mainboard, _native
from ._models import FrozenModel, Registry, Singleton, models_of, unavailable

if TYPE_CHECKING:  # a type checker knows functools' as a property: ours is the same, read-only
    from functools import cached_property
else:
    from ._models import cached_property
from ._snapshot import (
    Board, ClockReading, CompilerConfig, CpuInfo, CudaStack, Disk, Energy, Environment,
    GpuInfo, GpuProcess, GPUSnapshot, Memory, MemoryHardware, NpuInfo, NPUSnapshot,
    PcieReading, Scratch, Thermal, Toolchain, UnitSnapshot, Utilization, CgroupMemory,
    MachineSnapshot,
)

#: A CUDA compute capability, e.g. ComputeCapability(8, 9).
ComputeCapability = namedtuple("ComputeCapability", ["major", "minor"])


def _version_pair(text: str | None) -> tuple[int, int] | None:
    """ "12.4" or "550.54.14" as (12, 4) or (550, 54); None when there is none."""
    if not text:
        return None
    parts = text.split(".")
    try:
        return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    except ValueError:
        return None


_Model = TypeVar("_Model", bound=FrozenModel)


def _reading(cls: type[_Model], data: dict[str, Any]) -> _Model | None:
    """The library's reading as a model; None where it says the reading is unavailable."""
    return None if unavailable(data) is not None else cls(data)


class Unit(FrozenModel):
    """A schedulable hardware execution resource: a CPU, GPU or NPU.

    A unit is a model of its identity (read once: `model_dump()` gives it, its fields are
    attributes) with live readings as properties (memory, clocks, utilization, energy,
    thermal: read at each access) and `snapshot()` for all of them at once.
    """

    def __init__(self, native: Any, machine: Machine | None = None, index: int = 0) -> None:
        object.__setattr__(self, "_native", native)
        object.__setattr__(self, "_machine", machine)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_data", None)
        object.__setattr__(self, "_cache", {})

    def _identity(self) -> dict[str, Any]:
        info = getattr(type(self), "info", None)
        if info is not None:  # CPU, GPU, NPU: their identity model
            return dict(self.info._document())
        native = self._native
        return {"kind": native.kind, "label": native.label, "architecture": native.architecture,
                "vendor": native.vendor}

    def _document(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            data = dict(self._identity())
            object.__setattr__(self, "_data", data)
        return data

    def __reduce__(self) -> Any:
        """A unit pickles as where it is found: its machine's root and its place there; it is
        looked up again when unpickled (in another process, that process's reading)."""
        machine = self._machine or Machine()
        return (_unit_of, (machine._sysroot_key(), self._document().get("kind", "cpu"),
                           self._index))

    @cached_property
    def label(self) -> str:
        """Human-readable unit name."""
        return self._native.label

    @cached_property
    def architecture(self) -> str:
        """Human-readable architecture or generation."""
        return self._native.architecture

    @cached_property
    def vendor(self) -> str:
        """Who made it (Intel, AMD, NVIDIA, Apple, …)."""
        return self._native.vendor

    @property
    def memory(self) -> Memory:
        """Memory visible to this unit, read now."""
        return Memory((self._native.memory()))

    @property
    def clock_readings(self) -> tuple[ClockReading, ...]:
        """Clock readings grouped by hardware domain, read now."""
        return models_of(ClockReading, self._native.clocks())

    @property
    def utilization(self) -> Utilization | None:
        """Busy percentages now; None where the unit reports none."""
        return _reading(Utilization, self._native.utilization())

    @property
    def energy(self) -> Energy | None:
        """Power draw and cumulative energy now; None where the unit reports none."""
        return _reading(Energy, self._native.energy())

    @property
    def thermal(self) -> Thermal | None:
        """Temperature and its thresholds now; None where the unit reports none."""
        return _reading(Thermal, self._native.thermal())

    def snapshot(self, name: str = "") -> UnitSnapshot:
        """Neutral telemetry of this unit now; `name` labels it (a profiling region)."""
        return UnitSnapshot((self._native.snapshot(_checks.text(name, "name"))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"


def _unit_of(sysroot: str | None, kind: str, index: int) -> Unit:
    machine = Machine() if sysroot is None else Machine.over(sysroot)
    if kind == "cpu":
        return machine.cpu
    units = machine.gpus if kind == "gpu" else machine.npus
    if index >= len(units):
        raise LookupError(f"no {kind.upper()} {index} on this machine (it has {len(units)})")
    return units[index]


class CPU(Unit):
    """The host CPU package (or SoC CPU cluster)."""


    @cached_property
    def info(self) -> CpuInfo:
        return CpuInfo((self._native.info()))

    @cached_property
    def label(self) -> str:
        """CPU model name."""
        return self.info.label

    @cached_property
    def architecture(self) -> str:
        """CPU architecture string."""
        return self.info.architecture


class GPU(Unit, Registry):
    """A GPU: identity read once, telemetry read at each access.

    The registry root of the GPU providers: NvidiaGPU, AppleGPU (and the sysfs providers'
    GPUs, which are plain GPU objects) register by `provider`; `GPU.all()` fans out over every
    provider the library has, `NvidiaGPU.all()` gives one provider's.
    """

    provider = ""


    @classmethod
    def all(cls) -> tuple[GPU, ...]:
        """GPUs visible across every provider (a provider that fails is skipped)."""
        gpus = Machine().gpus
        return gpus if cls is GPU else tuple(g for g in gpus if isinstance(g, cls))

    @classmethod
    def probe(cls, provider: str) -> tuple[GPU, ...]:
        """One provider's devices ("nvidia", "amd", "apple"), probed afresh; empty when its
        probe fails."""
        provider = _checks.text(provider, "provider")
        try:
            found = Machine()._native.probe_gpus(provider)
        except Exception as e:  # one broken vendor never sinks the probe
            import logging

            logging.getLogger("mainboard").warning("GPU provider %s failed: %s", provider, e)
            return ()
        return tuple(_gpu(g, None, i) for i, g in enumerate(found))

    @classmethod
    def is_available(cls) -> bool:
        """Whether at least one such unit is visible."""
        return bool(cls.all())

    @cached_property
    def info(self) -> GpuInfo:
        return GpuInfo((self._native.info()))

    @cached_property
    def uuid(self) -> str:
        """Stable identifier when the provider exposes one."""
        return self.info.uuid

    @cached_property
    def arch_key(self) -> str:
        """A stable architecture id for per-arch dispatch (sm_90 on NVIDIA)."""
        return self.info.arch_key or self.architecture.lower()

    @cached_property
    def peak_bandwidth_gbs(self) -> float | None:
        """Theoretical peak memory bandwidth in GB/s when known."""
        return self.info.peak_bandwidth_gbs

    @cached_property
    def driver_version(self) -> tuple[int, int] | None:
        """Driver version as (major, minor) when known."""
        return _version_pair(self.info.driver_version)

    @property
    def clocks(self) -> tuple[ClockReading, ...]:
        """Current compute and memory clocks."""
        return self.clock_readings

    @property
    def utilization(self) -> Utilization:  # type: ignore[override]
        """Compute and memory-controller utilization; zeros where unavailable (`supported`
        False, and `reason` says why), as the reference reads them."""
        return Utilization.zeros(self._native.utilization(), "compute_pct", "memory_pct")

    @property
    def thermal(self) -> Thermal:  # type: ignore[override]
        """Temperature and thresholds; zeros where unavailable (`reason` says why)."""
        return Thermal.zeros(self._native.thermal(), "temperature_c", "slowdown_c", "shutdown_c")

    @property
    def energy(self) -> Energy:  # type: ignore[override]
        """Power and cumulative energy; zeros where unavailable (`reason` says why)."""
        return Energy.zeros(self._native.energy(), "power_w", "power_limit_w", "energy_j")

    @property
    def pcie(self) -> PcieReading:
        """Host interconnect throughput; zeros where unavailable (`reason` says why)."""
        return PcieReading.zeros(self._native.pcie(), "tx_kbps", "rx_kbps")

    @property
    def fan_speed_pct(self) -> float:
        """Fan speed in percent, 0 when unavailable."""
        return self._native.fan_speed_pct() or 0.0

    @property
    def temperature_c(self) -> float:
        """Die temperature in °C now; 0 when unavailable."""
        return self.thermal.temperature_c or 0.0

    @property
    def gpu_util_pct(self) -> float:
        """Compute utilization in percent now; 0 when unavailable."""
        return self.utilization.compute_pct or 0.0

    @property
    def processes(self) -> tuple[GpuProcess, ...]:
        """Compute processes using this GPU."""
        return models_of(GpuProcess, self._native.processes())

    def snapshot(self, name: str = "") -> GPUSnapshot:
        """Every sensor of this GPU now; `name` labels it (a profiling region)."""
        return GPUSnapshot((self._native.gpu_snapshot(_checks.text(name, "name"))))


class NvidiaGPU(GPU):
    """An NVIDIA GPU as CUDA numbers it: identity through NVML and the CUDA driver, live NVML
    sensors."""

    provider = "nvidia"

    @cached_property
    def pci_bus_id(self) -> str:
        """The PCI address (domain:bus:device.function), as nvidia-smi shows it."""
        return self.info.pci_bus_id

    @cached_property
    def cuda_architecture(self) -> ComputeCapability | None:
        """The compute capability, e.g. ComputeCapability(9, 0)."""
        pair = _version_pair(self.info.compute_capability)
        return ComputeCapability(*pair) if pair else None

    @cached_property
    def sm_count(self) -> int | None:
        """Streaming multiprocessors, from the CUDA driver; None when unknown."""
        return self.info.sm_count

    @cached_property
    def coherent(self) -> bool:
        """Whether it shares a cache-coherent memory pool with the host (Grace Hopper, GB10)."""
        return bool(self.info.coherent)

    @cached_property
    def driver_version(self) -> tuple[int, int] | None:
        """The highest CUDA version the installed driver supports, as (major, minor)."""
        return _version_pair(Machine().cuda.cuda_driver_version) or super().driver_version

    def nvml_memory(self) -> Memory:
        """Memory as NVML reads it now (what nvidia-smi shows)."""
        return Memory((self._native.nvml_memory()))

    def nvml_clocks(self) -> tuple[ClockReading, ...]:
        """Clocks as NVML reads them now: graphics, SM, memory and video (the same readings as
        `clocks`, which come from NVML on NVIDIA)."""
        return self.clocks

    @cached_property
    def runtime_properties(self) -> Mapping[str, Any]:
        """Static device properties from the CUDA driver: name, compute capability, SM count,
        memory size, bus width and clock, and the peak bandwidth they give (read-only)."""
        info = self.info
        return MappingProxyType({
            "name": info.label, "compute_capability": self.cuda_architecture,
            "multi_processor_count": info.sm_count, "total_memory_bytes": info.memory_total_bytes,
            "memory_bus_width_bits": info.memory_bus_width_bits,
            "memory_clock_mhz": info.memory_clock_mhz, "peak_bandwidth_gbs": info.peak_bandwidth_gbs,
            "pci_bus_id": info.pci_bus_id, "coherent": bool(info.coherent),
        })

    def runtime_memory(self) -> Memory:
        """Memory as the CUDA driver reads it now (cuMemGetInfo): for devices whose NVML memory
        reading is unsupported (coherent platforms)."""
        return Memory((self._native.runtime_memory()))

    @cached_property
    def _bindings(self) -> Mapping[str, Any]:
        return MappingProxyType(dict(self._native.bindings()))

    @cached_property
    def apis(self) -> Mapping[str, Any]:
        """The vendor libraries that answer for this device (read-only): for "nvml" and
        "cuda_driver", whether it is loaded (`found`), its path and version, and why not."""
        cuda = Machine().cuda if self._machine is None else self._machine.cuda
        b = self._bindings
        out = {}
        for key, usable, error in (("nvml", b["nvml"], b["nvml_error"]),
                                   ("cuda_driver", b["cuda"], b["cuda_error"])):
            lib = getattr(cuda, key).model_dump()
            lib["answers"] = bool(usable)
            if error and not lib.get("reason"):
                lib["reason"] = error
            out[key] = MappingProxyType(lib)
        return MappingProxyType(out)

    @cached_property
    def cuda_device(self) -> int | None:
        """The CUDA driver's device ordinal for this GPU (what cuDeviceGet returns for its
        visible index, after CUDA_VISIBLE_DEVICES); None when the CUDA driver does not know it."""
        return self._bindings["cuda_device"]

    @cached_property
    def system_api(self) -> str | None:
        """The system-management library that reads this device's telemetry: "nvml", or None
        when NVML is not usable (readings then say why)."""
        return "nvml" if self._bindings["nvml"] else None

    @cached_property
    def system_device(self) -> str | None:
        """This device as the system-management library finds it: its PCI bus ID (NVML's
        handle is looked up by it, so CUDA_VISIBLE_DEVICES is respected); None without NVML."""
        return self.pci_bus_id if self._bindings["nvml"] else None

    @cached_property
    def handle(self) -> int | None:
        """NVML's device handle as an opaque number (stable for the process); None without
        NVML."""
        return self._bindings["nvml_handle"] or None

    @cached_property
    def cuda_python(self) -> Mapping[str, Any]:
        """The CUDA stack seen from here (read-only): the driver's CUDA version, the runtime
        and CUPTI libraries found (path, version) and whether CUPTI can trace activity. The
        library reads CUDA through the driver API itself, so no cuda-python package is needed."""
        cuda = Machine().cuda if self._machine is None else self._machine.cuda
        return MappingProxyType({
            "cuda_driver_version": cuda.cuda_driver_version,
            "cuda_runtime": MappingProxyType(cuda.cuda_runtime.model_dump()),
            "cupti": MappingProxyType(cuda.cupti.model_dump()),
            "cupti_available": bool(cuda.cupti.found),
        })


class AppleGPU(GPU):
    """The integrated GPU of Apple silicon, over unified memory."""

    provider = "apple"

    @cached_property
    def core_count(self) -> int | None:
        """GPU cores, from system_profiler; None when unknown."""
        return self.info.core_count

    @cached_property
    def metal_support(self) -> str:
        """The Metal family it supports (e.g. Metal 3)."""
        return self.info.metal_support

    @cached_property
    def record(self) -> Mapping[str, Any]:
        """Its system_profiler display record, as the library read it (read-only): model,
        vendor, cores, Metal support, and the unified memory it uses."""
        info = self.info
        return MappingProxyType({"model": info.label, "vendor": info.vendor,
                                 "cores": info.core_count, "metal": info.metal_support,
                                 "memory_bytes": info.memory_total_bytes})

    @classmethod
    @functools.cache
    def gpu_records(cls) -> tuple[Mapping[str, Any], ...]:
        """The display records of every Apple GPU system_profiler reports here (read once)."""
        return tuple(g.record for g in cls.all())


class NPU(Unit, Registry):
    """A neural processing unit; the registry root of the NPU providers."""

    provider = ""


    @classmethod
    def all(cls) -> tuple[NPU, ...]:
        """NPUs visible across every provider."""
        npus = Machine().npus
        return npus if cls is NPU else tuple(n for n in npus if isinstance(n, cls))

    @classmethod
    def probe(cls, provider: str) -> tuple[NPU, ...]:
        """One provider's NPUs ("apple", "amd", "accel"); empty when it found none."""
        provider = _checks.text(provider, "provider")
        return tuple(n for n in Machine().npus if n.provider_name == provider)

    @classmethod
    def is_available(cls) -> bool:
        return bool(cls.all())

    @cached_property
    def info(self) -> NpuInfo:
        """Identity, read once."""
        return NpuInfo((self._native.info()))

    @property
    def provider_name(self) -> str:
        """The provider that found it ("apple", "amd", "accel")."""
        return self.info.provider

    def snapshot(self, name: str = "") -> NPUSnapshot:
        """Identity and telemetry of this NPU now; `name` labels it."""
        return NPUSnapshot((self._native.npu_snapshot(name)))


class AppleNPU(NPU):
    """The Apple Neural Engine."""

    provider = "apple"


def _gpu(native: Any, machine: Machine | None, index: int) -> GPU:
    if isinstance(native, _mainboard._NvidiaGpu):
        return NvidiaGPU(native, machine, index)
    info = native.info()
    if info.get("provider") == "apple":
        return AppleGPU(native, machine, index)
    return GPU(native, machine, index)


def _npu(native: Any, machine: Machine | None, index: int) -> NPU:
    info = native.info()
    cls = AppleNPU if info.get("provider") == "apple" else NPU
    return cls(native, machine, index)


class Host(FrozenModel):
    """The host's CPU, memory and disk together."""


class Machine(Singleton):
    """The host and its units. `Machine()` is one object per process (`Machine() is Machine()`),
    over MAINBOARD_SYSROOT or /; `Machine.over(path)` reads a recorded host instead.

    Identity (cpu, gpus, npus, environment, board, toolchain, compilers…) is computed once;
    readings (memory, snapshot()) are taken at each call.
    """

    def _singleton_init(self) -> None:
        self._native = _native.process_machine()
        self._sysroot: str | None = None

    def _sysroot_key(self) -> str | None:
        return self._sysroot

    @classmethod
    def over(cls, sysroot: str | os.PathLike[str], *, toolchain_cache: bool = False) -> Machine:
        """A machine over a recorded host (a `mainboard gather` tree), not the singleton.
        Raises FileNotFoundError or NotADirectoryError when `sysroot` is not a directory."""
        path = _checks.text(sysroot, "sysroot")
        if not os.path.exists(path):
            raise FileNotFoundError(f"sysroot {path!r}: no such directory")
        if not os.path.isdir(path):
            raise NotADirectoryError(f"sysroot {path!r} is not a directory")
        obj = object.__new__(cls)
        obj._native = _mainboard._Machine(path, toolchain_cache)
        obj._sysroot = os.path.abspath(path)
        return obj

    def __reduce__(self) -> Any:
        return (_machine_of, (self._sysroot,))

    @cached_property
    def cpu(self) -> CPU:
        """The host CPU."""
        return CPU(self._native.cpu(), self, 0)

    @cached_property
    def gpus(self) -> tuple[GPU, ...]:
        """GPUs across every provider, in CUDA's order for NVIDIA."""
        return tuple(_gpu(g, self, i) for i, g in enumerate(self._native.gpus()))

    @cached_property
    def npus(self) -> tuple[NPU, ...]:
        """NPUs across every provider."""
        return tuple(_npu(n, self, i) for i, n in enumerate(self._native.npus()))

    @cached_property
    def units(self) -> tuple[Unit, ...]:
        """The CPU, then every GPU and NPU."""
        return (self.cpu, *self.gpus, *self.npus)

    @cached_property
    def host(self) -> Host:
        """CPU identity, memory and disk."""
        return Host(cpu=self.cpu.info, memory=self.memory,
                    disk=Disk((self._native.disk())))

    @cached_property
    def environment(self) -> Environment:
        """Scheduler, container, virtualisation, OS and Python: where this process runs."""
        return Environment((self._native.environment()))

    @cached_property
    def board(self) -> Board:
        """The motherboard and firmware identity (empty strings when unreadable; `supported`
        False and `reason` where the host has no DMI)."""
        return Board((self._native.board()))

    @cached_property
    def toolchain(self) -> Toolchain:
        """The build tools on PATH with their versions (TOOL_PROBES), read once."""
        return Toolchain((self._native.toolchain()))

    @cached_property
    def compilers(self) -> CompilerConfig:
        """The compilers a build should use (and CMake's arguments for them)."""
        return CompilerConfig((self._native.compilers()))

    @cached_property
    def cuda(self) -> CudaStack:
        """The NVIDIA driver libraries and CUDA toolkit found on the host."""
        return CudaStack((self._native.cuda()))

    @cached_property
    def nvcc_path(self) -> str | None:
        """The nvcc a CUDA build would use; None when there is none."""
        return self._native.nvcc_path()

    @cached_property
    def cuda_architecture(self) -> str | None:
        """The first GPU's compute capability without the dot, e.g. "89"."""
        return self._native.cuda_architecture()

    @property
    def hostname(self) -> str:
        """The host's name."""
        return self._native.hostname()

    def _memory_document(self) -> dict[str, Any]:
        return (self._native.memory())

    @property
    def memory(self) -> Memory:
        """System memory now (MemTotal, MemAvailable)."""
        return Memory(self._memory_document())

    @property
    def memory_hardware(self) -> MemoryHardware:
        """The installed memory: total, swap, DIMM slots and modules where readable."""
        return MemoryHardware(machine=self)

    @property
    def cgroup_memory(self) -> CgroupMemory | None:
        """This process's cgroup memory cap and use (what a batch job may really use); None
        where the cgroup cannot be read (`snapshot().unavailable_reason("cgroup_memory")`
        says why)."""
        data = self._native.cgroup_memory()
        return None if "unavailable" in data else CgroupMemory(data)

    @property
    def disk(self) -> Disk:
        """The filesystem of the working directory: size and free space."""
        return Disk((self._native.disk()))

    @property
    def scratch(self) -> Scratch:
        """The job's scratch space (TMPDIR, the scheduler's local disk) and its free space."""
        return Scratch((self._native.scratch()))

    def snapshot(self, *, toolchain: bool = True) -> MachineSnapshot:  # noqa: D401
        """Everything, now, in one model; never raises (what could not be read says why in
        `diagnostics`)."""
        return MachineSnapshot((self._native.snapshot(toolchain)))

    def __repr__(self) -> str:
        return f"Machine(sysroot={self._native.sysroot!r})"


def _machine_of(sysroot: str | None) -> Machine:
    return Machine() if sysroot is None else Machine.over(sysroot)
