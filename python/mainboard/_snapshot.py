"""The machine's models: what a snapshot holds, with the reference's properties."""

from __future__ import annotations

import enum
import re
import sys
from typing import Any, ClassVar

from . import _mainboard, _native
from ._models import GIB, FrozenModel, html_mimebundle, unavailable


class UnitKind(enum.Enum):
    """The category of a schedulable unit."""

    CPU = "cpu"
    GPU = "gpu"
    NPU = "npu"


if sys.version_info >= (3, 11):
    from enum import StrEnum as _StrEnum
else:  # 3.9 and 3.10: what StrEnum is, a str whose str() is its value
    class _StrEnum(str, enum.Enum):
        def __str__(self) -> str:
            return str(self.value)


class ToolCategory(_StrEnum):
    """Grouping for a discovered build tool in the host toolchain."""

    C = "c"
    CXX = "cxx"
    CUDA = "cuda"
    HIP = "hip"
    FORTRAN = "fortran"
    MPI = "mpi"
    BUILD = "build"
    PYTHON = "python"


class _ZeroReading(FrozenModel):
    """A reading the reference reads as zeros where it is unavailable (a GPU's utilization,
    temperatures, power, PCIe throughput; every Memory; a Board's empty strings): its figures are
    0 then, `supported` is False and `reason` says why. Elsewhere (a CPU unit's snapshot) an
    unavailable one is None. One made from nothing (`Memory()`, `Board()`) is a reading of
    nothing: unsupported."""

    _readings = True

    def __init__(self, data: Any = None, /, **fields: Any) -> None:
        if data is None and not fields and self._zero_when_unavailable:
            data = {"unavailable": {"status": "unsupported", "reason": "nothing read"}}
        super().__init__(data, **fields)

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        # `supported` and `reason` given as fields (as the reference lists them, and as schema 1
        # wrote them beside the figures) are the library's own form: why, where it is missing.
        taken = document.pop("supported", None)
        reason = document.pop("reason", None)
        if taken is False:
            document["unavailable"] = {"status": "unsupported", "reason": str(reason or "")}
        elif taken is True:
            document.pop("unavailable", None)  # a reading that was taken has no reason
        elif taken is not None:
            raise TypeError(f"supported is a bool, not {type(taken).__name__}")
        elif reason is not None and isinstance(document.get("unavailable"), dict):
            document["unavailable"] = {**document["unavailable"], "reason": str(reason)}
        return document

    @property
    def supported(self) -> bool:
        """Whether the reading was taken (False: its figures are zeros standing for none)."""
        return "unavailable" not in self._document()

    @property
    def reason(self) -> str:
        """Why the reading is unavailable; empty when it was taken."""
        why = self._document().get("unavailable")
        return str(why.get("reason", "")) if isinstance(why, dict) else ""

    @classmethod
    def zeros(cls, raw: Any, *fields: str) -> Any:
        """The reading in `raw` (the library's document), with 0 for each of `fields` that is
        missing: those the reference reads as zero where there is no reading."""
        why = unavailable(raw)
        if why is not None:  # only why: the figures stand at none
            data: dict[str, Any] = {"unavailable": why}
        else:
            data = dict(raw) if isinstance(raw, dict) else {}
        for f in fields:
            if data.get(f) is None:
                data[f] = 0.0
        return cls(data)


class Memory(_ZeroReading):
    """Memory usage for a host, unit, or memory region.

    total_bytes: total capacity. used_bytes: currently used bytes when known. free_bytes:
    currently free bytes when known. scope: region name (system, vram, unified). unified:
    whether CPU and accelerators share the pool. source: where the figure came from.
    supported: whether this platform exposes the reading; reason: why not, when it does not.
    Where it is unavailable the byte counts read 0 (the reference's zero), `supported` is False
    and `reason` says why. `Memory()` is an empty reading (0 bytes, unsupported);
    `Memory.system()` reads the host's.
    """



    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    total_bytes: int
    used_bytes: int | None
    free_bytes: int | None
    scope: str
    unified: bool
    source: str
    # end of fields

    _defaults = {"total_bytes": 0, "used_bytes": None, "free_bytes": None, "scope": "system",
                 "unified": False, "source": ""}
    _zero_when_unavailable = True

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
        """Live system RAM, read now (/proc/meminfo, or sysctl on a Mac). `scope`: the region
        name recorded; `unified`: whether CPU and accelerators share this pool."""
        if not isinstance(scope, str):
            raise TypeError(f"scope is a str (a region name), not {type(scope).__name__}")
        if not isinstance(unified, bool):
            raise TypeError(f"unified is a bool, not {type(unified).__name__}")

        data = dict(_native.process_machine().memory())
        data["scope"] = scope
        data["unified"] = unified
        return cls(data)


class ClockReading(FrozenModel):
    """One clock domain: current, minimum and maximum MHz where known."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    domain: str
    current_mhz: float | None
    min_mhz: float | None
    max_mhz: float | None
    source: str
    # end of fields


class Utilization(_ZeroReading):
    """Compute and memory-controller utilization, in percent, where exposed."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    compute_pct: float | None
    memory_pct: float | None
    # end of fields

    _defaults = {"compute_pct": None, "memory_pct": None}


