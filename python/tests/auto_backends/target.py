import asyncio
def leaf(x): return x + 1
def rec(n): return 0 if n == 0 else rec(n - 1)
def boom(): raise ValueError("x")
def catcher():
    try:
        boom()
    except ValueError:
        return leaf(1)
def gen():
    yield 1
    yield 2
class K:
    def m(self): return leaf(2)
async def co():
    await asyncio.sleep(0)
    return 1
