"""The machine from Python: the same readings as the C++ library and the command."""

import dataclasses
import json
import os
import subprocess

import pytest

import mainboard
from conftest import host


def without_times(doc):
    doc = dict(doc)
    for key in ("timestamp_ns", "unix_time_ns"):
        doc.pop(key, None)
    doc["diagnostics"] = [{k: v for k, v in d.items() if k != "duration_ns"} for d in doc["diagnostics"]]
    for units in ("gpus", "npus"):
        for u in doc[units]:
            u["telemetry"].pop("timestamp_ns", None)
    return doc


def test_machine_is_one_object_per_process():
    assert mainboard.Machine() is mainboard.Machine()
    m = mainboard.Machine()
    assert m.cpu is m.cpu  # cached
    assert m.units[0] is m.cpu
    assert m.cpu.info.threads >= 1
    assert m.memory.total_bytes > 0


def test_snapshot_is_the_document_the_command_prints():
    cli = os.environ.get("MAINBOARD_CLI")
    if not cli:
        pytest.skip("the command is not built")
    for name in ("numa-2socket", "cgroup2-capped", "apple-m3-max"):
        ours = mainboard.Machine.over(host(name)).snapshot()
        theirs = subprocess.run([cli, "--sysroot", host(name), "snapshot", "--json"],
                                capture_output=True, text=True, check=True).stdout
        assert without_times(ours.model_dump()) == without_times(json.loads(theirs)), name


def test_models_read_the_fixture_host():
    m = mainboard.Machine.over(host("numa-2socket"))
    assert m.cpu.label.startswith("Intel(R) Xeon(R)")
    assert (m.cpu.info.packages, m.cpu.info.cores, m.cpu.info.threads) == (2, 16, 32)
    assert m.cpu.info.cache_bytes(3) is not None
    assert m.board.vendor == "Dell Inc."
    mem = m.memory
    assert isinstance(mem, mainboard.Memory)
    assert mem.total_gb == pytest.approx(512.0)
    assert 0 < mem.percent_used < 100
    s = m.snapshot(toolchain=False)
    assert s.unit_count == 1 and s.kinds == (mainboard.UnitKind.CPU,)
    assert s.toolchain is None
    assert s.diagnostic("board").status == "ok"
    capped = mainboard.Machine.over(host("cgroup2-capped"))
    assert capped.cgroup_memory.capped and capped.cgroup_memory.limit_bytes == 8 << 30
    # A limit file that is there but unreadable: no reading (not "no cap"), and why.
    broken = mainboard.Machine.over(host("broken"))
    assert broken.cgroup_memory is None
    assert "malformed" in broken.snapshot(toolchain=False).unavailable_reason("cgroup_memory")
    assert capped.environment.job.scheduler == "slurm"
    assert capped.scratch.found


def test_models_are_frozen_values():
    s = mainboard.Machine.over(host("numa-2socket")).snapshot(toolchain=False)
    with pytest.raises(mainboard.FrozenInstanceError):
        s.hostname = "other"
    with pytest.raises(AttributeError):  # as dataclasses' FrozenInstanceError is
        s.hostname = "other"
    again = mainboard.MachineSnapshot.model_validate_json(s.model_dump_json())
    assert again == s and hash(again) == hash(s)
    assert isinstance(s.cpu.info.caches, tuple)
    with pytest.raises(AttributeError):
        s.no_such_field


