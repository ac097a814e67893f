"""A Python program for the pictures check: two hot functions under one caller, a second thread."""
import math
import threading


def leaf_sqrt(n):
    return sum(math.sqrt(i) for i in range(n))


def leaf_square(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def middle(n):
    return leaf_sqrt(n) + leaf_square(n // 2)


def helper():
    for _ in range(30):
        leaf_square(30000)


thread = threading.Thread(target=helper, name="helper")
thread.start()
for _ in range(40):
    middle(40000)
thread.join()
