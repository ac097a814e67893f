"""profile(fn), ProfileReport, device sampling and target_snapshot through the fake NVIDIA
libraries (NVML, CUDA driver, CUPTI); Collection and Sampler; run, attach, dump, measure."""

import json
import os
import subprocess
import sys
import time

import pytest

import mainboard
from mainboard import Activity, Bound, Collection, Feature, Profiler, ProfileReport, Sampler, span

from conftest import host


def gpu_machine(fake_gpus, scenario="h100x8"):
    fake_gpus(scenario)
    return mainboard.Machine.over(host("gpu-procs"))


def test_profile_fn_gives_the_verdict_of_the_traced_kernels(fake_gpus, fake_cupti):
    m = gpu_machine(fake_gpus)
    calls = []

    def step():
        calls.append(1)
        t = fake_cupti.now()
        fake_cupti.kernel("_Z4axpyPfS_f", t + 1_000, t + 2_001_000)  # 2 ms
        fake_cupti.copy_to_device(64 << 20, t + 2_100_000, t + 2_600_000)  # 64 MiB in 0.5 ms

    synced = []
    r = mainboard.profile(step, iters=3, warmup=1, sync=lambda: synced.append(1), machine=m)
    assert len(calls) == 4 and len(synced) == 4  # warm-up included, a barrier after each run
    assert isinstance(r, ProfileReport)
    assert r.dominant_kernel == "axpy(float*, float*, float)"
    assert r.dominant_share_pct == pytest.approx(100.0)
    assert isinstance(r.bound, Bound)
    assert r.total_kernel_ns == pytest.approx(3 * 2_000_000, rel=0.01)
    assert r.total_memcpy_ns == pytest.approx(3 * 500_000, rel=0.01)
    assert r.peak_bandwidth_gbps > 1000  # the H100's, from the fake driver
    assert r.achieved_bandwidth_gbps == pytest.approx((64 << 20) / 500_000, rel=0.05)
    (k,) = r.kernels
    assert k.name == "axpy(float*, float*, float)" and k.calls == 3
    assert "axpy" in r.report()
    with pytest.raises(TypeError):
        mainboard.profile(42)
    with pytest.raises(ValueError):
        mainboard.profile(step, iters=0)


