"""
A second, competing process for the benchmarks' "busy" condition: the machines our users train on are shared, and
a ratio measured on an idle machine can move when another job holds the other core (its memory traffic and cache
use compete with ours). `busy()` starts one single-thread process that runs torch.nn.LSTM forward + backward
(B=32, T=40, d=300: another benchmark of the same kind) in a loop until the block ends.

    with busy(enabled=True):
        ...  # timings taken here share the machine with the load
"""
import contextlib
import os
import subprocess
import sys
import time
from typing import Iterator

_LOAD = """
import torch
torch.set_num_threads(1)
lstm = torch.nn.LSTM(300, 300, batch_first=True)
x = torch.randn(32, 40, 300, requires_grad=True)
print("ready", flush=True)
while True:
    lstm(x)[0].sum().backward()
"""


@contextlib.contextmanager
def busy(enabled: bool = True) -> Iterator[None]:
    if not enabled:
        yield
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    process = subprocess.Popen([sys.executable, "-c", _LOAD], stdout=subprocess.PIPE, env=env, text=True)
    try:
        process.stdout.readline()  # "ready": torch imported, the loop about to start
        time.sleep(1.0)
        yield
    finally:
        process.kill()
        process.wait()


def conditions(names) -> Iterator[str]:
    """Yields each condition name ("quiet", "busy") with the load started for "busy"."""
    for name in names:
        if name not in ("quiet", "busy"):
            raise ValueError(f"unknown condition {name!r}: quiet or busy")
        with busy(name == "busy"):
            yield name
