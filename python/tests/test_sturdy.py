"""The package as the reference documents it, and as sturdy as a training script needs: models
with pydantic's API, spans and sessions that survive re-entry, threads, generators, forks,
Ctrl-C and an existing profile hook."""

import asyncio
import copy
import inspect
import json
import logging
import math
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import typing

import pytest

import mainboard
from mainboard import (
    Feature, FrozenModel, GPUSnapshot, Machine, Memory, MemoryHardware, Profile, Profiler,
    ProfileReport, Registry, Singleton, Unit, UnitKind, span,
)

from conftest import FIXTURES, host


def paths(profile):
    return {s.path: s.calls for s in profile.path_stats()}


# ---------------------------------------------------------------- base classes and models

def test_the_reference_base_classes_are_what_the_machine_and_units_derive_from():
    assert isinstance(Machine(), Singleton) and Machine() is Machine()
    for cls in (Unit, mainboard.MachineSnapshot, mainboard.UnitSnapshot, Memory, Profile,
                ProfileReport):
        assert issubclass(cls, FrozenModel), cls
    assert issubclass(mainboard.GPU, Registry) and issubclass(mainboard.NPU, Registry)
    assert mainboard.GPU.providers()["nvidia"] is mainboard.NvidiaGPU
    assert mainboard.GPU.providers()["apple"] is mainboard.AppleGPU
    assert mainboard.NPU.providers()["apple"] is mainboard.AppleNPU
    cpu = Machine.over(host("numa-2socket")).cpu
    document = json.loads(cpu.model_dump_json())
    assert document["label"] == cpu.label and "cores" in document or "logical_cpus" in document
    assert cpu.model_dump(include={"label"}) == {"label": cpu.label}


def test_models_have_pydantics_api():
    m = Memory(total_bytes=8 << 30, used_bytes=2 << 30, supported=True, scope="vram")
    assert m.model_dump(include={"total_bytes", "scope"}) == {"total_bytes": 8 << 30,
                                                              "scope": "vram"}
    assert "scope" not in m.model_dump(exclude={"scope"})
    assert m.model_dump(mode="json") == json.loads(m.model_dump_json())
    assert json.loads(m.model_dump_json(indent=2)) == m.model_dump()
    changed = m.model_copy(update={"used_bytes": 4 << 30})
    assert changed.used_gb == 4.0 and m.used_gb == 2.0  # the original is untouched
    assert "total_bytes" in Memory.model_fields  # a class attribute, as pydantic's
    assert Memory.model_fields["total_bytes"].annotation == "int"
    schema = Memory.model_json_schema()
    assert schema["type"] == "object" and schema["properties"]["total_bytes"]["type"] == "integer"
    from types import MappingProxyType
    assert Memory.model_validate(MappingProxyType(m.model_dump())) == m  # any mapping
    assert Memory.model_validate_json(m.model_dump_json()) == m
    with pytest.raises(TypeError, match="mapping"):
        Memory.model_validate([1, 2])
    with pytest.raises(ValueError, match="mode"):
        m.model_dump(mode="yaml")
    with pytest.raises(mainboard.FrozenInstanceError):
        m.total_bytes = 1


def test_an_empty_memory_reads_zero_and_a_wrong_field_names_the_right_ones():
    empty = Memory()
    assert (empty.total_gb, empty.used_gb, empty.free_gb, empty.percent_used) == (0, 0, 0, 0)
    assert empty.supported is False and empty.scope == "system"
    with pytest.raises(AttributeError, match="total_bytes"):
        empty.total_gigabytes


