"""A failure caused by what the test asked shows the test's line, not the plugin's frames (issue 21).

Every case is its own test in one inner project, run once; each case's failure section is read
on its own, so that no case passes on another's output.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers import DATA, failure_sections

GRAPH_BREAK = str(DATA / "h200_compile_graph_break.json.gz")
LINEAR = str(DATA / "h200_linear_eager.json.gz")
CPU = str(DATA / "cpu_torch2.13.0_step.json.gz")

# What a loaded trace cannot tell: inner test name -> the read.
CANNOT_TELL = {
    "compile_frames": "prof.compile.frames",
    "compile_graph_breaks": "prof.compile.graph_breaks",
    "compile_recompiles": "prof.compile.recompiles",
    "compile_recompile_reasons": "prof.compile.recompile_reasons",
    "memory_peak_bytes": "prof.memory.peak_bytes",
    "memory_retained_bytes": "prof.memory.retained_bytes",
    "call_memory_peak_bytes": "prof.calls[0].memory.peak_bytes",
}

# A "kernelprof" key of a trace that is not what the plugin writes: inner test name -> the key.
BAD_SECTIONS: dict[str, object] = {
    "not_an_object": 5,
    "kernel_names_not_a_list": {"version": 1, "triton_kernels": "triton_poi_fused_0"},
}

# Model queries that cannot be answered: inner test name -> (the query, the error).
QUERIES = {
    "overlap_on_cpu": ("kp.profile(lambda: None).overlap()", "NoDeviceActivityError"),
    "call_overlap_on_cpu": ("kp.profile(lambda: None).calls[0].overlap()", "NoDeviceActivityError"),
    "module_not_recorded": (f"kp.load_trace({LINEAR!r}).module('x')", "ModuleNotRecordedError"),
    "unknown_sync_kind": (f"kp.load_trace({LINEAR!r}).syncs.count(kind='weird')", "QueryError"),
    # A trial: a CPU profile's count() and one() showed KernelList._numbered's line.
    "count_on_cpu": (f"kp.load_trace({CPU!r}).kernels.count(kind='gemm')", "NoDeviceActivityError"),
    "one_on_cpu": (f"kp.load_trace({CPU!r}).kernels.one(kind='gemm')", "NoDeviceActivityError"),
    "matching_on_cpu": (f"kp.load_trace({CPU!r}).kernels.matching('x*')", "NoDeviceActivityError"),
    "dtype_count_on_cpu": (f"kp.load_trace({CPU!r}).kernels.count(dtype='bf16')", "NoDeviceActivityError"),
    "sync_fixes_on_cpu": (f"kp.load_trace({CPU!r}).syncs.fix_lines()", "NoDeviceActivityError"),
    "copy_fixes_on_cpu": (f"kp.load_trace({CPU!r}).copies.fix_lines()", "NoDeviceActivityError"),
}


def varied_calls_trace() -> dict[str, object]:
    """Two profiled calls that launched different kernels (k_a, k_b, then k_a, k_c)."""
    events: list[dict[str, object]] = []
    for call, kernels in enumerate((("k_a", "k_b"), ("k_a", "k_c"))):
        base = 1000 * call
        step = {"External id": 1 + 10 * call}
        events.append(
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{call}", "ts": base, "dur": 900, "tid": 1}
            | {"args": step}
        )
        for i, name in enumerate(kernels):
            corr = 100 * (call + 1) + i
            launch = {"ts": base + 10 + 100 * i, "dur": 5, "tid": 1, "args": {"correlation": corr}}
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel"} | launch)
            kernel = {"ts": base + 20 + 100 * i, "dur": 30, "tid": 7}
            args = {"correlation": corr, "stream": 7, "device": 0}
            events.append({"ph": "X", "cat": "kernel", "name": name} | kernel | {"args": args})
    return {"traceEvents": events}


def inner_tests() -> tuple[str, dict[str, tuple[int, str]]]:
    """The inner module, and per inner test the line it fails at and what that line raises."""
    lines = ["import pytest_kernelprof as kp", ""]
    fails_at: dict[str, tuple[int, str]] = {}

    def add(name: str, body: list[str], error: str) -> None:
        lines.extend(["", f"def test_{name}():", *(f"    {line}" for line in body)])
        fails_at[f"test_{name}"] = (len(lines), error)
        lines.append("")

    for name, read in CANNOT_TELL.items():
        add(name, [f"prof = kp.load_trace({GRAPH_BREAK!r})", f"assert {read} == 0"], "CannotTellError")
    for name in BAD_SECTIONS:
        add(f"bad_key_{name}", [f"kp.load_trace('{name}.json')"], "TraceError")
    add("calls_differ", ["kp.load_trace('varied.json')"], "KernelSequenceMismatchError")
    for name, (query, error) in QUERIES.items():
        add(name, [query], error)
    return "\n".join(lines), fails_at


def test_failures_of_what_the_test_asked_show_the_tests_line_not_plugin_frames(pytester: pytest.Pytester) -> None:
    event = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 1.0, "tid": 7, "args": {"correlation": 1}}
    for name, section in BAD_SECTIONS.items():
        pytester.path.joinpath(f"{name}.json").write_text(json.dumps({"traceEvents": [event], "kernelprof": section}))
    pytester.path.joinpath("varied.json").write_text(json.dumps(varied_calls_trace()))
    source, fails_at = inner_tests()
    pytester.makepyfile(test_reads=source)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(failed=len(fails_at))
    assert "/pytest_kernelprof/" not in result.stdout.str()
    sections = failure_sections(result)
    assert sorted(sections) == sorted(fails_at)
    for name, (line, error) in fails_at.items():
        # The last frame shown is the test's own line (captured output may follow it).
        frames = [each for each in sections[name].lines if re.fullmatch(r"\S+\.py:\d+: \w+", each)]
        assert frames[-1:] == [f"test_reads.py:{line}: {error}"], name
    for name in CANNOT_TELL:
        sections[f"test_{name}"].fnmatch_lines(["E *CannotTellError: prof.*"])
    for name in BAD_SECTIONS:
        sections[f"test_bad_key_{name}"].fnmatch_lines([f"E *TraceError: {name}.json: *'kernelprof*"])
    # Issue 21 items 12 and 17: build frames showed with their locals, and the advice was "Raise
    # warmup=", which load_trace does not take.
    calls_differ = sections["test_calls_differ"]
    calls_differ.fnmatch_lines(
        [
            "E *KernelSequenceMismatchError: the profiled calls launched different kernel sequences*"
            "Pass allow_variation=True to load_trace*"
        ]
    )
    calls_differ.no_fnmatch_line("*Raise warmup=*")