def _busy_python(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def test_profile_fn_on_a_cpu_host_times_each_iteration_and_names_the_hot_function(monkeypatch):
    # A host without a GPU: the NVIDIA libraries cannot load.
    monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("MAINBOARD_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
    m = mainboard.Machine.over(host("numa-2socket"))
    assert not m.gpus
    calls = []

    def step():
        calls.append(1)
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.03:  # 30 ms of this thread's CPU time
            _busy_python(20000)  # a millisecond or so: the time is in it, not in the loop

    r = mainboard.profile(step, iters=5, warmup=2, machine=m)
    assert len(calls) == 7
    assert r.iterations == 5 and r.warmup == 2
    assert r.device == ""
    # Each iteration took at least the 30 ms of CPU time it spent, in wall and CPU time alike.
    assert len(r.iteration_wall_ns) == 5 and len(r.iteration_cpu_ns) == 5
    assert all(ns >= 30_000_000 for ns in r.iteration_cpu_ns), r.iteration_cpu_ns
    assert all(w >= 30_000_000 for w in r.iteration_wall_ns), r.iteration_wall_ns
    assert r.wall.count == 5
    assert r.wall.min_ns == min(r.iteration_wall_ns) and r.wall.max_ns == max(r.iteration_wall_ns)
    assert r.wall.median_ns == sorted(r.iteration_wall_ns)[2]
    assert r.wall.min_ns <= r.wall.median_ns <= r.wall.max_ns
    assert r.cpu.median_ns == sorted(r.iteration_cpu_ns)[2]
    assert r.wall.median_s == pytest.approx(r.wall.median_ns / 1e9)
    # Not one GPU failure: one calm line instead.
    assert list(r.unavailable) == [] or all(u == "stacks" for u in r.unavailable), r.unavailable
    text = r.report()
    assert "no GPU on this host" in text
    assert "not traced" not in text and "UNKNOWN" not in text and "CUPTI" not in text
    assert "5 iterations timed after 2 warm-up runs" in text
    assert "wall per iteration: min" in text and "median" in text
    # The iterations' stacks: the Python function that spent the time leads.
    if "stacks" in r.unavailable:
        pytest.skip(f"no stack sampling here: {r.unavailable_reasons['stacks']}")
    assert r.stack_samples > 10
    # The function that spent the time is named, with a good share of the samples. (Quiet, it
    # holds 93-100 % of them; beside two other jobs on two cores the read Python stacks blur
    # between it and its caller, down to 41-47 %: hence the loose bound.)
    busy = [f for f in r.hot_functions if f.function == "_busy_python"]
    assert busy and busy[0].total_pct >= 20, text
    assert "_busy_python" in text
    assert not any(f.self_samples == 0 for f in r.hot_functions), text


def test_report_from_a_profile_lists_what_the_device_could_not_trace(fake_gpus, fake_cupti):
    m = gpu_machine(fake_gpus)
    with Profiler(features=Feature.SPANS | Feature.GPU_ACTIVITY, machine=m) as p:
        with span("step"):
            t = fake_cupti.now()
            fake_cupti.kernel("_Z6reducePf", t, t + 1_000_000)
    assert p.traced_activities == Activity.DEFAULT
    r = ProfileReport.from_profile(p.result(), iterations=1, peak_bandwidth_gbps=3350.0,
                                   supported=Activity.KERNEL | Activity.MEMCPY,
                                   requested=Activity.DEFAULT)
    assert r.dominant_kernel == "reduce(float*)"
    assert any("memset" in u for u in r.unavailable), r.unavailable
    assert r.peak_bandwidth_gbps == 3350.0
    assert p.trace_report().regions[0].path == "step"
    with pytest.raises(ValueError):
        ProfileReport.from_profile(p.result(), iterations=0, peak_bandwidth_gbps=1.0)
    with pytest.raises(TypeError):
        ProfileReport.from_profile({}, iterations=1, peak_bandwidth_gbps=1.0)


def test_device_samples_while_a_span_is_open(fake_gpus, monkeypatch):
    m = gpu_machine(fake_gpus)
    # This process on GPU 0 with 1 GiB: a GPU it does not use would give no readings.
    monkeypatch.setenv("MAINBOARD_FAKE_GPU_CALLER", m.gpus[0].uuid + "=1073741824")
    with Profiler(features=Feature.SPANS | Feature.DEVICE, sample_interval_ms=10000,
                  machine=m) as p:
        p.sample()  # no span open: nothing to attribute it to
        with span("train"):
            p.sample()
            p.sample()
    samples = p.result().device_samples
    assert len(samples) >= 2
    assert all(s["gpu"] == 0 and s["t_ns"] > 0 for s in samples)
    assert all(s["process_memory_bytes"] == 1 << 30 for s in samples)


TARGET_SNAPSHOT = """
import os, sys
import mainboard
from mainboard import Feature, Profiler
m = mainboard.Machine.over(sys.argv[1])
with Profiler(features=Feature.SPANS, machine=m) as p:
    mine = p.target_snapshot("step")
assert isinstance(mine, mainboard.GPUSnapshot) and mine.name == "step", mine
assert any(q.pid == os.getpid() for q in mine.processes)
with Profiler(features=Feature.SPANS, device_index=1, machine=m) as p:
    assert p.target_snapshot("step") is None  # a GPU this process does not use
with Profiler(features=Feature.SPANS, device_index=99, machine=m) as p:
    assert p.target_snapshot("step") is None  # no such GPU
print("ok")
"""


def test_target_snapshot_only_when_this_process_is_on_the_gpu(fake_gpus, tmp_path):
    # The fake driver reads its scenario once per process: a new interpreter reads this one,
    # where the GPU 0 runs the process itself (its pid is known only once it runs).
    scenario = json.loads(fake_gpus.path("h100x8").read_text())
    scenario["devices"][1]["processes"] = []
    fake_gpus(tmp_path / "mine.json")
    script = tmp_path / "target.py"
    script.write_text("import json, os, sys\n"
                      f"s = json.loads({json.dumps(json.dumps(scenario))})\n"
                      "s['devices'][0]['processes'] = [{'pid': os.getpid(), 'used_memory': 1 << 30}]\n"
                      f"open({str(tmp_path / 'mine.json')!r}, 'w').write(json.dumps(s))\n"
                      + TARGET_SNAPSHOT)
    out = subprocess.run([sys.executable, str(script), host("gpu-procs")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_collection_is_one_validated_value():
    c = Collection(features=Feature.SPANS, max_spans=10)
    assert c.features is Feature.SPANS and c.activities == Activity.DEFAULT and c.auto == ()
    assert c == Collection(c.model_dump())
    with Profiler.under(c) as p:
        assert p.collection == c
        with span("x"):
            pass
    with Profiler.under({"features": Feature.SPANS}) as p:
        assert p.collection.max_spans == 100_000
    with pytest.raises(TypeError, match="no field"):
        Collection({"feature": 1})
    with pytest.raises(ValueError):
        Collection(max_spans=-1)
    with pytest.raises(TypeError):
        Collection(device_index="0")
    with pytest.raises(TypeError):
        Collection(auto="pkg")


def test_sampler_is_one_validated_value():
    assert Sampler().call_graph == "dwarf"  # every frame kept by default
    s = Sampler(hz=499, call_graph="fp")
    assert s == Sampler(499, "fp") and s != Sampler()
    with pytest.raises(ValueError, match="call_graph"):
        Sampler(call_graph="lbr")
    with pytest.raises(ValueError, match="hz"):
        Sampler(hz=0)


def test_run_a_script_and_a_module(tmp_path, monkeypatch):
    (tmp_path / "mbtarget.py").write_text(
        "import pathlib, sys\npathlib.Path(sys.argv[1]).write_text(__name__)\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")
    prof = Profiler.run(None, module="mbtarget", args=[str(tmp_path / "as-module")], timeout=60)
    assert (tmp_path / "as-module").read_text() == "__main__"
    assert isinstance(prof, mainboard.Profile)
    Profiler.run(tmp_path / "mbtarget.py", args=[str(tmp_path / "as-script")], timeout=60)
    assert (tmp_path / "as-script").read_text() == "__main__"
    with pytest.raises(ValueError):
        Profiler.run(None)
    with pytest.raises(TypeError):
        Profiler.run("/bin/true", args="x")
    with pytest.raises(ValueError):
        Profiler.run("/bin/true", timeout=-1)


def test_a_failing_target_warns_raises_with_strict_and_says_so_first(tmp_path):
    """A target that fails is never a quiet, nearly empty success: the profile says how it
    ended, run() warns (strict=True raises, the profile on the exception), report() says so
    first. A missing script, a script that raises, one killed by a signal, one ended by the
    timeout; a clean exit warns nothing."""
    import warnings

    fine = tmp_path / "fine.py"
    fine.write_text("print('ok')\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof = Profiler.run(fine, timeout=60)
    assert prof.target_exit.exit_code == 0 and not prof.target_exit.failed
    assert not prof.report().startswith("The target")

    with pytest.warns(mainboard.MainboardWarning, match=r"exited with status 2") as caught:
        missing = Profiler.run(tmp_path / "missing.py", timeout=60)
    assert caught[0].filename == __file__  # pointing at the caller's line
    assert missing.target_exit.exit_code == 2 and missing.target_exit.failed
    assert missing.report().startswith("The target (python"), missing.report()[:200]
    assert "exited with status 2" in missing.report().splitlines()[0]

    raises = tmp_path / "raises.py"
    raises.write_text("raise ValueError('bad batch')\n")
    with pytest.raises(mainboard.TargetFailed, match=r"exited with status 1") as failed:
        Profiler.run(raises, timeout=60, strict=True)
    assert isinstance(failed.value, mainboard.MainboardError)
    assert failed.value.profile.target_exit.exit_code == 1

    killed = tmp_path / "killed.py"
    killed.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    with pytest.warns(mainboard.MainboardWarning, match=r"killed by signal 9 \(Killed\)"):
        prof = Profiler.run(killed, timeout=60)
    assert (prof.target_exit.signal, prof.target_exit.exit_code) == (9, 137)
    assert prof.target_exit.summary == "was killed by signal 9 (Killed)"

    with pytest.warns(mainboard.MainboardWarning, match=r"ended by its timeout"):
        prof = Profiler.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert prof.target_exit.timed_out
    # Saved and read back, it still says how the target ended.
    prof.save(tmp_path / "timed-out.json")
    assert mainboard.Profile.load(tmp_path / "timed-out.json").target_exit.timed_out


def test_a_python_named_on_path_that_is_not_this_one_is_said(tmp_path, monkeypatch):
    """Profiler.run("python3", args=[script]) runs the first python3 on PATH (a pyenv shim, a
    system Python without this environment's packages): a MainboardWarning says which, when it is
    not this interpreter; this interpreter named, or a script alone, says nothing."""
    import warnings

    script = tmp_path / "s.py"
    script.write_text("pass\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "python3").symlink_to("/bin/true")
    same = tmp_path / "same"
    same.mkdir()
    (same / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{other}:{os.environ['PATH']}")
    with pytest.warns(mainboard.MainboardWarning, match=r"python3 runs .*other/python3, not this "
                                                        r"interpreter"):
        Profiler.run("python3", args=[str(script)], timeout=60)
    monkeypatch.setenv("PATH", f"{same}:{os.environ['PATH']}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Profiler.run("python3", args=[str(script)], timeout=60)
        Profiler.run(script, timeout=60)
        Profiler.run(sys.executable, args=[str(script)], timeout=60)


def test_run_samples_a_program_as_the_sampler_says():
    prof = Profiler.run(["/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"],
                        features=Feature.SPANS, sampler=Sampler(hz=499), timeout=30)
    if any(u.startswith("stacks:") for u in prof.unavailable):
        pytest.skip("perf_event_open refused here: " + "; ".join(prof.unavailable))
    assert prof.samples
    assert prof.hot_functions(5)


def test_run_a_python_program_shows_its_python_frames(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text("import time\n"
                      "def work():\n"
                      "    end = time.monotonic() + 0.6\n"
                      "    while time.monotonic() < end:\n"
                      "        sum(range(100))\n"
                      "def rest():\n"
                      "    time.sleep(0.6)\n"
                      "work()\n"
                      "rest()\n")
    on_cpu = Profiler.run(script, sampler=Sampler(hz=199), timeout=60)
    if any(u.startswith("stacks:") for u in on_cpu.unavailable):
        pytest.skip("perf_event_open refused here: " + "; ".join(on_cpu.unavailable))
    names = {f["function"] for f in on_cpu.frames if f["module"] == "[python]"}
    assert "work" in names
    wall = Profiler.run(script, sampler=Sampler(hz=199, wall=True, pause=True), timeout=60)
    counts = {"work": 0, "rest": 0}
    for sample in wall.samples:
        for index in wall.stacks[sample[2]]:  # (t_ns, thread, stack)
            if wall.frames[index]["function"] in counts:
                counts[wall.frames[index]["function"]] += 1
    assert counts["rest"] > 0.3 * (counts["work"] + counts["rest"])  # the sleep, on the wall
    native = Profiler.run(script, sampler=Sampler(hz=199, python=False), timeout=60)
    assert not any(f["module"] == "[python]" for f in native.frames)
    with pytest.raises(TypeError):
        Sampler(wall=1)


def test_measure_a_command_and_a_process():
    with pytest.raises(mainboard.MainboardError, match="Reach.here"):
        Profiler.measure(mainboard.Reach.here())
    with pytest.raises(TypeError):
        Profiler.measure(["/bin/true"])
    prof = Profiler.measure(mainboard.Reach.command(["/bin/true"]),
                            collection=Collection(features=Feature.SPANS), sampler=Sampler(hz=49))
    assert isinstance(prof, mainboard.Profile)
    child = subprocess.Popen(["/bin/sleep", "30"])
    try:
        prof = Profiler.measure(mainboard.Reach.process(child.pid), timeout=0.3)
        assert isinstance(prof, mainboard.Profile)
        assert child.poll() is None  # attached to, sampled, and let go
    finally:
        child.kill()
        child.wait()


TASKS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "targets", "python",
                     "tasks.py")


def test_dump_async_tasks_with_who_awaits_whom():
    child = subprocess.Popen([sys.executable, TASKS], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
        try:
            d = Profiler.dump(child.pid, async_aware=True)
        except mainboard.MainboardError as e:
            pytest.skip(f"ptrace refused here: {e}")
        tasks = {t.name: t for t in d.tasks}
        assert set(tasks) == {"Task-1", "alpha", "beta", "leaf"}
        assert [f.function for f in tasks["leaf"].frames] == ["sleep", "deepest", "middle", "leaf"]
        assert [d.tasks[i].name for i in tasks["leaf"].awaited_by] == ["alpha"]
        assert tasks["alpha"].waiting_for == "task leaf"
        assert tasks["Task-1"].waiting_for == "gather"
        assert 'Task "leaf" (waiting for a future)' in d.text
    finally:
        child.kill()
        child.wait()


LOCALS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "targets", "python",
                      "locals.py")
POOL = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "targets", "python",
                    "pool.py")


def test_dump_locals_and_subprocesses_as_py_spy_users_ask():
    child = subprocess.Popen([sys.executable, LOCALS], stdout=subprocess.PIPE)
    pool = subprocess.Popen([sys.executable, POOL], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
        assert pool.stdout.readline() == b"ready\n"
        try:
            d = Profiler.dump(child.pid, locals=True)
        except mainboard.MainboardError as e:
            pytest.skip(f"ptrace refused here: {e}")
        (main,) = d.threads
        inner = [i for i, f in enumerate(main.frames) if f.function == "inner"][0]
        values = {v.name: v for v in main.locals[inner]}
        assert values["big"].repr == str(2 ** 100) and values["big"].argument
        assert values["table"].repr == "{'k': 1}"
        assert values["counter"].repr == "0" and not values["counter"].argument
        assert "Arguments:" in d.text and "Locals:" in d.text
        assert Profiler.dump(child.pid).threads[0].locals == ()

        tree = Profiler.dump(pool.pid, subprocesses=True)
        assert len(tree.subprocesses) == 2
        for worker in tree.subprocesses:
            assert worker.threads[0].frames[0].function == "worker_spin"
            assert f"Process {worker.pid}:" in worker.text
        assert Profiler.dump(pool.pid).subprocesses == ()
    finally:
        for p in (child, pool):
            p.kill()
            p.wait()


def test_dump_a_process_and_let_it_go():
    # It says when it is past the interpreter's start (site, imports): a loaded machine or a
    # venv's site can take longer than any fixed wait. It wakes once a second: awake, it holds
    # the GIL, and on a busy VM a thread woken every 10 ms was once caught holding it.
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, time; print(flush=True)\nwhile True: time.sleep(1)"],
                             stdout=subprocess.PIPE)
    child.stdout.readline()
    time.sleep(0.05)  # into the loop
    try:
        try:
            d = Profiler.dump(child.pid)
        except mainboard.MainboardError as e:
            pytest.skip(f"ptrace refused here: {e}")
        assert d.pid == child.pid and len(d.threads) == 1
        assert d.python.startswith("CPython 3.")
        (main,) = d.threads
        assert main.python and main.tid == child.pid and not main.holds_gil
        assert [f.function for f in main.frames] == ["<module>"]
        assert main.frames[0].file == "<string>" and main.frames[0].line == 2
        assert f"Thread {child.pid} (" in d.text and "<module> (<string>:2)" in d.text
        assert child.poll() is None
        native = Profiler.dump(child.pid, native=True, all_threads=False)
        assert len(native.threads) == 1
        frames = native.threads[0].frames
        assert frames[-1].function == "<module>" and frames[0].module != "[python]"
        assert Profiler.dump(child.pid, async_aware=True).tasks == ()  # no asyncio here
        with pytest.raises(ValueError):
            Profiler.dump(child.pid, timeout=0)
        with pytest.raises(ValueError):
            Profiler.dump(-1)
    finally:
        child.kill()
        child.wait()
