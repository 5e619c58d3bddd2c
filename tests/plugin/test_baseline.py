"""The kernel_baseline fixture through pytester: compare, update, the names option, unused
entries, and the peak-memory metric with its tolerance.

Which signatures count as equal is tests/unit/test_baseline.py's, the fixture under xdist
tests/plugin/test_xdist.py's; here one project holds a test per situation, its baselines seeded
beforehand, and each of its two runs (compare, update) checks all of them at once.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_kernelprof import KernelProfile, load_trace
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.checks.baseline import record
from pytest_kernelprof.health import CompileFacts, MemoryReading
from pytest_kernelprof.plugin.report_sections import SHOWN_ABOVE
from pytest_kernelprof.tables import printable
from pytest_kernelprof.traces.chrome import events_from_trace_file
from tests.helpers import DATA
from tests.unit.reports.test_summary import read_code_span

MODULE = """
from pathlib import Path

import torch

from pytest_kernelprof import load_trace
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.traces.chrome import events_from_trace_file
from pytest_kernelprof.health import CompileFacts, MemoryReading

DATA = Path({data!r})


def trace(name):
    return load_trace(DATA / f"h200_{{name}}.json.gz")


def peak_profile(peak):
    source, events = events_from_trace_file(DATA / "h200_geglu_compiled.json.gz")
    readings = [MemoryReading(0, peak, 0)] * 3
    return build_profile(events, source, memory=readings, compile_facts=CompileFacts("test", frames=1))


