"""What ``stacks=True`` costs: ``kernelprof(fn)`` with and without it, on a 600-kernel workload.

    python -m benchmarks.stacks_cost        (from the repository root, on a GPU machine)

The workload is the study's: 200 x (Linear 64x64 + relu + mul) in bf16, 600 kernels per
call. Each measurement is a whole ``Profiler.profile`` (2 warm-up calls, a session of 3
profiled calls, building the profile; with stacks also the trace export torch 2.11 needs),
interleaved, median of 5 after one round of warm-up. It also times a bare torch.profiler
session with and without ``_ExperimentalConfig(expose_kineto_event_metadata=True)``, the
option that would give live Kineto events of torch 2.11 their memcpy byte counts.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

from pytest_kernelprof import Profiler

ROUNDS = 5


def workload() -> Callable[[], torch.Tensor]:
    torch.manual_seed(0)
    layers = [nn.Linear(64, 64).to("cuda", torch.bfloat16) for _ in range(200)]
    x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)

    def step() -> torch.Tensor:
        h = x
        for layer in layers:
            h = torch.relu(layer(h)) * 1.01
        return h

    return step


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def metadata_config() -> object | None:
    """The experimental config that fills ``metadata_json()`` of live events, where torch has it."""
    try:
        return torch._C._profiler._ExperimentalConfig(expose_kineto_event_metadata=True)
    except (AttributeError, TypeError):
        return None


def bare_session(step: Callable[[], object], config: object | None) -> None:
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, experimental_config=config) as prof:
        for i in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{i}"):
                step()
            torch.cuda.synchronize()
    prof.profiler.kineto_results.events()


def main() -> None:
    step = workload()
    profiler = Profiler()
    variants: dict[str, Callable[[], object]] = {
        "kernelprof(fn)": lambda: profiler.profile(step, no_grad=True),
        "kernelprof(fn), stacks=True": lambda: profiler.profile(step, no_grad=True, stacks=True),
        "bare session": lambda: bare_session(step, None),
    }
    config = metadata_config()
    if config is not None:
        variants["bare session, expose_kineto_event_metadata"] = lambda: bare_session(step, config)
    for fn in variants.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, fn in variants.items():
            times[name].append(timed(fn))
            profiler.captures.clear()
    medians = {name: statistics.median(t) for name, t in times.items()}
    device = torch.cuda.get_device_name()
    prof = profiler.profile(step, no_grad=True, stacks=True)
    print(f"{device}, torch {torch.__version__}: {len(prof.kernels)} kernels per call, median of {ROUNDS}")
    for name, value in medians.items():
        spread = ", ".join(f"{t:.1f}" for t in sorted(times[name]))
        print(f"  {name}: {value:.1f} ms ({spread})")
    plain, stacks = medians["kernelprof(fn)"], medians["kernelprof(fn), stacks=True"]
    print(f"  stacks=True: {stacks / plain:.2f}x, +{(stacks - plain) / 3:.1f} ms per profiled call")
    meta = medians.get("bare session, expose_kineto_event_metadata")
    if meta is None:
        print("  expose_kineto_event_metadata: not in this torch")
    else:
        print(f"  expose_kineto_event_metadata: {meta / medians['bare session']:.2f}x a bare session")


if __name__ == "__main__":
    main()
