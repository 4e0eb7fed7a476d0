"""
What a GPU step costs besides arithmetic: kernels launched per call and the fraction of wall time the GPU was busy,
read from torch.profiler's CUDA activity. A step loop of many small kernels shows as many kernels and a low busy
fraction (the GPU waits for the host to launch the next one); a fused kernel as few kernels and a high fraction.
"""
import time
from typing import Callable, Tuple

import torch


def kernels_and_busy(run: Callable[[], None], calls: int = 3) -> Tuple[float, float, float]:
    """(kernels per call, GPU busy ms per call, wall ms per call) of `run`, over `calls` calls after one warm-up."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        started = time.perf_counter()
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
        wall = time.perf_counter() - started
    kernels = [event for event in profiler.events() if event.device_type == DeviceType.CUDA]
    busy_us = sum(event.time_range.elapsed_us() for event in kernels)
    return len(kernels) / calls, busy_us / 1000 / calls, wall * 1000 / calls


def profile_columns(run: Callable[[], None]) -> str:
    """' kernels | busy % |' cells for a markdown table row; 'n/a' where the profiler gives no CUDA events."""
    try:
        kernels, busy, wall = kernels_and_busy(run)
    except Exception as error:  # a profiler that cannot see the GPU must not cost the timing table
        print(f"(profiler: {type(error).__name__}: {error})")
        return " n/a | n/a |"
    return f" {kernels:.0f} | {100 * busy / wall:.0f} |"
