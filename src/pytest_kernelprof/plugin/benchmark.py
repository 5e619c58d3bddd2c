"""pytest-benchmark rounds timed by the GPU kernels themselves.

pytest-benchmark times each round with a clock. Here the clock is replaced, for one
benchmark, by a GPU clock that advances by the summed kernel time of each profiled call,
so ``min``/``median``/``stddev``, ``--benchmark-json``, ``--benchmark-save`` and
``--benchmark-compare-fail`` all describe GPU work instead of host launch overhead.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..api.profiler import Profiler
from ..capture import device_facts, package_versions, synchronize
from ..capture.profiler import import_torch
from ..errors import BenchmarkError
from ..model import KernelProfile
from ..options import ProfileOptions


class GpuKernelClock:
    """A timer for pytest-benchmark: reads the GPU seconds accumulated so far.

    ``tick()`` is the benchmarked target: it advances the clock by the next call's
    kernel time, so pytest-benchmark's ``after - before`` is exactly that time.
    """

    __name__ = "pytest_kernelprof.gpu_kernel_time"

    def __init__(self, seconds_per_round: list[float]) -> None:
        self._pending = list(seconds_per_round)
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def tick(self) -> None:
        if not self._pending:
            raise BenchmarkError("kernel_benchmark ran more rounds than it profiled")
        self.now += self._pending.pop(0)

    def __repr__(self) -> str:
        return self.__name__


def benchmark_profile(benchmark: Any, prof: KernelProfile, *, wall_us: list[float] | None = None) -> KernelProfile:
    """Report the per-call kernel time of ``prof`` through pytest-benchmark's ``benchmark``."""
    if not hasattr(benchmark, "_timer") or not hasattr(benchmark, "pedantic"):
        raise BenchmarkError(
            "kernel_benchmark needs pytest-benchmark 4 or 5 (its BenchmarkFixture._timer); "
            f"got a {type(benchmark).__name__} without it"
        )
    prof.require_device_activity()  # not a benchmark of nothing
    figures = [call.kernels.total_us / 1e6 for call in prof.calls]
    clock = GpuKernelClock(figures)
    benchmark._timer = clock
    benchmark.extra_info.update(kernel_info(prof))
    if wall_us is not None:
        wall = statistics.median(wall_us)
        benchmark.extra_info["host_wall_median_us"] = round(wall, 3)
        benchmark.extra_info["host_wall_min_us"] = round(min(wall_us), 3)
        benchmark.extra_info["host_overhead_median_us"] = round(wall - prof.call.kernels.total_us, 3)
    benchmark.pedantic(clock.tick, rounds=len(figures), iterations=1)
    return prof


def kernel_info(prof: KernelProfile) -> dict[str, Any]:
    """What a comparison needs to see that a faster number came from a different kernel set."""
    per_kernel: dict[str, list[float]] = {}
    for call in prof.calls:
        for kernel in call.kernels:
            per_kernel.setdefault(kernel.name, []).append(kernel.duration_us)
    return {
        "timer": "gpu kernel time (pytest-kernelprof)",
        "device": prof.device,
        "arch": prof.arch,
        "kernel_count": len(prof.call.kernels),
        "kernel_names": prof.call.kernels.names,
        "kernel_median_us": {name: round(statistics.median(v), 3) for name, v in per_kernel.items()},
        "calls_varied": prof.varied,
    }


def benchmark_callable(
    benchmark: Any,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    options: ProfileOptions,
    *,
    end_to_end: bool = False,
) -> KernelProfile:
    """Profile ``options.calls`` calls (the rounds) in one session and report each call's kernel
    time as a round; ``end_to_end``: time as many calls again on the host's clock."""
    prof = Profiler.from_options(options).profile(fn, args, kwargs)
    wall_us = None
    if end_to_end:
        wall_us = []
        for _ in range(options.calls):
            synchronize()
            start = time.perf_counter()
            fn(*args, **kwargs)
            synchronize()
            wall_us.append((time.perf_counter() - start) * 1e6)
    return benchmark_profile(benchmark, prof, wall_us=wall_us)


def machine_info() -> dict[str, Any]:
    """GPU, driver, CUDA, cuBLAS, torch and Triton versions for pytest-benchmark's machine info
    (a ``MissingTorchError`` where torch cannot be imported)."""
    torch = import_torch()
    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    versions = package_versions("triton", "nvidia-cublas", "nvidia-cublas-cu12", "nvidia-cublas-cu13")
    for dist, version in versions.items():
        if version is not None:
            info[dist.replace("nvidia-", "").split("-cu")[0]] = version
    gpu, arch = device_facts()
    if gpu is not None:
        info["gpu"] = gpu
        info["gpu_arch"] = arch
        driver = getattr(torch._C, "_cuda_getDriverVersion", None)
        if driver is not None:
            driver_version = int(driver())
            info["cuda_driver_api"] = f"{driver_version // 1000}.{driver_version % 1000 // 10}"
        info["cublas"] = info.get("cublas") or _cublas_version()
    return info


def _cublas_version() -> str | None:
    """cuBLAS reports its version through cublasGetProperty; torch links it dynamically."""
    import ctypes
    import ctypes.util

    for name in ("libcublas.so", "libcublas.so.13", "libcublas.so.12", ctypes.util.find_library("cublas")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        parts = []
        for prop in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int()
            if lib.cublasGetProperty(prop, ctypes.byref(value)) != 0:
                return None
            parts.append(str(value.value))
        return ".".join(parts)
    return None
