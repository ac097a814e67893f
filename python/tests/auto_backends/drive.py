"""Runs the auto-span backend of this interpreter (the profile hook, or sys.monitoring on 3.12+)
over target.py and other.py with a recording stand-in for the span extension; prints the spans'
enters and exits, and which backend ran. Run by test_auto_backends.py on every interpreter."""
import asyncio
import sys

from fakemb import _auto, _mainboard

import other
import target


def outside():
    return target.leaf(0)


a = _auto.AutoSpans(("target",))
a.start()
backend = "profile-hook" if sys.getprofile() is not None else "monitoring"
target.K().m()
target.rec(2)
target.catcher()
list(target.gen())
asyncio.run(target.co())
outside()
other.f()
a.stop()
first = " ".join(_mainboard.log)
_mainboard.log.clear()
# A second session of other modules: what the first one switched off counts again.
b = _auto.AutoSpans(("other",))
b.start()
other.f()
target.leaf(0)
b.stop()
other.f()  # after stop: nothing
print(backend)
print(first)
print(" ".join(_mainboard.log))
