"""The terminal schematic of a machine, over the C++ library's view: text everywhere, Rich
renderables where Rich is installed (Rich is imported only by the methods that draw with it, so
`import mainboard` never loads it)."""

from __future__ import annotations

import json
import operator
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
else:
    # Rich is optional and imported only to draw: at run time (typing.get_type_hints) its
    # types read as Any; a type checker sees Rich's own.
    Console = RenderableType = Panel = Table = Text = Any

from . import _mainboard
from ._machine import GPU, NPU, Machine, Unit
from ._models import html_mimebundle
from ._snapshot import Memory

# The process table's orders that read best smallest first (the rest: largest first).
_ASCENDING = ("pid", "user", "gpu", "command")

# Border colours of the cells, the same as the text schematic's.
_STYLES = {"memory": "yellow", "cpu": "cyan", "gpu": "green", "npu": "magenta"}
_ARROW_STYLE = "bright_black"
# Connections over which memory is shared with the host: drawn with a double line.
_SHARED_FABRICS = ("unified", "NVLink-C2C", "on-die")
# Clock domains gpu_clock_label shows, in order, and how it names them; "graphics" stands in for
# "sm" where a GPU reports no SM clock.
_CLOCK_NAMES = {"sm": "SM", "graphics": "GFX", "memory": "MEM"}


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _need_rich(method: str) -> None:
    if not _has_rich():
        raise ModuleNotFoundError(
            f"MachineView.{method}() draws with Rich, which is not installed (pip install rich); "
            "MachineView.text() gives the schematic without it")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