class Energy(_ZeroReading):
    """Power now, its limit, and cumulative energy, where exposed."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    power_w: float | None
    power_limit_w: float | None
    energy_j: float | None
    # end of fields

    _defaults = {"power_w": None, "power_limit_w": None, "energy_j": None}


class Thermal(_ZeroReading):
    """Temperature, its thresholds and the reasons clocks are held back, where exposed."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    temperature_c: float | None
    slowdown_c: float | None
    shutdown_c: float | None
    throttle_reasons: tuple[str, ...]
    # end of fields

    _defaults = {"temperature_c": None, "slowdown_c": None, "shutdown_c": None,
                 "throttle_reasons": []}


class UnitSnapshot(FrozenModel):
    """Point-in-time neutral telemetry for one unit.

    name: caller-provided label (a profiling region). unit_name, kind, vendor, timestamp_ns,
    clocks, memory, utilization, energy, thermal.
    """

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    unit_name: str
    vendor: str
    timestamp_ns: int
    clocks: tuple[ClockReading, ...]
    memory: Memory
    utilization: Utilization | None
    energy: Energy | None
    thermal: Thermal | None
    # end of fields

    _nested = {"clocks": ClockReading, "memory": Memory, "utilization": Utilization,
               "energy": Energy, "thermal": Thermal}

    @property
    def kind(self) -> UnitKind:  # type: ignore[override]
        """The unit's category (the enum; the document holds its value)."""
        return UnitKind(self._document()["kind"])

    @property
    def unit_kind(self) -> UnitKind:
        """The same as `kind` (an older name)."""
        return self.kind


class PcieReading(_ZeroReading):
    """PCIe throughput (KB/s) and link generation and width, where exposed."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    tx_kbps: float | None
    rx_kbps: float | None
    link_gen: int | None
    link_width: int | None
    max_link_gen: int | None
    max_link_width: int | None
    # end of fields

    _defaults = {"tx_kbps": None, "rx_kbps": None, "link_gen": None, "link_width": None,
                 "max_link_gen": None, "max_link_width": None}


class GpuProcess(FrozenModel):
    """A compute process on a GPU: pid, name and its GPU memory."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    pid: int
    name: str
    used_memory_bytes: int | None
    host_pid: int | None
    container_pid: int | None
    visible: bool
    # end of fields


class MigDevice(FrozenModel):
    """One MIG instance of a partitioned GPU."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    uuid: str
    gpu_instance_id: int | None
    compute_instance_id: int | None
    memory_total_bytes: int | None
    # end of fields


class GpuInfo(FrozenModel):
    """A GPU's identity: computed once."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    index: int
    provider: str
    label: str
    vendor: str
    uuid: str
    pci_bus_id: str
    architecture: str
    arch_key: str
    compute_capability: str
    sm_count: int | None
    core_count: int | None
    peak_bandwidth_gbs: float | None
    memory_clock_mhz: int | None
    memory_bus_width_bits: int | None
    driver_version: str
    memory_total_bytes: int | None
    coherent: bool
    mig_enabled: bool | None
    mig_devices: tuple[MigDevice, ...]
    metal_support: str
    # end of fields

    _nested = {"mig_devices": MigDevice}


#: The GPU readings the reference reads as zero where the device does not report them (the
#: reading's `supported` and `reason` still say so).
_GPU_ZEROS: dict[str, tuple[type[_ZeroReading], tuple[str, ...]]] = {
    "utilization": (Utilization, ("compute_pct", "memory_pct")),
    "thermal": (Thermal, ("temperature_c", "slowdown_c", "shutdown_c")),
    "energy": (Energy, ("power_w", "power_limit_w", "energy_j")),
    "pcie": (PcieReading, ("tx_kbps", "rx_kbps"))}


def _flatten(document: dict[str, Any]) -> dict[str, Any]:
    """A device snapshot as the reference lists it: the unit's telemetry at the top level (the
    library's JSON nests it under `telemetry`, beside `info`)."""
    telemetry = document.get("telemetry")
    if isinstance(telemetry, dict):
        document = dict(document)
        del document["telemetry"]
        for name, value in telemetry.items():
            document.setdefault(name, value)
    return document


class GpuHealth(FrozenModel):
    """A GPU's health: persistence mode, ECC on and its error counts (since the driver loaded
    and over the GPU's life), remapped rows and a remapping pending or failed, pages waiting to
    be retired; None for what the driver does not report."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    persistence_mode: bool | None
    ecc_enabled: bool | None
    ecc_corrected_volatile: int | None
    ecc_uncorrected_volatile: int | None
    ecc_uncorrected_aggregate: int | None
    remapped_rows_correctable: int | None
    remapped_rows_uncorrectable: int | None
    remap_pending: bool | None
    remap_failed: bool | None
    retired_pages_pending: bool | None
    xid_errors: int | None
    last_xid: FrozenModel | None
    xid_source: str
    xid_since_unix_s: float | None
    links: tuple[FrozenModel, ...]
    unavailable: FrozenModel
    # end of fields


class GpuUnitActivity(FrozenModel):
    """How busy a GPU's units were between two readings (NVML's GPM metrics, Hopper on): SMs
    active and their occupancy, tensor cores, DRAM bandwidth, graphics, and the window between
    the two samples in seconds; None where not reported."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    sm_active_pct: float | None
    sm_occupancy_pct: float | None
    tensor_active_pct: float | None
    dram_bandwidth_pct: float | None
    graphics_active_pct: float | None
    window_s: float | None
    # end of fields