def test_new(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_same(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_same_eq(kernel_baseline):
    assert trace("geglu_compiled") == kernel_baseline


def test_unfused(kernel_baseline):
    kernel_baseline.check(trace("geglu_eager"))


def test_unfused_eq(kernel_baseline):
    assert trace("geglu_eager") == kernel_baseline


def test_other_tiles(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_corrupt(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_cpu(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof(torch.relu, torch.randn(4)))


def test_peak_grew(kernel_baseline):
    kernel_baseline.check(peak_profile(1_200_000))


def test_peak_within_tolerance(kernel_baseline):
    kernel_baseline.check(peak_profile(1_080_000))


def test_peak_shrank(kernel_baseline):
    kernel_baseline.check(peak_profile(800_000))
"""

# The peak-memory tests' baselines hold this peak; the tests above measure +20%, +8% and -20%.
PEAK = 1_000_000
PEAK_TESTS = ("test_peak_grew", "test_peak_within_tolerance", "test_peak_shrank")
# The ini's tolerance, which the option of the compare run overrides.
INI = "[pytest]\nkernelprof_memory_tolerance = 1%\n"

CORRUPT = '{"format": 1, "archs": {"sm90": {"default": {"kernels": [{"kind": 3}]}}}}'


def _folder(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__kernelprof__" / "test_b"


def _entry(pytester: pytest.Pytester, test: str) -> Any:
    return json.loads((_folder(pytester) / f"{test}.json").read_text())["archs"]["sm90"]["default"]


def _kinds(pytester: pytest.Pytester, test: str) -> list[str]:
    return [k["kind"] for k in _entry(pytester, test)["kernels"]]


def _peak_profile(peak: int) -> KernelProfile:
    """The compiled MLP with the given peak memory (what the module's peak_profile builds)."""
    source, events = events_from_trace_file(DATA / "h200_geglu_compiled.json.gz")
    readings = [MemoryReading(0, peak, 0)] * 3
    return build_profile(events, source, memory=readings, compile_facts=CompileFacts("test", frames=1))


def _seed_other_tiles(pytester: pytest.Pytester) -> None:
    """test_other_tiles' baseline: the compiled MLP, its first cuBLAS kernel with other tiles."""
    path = _folder(pytester) / "test_other_tiles.json"
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    data = json.loads(path.read_text())
    assert data["archs"]["sm90"]["default"]["kernels"][0]["family"] == "nvjet"
    data["archs"]["sm90"]["default"]["kernels"][0]["name"] = "nvjet_sm90_tst_other_tile_TNT"
    path.write_text(json.dumps(data))


@pytest.fixture
def project(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    """The module above, every test but test_new and test_cpu with a baseline of the compiled MLP
    (the peak-memory tests' with a peak of PEAK bytes)."""
    cpu_pytester.makepyfile(test_b=MODULE.format(data=str(DATA)))
    cpu_pytester.makeini(INI)
    folder = _folder(cpu_pytester)
    compiled = load_trace(DATA / "h200_geglu_compiled.json.gz")
    for test in ("test_same", "test_same_eq", "test_unfused", "test_unfused_eq"):
        record(folder / f"{test}.json", "sm90", "default", compiled)
    # Unused here: another check's entry on this GPU's architecture, and a removed test's file;
    # another GPU's entry is not.
    record(folder / "test_same.json", "sm90", "old_check", compiled)
    record(folder / "test_same.json", "sm80", "default", compiled)
    (folder / "test_removed.json").write_text("{}")
    _seed_other_tiles(cpu_pytester)
    (folder / "test_corrupt.json").write_text(CORRUPT)
    for test in PEAK_TESTS:
        record(folder / f"{test}.json", "sm90", "default", _peak_profile(PEAK))
    return cpu_pytester


UNUSED = [
    "*kernelprof: 2 unused baseline entries*",
    "*test_same.json: sm90/old_check",
    "*test_removed.json (no test of that name ran)",
]


def test_a_run_compares_reports_and_writes_nothing(project: pytest.Pytester) -> None:
    before = {p.name: p.read_bytes() for p in _folder(project).iterdir()}
    result = project.runpytest("--kernelprof-baseline-names", "exact", "--kernelprof-memory-tolerance=10%", "-rfEp")
    result.assert_outcomes(passed=4, failed=7)
    passed = ("test_same", "test_same_eq", "test_peak_within_tolerance", "test_peak_shrank")
    failed = (
        "test_new",
        "test_unfused",
        "test_unfused_eq",
        "test_other_tiles",
        "test_corrupt",
        "test_cpu",
        "test_peak_grew",
    )
    result.stdout.fnmatch_lines([f"PASSED test_b.py::{test}" for test in passed])
    result.stdout.fnmatch_lines([f"FAILED test_b.py::{test} - *" for test in failed])
    result.stdout.fnmatch_lines(
        [
            "*no kernel baseline sm90/default in *test_new.json*",
            "*record it with: pytest --kernelprof-update 'test_b.py::test_new'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*kernel signature differs from the baseline sm90/default*test_unfused.json (names compared: exact)*",
            "*kernels per call: 4 -> 5*",
            "*count changes: pointwise: 1 -> 2*",
            "*--- baseline*",
            "*+++ this run*",
            "*+ pointwise/aten bf16 [[]gelu[]]*",
            "*- pointwise/inductor ? [[]gelu,mul[]]  triton_poi_fused__unsafe_view_gelu_mul_0*",
            "*if the change is intended: pytest --kernelprof-update 'test_b.py::test_unfused'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*KernelProfile == kernel_baseline failed:*",
            "*differs from the baseline sm90/default in *test_unfused_eq.json (names compared: exact)",
            "*kernels per call: 4 -> 5*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*differs from the baseline sm90/default in *test_other_tiles.json (names compared: exact)*",
            "*~ gemm/nvjet bf16 tn*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*BaselineError: *test_corrupt.json: entry sm90/default: kernels[[]0].name is missing*"]
    )
    result.stdout.fnmatch_lines(["FAILED test_b.py::test_cpu - *NoDeviceActivityError*"])
    # Peak memory: beyond the option's tolerance (not the ini's 1%) fails, within it passes,
    # and a drop passes and is reported as an improvement to lock in.
    result.stdout.fnmatch_lines(
        [
            "*worse than the baseline sm90/default in *test_peak_grew.json (lower is better):",
            "*peak_bytes: 1,000,000 -> 1,200,000 (+20.0%; tolerance 10%)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*kernelprof: 1 baseline metric better*",
            "better: peak_bytes: 1,000,000 -> 800,000 in test_b.py::test_peak_shrank",
            "lock it in with pytest --kernelprof-update 'test_b.py::test_peak_shrank'",
        ]
    )
    result.stdout.fnmatch_lines(UNUSED)
    assert "sm80/default" not in result.stdout.str()
    assert {p.name: p.read_bytes() for p in _folder(project).iterdir()} == before


def test_update_writes_what_a_run_matches_and_leaves_what_it_cannot_read(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    corrupt = (_folder(project) / "test_corrupt.json").read_bytes()
    result = project.runpytest("--kernelprof-update")
    result.assert_outcomes(passed=9, failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_b.py::test_corrupt - *BaselineError*",
            "FAILED test_b.py::test_cpu - *NoDeviceActivityError*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*BaselineError: *test_corrupt.json: entry sm90/default: kernels[[]0].name is missing*"]
    )
    result.stdout.fnmatch_lines(UNUSED)
    assert _entry(project, "test_new")["device"] == "NVIDIA H200"
    assert _kinds(project, "test_new") == ["gemm", "gemm", "pointwise", "gemm"]
    assert _kinds(project, "test_unfused").count("pointwise") == 2
    # What the update wrote is what record() writes, whose files the run above matches.
    for test, recorded in [("test_new", "geglu_compiled"), ("test_unfused", "geglu_eager")]:
        expected = tmp_path / f"{recorded}.json"
        record(expected, "sm90", "default", load_trace(DATA / f"h200_{recorded}.json.gz"))
        assert (_folder(project) / f"{test}.json").read_bytes() == expected.read_bytes()
    # The update takes this run's peak memory, better or worse.
    peaks = {test: _entry(project, test)["metrics"]["peak_bytes"] for test in PEAK_TESTS}
    assert peaks == {"test_peak_grew": 1_200_000, "test_peak_within_tolerance": 1_080_000, "test_peak_shrank": 800_000}
    assert (_folder(project) / "test_corrupt.json").read_bytes() == corrupt
    assert sorted(p.name for p in _folder(project).iterdir()) == [
        "test_corrupt.json",
        "test_new.json",
        "test_other_tiles.json",
        "test_peak_grew.json",
        "test_peak_shrank.json",
        "test_peak_within_tolerance.json",
        "test_removed.json",
        "test_same.json",
        "test_same_eq.json",
        "test_unfused.json",
        "test_unfused_eq.json",
    ]  # nothing for test_cpu, no temporary file left


# Test ids and check names with every character that once broke the run's end (issue 34): the
# facts a test's report carries are a typed record, so none of these is split or mangled.
ODD_IDS = ["a|b", "pipe|in|three", 'quote"d', "it's", "ünïcödé ✓", "new\nline", "tab\tx", "back\\slash", "x::y"]

ODD_MODULE = """
import os
from pathlib import Path

import pytest

from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.health import CompileFacts, MemoryReading
from pytest_kernelprof.traces.chrome import events_from_trace_file

DATA = Path({data!r})


def peak_profile(peak):
    source, events = events_from_trace_file(DATA / "h200_geglu_compiled.json.gz")
    readings = [MemoryReading(0, peak, 0)] * 3
    return build_profile(events, source, memory=readings, compile_facts=CompileFacts("t", frames=1))


@pytest.mark.parametrize("odd", {ids!r})
def test_odd(kernel_baseline, odd):
    kernel_baseline.check(peak_profile(int(os.environ["KERNELPROF_TEST_PEAK"])), name=f"check {{odd}}")
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_odd_test_ids_and_check_names_reach_the_summary_whole(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    cpu_pytester.makepyfile(test_odd=ODD_MODULE.format(data=str(DATA), ids=ODD_IDS))
    monkeypatch.setenv("KERNELPROF_TEST_PEAK", str(PEAK))
    cpu_pytester.runpytest(*workers, "--kernelprof-update").assert_outcomes(passed=len(ODD_IDS))
    monkeypatch.setenv("KERNELPROF_TEST_PEAK", str(PEAK * 8 // 10))  # an improvement, to lock in

    result = cpu_pytester.runpytest(*workers, "--kernelprof-summary", "summary.md")

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=len(ODD_IDS))
    result.stdout.fnmatch_lines([f"*kernelprof: {len(ODD_IDS)} baseline metrics better*"])
    text = (cpu_pytester.path / "summary.md").read_text(encoding="utf-8")
    assert f"**{len(ODD_IDS)} baseline metrics better**" in text
    # pytest escapes a test id's non-ASCII and control characters in the node id; a check
    # name arrives as the test wrote it, its control characters escaped (one line each).
    for odd in ODD_IDS:
        shown = odd.encode("unicode_escape").decode("ascii")
        check = printable(odd)
        assert f"better: peak_bytes: 1,000,000 -> 800,000 in test_odd.py::test_odd[{shown}] (check {check})" in text, (
            odd
        )
        command = f"pytest --kernelprof-update {shlex.quote(f'test_odd.py::test_odd[{shown}]')}"
        assert f"lock it in with {command}" in text, odd


BACKTICK_IDS = ["a'b `x` c", "`edge`"]


def test_the_summarys_update_command_is_the_terminals_backticks_and_all(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpu_pytester.makepyfile(test_odd=ODD_MODULE.format(data=str(DATA), ids=BACKTICK_IDS))
    monkeypatch.setenv("KERNELPROF_TEST_PEAK", str(PEAK))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=len(BACKTICK_IDS))
    monkeypatch.setenv("KERNELPROF_TEST_PEAK", str(PEAK * 8 // 10))  # an improvement, to lock in

    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md")

    result.assert_outcomes(passed=len(BACKTICK_IDS))
    said = [line.split("lock it in with ", 1)[1] for line in result.outlines if "lock it in with " in line]
    wanted = [f"pytest --kernelprof-update {shlex.quote(f'test_odd.py::test_odd[{odd}]')}" for odd in BACKTICK_IDS]
    assert sorted(said) == sorted(wanted)
    # Before: the summary's code span had each backtick written ', a command for another test.
    text = (cpu_pytester.path / "summary.md").read_text(encoding="utf-8")
    spans = [line.removeprefix("- ") for line in text.splitlines() if "lock it in with " in line]
    shown = [read_code_span(span).split("lock it in with ", 1)[1] for span in spans]
    assert shown == said


DTYPE_MOVED = """
import gzip, json
from pathlib import Path

from pytest_kernelprof import load_trace

DATA = Path({data!r})


def mul_in_fp32(tmp_path):
    trace = json.load(gzip.open(DATA / "h200_geglu_eager.json.gz"))
    for event in trace["traceEvents"]:
        if event.get("cat") == "kernel":
            event["name"] = event["name"].replace(
                "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16", "BinaryFunctor<float, float, float"
            )
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(trace))
    return load_trace(path)


def test_moved(kernel_baseline, tmp_path):
    kernel_baseline.check(mul_in_fp32(tmp_path))
"""


def test_a_kernel_that_moved_dtype_fails_its_baseline_as_a_mismatch(cpu_pytester: pytest.Pytester) -> None:
    # A trial: a baseline differing only in a dtype crashed check() with "ValueError: '--- baseline'
    # is not in list", and the regression went missing from the job summary.
    module = cpu_pytester.makepyfile(test_d=DTYPE_MOVED.format(data=str(DATA)))
    path = module.parent / "__kernelprof__" / "test_d" / "test_moved.json"
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_eager.json.gz"))
    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *BaselineMismatchError: kernel signature differs from the baseline sm90/default*",
            "E   *dtype changes: pointwise: bf16 2 -> 1, fp32 0 -> 1",
            "E   *#3 pointwise/aten: bf16 in the baseline, fp32 in this run  *MulFunctor*",
        ]
    )
    result.stdout.no_fnmatch_line("*ValueError*")
    assert "1 test failed: kernel baseline" in (cpu_pytester.path / "summary.md").read_text()


def test_a_missing_baseline_fails_by_its_type_and_shows_its_table_once(project: pytest.Pytester) -> None:
    # A trial: the failure of a test with no baseline yet showed the kernel table, and its
    # 'kernelprof profile' section showed it again.
    result = project.runpytest("-k", "test_new", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1, deselected=10)
    result.stdout.fnmatch_lines(
        [
            "E   *BaselineMissingError: no kernel baseline sm90/default in *",
            "*- kernelprof profile 1 of 1 -*",
            SHOWN_ABOVE,
        ]
    )
    assert result.stdout.str().count("triton_poi_fused__unsafe_view_gelu_mul_0") == 1
    # Its type says what failed where only the type is read: JUnit's message, a CI filter on it.
    failure = ElementTree.parse(project.path / "junit.xml").find(".//testcase/failure")
    assert failure is not None
    assert failure.get("message", "").startswith("pytest_kernelprof.errors.BaselineMissingError: no kernel baseline")


def test_the_record_command_names_the_test_as_the_folder_pytest_runs_in_does(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An adversarial probe: run from rootdir/tests, the failure said `pytest --kernelprof-update
    # 'tests/test_b.py::test_x'`, which pasted there finds no such file.
    cpu_pytester.makeini("[pytest]\n")
    tests = cpu_pytester.mkdir("tests")
    (tests / "test_b.py").write_text(
        f"from pytest_kernelprof import load_trace\n\n"
        f"def test_x(kernel_baseline):\n"
        f"    kernel_baseline.check(load_trace({str(DATA / 'h200_linear_eager.json.gz')!r}))\n"
    )
    monkeypatch.chdir(tests)
    result = cpu_pytester.runpytest("test_b.py", "--rootdir", str(cpu_pytester.path))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*record it with: pytest --kernelprof-update 'test_b.py::test_x'"])
    recorded = cpu_pytester.runpytest("--kernelprof-update", "test_b.py::test_x", "--rootdir", str(cpu_pytester.path))
    recorded.assert_outcomes(passed=1)
    # The end of the run's command for an improved metric names it the same way (it named the rootdir's id).
    stored = tests / "__kernelprof__" / "test_b" / "test_x.json"
    stored.write_text(stored.read_text().replace('"launches": 1', '"launches": 2'))
    improved = cpu_pytester.runpytest("test_b.py", "--rootdir", str(cpu_pytester.path))
    improved.assert_outcomes(passed=1)
    improved.stdout.fnmatch_lines(
        [
            "better: launches: 2 -> 1 in tests/test_b.py::test_x",
            "lock it in with pytest --kernelprof-update 'test_b.py::test_x'",
        ]
    )


def test_the_junit_message_of_a_baseline_change_keeps_its_update_command(project: pytest.Pytester) -> None:
    # Trial report: pytest cut the JUnit message of a baseline failure to its first 500 characters,
    # and the line cut was `if the change is intended: pytest --kernelprof-update '...'`.
    result = project.runpytest("-k", "test_unfused", "--junitxml=junit.xml")
    result.assert_outcomes(failed=2, deselected=9)
    for case in ElementTree.parse(project.path / "junit.xml").iter("testcase"):
        failure = case.find("failure")
        assert failure is not None
        message, test = failure.get("message", ""), case.get("name")
        assert len(message) <= 500, message  # within pytest's bound: not cut again
        lines = [line.strip() for line in message.splitlines()]
        first = message.splitlines()[test == "test_unfused_eq"]  # `assert ... failed:` above the eq's
        assert "kernel signature differs from the baseline sm90/default" in first, lines
        assert "kernels per call: 4 -> 5 (launches too)" in lines
        assert lines[-2] == f"if the change is intended: pytest --kernelprof-update 'test_b.py::{test}'", lines
        # `assert prof == kernel_baseline`: the terminal's cut, its pointer to the section.
        section = "the 'kernelprof assertion' section of " if test == "test_unfused_eq" else ""
        assert re.fullmatch(rf"\(the rest, \d+ lines, is in {section}this failure's text\)", lines[-1]), lines
        assert "full report in element text" not in message  # pytest's own cut
        assert lines[-2] in (failure.text or "")  # the element's text is whole
