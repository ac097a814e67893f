"""asyncio tasks waiting for each other, for dump --async: main gathers "alpha" and "beta";
alpha awaits the task "leaf"; leaf and beta sleep two coroutines deep. Prints "ready" (from the
loop, once main itself waits in gather) when every task waits."""
import asyncio


async def deepest():
    await asyncio.sleep(3600)


async def middle():
    await deepest()


async def leaf():
    await middle()


async def alpha():
    await asyncio.create_task(leaf(), name="leaf")


async def beta():
    await middle()


async def main():
    tasks = [asyncio.create_task(alpha(), name="alpha"), asyncio.create_task(beta(), name="beta")]
    asyncio.get_running_loop().call_later(0.05, lambda: print("ready", flush=True))
    await asyncio.gather(*tasks)


asyncio.run(main())
