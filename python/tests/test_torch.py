"""PyTorch (Debian's python3-torch, on the CPU) as a real client: spans around a training loop
in this process, Profiler.run of a training script (its Python frames over libtorch and BLAS,
and its own spans), and the meter's per-process peak over tensor allocations."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

import mainboard  # noqa: E402

TRAIN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "targets", "python",
                     "train_torch.py")
STEPS = 20


@pytest.fixture
def one_thread():
    """Training on one intra-op thread, for steady timings; this process's setting restored."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def small_training():
    """A 2-layer model, its SGD optimizer, an MSE loss and a batch of random data."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, torch.nn.MSELoss(), torch.randn(64, 32), torch.randn(64, 1)


def test_spans_around_a_training_loop(one_thread):
    model, optimizer, loss_fn, x, y = small_training()

    @mainboard.span
    def step(x, y):
        optimizer.zero_grad()
        with mainboard.span("forward"):
            loss = loss_fn(model(x), y)
        with mainboard.span("backward"):
            loss.backward()
        with mainboard.span("optimizer"):
            optimizer.step()
        return loss.item()

    with mainboard.Profiler() as p:
        losses = [step(x, y) for _ in range(STEPS)]
    prof = p.result()
    assert losses[-1] < losses[0]  # it did train

    # per name: one entry each, slowest total first
    stats = prof.stats()
    print(stats[0])
    by_name = {s.name: s for s in stats}
    assert len(by_name) == len(stats)
    assert set(by_name) == {step.__qualname__, "forward", "backward", "optimizer"}
    for name in by_name:
        s = by_name[name]
        assert s.calls == STEPS, name
        assert 0 < s.min_ns <= s.avg_ns <= s.max_ns <= s.total_ns, name
        assert s.avg_ns == pytest.approx(s.total_ns / s.calls), name
    totals = [s.total_ns for s in stats]
    assert totals == sorted(totals, reverse=True)
    assert stats[0].name == step.__qualname__  # the step holds the other three

    # per path: the children sit under the step's path
    paths = prof.path_stats()
    print([s.path for s in paths])
    by_path = {s.path: s for s in paths}
    (forward,) = [s for s in paths if s.name == "forward"]
    assert forward.path.endswith("/forward") and step.__qualname__ in forward.path
    step_path = forward.path[: -len("/forward")]
    assert step_path == step.__qualname__  # the outermost span: its path is its name
    parent = by_path[step_path]
    assert parent.name == step.__qualname__ and parent.calls == STEPS
    children = [s for s in paths if s.path.rpartition("/")[0] == step_path]
    assert sorted(c.name for c in children) == ["backward", "forward", "optimizer"]
    assert all(c.calls == STEPS and c.self_ns == c.total_ns for c in children)  # leaves
    assert parent.total_ns >= sum(c.total_ns for c in children)
    assert 0 <= parent.self_ns <= parent.total_ns - sum(c.total_ns for c in children) + 1000

    report = p.report()
    assert "forward" in report and "backward" in report


def test_stats_fold_a_name_over_the_paths_it_was_open_on(one_thread):
    model, optimizer, loss_fn, x, y = small_training()
    with mainboard.Profiler() as p:
        for _ in range(3):
            with mainboard.span("train"):
                with mainboard.span("forward"):
                    loss = loss_fn(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        with torch.no_grad(), mainboard.span("eval"):
            with mainboard.span("forward"):
                model(x)
    prof = p.result()
    paths = {s.path: s for s in prof.path_stats()}
    assert paths["train/forward"].calls == 3 and paths["eval/forward"].calls == 1
    by_name = {s.name: s for s in prof.stats()}
    forward = by_name["forward"]
    assert forward.calls == 4 and forward.paths == 2
    assert forward.total_ns == paths["train/forward"].total_ns + paths["eval/forward"].total_ns
    assert forward.max_ns == max(paths["train/forward"].max_ns, paths["eval/forward"].max_ns)
    assert forward.min_ns == min(paths["train/forward"].min_ns, paths["eval/forward"].min_ns)


def is_torch_native(module: str) -> bool:
    """A frame of libtorch or of a BLAS (OpenBLAS, the reference BLAS, MKL)."""
    m = module.lower()
    return "libtorch" in m or "blas" in m or "mkl" in m


def library_path(module):
    """The file of a module named by its base name, looked for where torch's run maps them."""
    dirs = [os.path.join(os.path.dirname(torch.__file__), "lib"), "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu", os.path.dirname(os.__file__),
            os.path.join(os.path.dirname(os.__file__), "lib-dynload")]
    for d in dirs:
        candidate = os.path.join(d, module)
        if os.path.isfile(candidate):
            return candidate
    return None


