"""A failure caused by what the test asked shows the test's line, not the plugin's frames (issue 21)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import DATA


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


def test_a_trace_whose_calls_differ_fails_at_the_tests_line_with_advice_for_traces(pytester: pytest.Pytester) -> None:
    # Issue 21 items 12 and 17: build frames showed with their locals, and the advice was "Raise
    # warmup=", which load_trace does not take.
    events: list[dict[str, object]] = []
    for call, kernels in enumerate((("k_a", "k_b"), ("k_a", "k_c"))):
        base = 1000 * call
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{call}",
                "ts": base,
                "dur": 900,
                "tid": 1,
                "args": {"External id": 1 + 10 * call},
            }
        )
        for i, name in enumerate(kernels):
            corr = 100 * (call + 1) + i
            events.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "ts": base + 10 + 100 * i,
                    "dur": 5,
                    "tid": 1,
                    "args": {"correlation": corr},
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": name,
                    "ts": base + 20 + 100 * i,
                    "dur": 30,
                    "tid": 7,
                    "args": {"correlation": corr, "stream": 7, "device": 0},
                }
            )
    pytester.path.joinpath("varied.json").write_text(json.dumps({"traceEvents": events}))
    pytester.makepyfile(
        """
        import pytest_kernelprof as kp

        def test_read():
            kp.load_trace("varied.json")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*KernelSequenceMismatchError: the profiled calls launched different kernel sequences*"
            "Pass allow_variation=True to load_trace*",
            "test_a_trace_whose_calls_differ*.py:4: KernelSequenceMismatchError",
        ]
    )
    assert "/pytest_kernelprof/" not in result.stdout.str()
    assert "Raise warmup=" not in result.stdout.str()


@pytest.mark.parametrize(
    ("read", "error"),
    [
        ("kp.profile(lambda: None).overlap()", "NoDeviceActivityError"),
        ("kp.profile(lambda: None).calls[0].overlap()", "NoDeviceActivityError"),
        (f"kp.load_trace({str(DATA / 'h200_linear_eager.json.gz')!r}).module('x')", "ModuleNotRecordedError"),
        (f"kp.load_trace({str(DATA / 'h200_linear_eager.json.gz')!r}).syncs.count(kind='weird')", "ValueError"),
    ],
    ids=["overlap-on-cpu", "call-overlap-on-cpu", "module-not-recorded", "unknown-sync-kind"],
)
def test_model_queries_fail_at_the_tests_line(pytester: pytest.Pytester, read: str, error: str) -> None:
    pytester.makepyfile(
        f"""
        import pytest_kernelprof as kp

        def test_read():
            {read}
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"test_model_queries_fail*.py:4: {error}"])
    assert "/pytest_kernelprof/" not in result.stdout.str()