def test_gpus_through_the_fake_driver_libraries(fake_gpus):
    fake_gpus("h100x8")
    m = mainboard.Machine.over(host("gpu-procs"))
    gpus = m.gpus
    assert len(gpus) == 8
    g = gpus[0]
    assert isinstance(g, mainboard.NvidiaGPU)
    assert g.label == "NVIDIA H100 80GB HBM3"
    assert g.cuda_architecture == mainboard.ComputeCapability(9, 0)
    assert g.arch_key == "sm_90"
    assert g.peak_bandwidth_gbs > 1000
    assert g.memory.total_gb == pytest.approx(79.6, abs=1)
    assert g.fan_speed_pct >= 0
    assert {c.domain for c in g.nvml_clocks()} >= {"sm", "memory"}
    props = g.runtime_properties
    assert props["multi_processor_count"] == g.sm_count == 132
    assert props["compute_capability"] == (9, 0) and props["memory_bus_width_bits"] == 5120
    with pytest.raises(TypeError):
        props["name"] = "other"  # read-only
    snap = g.snapshot("step")
    assert isinstance(snap, mainboard.GPUSnapshot)
    assert snap.name == "step" and snap.info.uuid == g.uuid  # a UnitSnapshot's fields too
    # Health is a typed model (persistence and ECC from the fake driver's scenario).
    assert isinstance(snap.health, mainboard.GpuHealth)
    assert snap.health.persistence_mode is True and snap.health.ecc_enabled is True
    assert snap.health.ecc_uncorrected_volatile == 0
    assert snap.unit_activity is None or isinstance(snap.unit_activity, mainboard.GpuUnitActivity)
    busy = [p for x in gpus for p in x.processes]
    assert busy and busy[0].name  # names from /proc/<pid>/comm of the recorded host
    assert mainboard.gpu_busy(3, machine=m) in (True, False)
    waited = []
    assert mainboard.wait_for_idle(7, timeout=1.0, poll_interval=0.25, sleep=waited.append,
                                   machine=m) in (True, False)


def test_wait_for_idle_uses_the_injected_sleep(fake_gpus):
    fake_gpus("h100x8")
    m = mainboard.Machine.over(host("gpu-procs"))
    busy_index = next((i for i in range(len(m.gpus)) if mainboard.gpu_busy(i, machine=m)), None)
    if busy_index is None:
        pytest.skip("the scenario has no busy GPU")
    slept = []
    assert mainboard.wait_for_idle(busy_index, timeout=2.0, poll_interval=0.5, sleep=slept.append,
                                   machine=m) is False
    assert sum(slept) == pytest.approx(2.0)


def test_a_host_without_gpus_reads_idle():
    m = mainboard.Machine.over(host("numa-2socket"))
    assert m.gpus == ()
    assert mainboard.gpu_busy(0, machine=m) is False


def test_meter_is_a_context_manager():
    with mainboard.meter() as m:
        block = bytearray(64 << 20)
        m.sample()
    assert m.elapsed_s > 0
    assert m.peak_host_gb > 0
    assert len(block) == 64 << 20


MIB = 1 << 20


def _touched(n):
    """n bytes the process has really written (a bytearray(n) is zero pages, never resident)."""
    return b"\x01" * n


def test_a_meter_says_what_its_region_added_and_catches_a_peak_between_samples():
    alive = _touched(200 * MIB)  # resident before the region: not the region's
    with mainboard.meter() as m:
        block = _touched(300 * MIB)
        del block  # freed before any sample: only the high-water mark saw it
    if not m.peak_rss_from_kernel:
        pytest.skip("the kernel refused the high-water mark reset (/proc/self/clear_refs)")
    assert m.rss_at_start_bytes >= 200 * MIB
    # The region's own 300 MiB, not the 200 alive before it (peak_rss_bytes has both).
    assert 260 * MIB <= m.peak_rss_delta_bytes <= 360 * MIB, m
    assert m.peak_rss_bytes >= m.rss_at_start_bytes + 260 * MIB
    assert m.peak_rss_delta_gb == pytest.approx(m.peak_rss_delta_bytes / 2**30)
    # A meter inside another keeps the outer one's peak, though its reset wiped the mark.
    with mainboard.meter() as outer:
        block = _touched(300 * MIB)
        del block
        with mainboard.meter() as inner:
            small = _touched(50 * MIB)
            inner.sample()
            del small
    assert 260 * MIB <= outer.peak_rss_delta_bytes <= 360 * MIB, outer
    assert 40 * MIB <= inner.peak_rss_delta_bytes <= 100 * MIB, inner
    # PSS follows the samples: a block alive at a sample is the region's.
    with mainboard.meter() as p:
        block = _touched(100 * MIB)
        p.sample()
        del block
    if p.peak_pss_bytes:
        assert 80 * MIB <= p.peak_pss_delta_bytes <= 140 * MIB, p
        assert p.peak_pss_delta_gb == pytest.approx(p.peak_pss_delta_bytes / 2**30)
    # A region that only freed memory added nothing.
    with mainboard.meter() as f:
        del alive
    assert f.peak_rss_delta_bytes <= 10 * MIB