def test_run_a_training_script_shows_its_python_over_libtorch_and_blas(capfd):
    prof = mainboard.Profiler.run(TRAIN, args=["1.5"], timeout=120)
    if any(u.startswith("stacks:") for u in prof.unavailable):
        pytest.skip("perf_event_open refused here: " + "; ".join(prof.unavailable))
    steps = int(capfd.readouterr().out.split()[-1])  # the script prints how many steps it took
    assert steps >= 5

    hot = prof.hot_functions(50)
    print(hot[0])
    natives = [f for f in hot if is_torch_native(f.module)]
    assert natives, [(f.function, f.module) for f in hot]  # libtorch or BLAS among the hottest

    # folded stacks, root first: a Python step, its forward, and libtorch or BLAS below them
    native_names = {f.function for f in prof.hot_functions(300) if is_torch_native(f.module)}
    # (Python frames named "function (file:line)" there, as py-spy names them: by function here)
    lines = [line.rsplit(" ", 1) for line in prof.folded().splitlines() if line]
    assert any(re.search(r";step \(train_torch\.py:\d+\)", stack) for stack, _ in lines)
    stacks = [([re.sub(r" \([^()]*\)$", "", n) for n in stack.split(";")], int(count))
              for stack, count in lines]
    python = {f.function for f in prof.hot_functions(300) if f.module == "[python]"}
    print(max(stacks, key=lambda s: s[1]))
    assert "step" in python

    def is_forward(name):
        return name.rsplit(".", 1)[-1] in ("forward", "_call_impl")

    assert any(is_forward(n) for n in python), sorted(python)

    def python_over_native(frames):
        if "step" not in frames:
            return False
        below = frames[frames.index("step") + 1:]
        return any(n in native_names or "gemm" in n for n in below)

    under_step = sum(count for frames, count in stacks if python_over_native(frames))
    assert under_step > 0, [";".join(f) for f, _ in stacks[:20]]
    forward_over_native = [
        frames for frames, _ in stacks if python_over_native(frames)
        and any(is_forward(n) and any(m in native_names or "gemm" in m
                                      for m in frames[i + 1:])
                for i, n in enumerate(frames))]
    assert forward_over_native  # Linear.forward (or Module._call_impl) over libtorch/BLAS

    # Every frame kept under the default options: libtorch is built without frame pointers, so
    # only its call-frame information finds libtorch's own frames (at::native::linear,
    # at::_ops::addmm::call, ...) between the Python forward and BLAS's sgemm.
    torch_frames = {f.function for f in prof.hot_functions(10_000) if "libtorch" in f.module}

    def chained(frames):
        for i, name in enumerate(frames):
            if not is_forward(name):
                continue
            below = frames[i + 1:]
            for j, inner in enumerate(below):
                if inner in torch_frames and any("gemm" in n for n in below[j + 1:]):
                    return True
        return False

    through_gemm = [(f, c) for f, c in stacks if python_over_native(f) and any("gemm" in n for n in f)]
    kept = sum(c for f, c in through_gemm if chained(f))
    assert kept > 0, [";".join(f) for f, _ in through_gemm[:10]]
    # Not by chance: most samples in BLAS under a forward show the libtorch frames that led there.
    under_forward = sum(c for f, c in through_gemm if any(is_forward(n) for n in f))
    assert kept >= under_forward / 2, (kept, under_forward)

    # Every frame is code the program ran: no address outside its executable mappings (the
    # unwinder stops there, in "[unwind stopped]", and says how often), and no "library+0xN"
    # beyond the library's own bytes (an address walking down past its end).
    frames = prof.hot_functions(100_000)
    assert not [f.function for f in frames if f.module == "[unknown]"]
    for f in frames:
        if "+0x" not in f.function or f.module.startswith("["):
            continue
        name, offset = f.function.rsplit("+0x", 1)
        path = library_path(f.module)
        if path:
            assert int(offset, 16) < os.path.getsize(path), (f.function, path)
    stopped = sum(c for frames_, c in stacks if "[unwind stopped]" in frames_)
    if stopped:
        assert any(u.startswith("native stacks: ") for u in prof.unavailable), prof.unavailable

    # the script's own spans, recorded by the child's mainboard under the run
    by_name = {s.name: s for s in prof.stats()}
    assert {"step", "forward", "backward", "optimizer"} <= set(by_name), sorted(by_name)
    for name in ("step", "forward", "backward", "optimizer"):
        assert by_name[name].calls == steps, name
    assert any(s.path == "step/forward" for s in prof.path_stats())


# A fresh interpreter, so this process's high-water mark (the tests before) plays no part.
METER_SCRIPT = textwrap.dedent("""\
    import json
    import torch
    import mainboard

    torch.set_num_threads(1)


    def vmhwm_bytes():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
        raise RuntimeError("no VmHWM in /proc/self/status")


    out = {}
    live = []
    with mainboard.meter() as m:
        for _ in range(3):  # 200 MB each, never more than two alive
            if len(live) == 2:
                live.pop(0)
            live.append(torch.empty(50_000_000).fill_(1))
            m.sample()
        live.clear()
    out["vmhwm_bytes"] = vmhwm_bytes()
    out["elapsed_s"] = m.elapsed_s
    out["peak_host_gb"] = m.peak_host_gb
    try:
        out["peak_rss_bytes"] = m.peak_rss_bytes  # needs: Meter.peak_rss_bytes
    except AttributeError as e:
        out["peak_rss_bytes"] = f"missing: {e}"
    try:
        out["peak_rss_gb"] = m.peak_rss_gb  # needs: Meter.peak_rss_gb
    except AttributeError as e:
        out["peak_rss_gb"] = f"missing: {e}"
    print(json.dumps(out))
""")


def test_meter_peak_rss_follows_the_processes_high_water_mark():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc/self/status here")
    done = subprocess.run([sys.executable, "-c", METER_SCRIPT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout.splitlines()[-1])
    print(r)
    assert r["elapsed_s"] > 0
    assert r["peak_host_gb"] > 0
    vmhwm = r["vmhwm_bytes"]
    assert vmhwm > 400e6  # two 200 MB tensors were alive at once
    peak = r["peak_rss_bytes"]
    assert isinstance(peak, int), peak
    assert abs(peak - vmhwm) <= 0.10 * vmhwm, (peak, vmhwm)
    assert isinstance(r["peak_rss_gb"], float), r["peak_rss_gb"]
    assert r["peak_rss_gb"] == pytest.approx(peak / 2**30, rel=1e-6)
