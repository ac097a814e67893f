"""Runtime metrics: time a region and track peak memory across samples.

    with mainboard.meter() as m:
        train_epoch()
        m.sample()
        evaluate()
    print(m.elapsed_s, m.peak_host_gb, m.peak_rss_gb, m.peak_gpu_gb)

Two kinds of memory are tracked. Host and GPU figures are the machine's: memory in use on the
whole host (MemTotal - MemAvailable) and on every GPU together, whoever uses it — what decides
whether the next job fits. Process figures are this process's own: its resident set (RSS, with
the kernel's high-water mark, so a peak between samples counts) and its proportional set (PSS:
pages shared with other processes, such as DataLoader workers after fork, count in shares).

The module itself is callable: `mainboard.meter()` opens a meter on the current machine.
"""

from __future__ import annotations

import json
import sys
import types
from typing import Any, Protocol, runtime_checkable

from . import _mainboard
from ._machine import GPU, Machine
from ._models import GIB
from ._snapshot import Memory, RegionEnergy

__all__ = ["MemorySource", "MeteredMachine", "Meter", "meter"]


@runtime_checkable
class MemorySource(Protocol):
    """A unit or host that exposes a memory reading."""

    @property
    def memory(self) -> Memory: ...


@runtime_checkable
class MeteredMachine(Protocol):
    """The slice of a machine the meter samples: its host memory and its GPUs."""

    @property
    def memory(self) -> Memory: ...

    @property
    def gpus(self) -> tuple[GPU, ...]: ...


