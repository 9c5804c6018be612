"""Task functions for test_taskstream: importable on the workers (the
cluster's PYTHONPATH is this directory), none of them knows roastop."""
import time


def inc(x):
    return x + 1


def nap(seconds):
    time.sleep(seconds)
    return seconds


def boom(x):
    raise ValueError(f"boom {x}")
