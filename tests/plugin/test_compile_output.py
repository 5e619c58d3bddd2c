"""What a failing test's report shows, read as a user reads it (issue 21)."""

from __future__ import annotations

import pytest

from pytest_kernelprof.health import CompileFacts, MemoryReading, compile_report, memory_report
from tests.helpers import DATA, failure_sections

INNER = f"""
import pytest
import torch

import pytest_kernelprof as kp


def double(x):
    return torch.sin(x) * 2


def test_compiled_with_the_fixture(kernelprof):
    compiled = torch.compile(double, backend="eager")
    prof = kernelprof(compiled, torch.randn(4))
    assert prof.compile.frames == 99


def triple(x):
    return torch.cos(x) * 3


@pytest.fixture
def compiled():
    return torch.compile(triple, backend="eager")(torch.randn(4))


def test_compiled_without_the_fixture(compiled):
    torch.compile(triple, backend="eager")(torch.randn(5))
    assert compiled is None


def broken(x):
    y = torch.sin(x) * 2
    print("a graph break")
    return torch.cos(y)


def test_where_compile_report():
    prof = kp.profile(torch.compile(broken, backend="eager"), torch.randn(4))
    assert prof.compile.regions == 5


def test_where_memory_report():
    prof = kp.load_trace({str(DATA / "h200_memory_leak.json.gz")!r})
    assert prof.memory.malloc_calls == 5
"""


def test_failing_compiled_tests_show_no_trace_log_and_report_reprs_on_one_line(pytester: pytest.Pytester) -> None:
    """A compile in a test, with the fixture or without it (in a fixture of the test's own, at
    DEBUG log level), logs no torch.__trace lines into the report; the ``where`` lines of a
    failed assert on a compile or memory report read on one line."""
    pytester.makepyfile(test_compiled=INNER)
    result = pytester.runpytest("-p", "no:cacheprovider", "--log-level=DEBUG")
    result.assert_outcomes(failed=4)
    assert "torch.__trace" not in result.stdout.str()
    sections = failure_sections(result)
    assert sorted(sections) == [
        "test_compiled_with_the_fixture",
        "test_compiled_without_the_fixture",
        "test_where_compile_report",
        "test_where_memory_report",
    ]
    compile_where = "E        +  where 2 = CompileReport(regions=2, frames=2, graph_breaks=1, recompiles=0).regions"
    memory_where = (
        "E        +  where 1 = MemoryReport(malloc_calls=1, free_calls=0; peak_bytes, retained_bytes: "
        "cannot tell, see .table()).malloc_calls"
    )
    assert compile_where in sections["test_where_compile_report"].lines
    assert memory_where in sections["test_where_memory_report"].lines
    # No report's repr spills an escaped newline into a line of the failures.
    assert not [line for line in result.outlines if line.startswith("E ") and "\\n" in line]


def test_report_reprs_stay_short_for_many_calls_and_tell_what_they_cannot() -> None:
    facts = CompileFacts(source="test", frames=4, recompiles=1, compile_ids=frozenset({"0/0"}))
    varying = compile_report([["0/0"], ["0/0", "1/0"]] * 50, facts, "")
    assert repr(varying) == (
        "CompileReport(regions=1 (per call: 1, 2, 1, 2, 1, ...), frames=4, graph_breaks=cannot tell, recompiles=1)"
    )
    assert repr(compile_report([[]], None, "a trace")) == (
        "CompileReport(regions=0, frames, graph_breaks, recompiles: cannot tell, see .table())"
    )
    readings = [MemoryReading(before=0, peak=3 << 20, after=1 << 20)] * 3
    memory = memory_report([{"cudaMalloc": 1}] * 3, readings, "")
    assert repr(memory) == (
        "MemoryReport(peak_bytes=3.0 MiB, retained_bytes=1.0 MiB, malloc_calls=1, free_calls=0; median of 3 calls)"
    )
    assert str(memory).startswith("MemoryReport (median of 3 calls):\n")
