"""A failure caused by what the test asked shows the test's line, not the plugin's frames (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    "read",
    [
        "prof.compile.frames",
        "prof.compile.graph_breaks",
        "prof.compile.recompiles",
        "prof.compile.recompile_reasons",
        "prof.memory.peak_bytes",
        "prof.memory.retained_bytes",
        "prof.calls[0].memory.peak_bytes",
    ],
)
def test_what_a_trace_cannot_tell_fails_without_plugin_frames(pytester: pytest.Pytester, read: str) -> None:
    pytester.makepyfile(
        f"""
        import pytest_kernelprof as kp

        def test_read():
            prof = kp.load_trace({str(DATA / "h200_compile_graph_break.json.gz")!r})
            assert {read} == 0
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CannotTellError: prof.*", "test_what_a_trace_cannot_tell*.py:5: CannotTellError"])
    assert "/pytest_kernelprof/" not in result.stdout.str()


@pytest.mark.parametrize(
    "section",
    [5, {"version": 1, "triton_kernels": "triton_poi_fused_0"}],
    ids=["not-an-object", "kernel-names-not-a-list"],
)
def test_a_bad_kernelprof_key_in_a_trace_fails_without_plugin_frames(
    pytester: pytest.Pytester, section: object
) -> None:
    event = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 1.0, "tid": 7, "args": {"correlation": 1}}
    pytester.path.joinpath("trace.json").write_text(json.dumps({"traceEvents": [event], "kernelprof": section}))
    pytester.makepyfile(
        """
        import pytest_kernelprof as kp

        def test_read():
            kp.load_trace("trace.json")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*TraceError: trace.json: *'kernelprof*", "test_a_bad_kernelprof_key*.py:4: TraceError"]
    )
    assert "/pytest_kernelprof/" not in result.stdout.str()
