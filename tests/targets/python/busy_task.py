"""One asyncio task that computes without ever awaiting ("spinner", in inner()), awaited by the
main task. Prints "ready" just before it starts."""
import asyncio


def work():
    return sum(range(1000))


async def inner():
    while True:
        work()


async def spinner():
    await inner()


async def main():
    task = asyncio.create_task(spinner(), name="spinner")
    print("ready", flush=True)
    await task


asyncio.run(main())
