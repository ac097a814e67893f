"""Sleeps in a known place on the main thread and waits on a lock on another, printing "ready"."""
import sys
import threading
import time


def nap_forever():
    while True:
        time.sleep(3600)


def side_thread():
    threading.Event().wait()


def main():
    threading.Thread(target=side_thread, name="side", daemon=True).start()
    print("ready", flush=True)
    nap_forever()


main()
