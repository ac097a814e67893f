"""MachineView: the text schematic and the Rich one, on recorded hosts (NVIDIA GPUs through the
fake driver libraries)."""

import io
import os
import subprocess
import sys
import textwrap

import pytest

import mainboard
from conftest import host


def _rich_text(renderable, width=100):
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def _run(code):
    """Runs `code` in a fresh interpreter with this one's environment; its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def plain_view(name):
    """A view of a recorded host with no NVIDIA driver to find (whatever fake another fixture of
    the test points the provider at): its own GPUs and NPUs only."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
        env.setenv("MAINBOARD_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
        env.delenv("MAINBOARD_FAKE_GPU_SCENARIO", raising=False)
        return mainboard.MachineView(mainboard.Machine.over(host(name)))


@pytest.fixture
def h100_view(fake_gpus):
    fake_gpus("h100x8")
    return mainboard.MachineView(mainboard.Machine.over(host("gpu-procs")))


@pytest.fixture
def cpu_view():
    view = plain_view("numa-2socket")
    assert view.machine.gpus == () and view.machine.npus == ()
    return view


def test_renderable_on_a_gpu_host_shows_memory_cpu_and_every_gpu(h100_view):
    pytest.importorskip("rich")
    from rich.console import Group

    view = h100_view
    assert len(view.machine.gpus) == 8
    drawn = view.renderable()
    assert isinstance(drawn, Group)
    text = _rich_text(drawn)
    assert view.machine.cpu.label in text
    assert view.memory_title() in text
    titles = [view.gpu_title(i) for i in range(8)]
    assert all(t in text for t in titles)
    assert [text.index(t) for t in titles] == sorted(text.index(t) for t in titles)
    assert "PCIe 5 x16" in text and "▶" in text
    assert view.compact_summary()[:30] in text
    assert _rich_text(view) == text   # the view itself renders through __rich__


def test_renderable_on_a_host_without_gpus(cpu_view):
    pytest.importorskip("rich")
    text = _rich_text(cpu_view.renderable())
    assert cpu_view.machine.cpu.label in text
    assert cpu_view.memory_title() in text
    assert "GPU" not in text
    assert cpu_view.connection_label("cpu") in text


@pytest.mark.parametrize("width", [100, 70, 50, 40])
def test_a_narrow_console_gets_the_commands_layout_with_nothing_cut(cpu_view, h100_view, width):
    pytest.importorskip("rich")
    for view in (cpu_view, h100_view):
        text = _rich_text(view.renderable(), width=width)
        lines = text.rstrip("\n").split("\n")
        assert max(len(line) for line in lines) <= width, text
        assert "…" not in text, text  # no title or row shortened with an ellipsis
        # Every word of the CPU's title is there, wherever the lines broke it.
        words = " ".join(line.strip(" │╭╮╰╯─") for line in lines).split()
        for word in view.cpu_title().replace("·", " ").split():
            assert word in words or any(word in w for w in words), (word, text)
        if width < 60:  # a list, as the command draws it there: no boxes
            assert "╭" not in text and "┌" not in text, text
            plain = [line.rstrip() for line in view.text(width=width).rstrip("\n").split("\n")]
            assert [line.rstrip() for line in lines] == plain, text
        elif width >= 100:
            assert "╭" in text  # the Rich grid, where it fits


def test_show_prints_the_rich_schematic(cpu_view):
    pytest.importorskip("rich")
    from rich.console import Console

    console = Console(record=True, width=100, file=io.StringIO())
    cpu_view.show(console=console)
    assert cpu_view.machine.cpu.label in console.export_text()


def test_text_and_print_keep_the_plain_schematic(cpu_view, capsys):
    text = cpu_view.text(width=100)
    assert isinstance(text, str)
    assert cpu_view.memory_title() in text and cpu_view.cpu_title() in text
    assert "\x1b[" not in text and "\x1b[" in cpu_view.text(color=True)
    cpu_view.print(width=100)
    assert capsys.readouterr().out == text   # not a terminal: no colour


@pytest.mark.parametrize("name, gpus, npus", [("numa-2socket", 0, 0), ("radeon-npu", 1, 1),
                                               ("apple-m3-max", 1, 1)])
def test_detected_unit_cells_are_the_units_that_exist(name, gpus, npus):
    pytest.importorskip("rich")
    from rich.panel import Panel

    view = plain_view(name)
    assert (len(view.machine.gpus), len(view.machine.npus)) == (gpus, npus)
    cells = view.detected_unit_cells()
    assert len(cells) == 1 + gpus + npus
    assert all(isinstance(c, Panel) for c in cells)
    titles = [view.cpu_title()] + [view.gpu_title(i) for i in range(gpus)] + \
             [view.npu_title(i) for i in range(npus)]
    assert [c.title.plain for c in cells] == titles
    if npus:
        assert view.npu_title(view.machine.npus[0]) == titles[-1]
        assert view.npu_rows(view.machine.npus[0]) == view.npu_rows(0)


def test_detected_unit_cells_with_eight_gpus(h100_view):
    pytest.importorskip("rich")
    cells = h100_view.detected_unit_cells()
    assert len(cells) == 1 + 8
    assert cells[3].title.plain == h100_view.gpu_title(2)
    assert cells[3].border_style == "green" and cells[0].border_style == "cyan"
    assert "NVIDIA H100" in _rich_text(h100_view.gpu_cell(h100_view.machine.gpus[2]))


def test_out_of_range_units_raise_index_error_with_the_count(cpu_view, h100_view):
    with pytest.raises(IndexError, match=r"GPU index 0 is out of range: this machine has 0 GPUs"):
        cpu_view.gpu_title(0)
    with pytest.raises(IndexError, match=r"GPU index 99 .* has 8 GPUs"):
        h100_view.gpu_title(99)
    with pytest.raises(IndexError, match=r"GPU index -1 .* has 8 GPUs"):
        h100_view.gpu_rows(-1)
    with pytest.raises(IndexError, match=r"NPU index 0 .* has 0 NPUs"):
        h100_view.npu_title(0)
    with pytest.raises(IndexError, match=r"GPU index 8 "):
        h100_view.connection_label("gpu", 8)
    with pytest.raises(TypeError, match="not str"):
        h100_view.gpu_title("0")
    with pytest.raises(TypeError, match="not bool"):
        h100_view.gpu_title(True)
    with pytest.raises(ValueError, match="unit kind"):
        h100_view.connection_label("tpu")
    for error in (IndexError, TypeError):
        try:
            h100_view.gpu_title(99 if error is IndexError else 1.5)
        except error as e:
            assert "_M_range_check" not in str(e) and "incompatible" not in str(e)


def test_out_of_range_cells_raise_index_error(cpu_view):
    pytest.importorskip("rich")
    with pytest.raises(IndexError, match="has 0 GPUs"):
        cpu_view.gpu_cell(0)
    with pytest.raises(IndexError, match="has 0 NPUs"):
        cpu_view.npu_cell(0)


def test_distinct_memory_is_a_discrete_gpus_vram_and_none_for_shared_pools(h100_view):
    gpu = h100_view.machine.gpus[0]
    vram = h100_view.distinct_memory(gpu)
    assert isinstance(vram, mainboard.Memory)
    assert vram.scope == "vram" and vram.total_bytes > 70 << 30
    assert h100_view.distinct_memory(h100_view.machine.cpu) is None
    with pytest.raises(TypeError):
        h100_view.distinct_memory(0)


def test_distinct_memory_is_none_for_unified_memory():
    view = plain_view("apple-m3-max")   # its GPU and NPU share the pool
    assert [view.distinct_memory(u) for u in view.machine.units] == [None, None, None]


def test_shared_memory_units(h100_view, cpu_view):
    assert h100_view.shared_memory_units() == [h100_view.machine.cpu.label]
    assert cpu_view.shared_memory_units() == [cpu_view.machine.cpu.label]


def test_shared_memory_units_on_unified_memory():
    apple = plain_view("apple-m3-max")
    assert apple.shared_memory_units() == [u.label for u in apple.machine.units]


def test_arrow_to_and_cell_are_rich_text_and_panels(cpu_view):
    pytest.importorskip("rich")
    from rich.panel import Panel
    from rich.text import Text

    arrow = cpu_view.arrow_to("PCIe 5 x16", "──")
    assert isinstance(arrow, Text) and arrow.plain == "── PCIe 5 x16 ──▶"
    assert cpu_view.arrow_to("unified", "══").plain == "══ unified ══▶"
    assert cpu_view.arrow_to("", "─").plain == "──▶"
    cell = cpu_view.cell("GPU 0 · [bold]x", "green", ["first row", "[red]second"])
    assert isinstance(cell, Panel) and cell.border_style == "green"
    text = _rich_text(cell, width=40)
    assert "GPU 0 · [bold]x" in text   # titles and rows are plain text, not markup
    assert "first row" in text and "[red]second" in text
    assert text.index("first row") < text.index("[red]second")


def test_memory_and_cpu_cells(cpu_view):
    pytest.importorskip("rich")
    memory = _rich_text(cpu_view.memory_cell())
    assert cpu_view.memory_title() in memory and cpu_view.swap_label() in memory
    assert cpu_view.cpu_title() in _rich_text(cpu_view.cpu_cell())
    grid = _rich_text(cpu_view.schematic_grid())
    # memory on the left, the CPU on the right, on the same lines
    line = next(l for l in grid.splitlines() if cpu_view.cpu_title() in l)
    assert line.index(cpu_view.cpu_title()) > line.index(cpu_view.memory_title())
    arrows = _rich_text(cpu_view.connected_units())
    assert f"── {cpu_view.connection_label('cpu')} ──▶" in arrows


def test_gpu_clock_label(h100_view, cpu_view):
    assert h100_view.gpu_clock_label(0) == "SM 1980 MHz · MEM 2619 MHz"
    assert h100_view.gpu_clock_label(h100_view.machine.gpus[7]) == "SM 1980 MHz · MEM 2619 MHz"
    with pytest.raises(IndexError):
        cpu_view.gpu_clock_label(0)


def test_gpu_clock_label_is_empty_without_clock_readings():
    apple = plain_view("apple-m3-max")
    assert apple.gpu_clock_label(0) == ""   # Apple's GPU clocks are privileged


def test_short_fabric_label(h100_view, cpu_view):
    assert h100_view.fabric_label() == "PCIe 5 x16" and h100_view.short_fabric_label() == "PCIe5"
    assert cpu_view.fabric_label() == "" and cpu_view.short_fabric_label() == ""


def test_short_fabric_label_of_a_coherent_gpu(fake_gpus):
    # The fake NVML reads its scenario when first initialised in a process: a fresh one for GH200.
    fake_gpus("gh200")
    out = _run(f"""
        import mainboard
        view = mainboard.MachineView(mainboard.Machine.over({host("grace-hopper")!r}))
        print(view.fabric_label(), view.short_fabric_label(), sep="|")
        print(*view.shared_memory_units(), sep="|")
    """)
    fabric, shared = out.splitlines()
    assert fabric == "NVLink-C2C|C2C"
    assert shared == "ARM Neoverse-V2|NVIDIA GH200 480GB"   # coherent: unified with the host


def test_short_fabric_label_keeps_unified():
    apple = plain_view("apple-m3-max")
    assert apple.fabric_label() == "unified" and apple.short_fabric_label() == "unified"


def test_repr_says_what_the_view_holds(h100_view, cpu_view):
    assert repr(h100_view) == (f"MachineView(machine=Machine(sysroot={host('gpu-procs')!r}), "
                               "gpus=8, npus=0)")
    assert repr(cpu_view).endswith("gpus=0, npus=0)")
    with pytest.raises(TypeError):
        mainboard.MachineView("/")


def test_import_and_snapshot_do_not_import_rich():
    out = _run(f"""
        import sys
        import mainboard
        m = mainboard.Machine.over({host("numa-2socket")!r})
        m.snapshot()
        view = mainboard.MachineView(m)
        view.text()
        view.compact_summary()
        print('rich' in sys.modules)
    """)
    assert out.strip() == "False"


def test_without_rich_renderable_falls_back_to_text():
    out = _run(f"""
        import sys
        sys.modules['rich'] = None   # as if Rich were not installed
        import mainboard
        view = mainboard.MachineView(mainboard.Machine.over({host("numa-2socket")!r}))
        drawn = view.renderable()
        assert isinstance(drawn, str) and drawn == view.text(), drawn
        try:
            view.cell("t", "red", [])
        except ModuleNotFoundError as e:
            assert "Rich" in str(e)
        else:
            raise AssertionError("cell() without Rich")
        print("---")
        view.show()
    """)
    shown = out.split("---\n", 1)[1]
    assert "Memory" in shown and "CPU" in shown


def test_notebooks_show_the_schematic_of_a_view_and_of_a_snapshot(cpu_view):
    """_repr_html_: the view and a snapshot of the same machine show the same schematic."""
    import html

    view = cpu_view._repr_html_()
    assert view.startswith("<pre") and html.unescape(view).count("\n") > 5
    assert cpu_view.compact_summary() in html.unescape(view)
    snapshot = cpu_view.machine.snapshot(toolchain=False)._repr_html_()
    assert html.unescape(snapshot.split(">", 1)[1]).split("\n")[0] \
        == html.unescape(view.split(">", 1)[1]).split("\n")[0]
    # Jupyter asks for a bundle first: the same HTML, and the repr for a front end without HTML.
    bundle = cpu_view._repr_mimebundle_()
    assert bundle == {"text/html": view, "text/plain": repr(cpu_view)}


def test_top_frame_shows_the_gpus_and_their_process(h100_view):
    frame = h100_view.top_frame(interval=0.05, width=120, height=30)
    lines = frame.splitlines()
    assert len(lines) == 30
    assert all(len(line) <= 120 for line in lines)
    assert "mainboard top — dgx-a" in lines[0]
    gpu3 = next(line for line in lines if line.startswith("GPU3"))
    assert "97%" in gpu3 and "40.0 / 79.6 GiB" in gpu3
    row = next(line for line in lines if " 4242 " in line)
    assert "40.0 GiB" in row and "python3" in row
    # Every process the recorded /proc describes (its others have no stat to read), by PID.
    every = h100_view.top_frame(interval=0.0, width=100, all_processes=True, sort="pid")
    assert "PID▲" in every
    pids = [int(line.split()[0]) for line in every.splitlines()
            if line[:9].strip().isdigit()]
    assert pids == [4242]
    with pytest.raises(ValueError):
        h100_view.top_frame(interval=-1)


def test_live_frames_are_the_commands_json_lines(fake_gpus):
    fake_gpus("h100x8")
    machine = mainboard.Machine.over(host("gpu-procs"))
    frames = list(mainboard.live_frames(0.05, count=2, machine=machine))
    assert [f["sequence"] for f in frames] == [1, 2]
    assert frames[1]["interval_s"] > 0
    gpus = frames[-1]["gpus"]
    assert len(gpus) == 8
    assert gpus[3]["reading"]["telemetry"]["utilization"]["compute_pct"] == 97
    assert {p["pid"]: p["gpus"] for p in frames[-1]["processes"]}[4242] == [3]
    assert list(mainboard.live_frames(0.05, count=0, machine=machine)) == []
    with pytest.raises(ValueError):
        next(mainboard.live_frames(0))


def test_top_off_a_terminal_prints_one_frame_and_returns(capsys):
    assert mainboard.top(interval=0.2) == 0
    out = capsys.readouterr().out
    assert out.startswith("mainboard top — ")
    assert "processes" in out
    with pytest.raises(ValueError):
        mainboard.top(interval=0.01)
