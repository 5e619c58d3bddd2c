"""The kernelprof fixture inside a user's suite, through pytester.

pytester runs pytest in a subprocess: its in-process runs restore ``sys.modules`` after
each run, and torch cannot be imported twice into one process. So one project holds a test
per behaviour and one run checks all of them. Where the counts come from is
tests/plugin/test_options.py's, the fixture under xdist tests/plugin/test_xdist.py's.
"""

from __future__ import annotations

import pytest

from tests.helpers import DATA

SUITE = """
import pytest
import torch

from pytest_kernelprof import load_trace

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


def test_no_kernels_is_not_zero_kernels(kernelprof):
    prof = kernelprof(torch.relu, torch.randn(4))
    assert prof.kernels.count("*relu*") == 0


def test_failure_shows_the_profile(kernelprof):
    prof = kernelprof(torch.nn.Linear(8, 4), torch.randn(2, 8))
    assert prof.ops["aten::linear"].count == 2


def test_kernel_list_comparison_shows_the_table():
    prof = load_trace({trace!r})
    assert prof.kernels == []


def boom():
    raise RuntimeError("user code broke")


def test_raises_in_the_profiled_callable(kernelprof):
    kernelprof.profile(boom, warmup=0)


def test_profiles_after_a_raising_callable(kernelprof):
    assert kernelprof(torch.relu, torch.randn(2)).ops["aten::relu"].count == 1
"""

FAILED = [
    "test_no_kernels_is_not_zero_kernels",
    "test_failure_shows_the_profile",
    "test_kernel_list_comparison_shows_the_table",
    "test_raises_in_the_profiled_callable",
]


def _suite(pytester: pytest.Pytester, expected_calls: int, profiled: int) -> None:
    trace = str(DATA / "h200_geglu_compiled.json.gz")
    pytester.makepyfile(test_suite=SUITE.format(expected_calls=expected_calls, profiled=profiled, trace=trace))


def test_default_counts_and_failure_reports(cpu_pytester: pytest.Pytester) -> None:
    _suite(cpu_pytester, expected_calls=5, profiled=3)
    # With --kernelprof-save none not even the failed tests' traces are written.
    result = cpu_pytester.runpytest("-p", "no:randomly", "--kernelprof-trace-dir=traces", "--kernelprof-save=none")
    result.assert_outcomes(passed=5, failed=4)
    result.stdout.fnmatch_lines([f"FAILED test_suite.py::{name} - *" for name in FAILED])
    result.stdout.fnmatch_lines(["*NoDeviceActivityError: no GPU activity was recorded*"])
    result.stdout.fnmatch_lines(
        [
            "*_ test_failure_shows_the_profile _*",
            "*- kernelprof profile 1 of 1 -*",
            "KernelProfile from Linear, CPU only (no GPU activity recorded): 3 calls",
            "*aten::linear*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*the kernel names differ: 0 expected, 4 ran*", "*triton_poi_fused__unsafe_view_gelu_mul_0*"]
    )
    result.stdout.fnmatch_lines(["*RuntimeError: user code broke*"])
    assert not (cpu_pytester.path / "traces").exists()
    assert "kernelprof traces" not in result.stdout.str()


def test_a_loaded_trace_reads_as_loaded_and_by_its_path_under_the_rootdir(pytester: pytest.Pytester) -> None:
    # A trial: the fixture's repr said "0 profiles taken" or "1 profile taken" for a trace it
    # loaded, and the report's head named the trace by its absolute path where the job summary
    # names it relative to the rootdir.
    trace = pytester.path / "data" / "x.json.gz"
    trace.parent.mkdir()
    trace.write_bytes((DATA / "h200_geglu_eager.json.gz").read_bytes())
    pytester.makeini("[pytest]")
    pytester.makepyfile(
        f"""
        def test_under_rootdir(kernelprof):
            kernelprof.load_trace({str(trace)!r})
            assert False

        def test_outside(kernelprof):
            kernelprof.load_trace({str(DATA / "h200_geglu_eager.json.gz")!r})
            assert False
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "kernelprof = Profiler(1 profile loaded)",
            "*- kernelprof profile 1 of 1 -*",
            "KernelProfile from data/x.json.gz on NVIDIA H200 (sm90): 3 calls*",
        ]
    )
    result.stdout.fnmatch_lines([f"KernelProfile from {DATA / 'h200_geglu_eager.json.gz'} on NVIDIA H200*"])
    result.stdout.no_fnmatch_line(f"KernelProfile from {trace}*")
