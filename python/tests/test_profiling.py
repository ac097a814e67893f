"""Spans and the profiling session from Python."""

import asyncio
import json
import sys

import pytest

import mainboard
from mainboard import Feature, Profiler, span


def paths(profiler):
    return {s.path: s.calls for s in profiler.path_stats()}


def test_a_dormant_span_is_one_shared_object_per_name():
    a, b = span("x"), span("x")
    assert a is b
    assert span("y") is not a
    with span("x"):
        pass


def test_spans_nest_and_count():
    with Profiler(features=Feature.SPANS) as p:
        for _ in range(3):
            with span("step"):
                with span("forward"):
                    pass
    assert paths(p) == {"step": 3, "step/forward": 3}
    stat = p.bottlenecks(1)[0]
    assert stat.path == "step" and stat.total_ns >= stat.self_ns >= 0 and stat.avg_ns > 0


def test_decorators_bare_named_and_async():
    @span
    def plain(x):
        return x * 2

    @span("named")
    def other():
        return 1

    @span
    async def coroutine():
        await asyncio.sleep(0)
        return 3

    with Profiler(features=Feature.SPANS) as p:
        assert plain(2) == 4 and other() == 1
        assert asyncio.run(coroutine()) == 3
    got = paths(p)
    assert got["test_decorators_bare_named_and_async.<locals>.plain"] == 1
    assert got["named"] == 1
    assert any(k.endswith("coroutine") for k in got)


def test_enter_exit_tokens():
    with Profiler(features=Feature.SPANS) as p:
        t = p.enter("outer")
        inner = p.enter("inner")
        p.exit(t)  # closes inner too
        p.exit(inner)  # already closed: nothing
        t = p.enter("timed")
        with pytest.raises(ValueError, match="wall_ns"):
            p.exit(t, wall_ns=-1)
        with pytest.raises(TypeError, match="token"):
            p.exit(("not", "a", "token"))
        p.exit(t, wall_ns=1_000)
    assert paths(p) == {"outer": 1, "outer/inner": 1, "timed": 1}


def test_a_second_profiler_is_an_error():
    second = Profiler(features=Feature.SPANS)  # made, not started: allowed
    with Profiler(features=Feature.SPANS):
        with pytest.raises(mainboard.MainboardError, match="already active"):
            second.start()
        assert not second.active


def test_wrong_arguments_raise_type_and_value_errors():
    with pytest.raises(TypeError):
        Profiler(max_spans="many")
    with pytest.raises(ValueError):
        Profiler(max_spans=-1)
    with pytest.raises(TypeError):
        span(42)


def test_profile_saves_loads_and_reports(tmp_path):
    with Profiler(features=Feature.SPANS) as p:
        with span("work"):
            sum(range(1000))
    prof = p.result()
    assert prof.unavailable == ()
    assert prof.machine is None  # spans only: the machine was not read
    prof.save(tmp_path / "run.json")
    back = mainboard.Profile.load(tmp_path / "run.json")
    assert back == prof
    assert "work" in back.report()
    assert back.timeline().source == "spans"
    assert back.diff(prof).regions[0].kind == "changed"
    trace = tmp_path / "trace.json"
    back.perfetto(trace)
    assert json.loads(trace.read_text())["traceEvents"]
    with pytest.raises(mainboard.MainboardError, match="missing.json"):
        mainboard.Profile.load(tmp_path / "missing.json")


def test_default_session_says_why_the_device_is_missing():
    with Profiler() as p:  # spans and device, on a machine that may have no GPU
        with span("x"):
            pass
    prof = p.result()
    assert all("mainboard::spans" not in u for u in prof.unavailable)


def test_auto_instruments_only_the_named_modules(tmp_path, monkeypatch):
    pkg = tmp_path / "autopkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "def leaf(x):\n    return x + 1\n\n"
        "class Model:\n    def step(self):\n        return leaf(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import autopkg

    def outside():
        return 0

    with Profiler(features=Feature.SPANS, auto=("autopkg",)) as p:
        autopkg.Model().step()
        outside()
    got = paths(p)
    assert got.get("Model.step") == 1
    assert got.get("Model.step/leaf") == 1
    assert not any("outside" in k for k in got)


