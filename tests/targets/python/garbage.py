"""Puts the wrong things where a reader of threads and tasks looks (threading._active, asyncio's
sets of tasks), or too many of them, then sleeps, printing "ready". Argument: "huge" for a
table of 200 000 entries instead."""
import asyncio.tasks
import sys
import threading
import time

if len(sys.argv) > 1 and sys.argv[1] == "huge":
    threading._active = {i: None for i in range(200_000)}
else:
    threading._active = {"not an int": 5, 7: "not a thread", 2**80: object(), -3: None}
asyncio.tasks._all_tasks = 17
asyncio.tasks._scheduled_tasks = [1, 2]
asyncio.tasks._eager_tasks = {"not a task", 4.5}
print("ready", flush=True)
time.sleep(3600)
