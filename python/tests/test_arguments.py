"""Arguments a C++ library could misread are refused at the door with a ValueError that names
the parameter: NUL bytes (C strings stop at them: "a\\x00b" ran as "a"), integers past 64 bits,
NaN and infinite durations."""

import math
import subprocess
import sys
import time

import pytest

import mainboard
from mainboard import Profile, Profiler, Sampler


def test_nul_bytes_in_arguments_and_paths_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"target\[1\] holds a NUL byte"):
        Profiler.run(["/bin/true", "a\x00b"])
    with pytest.raises(ValueError, match=r"args\[0\] holds a NUL byte"):
        Profiler.run("/bin/true", args=["a\x00b"])
    with pytest.raises(ValueError, match="target holds a NUL byte"):
        Profiler.run("/bin/tr\x00ue")
    (tmp_path / "a").write_text("{}")
    with pytest.raises(ValueError, match="path holds a NUL byte"):
        Profile.load(str(tmp_path / "a\x00b"))  # read /tmp/…/a before
    with pytest.raises(ValueError, match="path holds a NUL byte"):
        Profile().save(str(tmp_path / "b\x00c"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    with pytest.raises(ValueError, match="sysroot holds a NUL byte"):
        mainboard.Machine.over("/tmp\x00/x")
    with Profiler() as p:
        with pytest.raises(ValueError, match="name holds a NUL byte"):
            p.enter("step\x00 2")


@pytest.mark.parametrize("call, name", [
    (lambda: Profiler.attach(2**70), "pid"),
    (lambda: Profiler.attach(-1), "pid"),
    (lambda: Profiler.dump(2**64), "pid"),
    (lambda: mainboard.gpu_busy(2**70), "index"),
    (lambda: mainboard.wait_for_idle(2**70, sleep=lambda s: None), "index"),
    (lambda: Profile().bottlenecks(2**70), "top"),
    (lambda: Profile().hot_functions(-1), "top"),
    (lambda: Profile().timeline(2**80), "top_gaps"),
    (lambda: Profile().report(2**70), "top"),
    (lambda: Profiler(max_spans=2**70), "max_spans"),
    (lambda: Profiler(device_index=2**40), "device_index"),
    (lambda: Sampler(max_samples=2**70), "max_samples"),
])
def test_integers_out_of_range_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be an int"):
        call()


@pytest.mark.parametrize("call, name", [
    (lambda: Profiler.run("/bin/true", timeout=math.nan), "timeout"),
    (lambda: Profiler.attach(1, timeout=math.nan), "timeout"),
    (lambda: Profiler.dump(1, timeout=math.nan), "timeout"),
    (lambda: Profiler.run("/bin/true", timeout=-1.0), "timeout"),
    (lambda: mainboard.wait_for_idle(0, timeout=math.nan, sleep=lambda s: None), "timeout"),
    (lambda: mainboard.wait_for_idle(0, poll_interval=math.inf, sleep=lambda s: None),
     "poll_interval"),
    (lambda: mainboard.gpu_busy(0, util_threshold=math.nan), "util_threshold"),
])
def test_nan_and_unusable_durations_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_an_infinite_timeout_means_no_limit():
    assert Profiler.run("/bin/true", timeout=math.inf).pid > 0
    # attach until the process exits: it exits after half a second, and stays a zombie (unreaped)
    # while the attach runs; the attach ends there.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    try:
        start = time.monotonic()
        try:
            Profiler.attach(child.pid, timeout=math.inf)
        except mainboard.MainboardError as e:
            if "perf" in str(e):
                pytest.skip(f"perf events refused here: {e}")
            raise
        assert time.monotonic() - start < 10
    finally:
        child.wait()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print('r', flush=True); "
                                "time.sleep(60)"], stdout=subprocess.PIPE)
    try:
        sleeper.stdout.readline()
        assert Profiler.dump(sleeper.pid, timeout=math.inf).threads
    finally:
        sleeper.kill()
        sleeper.wait()