def test_python_and_cpp_spans_nest_in_one_session():
    mixed_spans = pytest.importorskip("mixed_spans")
    with Profiler(features=Feature.SPANS) as p:
        with span("py"):
            mixed_spans.work(lambda: span("py_in_cpp").__enter__().__exit__(None, None, None))
    assert paths(p) == {"py": 1, "py/cpp_outer": 1, "py/cpp_outer/py_in_cpp": 1,
                        "py/cpp_outer/cpp_inner": 1}


def test_result_freezes_what_was_observed_and_the_session_goes_on():
    with Profiler(features=Feature.SPANS) as p:
        with span("early"):
            pass
        first = p.result()
        assert p.active
        with span("late"):
            pass
        with span("early"):
            pass
    assert {s.path: s.calls for s in first.path_stats()} == {"early": 1}
    assert paths(p) == {"early": 2, "late": 1}


def test_asyncio_tasks_interleave_with_their_own_nesting(tmp_path):
    # Two tasks in one thread whose spans interleave at every await: per thread, "b" would
    # nest inside "a" (and "a/work" inside "b"); per task each is a child of "main" alone.
    log = []

    async def worker(name, steps):
        with span(name):
            for i in range(steps):
                with span("work"):
                    log.append((name, i))
                    await asyncio.sleep(0)

    @span
    async def child_task():
        await asyncio.sleep(0)

    async def main():
        with span("gather"):
            await asyncio.gather(worker("a", 3), worker("b", 2))
            # a task created inside a span starts under it
            await asyncio.create_task(child_task())

    with Profiler(features=Feature.SPANS) as p:
        with span("main"):
            asyncio.run(main())
    assert [n for n, _ in log[:4]] == ["a", "b", "a", "b"]  # they did interleave
    got = paths(p)
    assert got["main"] == 1
    assert got["main/gather"] == 1
    assert got["main/gather/a"] == 1 and got["main/gather/b"] == 1
    assert got["main/gather/a/work"] == 3 and got["main/gather/b/work"] == 2
    leaf = [k for k in got if k.endswith("child_task")]
    assert leaf == ["main/gather/" + leaf[0].rsplit("/", 1)[1]]
    assert not any("a/b" in k or "b/a" in k for k in got)
    # each task's spans are a row of their own in the trace, apart from the thread's
    p.result().perfetto(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    rows = {e["tid"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert len(rows) >= 3


def test_spans_in_tasks_of_a_later_session_start_afresh():
    async def step():
        with span("s"):
            await asyncio.sleep(0)

    async def main():
        for _ in range(2):
            with Profiler(features=Feature.SPANS) as p:
                await step()
            assert paths(p) == {"s": 1}

    asyncio.run(main())
    with span("outside"):  # no session: nothing to do, nothing raised
        pass


def test_a_loop_in_another_thread_does_not_take_this_threads_spans():
    import threading
    inside = threading.Event()
    release = threading.Event()

    async def background():
        with span("bg"):
            inside.set()
            while not release.is_set():
                await asyncio.sleep(0.001)

    with Profiler(features=Feature.SPANS) as p:
        t = threading.Thread(target=lambda: asyncio.run(background()))
        t.start()
        assert inside.wait(10)
        with span("fg"):  # a task runs in the other thread now: this span is still this thread's
            with span("inner"):
                pass
        release.set()
        t.join()
    assert paths(p) == {"bg": 1, "fg": 1, "fg/inner": 1}


def _rank_document(rank, world, data_ms, backward_ms, steps=5):
    """One rank's saved profile of `steps` training steps (data, forward, backward)."""
    ms = 1_000_000
    phases = [("data", data_ms), ("forward", 20), ("backward", backward_ms)]
    paths = ["step"] + [f"step/{n}" for n, _ in phases]
    totals = {p: [0, 0] for p in paths}
    spans, t = [], 5_000 * ms
    for _ in range(steps):
        s0 = t
        for i, (name, d) in enumerate(phases):
            spans.append([i + 1, 0, t, t + d * ms])
            totals[f"step/{name}"][0] += 1
            totals[f"step/{name}"][1] += d * ms
            t += d * ms
        spans.append([0, 0, s0, t])
        totals["step"][0] += 1
        totals["step"][1] += t - s0
    spans.sort(key=lambda s: s[2])
    doc = mainboard.Profile().model_dump()
    doc.update(
        pid=100 + rank, start_ns=5_000 * ms, end_ns=t, paths=paths, spans=spans,
        span_stats=[{"path": p, "name": p.split("/")[-1], "calls": c, "total_ns": n,
                     "self_ns": n, "min_ns": 0, "max_ns": 0} for p, (c, n) in totals.items()],
        threads=[{"index": 0, "tid": 7, "name": "MainThread", "process": 0}],
        node=f"n{rank}", written_by=mainboard.__version__,
        rank={"rank": rank, "local_rank": 0, "world_size": world, "job_id": "9",
              "source": "RANK"},
        clock={"monotonic_ns": 0, "realtime_ns": 0, "uncertainty_ns": 0, "boot_id": "same"})
    return doc


def test_ranks_merge_and_the_straggler_is_named(tmp_path):
    docs = [_rank_document(r, 3, 10 + (40 if r == 2 else 0), 30 + (0 if r == 2 else 40))
            for r in range(3)]
    ranks = [mainboard.Profile.model_validate(d) for d in docs]
    job = mainboard.Profile.merge(ranks)
    assert [p["rank"]["rank"] for p in job.processes] == [0, 1, 2]
    report = job.ranks()
    assert isinstance(report, mainboard.RankReport)
    assert isinstance(report.straggler, mainboard.Straggler)
    assert report.straggler.rank == 2
    assert report.straggler.phase == "step/data"
    assert report.straggler.phase_kind == "data loading"
    assert report.straggler.others_wait_ns == 5 * 40 * 1_000_000
    assert [r.waits_for for r in report.ranks] == [2, 2, None]
    assert report.verdict.startswith("rank 2 (n2) holds the job back")
    assert str(report).startswith(report.verdict) and "Ranks (3 of 3" in str(report)
    assert job.report().startswith(report.verdict)
    # From the files, as the command writes them; one rank missing is said, not an error.
    out = tmp_path / "profiles"
    out.mkdir()
    for r in (0, 2):
        ranks[r].save(out / f"rank-{r:05}.json")
    partial = mainboard.Profile.merge([str(out)])
    assert any(u == "merge: 1 of 3 ranks have no profile: rank 1 (ended before writing one, or "
               "not given)" for u in partial.unavailable), partial.unavailable
    assert partial.ranks(step="step", collectives=["backward"]).missing_ranks == (1,)
    with pytest.raises(ValueError):
        mainboard.Profile.merge([])
    with pytest.raises(mainboard.MainboardError, match="already a merged job"):
        mainboard.Profile.merge([job])


PICTURED = """
import threading

def inner(n):
    return sum(i * i for i in range(n))

def outer():
    for _ in range(25):
        inner(60000)

t = threading.Thread(target=outer, name="second")
t.start()
outer()
t.join()
"""


def test_a_sampled_run_draws_an_html_page_and_an_svg_flame_graph(tmp_path):
    """The pictures of a real sampled Python program: the page's data and the SVG's frames carry
    the profile's own counts (what a browser makes of them: tests/js/pictures_check.mjs)."""
    import html
    import re

    script = tmp_path / "pictured.py"
    script.write_text(PICTURED)
    prof = Profiler.run(sys.executable, args=[str(script)], timeout=120)
    if any(u.startswith("stacks:") for u in prof.unavailable) or not prof.hot_functions(1):
        pytest.skip("no stack samples here: " + "; ".join(prof.unavailable))
    page = prof.to_html(tmp_path / "run.html", title="pictured")
    assert (tmp_path / "run.html").read_text() == page
    data = json.loads(re.search(r'<script type="application/json" id="mb-data">(.*?)</script>',
                                page, re.S).group(1))
    assert data["title"] == "pictured"
    samples = sum(t["samples"] for t in data["tracks"])
    assert samples == data["meta"]["samples"] > 0
    # Python frames as py-spy names them, each pointing at its name by function.
    names = {n[0] for n in data["names"] if n[2] == "python"}
    assert any(re.fullmatch(r"inner \(pictured\.py:\d+\)", n) for n in names), sorted(names)
    by_function = {data["names"][n[3]][0] for n in data["names"] if n[2] == "python"}
    assert {"inner (pictured.py)", "outer (pictured.py)"} <= by_function, sorted(by_function)
    assert data["functions"][0][0] == prof.hot_functions(1)[0].function
    # By total time: the callers first (outer calls inner, so outer has every sample inner has).
    by_total = prof.hot_functions(50, by="total")
    assert [f.total_samples for f in by_total] == sorted((f.total_samples for f in by_total), reverse=True)
    total = {f.function: f.total_samples for f in by_total}
    assert total["outer"] >= total["inner"] > 0, total
    assert {f.function for f in by_total[:1]} <= {row[0] for row in data["functions"]}
    with pytest.raises(ValueError, match="by='hottest'"):
        prof.hot_functions(5, by="hottest")

    svg = prof.flamegraph_svg(tmp_path / "run.svg", roots="thread")
    assert (tmp_path / "run.svg").read_text() == svg
    frames = re.findall(r'<g class="f" data-n="([^"]*)" data-k="(\w+)" data-o="\d+" '
                        r'data-v="(\d+)" data-d="(\d+)">', svg)
    root = frames[0]
    assert int(root[2]) == data["meta"]["samples"]
    threads = [html.unescape(n) for n, _, _, d in frames if d == "1"]
    assert len(threads) == 2 and all(re.fullmatch(r".+-\d+", t) for t in threads), threads
    inner = next(f for f in prof.hot_functions(50) if f.function == "inner")
    # Each "inner" frame is under one "outer" frame per thread: their samples add to its total.
    assert sum(int(v) for n, k, v, _ in frames
               if n.startswith("inner (pictured.py:") and k == "python") == inner.total_samples
    # By function, one frame of inner per thread.
    one = re.findall(r'data-n="inner \(pictured\.py\)" data-k="python" data-o="\d+" '
                     r'data-v="(\d+)"', prof.flamegraph_svg(roots="thread", function=True))
    assert sum(map(int, one)) == inner.total_samples and len(one) <= 2
    with pytest.raises(ValueError, match="roots"):
        prof.flamegraph_svg(roots="node")
    # A notebook cell shows the page in a frame of its own.
    cell = prof._repr_html_()
    assert cell.startswith("<iframe") and "srcdoc=" in cell and "<script" not in cell
    assert html.unescape(cell.split('srcdoc="', 1)[1].rsplit('"', 1)[0]) == prof.to_html()


def test_pytorch_profiler_traces_load_merge_and_write_pprof(tmp_path):
    from conftest import FIXTURES

    torch2 = FIXTURES / "traces" / "torch2"
    rank0 = mainboard.Profile.load(torch2 / "host0_4242.1764979223123.pt.trace.json")
    assert rank0.source == "torch.profiler (Kineto)"
    assert rank0.rank["rank"] == 0 and rank0.rank["world_size"] == 2
    steps = {s.path: s for s in rank0.path_stats()}["ProfilerStep"]
    assert steps.calls == 2 and steps.total_ns == 20_000_000
    assert rank0.trace_report().kernel_count == 4
    # The directory, one trace gzipped: merged, its clocks aligned, its straggler named.
    job = mainboard.Profile.merge([torch2])
    ranks = job.ranks()
    assert ranks.straggler.rank == 1 and ranks.straggler.phase_kind == "data loading"
    assert [r.alignment for r in ranks.ranks] == ["reference", "collective ends"]
    assert [b.source for b in ranks.breakdown] == ["gpu kernels", "gpu kernels"]
    assert ranks.breakdown[0].overlap_pct == 0.0
    # pprof: gzipped, written atomically where asked.
    data = job.pprof(tmp_path / "job.pb.gz")
    assert data[:2] == b"\x1f\x8b" and (tmp_path / "job.pb.gz").read_bytes() == data
    with pytest.raises(mainboard.MainboardError, match=r"trace event 0 \("):
        bad = tmp_path / "bad.pt.trace.json"
        bad.write_text('[{"ph": "X", "name": "a", "ts": "x", "dur": 1, "pid": 1, "tid": 1}]')
        mainboard.Profile.load(bad)