def test_memory_that_could_not_be_read_is_the_reference_zero_with_why():
    # A live unit: Gaudi's sysfs ABI has no device memory. The reference's Memory is never None.
    npu = Machine.over(host("gaudi2")).npus[0]
    memory = npu.memory
    assert isinstance(memory, Memory) and memory.supported is False
    assert "habanalabs" in memory.reason and memory.total_bytes == 0 and memory.used_bytes is None
    assert npu.snapshot("step").memory.reason == memory.reason
    # In a document the library writes why in the reading's place; a schema-1 one said
    # "supported": false beside zero figures. Both read the same, and dump the library's form.
    why = {"status": "unsupported", "reason": "no MemTotal in /proc/meminfo"}
    old = {"total_bytes": 0, "used_bytes": None, "free_bytes": None, "scope": "system",
           "unified": False, "source": "/proc/meminfo", "supported": False,
           "reason": why["reason"]}
    for raw in ({"unavailable": why}, old):
        m = Memory.model_validate(raw)
        assert (m.supported, m.reason, m.total_gb, m.percent_used) == (False, why["reason"], 0, 0)
        assert m.model_dump()["unavailable"] == why and "supported" not in m.model_dump()
        view = mainboard.MachineView(Machine.over(host("numa-2socket")))
        assert view.memory_usage(m) == "memory unavailable"
    taken = Memory.model_validate({**old, "supported": True, "reason": "", "total_bytes": 8 << 30})
    assert taken.supported and taken.reason == "" and "unavailable" not in taken.model_dump()
    assert Memory(total_bytes=1 << 30).supported  # figures given: a reading
    # A source the library does not know (a model made in Python) is drawn all the same.
    drawn = view.memory_usage(Memory(total_bytes=8 << 30, used_bytes=2 << 30, source="psutil"))
    assert drawn.endswith("2.00 / 8.00 GiB"), drawn
    with pytest.raises(TypeError, match="bool"):
        Memory(supported="yes")
    # A reason on its own explains a missing reading; it does not make one of a taken reading.
    assert Memory({"unavailable": why}, reason="gone").reason == "gone"
    assert Memory(total_bytes=1 << 30, reason="stray").supported


def test_a_board_without_dmi_is_empty_strings_and_says_why():
    m = Machine.over(host("vm-cgroup1-nodmi"))
    for board in (m.board, m.snapshot(toolchain=False).board):
        assert isinstance(board, mainboard.Board) and board.supported is False
        assert (board.vendor, board.model, board.bios_version) == ("", "", "")
        assert "/sys/class/dmi/id" in board.reason
    named = Machine.over(host("numa-2socket")).board
    assert named.supported and named.vendor == "Dell Inc." and named.reason == ""
    assert mainboard.Board().supported is False


def test_gpu_snapshots_are_flat_with_the_documented_zeros(fake_gpus):
    fake_gpus("h100x8")
    m = Machine.over(host("gpu-procs"))
    s = m.gpus[0].snapshot("step")
    dumped = s.model_dump()
    for field in ("name", "unit_name", "kind", "vendor", "timestamp_ns", "clocks", "memory",
                  "utilization", "energy", "thermal", "pcie", "fan_speed_pct", "processes"):
        assert field in dumped, field
    assert "telemetry" not in dumped
    assert s.name == "step" and s.unit_name == m.gpus[0].label
    assert s.kind is UnitKind.GPU and dumped["kind"] == "gpu"
    assert s.fan_speed_pct == 0.0 == m.gpus[0].fan_speed_pct  # H100 SXM: no fan reading
    assert isinstance(s.memory, Memory) and s.memory.scope == "vram"
    assert GPUSnapshot.model_validate(dumped) == s
    assert pickle.loads(pickle.dumps(s)) == s
    # A saved snapshot of schema 1 said "supported": false beside the figures: the same zeros,
    # not supported, and why.
    old = {**dumped, "utilization": {"supported": False, "compute_pct": None,
                                     "memory_pct": None, "reason": "Not Supported"}}
    util = GPUSnapshot.model_validate(old).utilization
    assert util.compute_pct == 0.0 and util.supported is False and util.reason == "Not Supported"
    # The machine snapshot's JSON keeps its nesting; its GPUs as models are flat.
    snap = m.snapshot(toolchain=False)
    assert "telemetry" in snap.model_dump()["gpus"][0]
    assert snap.gpus[0].unit_name == m.gpus[0].label


