"""The kernelprof fixture inside a user's suite, through pytester (also under xdist).

These run pytest in a subprocess: pytester's in-process runs restore ``sys.modules``
after each run, and torch cannot be imported twice into one process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

CPU_SUITE = """
import pytest
import torch

calls = []

def test_dispatch_chain(kernelprof):
    lin = torch.nn.Linear(8, 4)
    prof = kernelprof(lin, torch.randn(2, 8))
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]

def test_counts(kernelprof):
    prof = kernelprof(lambda: calls.append(1) or torch.relu(torch.randn(3)))
    assert len(calls) == {expected_calls}
    assert len(prof.calls) == {profiled}

def test_explicit_form(kernelprof):
    prof = kernelprof.profile(torch.add, args=(torch.ones(2), torch.ones(2)), warmup=0, calls=1)
    assert len(prof.calls) == 1 and prof.ops["aten::add"].count == 1

def test_record(kernelprof):
    with kernelprof.record() as rec:
        torch.mul(torch.ones(2), 2)
    assert rec.profile.ops["aten::mul"].count == 1
"""


def test_fixture_on_cpu_with_default_counts(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(test_suite=CPU_SUITE.format(expected_calls=5, profiled=3))
    pytester.runpytest_subprocess("-p", "no:randomly").assert_outcomes(passed=4)


def test_counts_come_from_the_options(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(test_suite=CPU_SUITE.format(expected_calls=2, profiled=2))
    pytester.runpytest_subprocess("--kernelprof-warmup", "0", "--kernelprof-calls", "2").assert_outcomes(passed=4)


def test_counts_come_from_the_ini_file(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makeini("[pytest]\nkernelprof_warmup = 1\nkernelprof_calls = 1\n")
    pytester.makepyfile(test_suite=CPU_SUITE.format(expected_calls=2, profiled=1))
    pytester.runpytest_subprocess().assert_outcomes(passed=4)


def test_under_xdist(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytest.importorskip("xdist")
    pytester.makepyfile(test_suite=CPU_SUITE.format(expected_calls=5, profiled=3))
    pytester.runpytest_subprocess("-n", "2").assert_outcomes(passed=4)


def test_a_kernel_query_without_gpu_fails_the_test_not_passes_it(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(
        test_q="""
        import torch

        def test_no_kernels_is_not_zero_kernels(kernelprof):
            prof = kernelprof(torch.relu, torch.randn(4))
            assert prof.kernels.count("*relu*") == 0
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NoDeviceActivityError: no GPU activity was recorded*"])


def test_a_failing_test_shows_the_profile(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(
        test_fail="""
        import torch

        def test_fails(kernelprof):
            prof = kernelprof(torch.nn.Linear(8, 4), torch.randn(2, 8))
            assert prof.ops["aten::linear"].count == 2
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*- kernelprof profile 1 of 1 -*", "KernelProfile from Linear on no GPU: 3 call(s)", "*aten::linear*"]
    )


def test_kernel_list_comparisons_show_the_table(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(
        test_cmp=f"""
        from pytest_kernelprof import load_trace

        def test_compare():
            prof = load_trace({str(DATA / "h200_geglu_compiled.json.gz")!r})
            assert prof.kernels == []
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*KernelList == list failed; the kernels:*", "*triton_poi_fused__unsafe_view_gelu_mul_0*"]
    )


def test_a_raising_callable_leaves_the_next_test_a_clean_profiler(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makepyfile(
        test_order="""
        import torch

        def boom():
            raise RuntimeError("user code broke")

        def test_1_raises(kernelprof):
            kernelprof.profile(boom, warmup=0)

        def test_2_profiles(kernelprof):
            assert kernelprof(torch.relu, torch.randn(2)).ops["aten::relu"].count == 1
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*RuntimeError: user code broke*"])