class GPUSnapshot(UnitSnapshot):
    """Point-in-time reading of all GPU sensors: the UnitSnapshot fields, then pcie (PCIe TX/RX
    throughput), fan_speed_pct (0 without a fan or a reading), processes (compute processes and
    their GPU memory), and beyond the reference: info (the GPU's identity), health,
    unit_activity and memory_regions. Utilization, temperatures, power and PCIe throughput read
    0 where unavailable, as the GPU's properties do; their `supported` and `reason` say why.
    unit_activity is None where unavailable (`unavailable_reason("unit_activity")`)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    info: GpuInfo
    memory_regions: tuple[Memory, ...]
    pcie: PcieReading
    fan_speed_pct: float
    processes: tuple[GpuProcess, ...]
    health: GpuHealth | None
    unit_activity: GpuUnitActivity | None
    # end of fields

    # A GPU's readings are never None: zeros where unavailable, as the reference reads them.
    utilization: Utilization
    energy: Energy
    thermal: Thermal

    _nested = {**UnitSnapshot._nested, "info": GpuInfo, "memory_regions": Memory,
               "pcie": PcieReading, "processes": GpuProcess, "health": GpuHealth,
               "unit_activity": GpuUnitActivity}

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        document = _flatten(document)
        if document.get("fan_speed_pct") is None:
            document["fan_speed_pct"] = 0.0
        for reading, (model, fields) in _GPU_ZEROS.items():
            value = document.get(reading)
            if isinstance(value, dict):
                document[reading] = model.zeros(value, *fields).model_dump()
        return document


class NpuInfo(FrozenModel):
    """An NPU's identity: computed once."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    index: int
    provider: str
    label: str
    vendor: str
    architecture: str
    driver: str
    pci_bus_id: str
    # end of fields


class NPUSnapshot(UnitSnapshot):
    """Point-in-time reading of an NPU: the UnitSnapshot fields and its identity (`info`)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    info: NpuInfo
    # end of fields

    _nested = {**UnitSnapshot._nested, "info": NpuInfo}

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        return _flatten(document)


class CacheInfo(FrozenModel):
    """One cache level: type, size and how many instances."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    level: int
    type: str
    size_bytes: int
    instances: int
    # end of fields


class CpuInfo(FrozenModel):
    """The CPU's identity: model, vendor, microarchitecture, topology and caches."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    label: str
    vendor: str
    architecture: str
    microarchitecture: str
    family: int | None
    model: int | None
    stepping: int | None
    packages: int
    cores: int
    threads: int
    numa_nodes: int
    numa_memory_bytes: tuple[int, ...] | None
    caches: tuple[CacheInfo, ...]
    isa_extensions: tuple[str, ...]
    topology_source: str
    cache_source: str
    memory_only_numa_nodes: tuple[int, ...]
    sve_vector_bits: int | None
    # end of fields

    _nested = {"caches": CacheInfo}

    def cache_bytes(self, level: int, type: str = "unified") -> int | None:
        for c in self.caches:
            if c.level == level and c.type == type:
                return c.size_bytes
        return None


class CpuSnapshot(FrozenModel):
    """The CPU's identity with its clocks and load averages now."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    info: CpuInfo
    clocks: tuple[ClockReading, ...]
    load_1m: float | None
    load_5m: float | None
    load_15m: float | None
    # end of fields

    _nested = {"info": CpuInfo, "clocks": ClockReading}


class Board(_ZeroReading):
    """The host's motherboard and firmware identity. Unreadable means empty strings, never an
    error: where the host has no DMI at all (many virtual machines) every field is empty,
    `supported` is False and `reason` says why. A field the firmware left as a placeholder is
    empty on its own.

    vendor, model, version, bios_vendor, bios_version, bios_date.
    """

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    vendor: str
    model: str
    version: str
    bios_vendor: str
    bios_version: str
    bios_date: str
    # end of fields

    _defaults = {"vendor": "", "model": "", "version": "", "bios_vendor": "", "bios_version": "",
                 "bios_date": ""}
    _zero_when_unavailable = True

    @classmethod
    def probe(cls) -> Board:
        """The motherboard and BIOS of this host."""
        return cls(_native.process_machine().board())


class Scheduler(FrozenModel):
    """A batch scheduler found on PATH: its name and the client command that revealed it."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    binary: str
    # end of fields


class Job(FrozenModel):
    """The batch job this process runs in: scheduler, id, name, array task."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    scheduler: str
    id: str
    name: str
    array_task: str | None
    # end of fields


