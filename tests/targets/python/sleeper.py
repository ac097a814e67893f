"""Sleeps in a known place on two threads, printing "ready" once both are there."""
import sys
import threading
import time


def nap_forever():
    while True:
        time.sleep(3600)


def side_thread():
    nap_forever()


def main():
    threading.Thread(target=side_thread, name="side", daemon=True).start()
    print("ready", flush=True)
    nap_forever()


main()
