"""kernel_benchmark through pytester: rounds are the recorded calls' kernel time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_kernelprof import BenchmarkError, load_trace
from tests.helpers import DATA

TRACE = DATA / "h200_geglu_compiled.json.gz"

pytest.importorskip("pytest_benchmark")


def test_rounds_are_kernel_time_and_extra_info_names_the_kernels(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under xdist the inner run would inherit the worker's id and pytest-benchmark would
    # switch itself off.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    cpu_pytester.makepyfile(
        test_b=f"""
        import torch

        from pytest_kernelprof import load_trace

        def test_mlp(kernel_benchmark):
            kernel_benchmark.from_profile(load_trace({str(TRACE)!r}))

        def test_without_gpu_activity_there_is_no_benchmark(kernel_benchmark):
            kernel_benchmark(torch.relu, torch.randn(4))
        """
    )
    result = cpu_pytester.runpytest("-p", "benchmark", "--benchmark-json=out.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*NoDeviceActivityError*"])
    report = json.loads((cpu_pytester.path / "out.json").read_text())
    [bench] = report["benchmarks"]
    assert bench["name"] == "test_mlp"
    prof = load_trace(TRACE)
    per_call = sorted(call.kernels.total_us / 1e6 for call in prof.calls)
    assert bench["stats"]["rounds"] == 3
    assert bench["stats"]["min"] == pytest.approx(per_call[0])
    assert bench["stats"]["median"] == pytest.approx(per_call[1])
    assert bench["stats"]["max"] == pytest.approx(per_call[2])
    info = bench["extra_info"]
    assert info["kernel_count"] == 4
    assert info["kernel_names"] == prof.kernels.names
    assert info["kernel_median_us"]["triton_poi_fused__unsafe_view_gelu_mul_0"] == pytest.approx(
        prof.kernels.one("triton_*").duration_us, abs=0.001
    )
    assert info["device"] == "NVIDIA H200"
    assert "torch" in report["machine_info"]["kernelprof"]


def test_without_pytest_benchmark_the_error_says_what_to_install(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_b="def test_x(kernel_benchmark):\n    pass\n")
    result = pytester.runpytest("-p", "no:benchmark")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*kernel_benchmark needs pytest-benchmark: pip install pytest-benchmark*"])


def test_gpu_clock_advances_by_each_rounds_kernel_time() -> None:
    from pytest_kernelprof.plugin.benchmark import GpuKernelClock

    clock = GpuKernelClock([1.0, 2.5])
    before = clock()
    clock.tick()
    assert clock() - before == 1.0
    clock.tick()
    assert clock() == 3.5
    with pytest.raises(BenchmarkError, match="more rounds"):
        clock.tick()


class _Benchmark:
    """What benchmark_profile uses of pytest-benchmark's fixture: its timer, extra_info and
    pedantic (which times each round on the timer, as pytest-benchmark does)."""

    def __init__(self) -> None:
        self._timer: Any = None
        self.extra_info: dict[str, Any] = {}
        self.rounds: list[float] = []

    def pedantic(self, target: Any, *, rounds: int, iterations: int) -> None:
        assert iterations == 1
        for _ in range(rounds):
            before = self._timer()
            target()
            self.rounds.append(self._timer() - before)


def test_end_to_end_times_as_many_calls_again_on_the_hosts_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_kernelprof.api.profiler import Profiler
    from pytest_kernelprof.options import ProfileOptions
    from pytest_kernelprof.plugin.benchmark import benchmark_callable

    prof = load_trace(TRACE)
    monkeypatch.setattr(Profiler, "profile", lambda self, fn, args, kwargs: prof)
    calls: list[int] = []
    benchmark = _Benchmark()
    options = ProfileOptions(warmup=0, calls=3)
    assert benchmark_callable(benchmark, calls.append, (7,), {}, options, end_to_end=True) is prof
    assert calls == [7, 7, 7]  # the host-timed calls; the profiled ones are the Profiler's
    assert benchmark.rounds == pytest.approx([call.kernels.total_us / 1e6 for call in prof.calls])
    info = benchmark.extra_info
    assert info["kernel_count"] == 4
    assert 0 < info["host_wall_min_us"] <= info["host_wall_median_us"]
    assert info["host_overhead_median_us"] == pytest.approx(
        info["host_wall_median_us"] - prof.kernels.total_us, abs=0.002
    )
    assert repr(benchmark._timer) == "pytest_kernelprof.gpu_kernel_time"  # how pytest-benchmark names it
    without_host = _Benchmark()
    benchmark_callable(without_host, calls.append, (8,), {}, options)
    assert 8 not in calls
    assert "host_wall_median_us" not in without_host.extra_info


def test_a_benchmark_fixture_without_a_timer_is_refused() -> None:
    from types import SimpleNamespace

    from pytest_kernelprof.plugin.benchmark import benchmark_profile

    with pytest.raises(BenchmarkError, match=r"needs pytest-benchmark 4 or 5 .*got a SimpleNamespace without it"):
        benchmark_profile(SimpleNamespace(pedantic=None), load_trace(TRACE))


def test_machine_info_names_the_gpu_and_its_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from pytest_kernelprof.plugin import benchmark

    monkeypatch.setattr(benchmark, "device_facts", lambda: ("NVIDIA H200", "sm90"))
    monkeypatch.setattr(torch._C, "_cuda_getDriverVersion", lambda: 12080, raising=False)
    monkeypatch.setattr(benchmark, "_cublas_version", lambda: "12.8.4")
    # No cuBLAS wheel (a CUDA build of torch brings nvidia-cublas-cu12): the library is asked
    monkeypatch.setattr(benchmark, "package_versions", lambda *names: dict.fromkeys(names))
    info = benchmark.machine_info()
    assert (info["gpu"], info["gpu_arch"], info["cuda_driver_api"]) == ("NVIDIA H200", "sm90", "12.8")
    assert info["torch"] == torch.__version__
    assert info["cublas"] == "12.8.4"
    monkeypatch.setattr(benchmark, "package_versions", lambda *names: {"nvidia-cublas-cu12": "12.4.5.8"})
    assert benchmark.machine_info()["cublas"] == "12.4.5.8"  # the wheel's version, where there is one
    monkeypatch.setattr(benchmark, "device_facts", lambda: (None, None))
    assert "gpu" not in benchmark.machine_info()


def test_without_cublas_its_version_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes
    import ctypes.util

    from pytest_kernelprof.plugin import benchmark

    def missing(name: str) -> None:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert benchmark._cublas_version() is None