def _rapl_zone(root, zone, name, energy_uj):
    d = root / "sys/class/powercap" / zone
    d.mkdir(parents=True, exist_ok=True)
    (d / "name").write_text(name + "\n")
    (d / "energy_uj").write_text(energy_uj + "\n")
    (d / "max_energy_range_uj").write_text("262143328850\n")


def test_meter_energy_sums_rapl_across_a_wrap(tmp_path, monkeypatch):
    monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("MAINBOARD_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
    _rapl_zone(tmp_path, "intel-rapl:0", "package-0", str(262143328850 - 500000))
    _rapl_zone(tmp_path, "intel-rapl:0:0", "dram", "1000000")
    machine = mainboard.Machine.over(str(tmp_path))
    snap = machine.snapshot(toolchain=False)
    assert [c.zone for c in snap.energy_counters.counters] == ["intel-rapl:0", "intel-rapl:0:0"]
    assert snap.energy_counters.counters[0].max_energy_range_uj == 262143328850
    with mainboard.meter(machine) as m:
        _rapl_zone(tmp_path, "intel-rapl:0", "package-0", "1500000")   # wrapped: 0.5 + 1.5 J
        _rapl_zone(tmp_path, "intel-rapl:0:0", "dram", "1250000")      # 0.25 J
        m.sample()
    energy = m.energy
    assert isinstance(energy, mainboard.RegionEnergy)
    assert [d.domain for d in energy.domains] == ["cpu", "dram"]
    assert energy.domains[0].joules == pytest.approx(2.0)
    assert energy.domains[1].joules == pytest.approx(0.25)
    assert m.energy_j == pytest.approx(2.25)
    assert energy.mean_w == pytest.approx(2.25 / m.elapsed_s, rel=1e-6)
    assert energy.unavailable == ()


def test_meter_energy_says_why_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    with mainboard.meter(mainboard.Machine.over(str(tmp_path))) as m:
        pass
    assert m.energy_j is None
    assert m.energy.domains == ()
    assert m.energy.unavailable[0].startswith("cpu, dram: no RAPL energy counters")
    snap = mainboard.Machine.over(str(tmp_path)).snapshot(toolchain=False)
    assert snap.energy_counters is None
    assert snap.unavailable_reason("energy_counters").startswith("no RAPL energy counters")


def test_a_profiling_session_records_its_energy(tmp_path, monkeypatch):
    from mainboard import Feature, Profiler, span

    monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    _rapl_zone(tmp_path, "intel-rapl:0", "package-0", "1000000")
    machine = mainboard.Machine.over(str(tmp_path))
    with Profiler(features=Feature.SPANS, machine=machine) as p:
        with span("step"):
            _rapl_zone(tmp_path, "intel-rapl:0", "package-0", "4000000")   # 3 J
    energy = p.result().energy
    assert isinstance(energy, mainboard.RegionEnergy)
    assert energy.domains[0].domain == "cpu" and energy.domains[0].joules == pytest.approx(3.0)
    assert energy.unavailable == ("dram: this CPU's RAPL has no dram domain",)


def test_machine_view_renders():
    text = mainboard.MachineView(mainboard.Machine.over(host("numa-2socket"))).text(width=100)
    assert "Memory" in text and "CPU" in text


def test_arch_config_dispatches_by_arch_key_and_family(fake_gpus):
    from mainboard.profiling.arch_config import ArchConfig, arch_family

    tiles = ArchConfig((64, 64))
    tiles.set("sm_90", (128, 256)).set("ampere", (128, 128))
    assert tiles.lookup("sm_90") == (128, 256)
    assert tiles.lookup("sm_90a") == (128, 256)   # architecture-specific suffix dropped
    assert tiles.lookup("sm_86") == (128, 128)    # the family
    assert tiles.lookup("sm_120") == (64, 64)     # the default
    assert tiles.resolve("sm_86") == "ampere"
    assert arch_family("gfx942") == "cdna3"
    fake_gpus("h100x8")
    gpu = mainboard.Machine.over(host("gpu-procs")).gpus[0]
    assert tiles.lookup(gpu) == (128, 256)


def test_tool_probes_are_data_and_user_tools_are_found(tmp_path, monkeypatch):
    assert any(p.name == "gcc" for p in mainboard.TOOL_PROBES)
    tool = tmp_path / "mytool"
    tool.write_text("#!/bin/sh\necho 'mytool version 4.2.1'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    probe = mainboard.ToolProbe("mytool", mainboard.ToolCategory.BUILD, ("nope", "mytool"))
    found = probe.detect()
    assert found.available and found.version == "4.2.1" and found.path == str(tool)
    chain = mainboard.Toolchain.probe(probes=(probe,))
    assert [t.name for t in chain.tools] == ["mytool"]
    assert chain.by_category[mainboard.ToolCategory.BUILD][0].version == "4.2.1"
    missing = mainboard.ToolProbe("absent", "c", ("no-such-compiler",)).detect()
    assert not missing.available
    with pytest.raises(ValueError):
        mainboard.ToolProbe("bad", "cobol", ("x",))
    # a dataclass of plain data; the pattern a compiled regular expression, its source accepted
    import dataclasses
    import enum
    import re
    assert dataclasses.is_dataclass(probe) and isinstance(probe.pattern, re.Pattern)
    assert issubclass(mainboard.ToolCategory, enum.StrEnum) and f"{probe.category}" == "build"
    odd = mainboard.ToolProbe("mytool", "build", ("mytool",), ("-V",), r"version (\d+)\.")
    assert odd.detect().version == "4"
    assert odd == mainboard.ToolProbe("mytool", "build", ["mytool"], ["-V"],
                                      re.compile(r"version (\d+)\."))
    with pytest.raises(dataclasses.FrozenInstanceError):
        odd.name = "other"
    with pytest.raises(ValueError, match="ECMAScript"):
        mainboard.ToolProbe("t", "build", ("t",), pattern=r"(?P<v>\d+)")
    with pytest.raises(TypeError):
        mainboard.ToolProbe("t", "build", "t")


def test_machine_view_pieces():
    view = mainboard.MachineView(mainboard.Machine.over(host("numa-2socket")))
    assert "Memory" in view.memory_title()
    assert view.cpu_rows()
    assert "·" in view.compact_summary()
    assert view.metal_label("spdisplays_metal3") == "Metal 3"
    assert view.bytes(512) == "512 B"
    assert view.bytes(3 << 29) == "1.50 GiB"
    assert view.capacity_pair(12 << 30, 80 << 30) == "12.0 / 80.0 GiB"
    m = mainboard.Memory(total_bytes=80 << 30, used_bytes=20 << 30, supported=True, scope="vram")
    assert view.memory_usage(m) == "███░░░░░░░ 20.0 / 80.0 GiB"
    unknown = mainboard.Memory(total_bytes=8 << 30, supported=True)
    assert view.memory_usage(unknown) == "8.00 GiB"
    assert view.memory_usage(mainboard.Memory(supported=False)) == "memory unavailable"



def test_infiniband_ports_and_network_interfaces_are_typed_models():
    snapshot = mainboard.Machine.over(host("hpc-fabric")).snapshot(toolchain=False)
    ib = snapshot.infiniband
    assert isinstance(ib, mainboard.Infiniband)
    assert [d.name for d in ib.devices] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    first = ib.devices[0]
    assert isinstance(first, mainboard.InfinibandDevice)
    assert (first.hca_type, first.firmware, first.pci_address, first.numa_node) == (
        "MT4123", "20.39.1002", "0000:17:00.0", 0)
    port = first.ports[0]
    assert isinstance(port, mainboard.InfinibandPort) and port.up
    assert (port.rate_gbps, port.width, port.speed, port.expected_gbps) == (200.0, 4, "HDR", 200.0)
    assert port.received_bytes == 10_000_000_000 and port.errors.link_downed == 1
    down = ib.devices[1].ports[0]
    assert not down.up and (down.state, down.physical_state) == ("DOWN", "Polling")
    assert ib.devices[2].ports[0].width == 1
    assert ib.devices[3].ports[0].link_layer == "Ethernet"
    nics = snapshot.network.interfaces
    assert all(isinstance(i, mainboard.NetworkInterface) for i in nics)
    assert [i.name for i in nics] == ["eno1", "eno2", "ens6f0np0", "ib0", "ib1", "ib2"]
    assert (nics[0].driver, nics[0].speed_mbps, nics[0].mtu, nics[0].numa_node) == (
        "ice", 25000, 9000, None)
    assert nics[1].operstate == "down" and nics[1].speed_mbps is None
    # A host without InfiniBand says why.
    vm = mainboard.Machine.over(host("vm-cgroup1-nodmi")).snapshot(toolchain=False)
    assert vm.infiniband is None
    assert vm.unavailable_reason("infiniband") == (
        "no InfiniBand or RoCE devices (no /sys/class/infiniband)")
    assert vm.network is None and "no /sys/class/net" in vm.unavailable_reason("network")

def test_dimm_slots_that_cannot_be_read_are_empty_and_say_why():
    machine = mainboard.Machine.over(host("vm-cgroup1-nodmi"))
    live = machine.memory_hardware
    assert live.cards == () and live.slots_total == 0 and live.speed_mhz is None
    assert "no SMBIOS table" in live.unavailable_reason("cards")
    saved = machine.snapshot(toolchain=False).memory_hardware
    assert saved.cards == () and "no SMBIOS table" in saved.unavailable_reason("cards")
    read = mainboard.MemoryHardware({"cards": [{"locator": "A1", "size_bytes": 1 << 34}],
                                     "swap_total_bytes": 0, "swap_used_bytes": 0})
    assert read.slots_used == 1 and read.unavailable_reason("cards") is None


def test_pci_topology_is_a_typed_model_and_none_where_unread():
    snapshot = mainboard.Machine.over(host("dgx-8gpu")).snapshot()
    pci = snapshot.pci
    assert isinstance(pci, mainboard.PciTopology)
    assert [d.name for d in pci.devices][:2] == ["GPU0", "GPU1"]
    hca = pci.devices[8]
    assert isinstance(hca, mainboard.PciDevice)
    assert (hca.name, hca.kind, hca.address, hca.driver) == (
        "mlx5_0", "infiniband", "0000:15:00.0", "mlx5_core")
    assert hca.numa_node == 0 and hca.cpus == (0, 1, 2, 3, 8, 9, 10, 11)
    assert hca.host_bridge == "pci0000:10"
    assert hca.bridges == ("0000:10:01.0", "0000:11:00.0", "0000:12:02.0")
    vm = mainboard.Machine.over(host("vm-cgroup1-nodmi")).snapshot()
    assert vm.pci is None
    assert "no /sys/bus/pci/devices" in vm.unavailable_reason("pci")
    assert mainboard.MachineSnapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_pressure_stalls_are_typed_models_and_none_where_unread():
    snapshot = mainboard.Machine.over(host("cgroup2-capped")).snapshot()
    pressure = snapshot.pressure
    assert isinstance(pressure, mainboard.Pressure)
    assert snapshot.unavailable_reason("pressure") is None
    assert pressure.memory.some.avg10 == 24.5
    assert pressure.memory.full.total_us == 12345678
    assert isinstance(pressure.io.full, mainboard.StallShare)
    # A kernel before 5.13 has no "full" line for the CPU; a host without PSI says why.
    assert mainboard.Machine.over(host("numa-2socket")).snapshot().pressure.cpu.full is None
    vm = mainboard.Machine.over(host("vm-cgroup1-nodmi")).snapshot()
    assert vm.pressure is None
    assert "no /proc/pressure" in vm.unavailable_reason("pressure")
    with pytest.raises(AttributeError, match="no field 'pressur'"):
        vm.unavailable_reason("pressur")
    # A document of schema 1 said "supported": false beside the fields: still None, and why.
    old = vm.model_dump()
    old["schema_version"] = 1
    old["pressure"] = {"supported": False, "cpu": None, "memory": None, "io": None,
                       "reason": "psi=0"}
    old = mainboard.MachineSnapshot.model_validate(old)
    assert old.pressure is None and old.unavailable_reason("pressure") == "psi=0"
    # …and the DIMMs' pair, "cards_supported": false with "cards_reason", the same way.
    legacy = vm.model_dump()
    legacy["schema_version"] = 1
    legacy["memory_hardware"] = {"cards": [], "cards_supported": False,
                                 "cards_reason": "dmidecode not found", "swap_total_bytes": 0,
                                 "swap_used_bytes": 0}
    hw = mainboard.MachineSnapshot.model_validate(legacy).memory_hardware
    assert hw.cards == () and hw.unavailable_reason("cards") == "dmidecode not found"
    assert mainboard.MachineSnapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_temperatures_huge_pages_and_memory_errors_are_typed_models():
    snapshot = mainboard.Machine.over(host("numa-2socket")).snapshot()
    temps = snapshot.temperatures
    assert isinstance(temps, mainboard.Temperatures)
    package = temps.hottest("cpu_package")
    assert isinstance(package, mainboard.TemperatureSensor)
    assert (package.chip, package.label, package.device) == ("coretemp", "Package id 1", "coretemp.1")
    assert package.celsius == 100.0 and package.critical
    dimm = temps.hottest("dimm")
    assert dimm.celsius == 39.5 and dimm.critical_celsius == 85.0 and dimm.high_celsius is None
    assert [s.chip for s in temps.sensors if s.source == "thermal"] == ["acpitz", "x86_pkg_temp"]
    pools = snapshot.huge_pages.pools
    assert isinstance(pools[0], mainboard.HugePagePool)
    assert [(p.page_bytes, p.numa_node, p.total, p.free) for p in pools] == [
        (2 << 20, None, 1024, 512), (1 << 30, None, 8, 8), (2 << 20, 0, 512, 200),
        (1 << 30, 0, 4, 4), (2 << 20, 1, 512, 312), (1 << 30, 1, 4, 4)]
    assert pools[0].reserved == 12 and pools[2].reserved is None
    errors = snapshot.memory_errors
    assert isinstance(errors.controllers[1], mainboard.MemoryController)
    assert (errors.corrected, errors.uncorrected) == (15, 2)
    assert errors.controllers[0].type == "Intel_10nm Socket#0 IMC#0"
    assert errors.controllers[0].size_bytes == 256 << 30
    # Where they cannot be read: None, and why.
    broken = mainboard.Machine.over(host("broken")).snapshot()
    assert broken.temperatures is None
    assert "coretemp temp1" in broken.unavailable_reason("temperatures")
    assert broken.huge_pages is None and broken.memory_errors is None
    vm = mainboard.Machine.over(host("vm-cgroup1-nodmi")).snapshot()
    assert vm.unavailable_reason("memory_errors") == "no EDAC memory controller driver loaded"
    assert mainboard.MachineSnapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_tool_probe_is_a_frozen_dataclass_that_the_first_snapshot_does_not_pay_for():
    """The reference makes ToolProbe a dataclass; dataclasses (with inspect) is half the import
    of a first snapshot, so the class is written out and dataclasses builds its fields when asked."""
    import copy
    import dataclasses
    import pickle
    import subprocess
    import sys

    probe = mainboard.ToolProbe("mytool", "build", ["mytool"], pattern=r"v(\d+)")
    assert dataclasses.is_dataclass(mainboard.ToolProbe) and dataclasses.is_dataclass(probe)
    assert [f.name for f in dataclasses.fields(probe)] == [
        "name", "category", "binaries", "version_args", "pattern"]
    assert dataclasses.fields(mainboard.ToolProbe)[3].default == ("--version",)
    assert dataclasses.asdict(probe)["binaries"] == ("mytool",)
    other = dataclasses.replace(probe, name="other")
    assert (other.name, other.binaries, other.pattern.pattern) == ("other", ("mytool",), r"v(\d+)")
    assert probe == copy.deepcopy(probe) == pickle.loads(pickle.dumps(probe)) != other
    assert len({probe, copy.copy(probe), other}) == 2
    assert repr(probe).startswith("ToolProbe(name='mytool', category=<ToolCategory.BUILD")
    with pytest.raises(dataclasses.FrozenInstanceError):
        probe.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del probe.pattern
    match probe:
        case mainboard.ToolProbe(name, category):
            assert (name, category) == ("mytool", mainboard.ToolCategory.BUILD)
    fresh = subprocess.run(
        [sys.executable, "-c", "import sys, mainboard; mainboard.Machine().snapshot(); "
         "print(sorted({'dataclasses', 'inspect', 'typing'} & set(sys.modules)))"],
        capture_output=True, text=True, timeout=60, check=True)
    assert fresh.stdout.split("\n")[0] == "['typing']", fresh.stdout + fresh.stderr
