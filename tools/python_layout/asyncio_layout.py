"""Prints where this interpreter's C asyncio Task keeps its coroutine, its name and the future it
waits on, as C defines for layout.c (-DTASK_CORO=… -DTASK_NAME=… -DTASK_WAITER=…): byte offsets
found by looking for those objects' addresses inside a live task. The structure is declared only
in Modules/_asynciomodule.c, in no installed header, so the interpreter is asked instead."""
import asyncio
import ctypes
import sys


def offsets_of(obj, wanted):
    size = type(obj).__basicsize__
    raw = ctypes.string_at(id(obj), size)
    found = {}
    for off in range(0, size - 7, 8):
        value = int.from_bytes(raw[off:off + 8], sys.byteorder)
        for key, target in wanted.items():
            if value == id(target) and key not in found:
                found[key] = off
    return found


async def waits(future):
    await future


async def main():
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    task = asyncio.Task(waits(future), name="mainboard-layout-probe")
    await asyncio.sleep(0)  # the task runs until it waits on the future
    if type(task).__module__ != "_asyncio":
        return {}
    found = offsets_of(task, {"coro": task.get_coro(), "name": task.get_name(),
                              "waiter": task._fut_waiter})
    future.set_result(None)
    await task
    return found


found = asyncio.run(main()) if sys.version_info >= (3, 11) else {}
print(" ".join(f"-DTASK_{k.upper()}={found.get(k, -1)}" for k in ("coro", "name", "waiter")))
