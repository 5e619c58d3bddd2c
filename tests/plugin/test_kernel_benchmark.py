"""kernel_benchmark through pytester: rounds are the recorded calls' kernel time."""

from __future__ import annotations

import json

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