class Meter:
    """Times a region and tracks peak host, GPU and process memory over its samples: one at
    enter, one at each sample(), one at exit. No background thread: the caller drives the
    sampling, so a peak between two samples is missed, except the process's RSS: the meter
    resets the kernel's high-water mark at enter (/proc/self/clear_refs), so peak_rss_* holds
    the region's true peak, between samples too (peak_rss_from_kernel says whether the kernel
    allowed the reset; the reset also lowers what resource.getrusage gives as ru_maxrss).

    What the region added: peak_rss_delta_* and peak_pss_delta_* (the peak over what was
    resident at enter); peak_rss_* and peak_pss_* are the process's whole size at its peak."""

    def __init__(self, machine: Machine | None = None) -> None:
        if machine is not None and not isinstance(machine, Machine):
            raise TypeError(f"machine is a mainboard.Machine, not {type(machine).__name__}")
        self._machine = machine or Machine()
        self._native: Any = None

    def __enter__(self) -> Meter:
        if self._native is not None and not self._native_stopped():
            raise _mainboard.MainboardError("this meter is running already")
        self._native = _mainboard._Meter(self._machine._native)
        self._stopped = False
        return self

    def __exit__(self, *exc: Any) -> None:
        self._native.stop()
        self._stopped = True

    def _native_stopped(self) -> bool:
        return getattr(self, "_stopped", True)

    def __repr__(self) -> str:
        if self._native is None:
            return f"Meter(machine={self._machine!r}, not started)"
        state = "stopped" if self._native_stopped() else "running"
        return (f"Meter({state}, elapsed_s={self.elapsed_s:.3f}, samples={self.samples}, "
                f"peak_host_gb={self.peak_host_gb:.2f}, peak_gpu_gb={self.peak_gpu_gb:.2f}, "
                f"peak_rss_gb={self.peak_rss_gb:.2f}, "
                f"peak_rss_delta_gb={self.peak_rss_delta_gb:.2f})")

    def sample(self) -> None:
        """One reading of host, GPU and process memory now, folded into the peaks."""
        self._live().sample()

    def _live(self) -> Any:
        if self._native is None:
            raise _mainboard.MainboardError(
                "the meter has not started: use it as `with meter() as m:`")
        return self._native

    @property
    def elapsed_s(self) -> float:
        """Seconds since the region began (until it ended, once it has)."""
        return self._live().elapsed_s

    @property
    def samples(self) -> int:
        """Readings taken so far."""
        return self._live().samples

    @property
    def peak_host_gb(self) -> float:
        """The highest host memory in use over the samples (the whole host), in GiB."""
        return self._live().peak_host_gb

    @property
    def peak_gpu_gb(self) -> float:
        """The highest GPU memory in use over the samples (all GPUs together), in GiB."""
        return self._live().peak_gpu_gb

    @property
    def host_delta_gb(self) -> float:
        """Host memory in use at the last sample minus at the first, in GiB."""
        return self._live().host_delta_gb

    @property
    def peak_rss_bytes(self) -> int:
        """This process's peak resident set size over the region, in bytes (the kernel's
        high-water mark where it rose during the region); 0 where unreadable."""
        return self._live().peak_rss_bytes

    @property
    def peak_rss_gb(self) -> float:
        """peak_rss_bytes in GiB."""
        return self.peak_rss_bytes / GIB

    @property
    def peak_pss_bytes(self) -> int:
        """This process's peak proportional set size over the samples, in bytes; 0 where the
        kernel has no smaps_rollup."""
        return self._live().peak_pss_bytes

    @property
    def peak_pss_gb(self) -> float:
        """peak_pss_bytes in GiB."""
        return self.peak_pss_bytes / GIB

    @property
    def peak_rss_delta_bytes(self) -> int:
        """What the region added to this process's resident set at its peak: peak_rss_bytes
        over the RSS at enter (0 when the region only freed memory)."""
        return self._live().peak_rss_delta_bytes

    @property
    def peak_rss_delta_gb(self) -> float:
        """peak_rss_delta_bytes in GiB."""
        return self.peak_rss_delta_bytes / GIB

    @property
    def peak_pss_delta_bytes(self) -> int:
        """The same for the proportional set size: its peak over the samples minus the PSS at
        enter (0 when it never rose)."""
        return self._live().peak_pss_delta_bytes

    @property
    def peak_pss_delta_gb(self) -> float:
        """peak_pss_delta_bytes in GiB."""
        return self.peak_pss_delta_bytes / GIB

    @property
    def rss_at_start_bytes(self) -> int:
        """This process's resident set size when the region began."""
        return self._live().rss_at_start_bytes

    @property
    def peak_rss_from_kernel(self) -> bool:
        """Whether peak_rss_* is the kernel's high-water mark over the whole region (reset at
        enter), not only the largest RSS the samples saw."""
        return self._live().peak_rss_from_kernel

    @property
    def energy(self) -> RegionEnergy:
        """The energy used from enter to the last sample (to exit, once exited), host-wide: CPU
        packages and DRAM from RAPL (wrap-around corrected: sample at least once per wrap,
        minutes to hours), each GPU from its total energy counter (NVML, Volta on). `domains`
        holds joules and mean watts of each (cpu, dram, gpu0…), `total_j` and `mean_w` their
        sum; `unavailable` what could not be read and why (only root may read RAPL since Linux
        5.10)."""
        return RegionEnergy(json.loads(self._live().energy_json))

    @property
    def energy_j(self) -> float | None:
        """energy.total_j: joules over the region, all domains read; None where none was."""
        return self.energy.total_j


def meter(machine: Machine | None = None) -> Meter:
    """A meter on this machine (or `machine`): `with meter() as m: ...`, then m.elapsed_s,
    m.peak_host_gb, m.peak_gpu_gb, m.host_delta_gb, m.peak_rss_gb, m.peak_pss_gb, and what the
    region added: m.peak_rss_delta_gb, m.peak_pss_delta_gb."""
    return Meter(machine)


# The names the protocol's members take, under names of their own (a class body's `Meter`
# would be the member itself).
_MeterClass = Meter
_MemorySource = MemorySource
_MeteredMachine = MeteredMachine


class CallableMeterModule(Protocol):
    """What a type checker sees as `mainboard.meter`: this module, callable as meter(). (A type
    annotation names the class as `mainboard.Meter`, or imports it from `mainboard.meter`.)"""

    Meter: type[_MeterClass]
    MemorySource: type[_MemorySource]
    MeteredMachine: type[_MeteredMachine]

    def meter(self, machine: Machine | None = None) -> _MeterClass: ...

    def __call__(self, machine: Machine | None = None) -> _MeterClass: ...


class _CallableModule(types.ModuleType):
    """`mainboard.meter` is this module and the function both: `mainboard.meter()` opens a
    meter, `from mainboard.meter import Meter` imports from it."""

    def __call__(self, machine: Machine | None = None) -> Meter:
        return meter(machine)


sys.modules[__name__].__class__ = _CallableModule