class Environment(FrozenModel):
    """Who is running and what scheduler is available.

    user, group, groups, scheduler (the first found on PATH), schedulers, job.
    """

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    user: str
    group: str
    groups: tuple[str, ...]
    scheduler: Scheduler | None
    schedulers: tuple[Scheduler, ...]
    job: Job | None
    # end of fields

    _nested = {"scheduler": Scheduler, "schedulers": Scheduler, "job": Job}

    @classmethod
    def probe(cls) -> Environment:
        """The current user, group(s), job scheduler and job."""
        return cls(_native.process_machine().environment())


class DimmCard(FrozenModel):
    """One DIMM slot from dmidecode (serial numbers never kept)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    locator: str
    bank_locator: str
    size_bytes: int | None
    type: str
    form_factor: str
    speed_mts: int | None
    configured_speed_mts: int | None
    manufacturer: str
    part_number: str
    rank: int | None
    # end of fields

    @property
    def populated(self) -> bool:
        return bool(self.size_bytes)


class MemoryHardware(FrozenModel):
    """Physical DIMM slots and swap space for the host.

    `MemoryHardware()` (and `Machine().memory_hardware`) captures nothing when it is made: the
    DIMM slots are read at the first access to `cards` (and kept), swap at each access. One
    made from a document (a snapshot's `memory_hardware`) is that record. Where the slots could
    not be read, `cards` is empty and `unavailable_reason("cards")` says why.
    """

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    # end of fields

    _nested = {"cards": DimmCard}

    def __init__(self, data: dict[str, Any] | None = None, /, *, machine: Any = None,
                 **fields: Any) -> None:
        if data is None and not fields:
            # Live: nothing read yet.
            object.__setattr__(self, "_data", None)
            object.__setattr__(self, "_cache", {"_machine": machine})
            return
        super().__init__(data, **fields)

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        # Schema 1 said the cards were unread beside them: "cards_supported": false and why.
        if document.get("cards_supported") is False:
            why = str(document.get("cards_reason", ""))
            document = {k: v for k, v in document.items()
                        if k not in ("cards_supported", "cards_reason")}
            document["cards"] = {"unavailable": {"status": "unsupported", "reason": why}}
        return document

    def _document(self) -> dict[str, Any]:
        if self._data is not None:
            return self._data
        document = self._live()
        if not isinstance(document.get("cards"), dict):  # a dict: why there are none, kept
            document["cards"] = [c.model_dump() for c in self.cards]
        return document

    def _live(self) -> dict[str, Any]:
        machine = self._cache.get("_machine")
        native = machine._native if machine is not None else _native.process_machine()
        return dict(native.memory_hardware())

    def __getattr__(self, name: str) -> Any:
        if self._data is None and not name.startswith("_"):
            document = self._live()
            if name in document:
                return document[name]
        return super().__getattr__(name)

    @property
    def cards(self) -> tuple[DimmCard, ...]:
        """The DIMM slots from dmidecode (read once); empty when unavailable."""
        cache = self._cache
        if "cards" not in cache:
            source = self._live() if self._data is None else self._data
            raw = source.get("cards")
            cache["cards"] = _convert_cards(raw if isinstance(raw, list) else [])
        return cache["cards"]

    @property
    def swap_total_bytes(self) -> int:
        """Total swap space in bytes (read now, for a live reading)."""
        source = self._live() if self._data is None else self._data
        return int(source.get("swap_total_bytes") or 0)

    @property
    def swap_used_bytes(self) -> int:
        """Swap in use in bytes (read now, for a live reading)."""
        source = self._live() if self._data is None else self._data
        return int(source.get("swap_used_bytes") or 0)

    def __reduce__(self) -> Any:
        return (type(self), (self._document(),))

    @property
    def swap_total_gb(self) -> float:
        """Total swap space in GiB."""
        return (self.swap_total_bytes or 0) / GIB

    @property
    def swap_used_gb(self) -> float:
        """Swap in use in GiB."""
        return (self.swap_used_bytes or 0) / GIB

    @property
    def speed_mhz(self) -> int | None:
        """The highest rated speed over the populated slots; None without cards."""
        speeds = [c.speed_mts for c in self.cards if c.populated and c.speed_mts]
        return max(speeds) if speeds else None

    @property
    def slots_total(self) -> int:
        """DIMM slots; 0 when the cards could not be read."""
        return len(self.cards)

    @property
    def slots_used(self) -> int:
        """Populated DIMM slots."""
        return sum(1 for c in self.cards if c.populated)


def _convert_cards(items: list[Any]) -> tuple[DimmCard, ...]:
    return tuple(DimmCard(c) for c in items)


class CgroupMemory(FrozenModel):
    """The enforced cgroup memory cap: the real OOM-kill ceiling of the job. A snapshot's
    `cgroup_memory` is None where the process's cgroup cannot be read, and
    `unavailable_reason("cgroup_memory")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    version: int
    path: str
    limit_bytes: int | None
    usage_bytes: int | None
    swap_limit_bytes: int | None
    limit_source: str
    # end of fields

    @property
    def capped(self) -> bool:
        return self.limit_bytes is not None


class StallShare(FrozenModel):
    """One line of a pressure stall file: the percent of the last 10, 60 and 300 seconds in which
    tasks waited for the resource, and the microseconds of waiting since boot."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    avg10: float
    avg60: float
    avg300: float
    total_us: int
    # end of fields


class ResourcePressure(FrozenModel):
    """The pressure on one resource: `some` (at least one task waited) and `full` (every
    non-idle task waited at once; None for the CPU before Linux 5.13)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    some: StallShare
    full: StallShare | None
    # end of fields

    _nested = {"some": StallShare, "full": StallShare}


class Pressure(FrozenModel):
    """Pressure stall information (/proc/pressure): how much of the time work waited for the
    CPU, for memory and for I/O; None for a resource without a reading. A snapshot's
    `pressure` is None on a host without PSI, and `unavailable_reason("pressure")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    cpu: ResourcePressure | None
    memory: ResourcePressure | None
    io: ResourcePressure | None
    # end of fields

    _nested = {"cpu": ResourcePressure, "memory": ResourcePressure, "io": ResourcePressure}


class InfinibandPort(FrozenModel):
    """One port of an InfiniBand or RoCE device (/sys/class/infiniband/DEV/ports/N): its state
    and physical state ("ACTIVE", "LinkUp"), its rate as the kernel prints it and parsed (Gb/s,
    lanes, lane speed, what they carry), its link layer ("InfiniBand" or "Ethernet" for RoCE),
    its data counters in bytes and its error counters by their sysfs names. Unreadable figures
    are None (an unreadable state or speed is "")."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    port: int
    state: str
    state_id: int | None
    physical_state: str
    physical_state_id: int | None
    rate: str
    rate_gbps: float | None
    width: int | None
    speed: str
    expected_gbps: float | None
    link_layer: str
    received_bytes: int | None
    transmitted_bytes: int | None
    errors: FrozenModel
    # end of fields

    @property
    def up(self) -> bool:
        """Whether the port is active with its link trained (ACTIVE and LinkUp)."""
        return self.state == "ACTIVE" and self.physical_state == "LinkUp"


class InfinibandDevice(FrozenModel):
    """An InfiniBand or RoCE device (a host channel adapter, mlx5_0): HCA type, firmware, board
    id, node GUID, PCI address, NUMA node, its network interfaces and its ports."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    hca_type: str
    firmware: str
    board_id: str
    node_guid: str
    pci_address: str
    numa_node: int | None
    net_devices: tuple[str, ...]
    ports: tuple[InfinibandPort, ...]
    # end of fields

    _nested = {"ports": InfinibandPort}


class Infiniband(FrozenModel):
    """Every InfiniBand and RoCE device. A snapshot's `infiniband` is None on a host without
    any, and `unavailable_reason("infiniband")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    devices: tuple[InfinibandDevice, ...]
    # end of fields

    _nested = {"devices": InfinibandDevice}


class NetworkInterface(FrozenModel):
    """A physical network interface (/sys/class/net, one with a device behind it): driver,
    operstate, type ("ethernet", "infiniband", "other"), address, speed in Mb/s (None when the
    link is down or its speed unknown), MTU, NUMA node, PCI address and byte counters."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    driver: str
    operstate: str
    type: str
    address: str
    speed_mbps: int | None
    mtu: int | None
    numa_node: int | None
    pci_address: str
    received_bytes: int | None
    transmitted_bytes: int | None
    # end of fields


class Network(FrozenModel):
    """The physical network interfaces. A snapshot's `network` is None where /sys/class/net
    cannot be read, and `unavailable_reason("network")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    interfaces: tuple[NetworkInterface, ...]
    # end of fields

    _nested = {"interfaces": NetworkInterface}


class PciDevice(FrozenModel):
    """A device on PCIe (GPU, NPU, InfiniBand or RoCE or Ethernet adapter, NVMe drive): its
    name (GPU0, mlx5_0, ens1f0, nvme0), kind, address, ids, driver, NUMA node (None where the
    firmware does not say), local CPUs, and the host bridge and bridges above it, top first."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    kind: str
    address: str
    vendor_id: str
    device_id: str
    driver: str
    numa_node: int | None
    cpus: tuple[int, ...]
    host_bridge: str
    bridges: tuple[str, ...]
    # end of fields


class PciTopology(FrozenModel):
    """Where the host's devices sit on PCIe, read from sysfs: what `mainboard topo` draws its
    matrix from. A snapshot's `pci` is None where /sys/bus/pci cannot be read, and
    `unavailable_reason("pci")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    devices: tuple[PciDevice, ...]
    # end of fields

    _nested = {"devices": PciDevice}


class TemperatureSensor(FrozenModel):
    """One temperature: an hwmon sensor (`source` "hwmon": `chip` the driver such as coretemp,
    nvme or jc42, `sensor` temp1…, `label` "Package id 0" where the driver names it) or a
    thermal zone (`source` "thermal": `chip` the zone's type, `sensor` thermal_zone0). `kind`
    is cpu_package, cpu_core, cpu, dimm, nvme, gpu or other; `device` what the chip is bound to
    (nvme0, coretemp.1, a PCI address). `high_celsius` and `critical_celsius` are None where
    the driver sets no limit."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    source: str
    chip: str
    sensor: str
    label: str
    kind: str
    device: str
    celsius: float
    high_celsius: float | None
    critical_celsius: float | None
    # end of fields

    @property
    def critical(self) -> bool:
        """At or above its critical limit."""
        return self.critical_celsius is not None and self.celsius >= self.critical_celsius


class Temperatures(FrozenModel):
    """Every temperature the kernel offers (hwmon and thermal zones). A snapshot's
    `temperatures` is None where there is neither (most virtual machines), and
    `unavailable_reason("temperatures")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    sensors: tuple[TemperatureSensor, ...]
    # end of fields

    _nested = {"sensors": TemperatureSensor}

    def hottest(self, kind: str) -> TemperatureSensor | None:
        """The hottest sensor of one kind ("cpu_package", "nvme", "dimm"…), None if there is none."""
        of_kind = [s for s in self.sensors if s.kind == kind]
        return max(of_kind, key=lambda s: s.celsius) if of_kind else None


class HugePagePool(FrozenModel):
    """One pool of static huge pages of one page size, system-wide (`numa_node` None) or on one
    NUMA node: pages in the pool, free, reserved for mappings (system-wide only) and surplus."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    page_bytes: int
    numa_node: int | None
    total: int
    free: int
    reserved: int | None
    surplus: int | None
    # end of fields


class HugePages(FrozenModel):
    """Static huge page pools (/sys/kernel/mm/hugepages and per node). A snapshot's `huge_pages`
    is None on a kernel without hugetlbfs."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    pools: tuple[HugePagePool, ...]
    # end of fields

    _nested = {"pools": HugePagePool}


class MemoryController(FrozenModel):
    """One memory controller's error counts as EDAC keeps them (mc0…): corrected and
    uncorrected, and of those the ones EDAC could not attribute to a DIMM."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    type: str
    size_bytes: int | None
    corrected: int
    uncorrected: int
    corrected_unattributed: int
    uncorrected_unattributed: int
    # end of fields


class MemoryErrors(FrozenModel):
    """Memory errors per controller (EDAC). A snapshot's `memory_errors` is None where no EDAC
    driver is loaded, and `unavailable_reason("memory_errors")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    controllers: tuple[MemoryController, ...]
    # end of fields

    _nested = {"controllers": MemoryController}

    @property
    def uncorrected(self) -> int:
        """Uncorrected errors over every controller."""
        return sum(c.uncorrected for c in self.controllers)

    @property
    def corrected(self) -> int:
        """Corrected errors over every controller."""
        return sum(c.corrected for c in self.controllers)


class EnergyCounter(FrozenModel):
    """One RAPL domain's energy counter (/sys/class/powercap/intel-rapl:N[:M], AMD's too):
    `domain` is package, core, uncore, dram or psys; `energy_uj` counts microjoules and wraps
    at `max_energy_range_uj`."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    zone: str
    domain: str
    package: int | None
    energy_uj: int
    max_energy_range_uj: int | None
    # end of fields


class EnergyCounters(FrozenModel):
    """The CPU and DRAM energy counters (RAPL). A snapshot's `energy_counters` is None where
    there is no RAPL or only root may read it (Linux 5.10 and later);
    `unavailable_reason("energy_counters")` says why."""

    _readings = True

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    counters: tuple[EnergyCounter, ...]
    # end of fields

    _nested = {"counters": EnergyCounter}


class DomainEnergy(FrozenModel):
    """One domain's energy over a metered region: `cpu` (the CPU packages together), `dram`,
    `gpu0`…, in joules and mean watts."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    domain: str
    source: str
    joules: float
    mean_w: float
    # end of fields


class RegionEnergy(FrozenModel):
    """The energy a metered region used: CPU packages and DRAM from RAPL, each GPU from its
    driver's total energy counter; host-wide, not the region's processes' alone. `total_j` and
    `mean_w` are None where nothing could be read; `unavailable` says what was not, and why."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    domains: tuple[DomainEnergy, ...]
    total_j: float | None
    mean_w: float | None
    unavailable: tuple[str, ...]
    # end of fields

    _nested = {"domains": DomainEnergy}


class BlockDevice(FrozenModel):
    """A block device from /sys/block."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    model: str
    size_bytes: int | None
    rotational: bool | None
    nvme: bool
    removable: bool
    # end of fields


class Filesystem(FrozenModel):
    """A filesystem the process uses (working directory, home, temp) with its free space."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    role: str
    path: str
    mount_point: str
    type: str
    device: str
    size_bytes: int | None
    free_bytes: int | None
    # end of fields


class Disk(FrozenModel):
    """Block devices and the filesystems the process uses."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    devices: tuple[BlockDevice, ...]
    filesystems: tuple[Filesystem, ...]
    # end of fields

    _nested = {"devices": BlockDevice, "filesystems": Filesystem}


class ScratchCandidate(FrozenModel):
    """One place considered for scratch, and why it is or is not usable."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    path: str
    origin: str
    fs_type: str
    tier: str
    free_bytes: int | None
    usable: bool
    reason: str
    # end of fields


class Scratch(FrozenModel):
    """The fastest writable scratch place, and every candidate considered."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    found: bool
    path: str
    fs_type: str
    tier: str
    free_bytes: int | None
    candidates: tuple[ScratchCandidate, ...]
    # end of fields

    _nested = {"candidates": ScratchCandidate}


class DetectedTool(FrozenModel):
    """A build tool found on PATH: name, category, path, version, available."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    category: str
    path: str | None
    version: str | None
    available: bool
    # end of fields

    @property
    def tool_category(self) -> ToolCategory:
        return ToolCategory(self.category)


class _DataclassFields:
    """`__dataclass_fields__` or `__dataclass_params__` of a class written by hand, made by
    `dataclasses` at their first use, so that `dataclasses.is_dataclass`, `fields`, `replace`
    and `asdict` treat the class as the dataclass it is, while importing the package does not
    import `dataclasses` (with `inspect`, half the import time of a first snapshot)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        import dataclasses

        assert owner is not None
        twin = dataclasses.make_dataclass(
            owner.__name__,
            [(name, note) if default is _REQUIRED else
             (name, note, dataclasses.field(default=default))
             for name, note, default in owner._spec],  # type: ignore[attr-defined]
            frozen=True)
        for attr in ("__dataclass_fields__", "__dataclass_params__"):
            setattr(owner, attr, getattr(twin, attr))  # the descriptors replaced by the values
        return getattr(owner, self._name)


_REQUIRED = object()
_VERSION_PATTERN = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


class ToolProbe:
    """Immutable recipe for finding one build tool: pure data. Adding a tool to the inventory is
    one more ToolProbe, with no change to the discovery (the C++ library's).

    name: the name reported. category: its ToolCategory. binaries: executables tried in order
    until one is on PATH. version_args: what makes it print its version. pattern: a regular
    expression (compiled, or its source) whose first group is the version. The library matches
    its source with ECMAScript rules, which Python's share for what version patterns use;
    Python-only syntax (named groups, inline flags) is refused here.

    A frozen dataclass (`dataclasses.is_dataclass`, `fields`, `replace`, `asdict` hold), written
    out so that `import mainboard` need not import `dataclasses`.
    """

    __slots__ = ("name", "category", "binaries", "version_args", "pattern")
    _spec = (("name", "str", _REQUIRED), ("category", "ToolCategory", _REQUIRED),
             ("binaries", "tuple[str, ...]", _REQUIRED),
             ("version_args", "tuple[str, ...]", ("--version",)),
             ("pattern", "re.Pattern[str]", _VERSION_PATTERN))
    __dataclass_fields__: ClassVar[dict[str, Any]] = _DataclassFields()  # type: ignore[assignment]
    __dataclass_params__: ClassVar[Any] = _DataclassFields()
    __match_args__ = ("name", "category", "binaries", "version_args", "pattern")

    name: str
    category: ToolCategory
    binaries: tuple[str, ...]
    version_args: tuple[str, ...]
    pattern: re.Pattern[str]

    def __init__(self, name: str, category: ToolCategory | str, binaries: tuple[str, ...],
                 version_args: tuple[str, ...] = ("--version",),
                 pattern: re.Pattern[str] | str = _VERSION_PATTERN) -> None:
        if isinstance(binaries, str) or isinstance(version_args, str):
            raise TypeError("binaries and version_args are sequences of str, not one str")
        if isinstance(pattern, str):
            pattern = re.compile(pattern)
        if not isinstance(pattern, re.Pattern):
            raise TypeError(f"pattern is a regular expression, not {type(pattern).__name__}")
        if "(?P" in pattern.pattern or "(?" in pattern.pattern.replace("(?:", ""):
            raise ValueError(f"pattern {pattern.pattern!r}: the library matches ECMAScript "
                             "regular expressions; leave out Python-only groups and flags")
        for field, value in (("name", name), ("category", ToolCategory(category)),
                             ("binaries", tuple(binaries)),
                             ("version_args", tuple(version_args)), ("pattern", pattern)):
            object.__setattr__(self, field, value)
        if not self.binaries:
            raise ValueError("a ToolProbe needs at least one binary")

    def _astuple(self) -> tuple[Any, ...]:
        return (self.name, self.category, self.binaries, self.version_args, self.pattern)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._astuple() == other._astuple()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._astuple())

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(name={self.name!r}, category={self.category!r}, "
                f"binaries={self.binaries!r}, version_args={self.version_args!r}, "
                f"pattern={self.pattern!r})")

    def __setattr__(self, name: str, value: Any) -> None:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._astuple())

    def _document(self) -> dict[str, Any]:
        return {"name": self.name, "category": self.category.value,
                "binaries": list(self.binaries), "version_args": list(self.version_args),
                "pattern": self.pattern.pattern}

    def detect(self) -> DetectedTool:
        """The first of `binaries` on PATH, and its version."""
        return DetectedTool(_mainboard._detect(self._document()))


def _builtin_probes() -> tuple[ToolProbe, ...]:
    return tuple(ToolProbe(**p) for p in _mainboard._tool_probes())


#: The built-in table of the C++ library: compilers, CUDA/HIP, Fortran, MPI, build systems, Python.
TOOL_PROBES: tuple[ToolProbe, ...] = _builtin_probes()


class Toolchain(FrozenModel):
    """Build tools found on the host PATH, in the order of TOOL_PROBES."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    tools: tuple[DetectedTool, ...]
    # end of fields

    _nested = {"tools": DetectedTool}

    @classmethod
    def probe(cls, probes: tuple[ToolProbe, ...] = TOOL_PROBES) -> Toolchain:
        """Runs every probe (their version commands in parallel) and keeps the tools on PATH."""
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

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    c_compiler: str | None
    cxx_compiler: str | None
    cuda_compiler: str | None
    cuda_architectures: str | None
    # end of fields

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

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    found: bool
    path: str
    version: str
    reason: str
    # end of fields


class CudaStack(FrozenModel):
    """The NVIDIA driver libraries and toolkit found on the host."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    driver_version: str
    cuda_driver_version: str
    nvml: LibraryInfo
    cuda_driver: LibraryInfo
    cupti: LibraryInfo
    cuda_runtime: LibraryInfo
    nvcc_path: str | None
    nvcc_version: str | None
    # end of fields

    _nested = {"nvml": LibraryInfo, "cuda_driver": LibraryInfo, "cupti": LibraryInfo,
               "cuda_runtime": LibraryInfo}


class Diagnostic(FrozenModel):
    """One probe's report: probe, status (ok, unsupported, failed), reason, duration_ns."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    probe: str
    status: str
    reason: str
    duration_ns: int
    # end of fields


class OperatingSystem(FrozenModel):
    """The operating system: os-release's name, id and version, the kernel's release, the C
    library, and the kernel's base page size (None when unknown)."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    name: str
    id: str
    version_id: str
    kernel: str
    libc: str
    page_size_bytes: int | None
    # end of fields


class HostTuning(FrozenModel):
    """Settings that move benchmark figures: the cpufreq governors (governor -> its CPUs),
    frequency boost and the file that switches it, SMT, ASLR, transparent huge pages and
    kernel.perf_event_paranoid; None where the kernel does not say."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    governors: FrozenModel
    boost: bool | None
    boost_control: str
    smt_active: bool | None
    aslr: int | None
    transparent_hugepages: str
    perf_event_paranoid: int | None
    # end of fields


class MachineSnapshot(FrozenModel):
    """One JSON-serializable probe of a host's compute resources: the document
    `mainboard snapshot --json` prints."""

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    schema_version: int
    timestamp_ns: int
    unix_time_ns: int
    gpus: tuple[GPUSnapshot, ...]
    npus: tuple[NPUSnapshot, ...]
    cpu: CpuSnapshot
    board: Board
    environment: Environment
    memory_hardware: MemoryHardware
    os: OperatingSystem | None
    toolchain: Toolchain | None
    compilers: CompilerConfig
    cuda: CudaStack
    pci: PciTopology | None
    hostname: str
    memory: Memory
    tuning: HostTuning | None
    cgroup_memory: CgroupMemory | None
    pressure: Pressure | None
    disk: Disk
    scratch: Scratch
    infiniband: Infiniband | None
    network: Network | None
    temperatures: Temperatures | None
    energy_counters: EnergyCounters | None
    huge_pages: HugePages | None
    memory_errors: MemoryErrors | None
    diagnostics: tuple[Diagnostic, ...]
    # end of fields

    _repr_mimebundle_ = html_mimebundle

    def _repr_html_(self) -> str:
        """A notebook cell shows the machine's schematic, drawn from this snapshot."""
        import html

        text = _mainboard._render_snapshot(self.model_dump_json(), 100)
        return f'<pre style="line-height: 1.2">{html.escape(text)}</pre>'

    _nested = {"cpu": CpuSnapshot, "memory": Memory, "memory_hardware": MemoryHardware,
               "gpus": GPUSnapshot, "npus": NPUSnapshot, "cuda": CudaStack,
               "environment": Environment, "board": Board, "toolchain": Toolchain,
               "compilers": CompilerConfig, "cgroup_memory": CgroupMemory,
               "pressure": Pressure, "pci": PciTopology, "disk": Disk,
               "scratch": Scratch, "diagnostics": Diagnostic,
               "temperatures": Temperatures, "huge_pages": HugePages,
               "memory_errors": MemoryErrors, "energy_counters": EnergyCounters}
    _nested.update({"infiniband": Infiniband, "network": Network, "os": OperatingSystem,
                    "tuning": HostTuning})

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
