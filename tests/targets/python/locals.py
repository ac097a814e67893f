"""A frame whose arguments and locals hold a value of each kind `profile dump --locals` shows,
asleep; prints "ready"."""
import time


class Thing:
    pass


def inner(n, flag, none, big, neg, ratio, text, data, pair, items, table, thing, *rest,
          **options):
    long_text = "x" * 5000
    nested = [(1, 2), {"a": [1, [2, [3, [4]]]]}]
    many = list(range(25))
    counter = 0

    def closure():
        return counter

    print("ready", flush=True)
    while True:
        time.sleep(3600)


inner(7, True, None, 2 ** 100, -12345678901234567890, 0.1, "h\u00e9llo\n", b"\x00ab'", (1, "two"),
      [1.5, None], {"k": 1}, Thing(), "extra", key="v")