LOST_GPU = """
import sys
from mainboard import GPUSnapshot, Machine
gpu = Machine.over(sys.argv[1]).gpus[0]
util = gpu.utilization
assert (util.compute_pct, util.memory_pct) == (0.0, 0.0)
assert util.supported is False and util.reason == "GPU is lost", util
assert gpu.thermal.temperature_c == 0.0 and not gpu.thermal.supported
assert gpu.energy.power_w == 0.0 and gpu.energy.reason
snap = gpu.snapshot("step")
assert snap.utilization.compute_pct == 0.0 and snap.utilization.reason == "GPU is lost"
assert snap.pcie.tx_kbps == 0.0 and not snap.pcie.supported
# The snapshot's JSON says why in the reading's place; read back, the zeros are the same.
machine = Machine.over(sys.argv[1]).snapshot(toolchain=False)
raw = machine.model_dump()["gpus"][0]["telemetry"]["utilization"]
# Offered and gone wrong: failed, not unsupported.
assert raw == {"unavailable": {"status": "failed", "reason": "GPU is lost"}}, raw
assert machine.gpus[0].utilization.reason == "GPU is lost"
assert GPUSnapshot.model_validate(snap.model_dump()) == snap
print("ok")
"""


def test_a_lost_gpu_reads_the_documented_zeros_and_says_why(fake_gpus):
    # The fake driver reads its scenario once per process: a new interpreter reads this one.
    fake_gpus("lost")
    out = subprocess.run([sys.executable, "-c", LOST_GPU, host("gpu-procs")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_cpu_units_missing_readings_are_none():
    cpu = Machine.over(host("numa-2socket")).units[0]
    assert cpu.utilization is None and cpu.energy is None and cpu.thermal is None
    snap = cpu.snapshot("x")
    assert snap.utilization is None
    assert snap.unavailable_reason("utilization") == "not exposed for this unit"


def test_memory_hardware_reads_nothing_until_asked(monkeypatch):
    machine = Machine.over(host("numa-2socket"))
    calls = []
    native = machine._native

    class Counting:
        def __getattr__(self, name):
            if name == "memory_hardware":
                calls.append(name)
            return getattr(native, name)

    object.__setattr__(machine, "_native", Counting())
    hw = machine.memory_hardware
    assert calls == []  # made: nothing read
    assert hw.swap_total_bytes >= 0 and len(calls) == 1
    cards = hw.cards
    assert hw.cards is cards  # read once
    assert hw.slots_total == len(cards)
    assert set(hw.model_dump()) >= {"cards", "swap_total_bytes", "swap_used_bytes"}
    assert isinstance(MemoryHardware(), MemoryHardware)


def test_units_and_machines_pickle_as_where_they_are_found():
    m = Machine.over(host("numa-2socket"))
    cpu = pickle.loads(pickle.dumps(m.cpu))
    assert cpu.label == m.cpu.label and cpu == m.cpu
    assert pickle.loads(pickle.dumps(Machine())) is Machine()


def test_nvidia_gpus_say_which_interfaces_answer(fake_gpus):
    fake_gpus("h100x8")
    gpus = Machine.over(host("gpu-procs")).gpus
    g = gpus[1]
    assert isinstance(g, mainboard.NvidiaGPU)
    assert g.cuda_device == 1  # the CUDA ordinal of the second visible device
    assert g.system_api == "nvml" and g.system_device == g.pci_bus_id
    assert isinstance(g.handle, int) and g.handle != gpus[0].handle
    assert g.apis["nvml"]["answers"] and g.apis["cuda_driver"]["answers"]
    assert g.apis["nvml"]["path"].endswith("libnvidia-ml.so.1")
    assert "cupti" in g.cuda_python and g.cuda_python["cuda_driver_version"]


def test_an_apple_gpu_has_its_display_record():
    gpu = Machine.over(host("apple-m3-max")).gpus[0]
    assert isinstance(gpu, mainboard.AppleGPU)
    assert gpu.record["model"] == gpu.label and gpu.record["cores"] == gpu.core_count
    assert gpu.record["metal"] == gpu.metal_support


# ---------------------------------------------------------------- the meter module

def test_the_meter_module_and_its_protocols():
    import mainboard.meter as meter_module
    from mainboard.meter import MemorySource, Meter, MeteredMachine, meter

    assert mainboard.meter is meter_module and callable(mainboard.meter)
    assert isinstance(Machine(), MeteredMachine)
    assert isinstance(Machine().cpu, MemorySource)
    with mainboard.meter() as m:
        blob = bytearray(64 << 20)
        m.sample()
    assert isinstance(m, Meter) and isinstance(meter(), Meter)
    assert m.peak_rss_bytes >= 64 << 20 and m.peak_pss_bytes > 0
    assert m.peak_host_gb > 0 and m.samples == 3
    assert "peak_rss_gb" in repr(m)
    del blob


# ---------------------------------------------------------------- the profiler

def test_spans_stay_dormant_until_the_profiler_is_entered():
    p = Profiler(features=Feature.SPANS)
    assert not p.active
    with span("before"):
        pass
    with p:
        assert p.active
        with span("inside"):
            pass
    assert not p.active
    assert paths(p.result()) == {"inside": 1}
    with pytest.raises(mainboard.MainboardError, match="has stopped"):
        p.start()
    assert "state='stopped'" in repr(p) and "Feature.SPANS" in repr(p)


def test_run_attach_dump_measure_are_classmethods_with_the_documented_arguments():
    for name in ("run", "attach", "dump", "measure", "run_instrumented", "under"):
        assert isinstance(inspect.getattr_static(Profiler, name), classmethod), name
    dump = inspect.signature(Profiler.dump)
    assert list(dump.parameters)[:5] == ["pid", "all_threads", "async_aware", "executable",
                                         "timeout"]
    assert dump.parameters["executable"].default == sys.executable
    assert list(inspect.signature(span).parameters) == ["name"]


def test_exit_uses_the_callers_wall_time():
    with Profiler(features=Feature.SPANS) as p:
        time.sleep(0.05)  # the tick rate is measured since the session began
        t = p.enter("timed")
        p.exit(t, wall_ns=5_000_000)
    (stat,) = [s for s in p.path_stats() if s.path == "timed"]
    assert stat.total_ns == pytest.approx(5_000_000, rel=0.02)


def test_stats_are_per_name_and_a_recursion_counts_its_time_once():
    @span("f")
    def f(n):
        time.sleep(0.002)
        if n:
            f(n - 1)

    with Profiler(features=Feature.SPANS) as p:
        f(2)
    (name,) = p.stats()
    assert name.name == "f" and name.calls == 3
    outer = next(s for s in p.path_stats() if s.path == "f")
    assert name.total_ns == outer.total_ns  # not outer + inner + innermost
    assert {s.path for s in p.path_stats()} == {"f", "f/f", "f/f/f"}


def test_one_span_object_entered_twice_closes_the_right_span_each_time():
    region = span("region")
    with Profiler(features=Feature.SPANS) as p:
        with region:
            with region:
                pass
        with span("after"):
            pass
    assert paths(p) == {"region": 1, "region/region": 1, "after": 1}


def test_a_span_made_at_module_level_records_from_many_threads():
    shared = span("work")  # made before any session, as at module level
    barrier = threading.Barrier(4)

    def worker():
        with shared:
            barrier.wait()  # all four open at once
            time.sleep(0.01)
        with span("later"):
            pass

    with Profiler(features=Feature.SPANS) as p:
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert paths(p) == {"work": 4, "later": 4}


def test_a_generator_under_span_is_timed_while_it_produces():
    @span
    def produce():
        for i in range(3):
            time.sleep(0.01)
            yield i
        return "done"

    @span
    async def produce_async():
        for i in range(3):
            await asyncio.sleep(0.01)
            yield i

    async def consume():
        return [i async for i in produce_async()]

    with Profiler(features=Feature.SPANS) as p:
        made = produce()
        time.sleep(0.5)  # not the generator's time
        assert list(made) == [0, 1, 2]
        assert asyncio.run(consume()) == [0, 1, 2]
    stats = {s.name: s for s in p.stats()}
    gen = stats[next(n for n in stats if n.endswith("produce"))]
    assert 0.03 <= gen.total_ns / 1e9 < 0.4  # three 10 ms steps, not the 0.5 s in between
    agen = stats[next(n for n in stats if n.endswith("produce_async"))]
    assert agen.total_ns / 1e9 >= 0.03


def test_a_generator_under_span_passes_send_throw_and_close_through():
    @span
    def echo():
        got = yield "ready"
        try:
            while True:
                got = yield got * 2
        except ValueError:
            yield "caught"

    with Profiler(features=Feature.SPANS):
        g = echo()
        assert next(g) == "ready"
        assert g.send(21) == 42
        assert g.throw(ValueError("x")) == "caught"
        g.close()


def test_spans_still_open_at_stop_are_kept_and_said():
    with Profiler(features=Feature.SPANS) as p:
        span("left open").__enter__()
        span("inner").__enter__()
    assert paths(p) == {"left open": 1, "left open/inner": 1}
    assert any("still open at stop" in u and "left open/inner" in u
               for u in p.result().unavailable)


def test_a_forked_child_starts_without_its_parents_session():
    with Profiler(features=Feature.SPANS) as p:
        with span("before fork"):
            pass
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read)
            try:
                with span("in child, parent's session"):
                    pass
                with Profiler(features=Feature.SPANS) as child:
                    with span("child"):
                        pass
                result = paths(child)
            except BaseException as e:  # noqa: BLE001 - report anything to the parent
                result = {"error": repr(e)}
            os.write(write, json.dumps(result).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            child_paths = json.loads(pipe.read())
        os.waitpid(pid, 0)
        with span("after fork"):
            pass
    assert child_paths == {"child": 1}
    assert paths(p) == {"before fork": 1, "after fork": 1}


def test_a_multiprocessing_pool_inside_a_session_works():
    import multiprocessing

    with Profiler(features=Feature.SPANS) as p:
        with span("pool"):
            with multiprocessing.get_context("fork").Pool(2) as pool:
                assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]
    assert paths(p) == {"pool": 1}


def _interrupt_after(seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_ends_an_attach_at_once_and_keeps_what_was_collected():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        timer = _interrupt_after(0.5)
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt) as caught:
            Profiler.attach(sleeper.pid, timeout=30)
        elapsed = time.monotonic() - start
        timer.join()
        assert elapsed < 2.5, elapsed  # 0.5 s, and the time to finish: not the 30 s asked
        assert isinstance(caught.value.profile, Profile)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_ctrl_c_ends_a_run_at_once():
    timer = _interrupt_after(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as caught:
        Profiler.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=30)
    elapsed = time.monotonic() - start
    timer.join()
    assert elapsed < 2.5, elapsed
    assert isinstance(caught.value.profile, Profile)


def test_ctrl_c_ends_wait_for_idle(fake_gpus):
    fake_gpus("h100x8")
    m = Machine.over(host("gpu-procs"))
    busy = next((i for i in range(len(m.gpus)) if mainboard.gpu_busy(i, machine=m)), None)
    if busy is None:
        pytest.skip("the scenario has no busy GPU")
    timer = _interrupt_after(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        mainboard.wait_for_idle(busy, timeout=30, poll_interval=0.2, machine=m)
    timer.join()
    assert time.monotonic() - start < 2.5


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ uses sys.monitoring")
def test_auto_spans_chain_an_existing_profile_hook_and_put_it_back(tmp_path):
    module = tmp_path / "chainmod.py"
    module.write_text("def work():\n    return 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import chainmod
        seen = []

        def hook(frame, event, arg):
            if event == "call":
                seen.append(frame.f_code.co_name)

        sys.setprofile(hook)
        try:
            with Profiler(features=Feature.SPANS, auto=["chainmod"]) as p:
                chainmod.work()
            assert sys.getprofile() is hook
        finally:
            sys.setprofile(None)
        assert "work" in seen  # the earlier hook still saw the call
        assert paths(p) == {"work": 1}
    finally:
        sys.path.remove(str(tmp_path))


def test_results_pickle_and_copy():
    with Profiler(features=Feature.SPANS) as p:
        with span("x"):
            pass
    prof = p.result()
    for clone in (copy.copy(prof), copy.deepcopy(prof), pickle.loads(pickle.dumps(prof))):
        assert clone == prof and paths(clone) == {"x": 1}
    empty = Profile()
    assert copy.copy(empty) == empty
    assert Profile.model_validate_json(prof.model_dump_json()) == prof
    assert Profile.model_validate(prof.model_dump()) == prof
    report = mainboard.profile(lambda: None)
    assert pickle.loads(pickle.dumps(report)) == report
    assert str(report) == report.report()


def test_a_report_lists_activity_kinds_with_readable_reasons():
    # In a fresh interpreter: an earlier test's fake CUDA driver, once loaded, stays loaded.
    code = ("import json, sys, mainboard\n"
            "r = mainboard.profile(lambda: None, machine=mainboard.Machine.over(sys.argv[1]))\n"
            "print(json.dumps([list(r.unavailable), dict(r.unavailable_reasons), r.report()]))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAINBOARD_FAKE")}
    env["MAINBOARD_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
    out = subprocess.run([sys.executable, "-c", code, host("numa-2socket")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    labels, reasons, text = json.loads(out.stdout)
    # No GPU on the host: one calm line, not a failure per activity kind.
    assert not set(labels) & {"kernel", "memcpy", "memset", "device"}, reasons
    assert "no GPU on this host" in text and "not traced" not in text, text
    # A GPU without a CUDA driver to trace it: each kind, with a reason a person reads.
    nvml = os.environ.get("MAINBOARD_FAKE_NVML")
    if not nvml:
        pytest.skip("the fake NVIDIA libraries are not built")
    env.update(MAINBOARD_NVML_LIBRARY=nvml, MAINBOARD_CUDA_LIBRARY="/nonexistent/libcuda.so.1",
               MAINBOARD_CUPTI_LIBRARY="/nonexistent/libcupti.so",
               MAINBOARD_FAKE_GPU_SCENARIO=str(FIXTURES / "gpus" / "h100x8.json"))
    out = subprocess.run([sys.executable, "-c", code, host("gpu-procs")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    labels, reasons, text = json.loads(out.stdout)
    assert labels and set(labels) <= {"kernel", "memcpy", "memset", "synchronization",
                                      "overhead", "counters", "device", "stacks"}, labels
    for label in labels:  # words, not an error code (CUPTI_ERROR_UNKNOWN)
        assert reasons[label] and "_ERROR_" not in reasons[label], reasons
    assert "could not be loaded" in reasons["kernel"], reasons
    assert "no GPU on this host" not in text, text


# ---------------------------------------------------------------- arguments

@pytest.mark.parametrize("call, error, word", [
    (lambda: mainboard.wait_for_idle(timeout=-1), ValueError, "timeout"),
    (lambda: mainboard.gpu_busy(-1), ValueError, "index"),
    (lambda: Profiler(features=1 << 10), ValueError, "features"),
    (lambda: Profiler(auto=["no_such_module_here"]), ValueError, "no_such_module_here"),
    (lambda: Memory.system(scope=1), TypeError, "scope"),
    (lambda: Machine.over("/nonexistent/host"), FileNotFoundError, "/nonexistent/host"),
    (lambda: mainboard.profiling.arch_config.ArchConfig(1).lookup(None), TypeError, "target"),
    (lambda: mainboard.MachineView(Machine.over(host("numa-2socket"))).gpu_title(0), IndexError,
     "GPU"),
    (lambda: mainboard.profile(lambda: None, kinds=1 << 12), ValueError, "kinds"),
])
def test_bad_arguments_name_the_parameter(call, error, word):
    with pytest.raises(error, match=word) as caught:
        call()
    assert "incompatible function arguments" not in str(caught.value)
    assert "_M_range_check" not in str(caught.value)


# ---------------------------------------------------------------- typing, stub, logging

def _public_objects():
    for name in mainboard.__all__:
        obj = getattr(mainboard, name)
        if inspect.isclass(obj):
            yield name, obj
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = getattr(member, "__func__", member)
                if isinstance(member, property):
                    fn = member.fget
                if inspect.isfunction(fn):
                    yield f"{name}.{attr}", fn
        elif inspect.isfunction(obj):
            yield name, obj


def test_type_hints_resolve_on_every_public_function_and_class():
    failures = []
    for name, obj in _public_objects():
        try:
            typing.get_type_hints(obj)
        except Exception as e:  # noqa: BLE001 - collect them all
            failures.append(f"{name}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures)


def test_the_stub_declares_what_the_extension_has():
    import ast

    from mainboard import _mainboard

    stub = ast.parse(open(os.path.join(os.path.dirname(mainboard.__file__),
                                       "_mainboard.pyi")).read())
    declared = {}
    for node in stub.body:
        if isinstance(node, ast.ClassDef):
            declared[node.name] = ({n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                                   | {n.target.id for n in node.body
                                      if isinstance(n, ast.AnnAssign)}) - {"__init__"}
        elif isinstance(node, ast.FunctionDef):
            declared[node.name] = None
        elif isinstance(node, ast.AnnAssign):  # a module attribute (type variables are not)
            declared[node.target.id] = None
    bases = {node.name: [b.id for b in node.bases if isinstance(b, ast.Name)]
             for node in stub.body if isinstance(node, ast.ClassDef)}

    def inherited(name):
        own = set(declared.get(name) or ())
        for base in bases.get(name, ()):
            own |= inherited(base)
        return own

    declared = {k: (inherited(k) if v is not None else None) for k, v in declared.items()}
    actual = {n for n in dir(_mainboard) if not n.startswith("__")}
    declared = {k: v for k, v in declared.items() if not k.startswith("__")}
    declared.pop("_pybind11_type")  # the bound classes' metaclass, named for type checkers
    assert actual - set(declared) == set(), "in the extension, not the stub"
    assert set(declared) - actual == set(), "in the stub, not the extension"
    for name, methods in declared.items():
        if methods is None or name == "MainboardError":  # an exception class: its own API
            continue
        have = {m for m in dir(getattr(_mainboard, name)) if not m.startswith("__")}
        methods = {m for m in methods if not m.startswith("__")}
        assert methods - have == set(), f"{name}: in the stub, not the extension"
        assert {m for m in have if not m.startswith("_pybind11")} - methods == set(), \
            f"{name}: in the extension, not the stub"


def test_library_log_lines_go_to_the_mainboard_logger(caplog):
    # A recorded host whose NVIDIA library path does not exist: the provider says why at
    # debug level, through logging.
    code = ("import logging, mainboard, sys\n"
            "records = []\n"
            "class Keep(logging.Handler):\n"
            "    def emit(self, record): records.append((record.name, record.levelname))\n"
            "logging.getLogger('mainboard').addHandler(Keep())\n"
            "logging.getLogger('mainboard').setLevel(logging.DEBUG)\n"
            "mainboard.Machine.over(sys.argv[1]).snapshot(toolchain=False)\n"
            "print(len(records), sorted(set(records)))\n")
    env = dict(os.environ, MAINBOARD_LOG="debug", MAINBOARD_NVML_LIBRARY="/nonexistent/libnvml.so")
    out = subprocess.run([sys.executable, "-c", code, host("numa-2socket")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    count = int(out.stdout.split()[0])
    assert count > 0 and "('mainboard', 'DEBUG')" in out.stdout
    assert "mainboard: debug:" not in out.stderr  # not written to stderr by the library


def test_reprs_say_what_they_hold():
    assert repr(mainboard.Reach.command(["a", "b"])) == "Reach.command(['a', 'b'])"
    assert "Feature" in repr(mainboard.Collection())
    assert "MachineView(" in repr(mainboard.MachineView(Machine.over(host("numa-2socket"))))
    assert "not started" in repr(mainboard.Meter())


def test_show_prints_a_rich_table_of_the_regions():
    rich = pytest.importorskip("rich.console")
    with Profiler(features=Feature.SPANS) as p:
        with span("outer"):
            with span("inner"):
                pass
    console = rich.Console(record=True, width=120)
    p.result().show(console=console)
    text = console.export_text()
    assert "Regions" in text and "outer/inner" in text
    assert "┃" in text or "│" in text  # drawn as a table, not the text report


def test_run_instrumented_collects_the_targets_spans_with_or_without_the_sampler(tmp_path):
    script = tmp_path / "spanned.py"
    script.write_text("import time, mainboard\n"
                      "with mainboard.span('phase'):\n"
                      "    end = time.time() + 0.3\n"
                      "    while time.time() < end:\n"
                      "        pass\n")
    local = Profiler.run_instrumented(str(script), tachyon=None, executable=sys.executable,
                                      features=Feature.SPANS, activities=mainboard.Activity(0),
                                      timeout=60)
    assert paths(local) == {"phase": 1}
    assert len(local.samples) == 0  # no sampler asked for
    sampled = Profiler.run_instrumented(str(script), tachyon=mainboard.Sampler(hz=199),
                                        executable=sys.executable, features=Feature.SPANS,
                                        activities=mainboard.Activity(0), timeout=60)
    assert paths(sampled) == {"phase": 1}
    if not any(u.startswith("stacks:") for u in sampled.unavailable):
        assert len(sampled.samples) > 10


def test_ctrl_c_reaches_python_during_profile():
    timer = _interrupt_after(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        mainboard.profile(lambda: time.sleep(30), machine=Machine.over(host("numa-2socket")))
    timer.join()
    assert time.monotonic() - start < 2.5


def test_an_installed_wheel_is_what_is_imported():
    venv = os.environ.get("MAINBOARD_EXPECT_INSTALLED")
    if not venv:
        pytest.skip("not run from an installed wheel")
    import importlib.metadata
    assert mainboard.__file__.startswith(venv), mainboard.__file__
    assert importlib.metadata.version("mainboard") == mainboard.__version__
    out = subprocess.run([os.path.join(venv, "bin", "mainboard"), "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == mainboard.__version__


def test_a_broken_install_says_which_file_and_which_interpreter(tmp_path):
    import shutil

    copy = tmp_path / "mainboard"
    shutil.copytree(os.path.dirname(mainboard.__file__), copy,
                    ignore=shutil.ignore_patterns("_mainboard.*.so", "__pycache__"))
    (copy / "_mainboard.cpython-399-x86_64-linux-gnu.so").write_bytes(b"not for this one")
    out = subprocess.run([sys.executable, "-c", "import mainboard"], cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                         capture_output=True, text=True)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: mainboard cannot load its extension"), out.stderr
    assert sys.executable in last and "built for another Python" in last
    assert "_mainboard.cpython-399" in last
