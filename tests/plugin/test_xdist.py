"""The plugin under pytest-xdist, through one pytester run of ``pytest -n 2``.

The workers profile, hold profiles to the ini's rules, write traces and record baselines; the
settings they use come from the ini file and the command line of the controller, which shows
the workers' failure sections and gathers the baselines they used from their reports. What each of these does without
xdist is the other tests/plugin modules'.
"""

from __future__ import annotations

import json

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import record
from pytest_kernelprof.paths import trace_file_name
from tests.helpers import DATA, section

TRACE = DATA / "h200_geglu_compiled.json.gz"

SUITE = """
import pytest
import torch

from pytest_kernelprof import load_trace

calls = []


def test_counts(kernelprof):
    prof = kernelprof(lambda: calls.append(1) or torch.relu(torch.randn(3)))
    assert (len(calls), len(prof.calls)) == (3, 2)  # warm-up 1 from the ini file, calls 2 from the option


def test_fails(kernelprof):
    kernelprof(torch.relu, torch.randn(4))
    kernelprof(torch.sigmoid, torch.randn(4))
    assert False, "on purpose"


def test_baseline(kernel_baseline):
    kernel_baseline.check(load_trace({trace!r}))


def test_rule(kernelprof):
    kernelprof.load_trace({trace!r})  # its GEMMs break the ini's rule


@pytest.mark.kernelprof_allow("no-gemm")
def test_allowed(kernelprof):
    kernelprof.load_trace({trace!r})
"""


def test_workers_profile_save_and_record_with_the_controllers_settings(cpu_pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    cpu_pytester.makeini(
        "[pytest]\nkernelprof_warmup = 1\nkernelprof_forbid =\n    no-gemm: kind=gemm | held on the workers too\n"
    )
    cpu_pytester.makepyfile(test_w=SUITE.format(trace=str(TRACE)))
    folder = cpu_pytester.path / "__kernelprof__" / "test_w"
    record(folder / "test_baseline.json", "sm90", "old_check", load_trace(TRACE))
    (folder / "test_removed.json").write_text("{}")

    result = cpu_pytester.runpytest(
        "-n",
        "2",
        "--kernelprof-calls=2",
        "--kernelprof-trace-dir=traces",
        "--kernelprof-save=all",
        "--kernelprof-update",
    )

    result.assert_outcomes(passed=3, failed=2)
    section(result, "test_rule").fnmatch_lines(["*no-gemm*held on the workers too*"])
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof profile 2 of 2 -*",
            "KernelProfile from *sigmoid, CPU only (no GPU activity recorded): 2 calls",
            "*- kernelprof traces -*",
            f"*traces/{trace_file_name('test_w.py::test_fails', 0)}  (kernelprof show *",
            f"*traces/{trace_file_name('test_w.py::test_fails', 1)}  (kernelprof show *",
        ]
    )
    traces = cpu_pytester.path / "traces"
    failed = [("test_w.py::test_fails", 0), ("test_w.py::test_fails", 1), ("test_w.py::test_rule", 0)]
    # test_baseline's trace too: a profile loaded in a test without the fixture is the test's (issue 32 item 10).
    written = [("test_w.py::test_counts", 0), ("test_w.py::test_allowed", 0), ("test_w.py::test_baseline", 0), *failed]
    # --kernelprof-save=all: every test's trace; each failing test's with a timeline page beside it.
    pages = [trace_file_name(*each).replace(".json.gz", ".html") for each in failed]
    assert sorted(p.name for p in traces.iterdir()) == sorted([*(trace_file_name(*each) for each in written), *pages])
    prof = load_trace(traces / trace_file_name("test_w.py::test_fails", 1))
    assert prof.ops["aten::sigmoid"].count == 1
    assert len(prof.calls) == 2

    # The worker's entry beside the one already there; the controller, which never ran the
    # test, still knows which entries were used.
    recorded = json.loads((folder / "test_baseline.json").read_text())["archs"]["sm90"]
    assert sorted(recorded) == ["default", "old_check"]
    assert recorded["default"]["device"] == "NVIDIA H200"
    result.stdout.fnmatch_lines(
        [
            "*kernelprof: 2 unused baseline entries*",
            "*test_baseline.json: sm90/old_check",
            "*test_removed.json (no test of that name ran)",
        ]
    )
