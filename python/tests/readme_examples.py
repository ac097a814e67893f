"""The README's Python examples and the reference's usage, for mypy --strict."""
from __future__ import annotations

import mainboard
from mainboard import Feature, Profiler, span


@span
def step(batch: int) -> None:
    with span("forward"):
        pass


def main(pid: int) -> None:
    m = mainboard.Machine()
    label: str = m.cpu.label
    used: float = m.memory.used_gb
    cap = m.cgroup_memory
    capped: bool = cap is not None and cap.capped
    snap = m.snapshot()
    text: str = snap.model_dump_json(indent=2)
    copy = snap.model_copy(update={"hostname": "x"})
    for g in m.gpus:
        fan: float = g.snapshot("step").fan_speed_pct
        health = g.snapshot().health
        if health is not None:
            ecc_errors: int | None = health.ecc_uncorrected_volatile
            print(ecc_errors)
    with Profiler(features=Feature.DEFAULT) as p:
        for batch in range(10):
            with span("train"):
                step(batch)
    for s in p.stats():
        print(s.name, s.calls, s.total_ns)
    print(p.report())
    p.result().save("run.json")
    pictures = p.result()
    page: str = pictures.to_html("run.html", title="run")
    flame: str = pictures.flamegraph_svg("run.svg", roots="thread")
    folded: str = pictures.folded(roots="process")
    with mainboard.meter.meter() as meter:
        pass
    print(meter.elapsed_s, meter.peak_host_gb, meter.peak_gpu_gb, meter.peak_rss_gb)
    with mainboard.meter() as region:  # the module is callable, and mypy knows it
        pass
    added: float = region.peak_rss_delta_gb
    added_pss: int = region.peak_pss_delta_bytes
    exact: bool = region.peak_rss_from_kernel
    meter_class: type[mainboard.Meter] = mainboard.meter.Meter
    if snap.os is not None:
        kernel: str = snap.os.kernel
        page_size: int | None = snap.os.page_size_bytes
        print(kernel, page_size)
    used_bytes: int | None = m.memory.used_bytes  # None where the host does not say
    thread_names: list[str] = [t.name for t in p.result().threads]
    tids: list[int] = [t.tid for t in p.result().threads]
    print(added, added_pss, exact, meter_class, used_bytes, thread_names, tids)
    prof = Profiler.run("train.py", timeout=600)
    prof = Profiler.run(None, module="bench.suite",
                        sampler=mainboard.Sampler(hz=499, call_graph="dwarf"))
    print(Profiler.dump(pid).text)
    report = mainboard.profile(lambda: None, iters=3)
    print(report.bound, report.unavailable, str(report))
    median: int = report.wall.median_ns
    seconds: float = report.cpu.median_s
    hot: list[str] = [f.function for f in report.hot_functions]
    each: tuple[int, ...] = report.iteration_wall_ns
    print(median, seconds, hot, each, report.device or "no GPU")
    print(mainboard.wait_for_idle(0, timeout=1.0), mainboard.gpu_busy(0))
    view = mainboard.MachineView()
    view.show()
    print(label, used, capped, text, copy, prof)


def returns_from_inside_a_span() -> int:
    """A span never swallows an exception (its __exit__ returns None): mypy knows this returns."""
    with span("x"):
        return 1


def a_failed_target_is_typed(script: str) -> str:
    """How a run's target ended: a typed TargetExit; a failure warns or, with strict, raises."""
    try:
        prof = Profiler.run(script, timeout=60, strict=True)
    except mainboard.TargetFailed as failed:
        ended = failed.profile.target_exit
        return "no target" if ended is None else ended.summary
    ended = prof.target_exit
    code: int = ended.exit_code if ended is not None else -1
    warning: type[Warning] = mainboard.MainboardWarning
    return f"{code} {warning.__name__}"
