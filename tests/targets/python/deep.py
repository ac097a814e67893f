"""Stacks that are deep or wide, each sleeping once it is built, after printing "ready":
  deep N       recursion N frames deep
  longname N   a function whose name is N characters long, called from caller()
  loop OFFSET  the thread-state list made to loop onto itself (the main thread's `next`, at
               OFFSET in its PyThreadState, pointed at itself)
"""
import sys
import time


def nap():
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def recurse(k):
    if k == 0:
        nap()
    recurse(k - 1)


def main():
    mode = sys.argv[1]
    if mode == "deep":
        n = int(sys.argv[2])
        sys.setrecursionlimit(n + 1000)
        recurse(n)
    elif mode == "longname":
        name = "f" * int(sys.argv[2])
        scope = {"nap": nap}
        exec(f"def {name}():\n    nap()\n", scope)

        def caller():
            scope[name]()

        caller()
    elif mode == "loop":
        import ctypes

        get = ctypes.pythonapi.PyThreadState_Get
        get.restype = ctypes.c_void_p
        state = get()
        ctypes.c_void_p.from_address(state + int(sys.argv[2])).value = state
        nap()


main()