class MachineView:
    """The schematic of one machine: system memory on the left, every detected unit (CPU, GPUs,
    NPUs) on the right, each reached by an arrow labelled with the link between them, and a
    summary line. The view formats one snapshot, taken when the view is made; `text()` gives it
    as plain text and `renderable()` as a Rich renderable."""

    def __init__(self, machine: Machine | None = None) -> None:
        """A view of `machine`, or of this process's `Machine()` when None."""
        if machine is None:
            machine = Machine()
        elif not isinstance(machine, Machine):
            raise TypeError(f"MachineView needs a mainboard.Machine, not {type(machine).__name__}")
        self.machine = machine
        self._native = _mainboard._MachineView(machine._native)
        self._gpus: tuple[GPU, ...] = machine.gpus
        self._npus: tuple[NPU, ...] = machine.npus

    def __repr__(self) -> str:
        """The machine the view is of and how many GPUs and NPUs it shows."""
        return (f"MachineView(machine={self.machine!r}, gpus={len(self._gpus)}, "
                f"npus={len(self._npus)})")

    # ----------------------------------------------------------------- whole schematic

    def text(self, *, color: bool = False, width: int = 80) -> str:
        """The schematic as plain text `width` columns wide, with ANSI colours when `color`.
        Below 60 columns the boxes give way to a list."""
        return self._native.render(bool(color), operator.index(width))

    _repr_mimebundle_ = html_mimebundle

    def _repr_html_(self) -> str:
        """A notebook cell shows the schematic (100 columns) and its summary line."""
        import html

        return (f'<pre style="line-height: 1.2">{html.escape(self.text(width=100))}</pre>')

    def renderable(self) -> RenderableType:
        """The schematic as a Rich renderable: the memory cell beside the cells of the units it
        reaches, arrows between them, the summary line below. Where that grid is wider than the
        console, the text schematic at the console's width, as the command draws it there (its
        boxes reflowed; below 60 columns a list), so no title is cut. Where Rich is not
        installed, the plain text schematic (a str) instead."""
        if not _has_rich():
            return self.text()
        from rich.console import Group

        return Group(_Fitted(self))

    def __rich__(self) -> RenderableType:
        """What Rich draws when given the view itself: renderable()."""
        return self.renderable()

    def print(self, *, color: bool = True, width: int | None = None) -> None:
        """Writes the text schematic to stdout, coloured on a terminal unless NO_COLOR is set;
        `width` defaults to the terminal's (80 off a terminal)."""
        tty = sys.stdout.isatty()
        if width is None:
            import shutil  # only here: the rest of the package never needs it

            width = shutil.get_terminal_size((80, 24)).columns if tty else 80
        sys.stdout.write(self.text(color=color and tty and not os.environ.get("NO_COLOR"),
                                   width=width))

    def show(self, *, console: Console | None = None) -> None:
        """Prints the Rich schematic through `console` (a new rich Console when None); prints the
        text schematic instead where Rich is not installed."""
        if not _has_rich():
            self.print()
            return
        if console is None:
            from rich.console import Console
            console = Console()
        console.print(self.renderable())

    def top_frame(self, *, interval: float = 0.5, width: int = 100, height: int = 0,
                  color: bool = False, all_processes: bool = False,
                  sort: str | None = None) -> str:
        """One frame of the live view (`mainboard top`) of this view's machine, as text: two
        readings `interval` seconds apart (each CPU's use, memory, the cgroup, pressure, every
        GPU, the processes on them; every process with `all_processes`), drawn `width` columns
        wide and, unless `height` is 0, exactly `height` lines high. `sort` orders the processes
        ("pid", "user", "gpu", "gpu_memory", "cpu", "memory", "time", "command"; by default GPU
        memory, or CPU share on a host without GPUs)."""
        if not interval >= 0:
            raise ValueError(f"interval must be 0 or more, not {interval!r}")
        gpus = bool(self._gpus)
        watch = _mainboard._MachineWatch(self.machine._native, all_processes or not gpus)
        watch.next()
        time.sleep(interval)
        view = _mainboard._LiveView(60)
        view.add(watch.next())
        key = sort or ("gpu_memory" if gpus else "cpu")
        return "\n".join(view.render(operator.index(width), operator.index(height), bool(color),
                                      key, key in _ASCENDING, "", None, False)) + "\n"

    # ----------------------------------------------------------------- Rich layout

    def schematic_grid(self) -> Table:
        """A borderless two-column Rich grid: the memory cell on the left, connected_units()
        on the right."""
        _need_rich("schematic_grid")
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        grid.add_column(vertical="top")
        grid.add_column(vertical="top")
        grid.add_row(self.memory_cell(), self.connected_units())
        return grid

    def connected_units(self) -> Table:
        """A borderless Rich grid with a row per detected unit: the arrow from memory, labelled
        with the unit's connection (a double line where the unit shares memory with the host:
        unified, NVLink-C2C, on-die), then the unit's cell."""
        _need_rich("connected_units")
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        grid.add_column(vertical="middle", no_wrap=True)
        grid.add_column()
        for (kind, index), cell in zip(self._unit_keys(), self.detected_unit_cells()):
            label = self.connection_label(kind, index)
            grid.add_row(self.arrow_to(label, "══" if label in _SHARED_FABRICS else "──"), cell)
        return grid

    def detected_unit_cells(self) -> list[Panel]:
        """The cells of the units this machine has, in order: the CPU, each GPU, each NPU (no
        cell for a kind of unit that is absent)."""
        _need_rich("detected_unit_cells")
        return ([self.cpu_cell()]
                + [self.gpu_cell(i) for i in range(len(self._gpus))]
                + [self.npu_cell(i) for i in range(len(self._npus))])

    def memory_cell(self) -> Panel:
        """The system memory's cell: memory_title() over memory_rows()."""
        return self.cell(self.memory_title(), _STYLES["memory"], self.memory_rows())

    def cpu_cell(self) -> Panel:
        """The CPU's cell: cpu_title() over cpu_rows()."""
        return self.cell(self.cpu_title(), _STYLES["cpu"], self.cpu_rows())

    def gpu_cell(self, index: int | GPU) -> Panel:
        """A GPU's cell (by index or GPU): gpu_title() over gpu_rows()."""
        index = self._position(index, "gpu")
        return self.cell(self.gpu_title(index), _STYLES["gpu"], self.gpu_rows(index))

    def npu_cell(self, index: int | NPU) -> Panel:
        """An NPU's cell (by index or NPU): npu_title() over npu_rows()."""
        index = self._position(index, "npu")
        return self.cell(self.npu_title(index), _STYLES["npu"], self.npu_rows(index))

    def cell(self, title: str, border_style: str, rows: list[str] | tuple[str, ...]) -> Panel:
        """A Rich panel with `title` in its top border (left-aligned, bold), its border drawn in
        `border_style`, and each of `rows` on a line of its own. Titles and rows are taken as
        plain text, never as Rich markup."""
        _need_rich("cell")
        from rich.panel import Panel
        from rich.text import Text

        return Panel(Text("\n".join(str(r) for r in rows)), title=Text(str(title), style="bold"),
                     title_align="left", border_style=border_style, expand=True)

    def arrow_to(self, label: str, connector: str = "──") -> Text:
        """The arrow from memory to a unit as Rich text, `connector` drawing its line on either
        side of `label`: "── PCIe 5 x16 ──▶"; without a label, "────▶"."""
        _need_rich("arrow_to")
        from rich.text import Text

        arrow = Text(no_wrap=True)
        if label:
            arrow.append(f"{connector} ", style=_ARROW_STYLE)
            arrow.append(str(label))
            arrow.append(f" {connector}▶", style=_ARROW_STYLE)
        else:
            arrow.append(f"{connector}{connector}▶", style=_ARROW_STYLE)
        return arrow

    # ----------------------------------------------------------------- memory and links

    def distinct_memory(self, unit: Unit) -> Memory | None:
        """The memory `unit` has apart from the host's: its Memory reading (read now) when the
        unit has a pool of its own (a discrete GPU's VRAM, an accelerator's HBM, even where it
        cannot be read), None when it is the system pool (the CPU) or shared with the host
        (unified memory, a coherent GPU the library marks unified)."""
        if not isinstance(unit, Unit):
            raise TypeError(f"distinct_memory needs a CPU, GPU or NPU, not {type(unit).__name__}")
        memory = unit.memory
        if memory.scope in ("system", "unified") or getattr(memory, "unified", False):
            return None
        return memory

    def shared_memory_units(self) -> list[str]:
        """The labels of the units that use the system memory cell: the CPU first, then every
        GPU and NPU without memory of its own (see distinct_memory)."""
        return [self.machine.cpu.label] + [u.label for u in (*self._gpus, *self._npus)
                                           if self.distinct_memory(u) is None]

    def connection_label(self, kind: str, index: int | Unit = 0) -> str:
        """How memory reaches a unit of `kind` ("cpu", "gpu", "npu"; `index` picks the GPU or
        NPU): "DDR5-4800", "PCIe 5 x16", "NVLink-C2C", "unified", "on-die"…"""
        kind = str(getattr(kind, "value", kind))
        if kind not in ("cpu", "gpu", "npu"):
            raise ValueError(f"unit kind {kind!r} is not one of 'cpu', 'gpu', 'npu'")
        position = 0 if kind == "cpu" else self._position(index, kind)
        return self._native.connection_label(kind, position)

    def fabric_label(self) -> str:
        """The link most accelerators reach memory over ("PCIe 5 x16", "NVLink-C2C",
        "unified"…); empty without accelerators."""
        return self._native.fabric_label()

    def short_fabric_label(self) -> str:
        """fabric_label() shortened to fit on a connector: a PCIe link keeps its generation and
        drops its width ("PCIe 5 x16" → "PCIe5", "PCIe" when the generation is unknown),
        "NVLink-C2C" becomes "C2C"; other labels ("unified", "on-die") and "" are unchanged."""
        label = self.fabric_label()
        pcie = re.match(r"PCIe(?:\s*(\d+))?", label)
        if pcie:
            return "PCIe" + (pcie.group(1) or "")
        if label == "NVLink-C2C":
            return "C2C"
        return label

    def gpu_clock_label(self, gpu: int | GPU) -> str:
        """A GPU's clocks now (by index or GPU), compact: "SM 1980 MHz · MEM 2619 MHz" (the
        graphics clock, "GFX", where there is no SM clock); "" when it reports none."""
        unit = self._gpus[self._position(gpu, "gpu")]
        current = {}
        for reading in unit.clock_readings:
            domain = getattr(reading, "domain", None)
            mhz = getattr(reading, "current_mhz", None)
            if domain in _CLOCK_NAMES and mhz is not None and domain not in current:
                current[domain] = mhz
        if "sm" in current:
            current.pop("graphics", None)
        return " · ".join(f"{_CLOCK_NAMES[d]} {current[d]:.0f} MHz"
                          for d in _CLOCK_NAMES if d in current)

    # ----------------------------------------------------------------- the pieces, as text

    def compact_summary(self) -> str:
        """One short line: host, CPU, memory, accelerators, memory cap, scratch."""
        return self._native.compact_summary()

    def memory_title(self) -> str:
        """The memory cell's title: "Memory", or "Unified memory" where GPUs share it."""
        return self._native.memory_title()

    def memory_rows(self) -> list[str]:
        """The memory cell's lines: size, DIMMs, use, swap, cgroup cap, NUMA nodes, sharers."""
        return self._native.memory_rows()

    def cpu_title(self) -> str:
        """The CPU cell's title: "CPU · " and the CPU's name."""
        return self._native.cpu_title()

    def cpu_rows(self) -> list[str]:
        """The CPU cell's lines: cores, clocks, caches, load."""
        return self._native.cpu_rows()

    def gpu_title(self, index: int | GPU) -> str:
        """A GPU cell's title (by index or GPU): its index and name."""
        return self._native.gpu_title(self._position(index, "gpu"))

    def gpu_rows(self, gpu: int | GPU) -> list[str]:
        """A GPU cell's lines (by index or GPU): identity, memory, utilization, clocks, power."""
        return self._native.gpu_rows(self._position(gpu, "gpu"))

    def npu_title(self, index: int | NPU) -> str:
        """An NPU cell's title (by index or NPU): its index and name."""
        return self._native.npu_title(self._position(index, "npu"))

    def npu_rows(self, npu: int | NPU) -> list[str]:
        """An NPU cell's lines (by index or NPU)."""
        return self._native.npu_rows(self._position(npu, "npu"))

    def swap_label(self) -> str:
        """Swap in use and its size ("swap none" without swap, "swap unknown" when unread)."""
        return self._native.swap_label()

    def metal_label(self, value: str) -> str:
        """A human label for a macOS Metal identifier ("spdisplays_metal3" → "Metal 3")."""
        return _mainboard._MachineView.metal_label(value)

    def bytes(self, value: int) -> str:
        """A byte count as the view writes it ("1.50 GiB")."""
        return _mainboard._MachineView.bytes(value)

    def capacity_pair(self, used_bytes: int, total_bytes: int) -> str:
        """Used and total in one unit where that reads well ("12.0 / 80.0 GiB")."""
        return _mainboard._MachineView.capacity_pair(used_bytes, total_bytes)

    def memory_usage(self, memory: Memory) -> str:
        """A Memory reading as a gauge and its capacity pair; its total alone when use is
        unknown."""
        return _mainboard._MachineView.memory_usage(memory.model_dump_json())

    # ----------------------------------------------------------------- helpers

    def _unit_keys(self) -> list[tuple[str, int]]:
        return ([("cpu", 0)] + [("gpu", i) for i in range(len(self._gpus))]
                + [("npu", i) for i in range(len(self._npus))])

    def _position(self, unit: Any, kind: str) -> int:
        """The index of a GPU or NPU given by index or unit, checked against this machine's."""
        units = self._gpus if kind == "gpu" else self._npus
        name = kind.upper()
        if isinstance(unit, Unit):
            for i, u in enumerate(units):
                if u is unit:
                    return i
            raise ValueError(f"{unit!r} is not one of this machine's {name}s")
        if isinstance(unit, bool):
            raise TypeError(f"a {name} index must be an int, not bool")
        try:
            index = operator.index(unit)
        except TypeError:
            raise TypeError(f"a {name} is given by its index (an int) or as a {name} of this "
                            f"machine, not {type(unit).__name__}") from None
        if not 0 <= index < len(units):
            raise IndexError(f"{name} index {index} is out of range: this machine has "
                             f"{_count(len(units), name)}")
        return index


class _Fitted:
    """The Rich schematic where it fits the width it is given, else the text schematic at that
    width (the command's rule: boxes reflowed to fit, a list below 60 columns), in its colours.
    The choice is made when Rich draws it, from the console's width then."""

    def __init__(self, view: MachineView) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: Any) -> Any:
        from rich.measure import Measurement
        from rich.text import Text

        grid = self.view.schematic_grid()
        summary = Text(self.view.compact_summary(), style="dim")
        natural = Measurement.get(console, options.update_width(10_000), grid).maximum
        if natural <= options.max_width:
            yield grid
            yield summary
            return
        drawn = self.view.text(color=True, width=max(options.max_width, 20))
        yield Text.from_ansi(drawn.rstrip("\n"))

    def __rich_measure__(self, console: Console, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.view.schematic_grid())


def live_frames(interval: float = 1.0, *, count: int | None = None, all_processes: bool = False,
                machine: Machine | None = None) -> Iterator[dict[str, Any]]:
    """The live view's readings (what `mainboard top --json` writes), one dict per `interval`
    seconds, `count` of them (without end when None): the rates in each (CPU use, a process's
    CPU share, package power, NVLink) are over the time since the one before. The first comes
    after one interval. `machine`: this process's `Machine()` when None."""
    if not interval > 0:
        raise ValueError(f"interval must be above 0, not {interval!r}")
    if count is not None and count < 0:
        raise ValueError(f"count must be 0 or more, not {count!r}")
    if machine is None:
        machine = Machine()
    watch = _mainboard._MachineWatch(machine._native, all_processes or not machine.gpus)
    watch.next()
    made = 0
    while count is None or made < count:
        time.sleep(interval)
        yield json.loads(watch.next())
        made += 1


def top(*, interval: float = 1.0, all_processes: bool = False, count: int | None = None) -> int:
    """Runs the live view, `mainboard top`, on this terminal until it is quit (q or Ctrl-C), or
    for `count` refreshes: the same screen and keys as the command. Not on a terminal (a
    notebook, a pipe), it prints one frame and returns. The view's exit status (0 when quit
    with q; 130 after Ctrl-C)."""
    if not interval >= 0.1:
        raise ValueError(f"interval must be at least 0.1 s, not {interval!r}")
    from .__main__ import command

    program = command()
    if program is not None and sys.stdin.isatty() and sys.stdout.isatty():
        argv = [program, "top", "--interval", repr(float(interval))]
        if all_processes:
            argv.append("--all")
        if count is not None:
            argv += ["--count", str(int(count))]
        sys.stdout.flush()
        try:
            return subprocess.run(argv, check=False).returncode
        except KeyboardInterrupt:  # the view had the Ctrl-C too, and gave the terminal back
            return 130
    sys.stdout.write(MachineView().top_frame(interval=min(interval, 0.5),
                                             all_processes=all_processes))
    return 0
