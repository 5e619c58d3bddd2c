"""The CI outputs through pytester, from recorded H200 traces: the Markdown job summary, the
GitHub annotations, the JUnit XML properties and the timeline pages (ci.py and its modules).

The recorded profiles reach the plugin as a live one would: ``kernelprof.load_trace(path)``
holds them to the suite's rules and keeps them for the test's report (and its saved traces).
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import baseline_paths, record
from pytest_kernelprof.paths import trace_file_name
from tests.helpers import DATA, user_kernel_trace

SYNC_TRACE = DATA / "h200_sync_item_stacks.json.gz"

CONFTEST = f"""
from pathlib import Path

import pytest

DATA = Path({str(DATA)!r})


@pytest.fixture
def recorded(kernelprof):
    # A recorded profile, held to the suite's rules and kept for the report as a live one is.
    return lambda name: kernelprof.load_trace(DATA / f"h200_{{name}}.json.gz")
"""

INI = """
[pytest]
kernelprof_forbid =
    no-syncs: syncs>0 | a training step must not wait for the GPU
"""

SUITE = """
import torch
import pytest


@pytest.mark.kernelprof_allow("no-syncs")
def test_sync_assert(recorded):
    prof = recorded("sync_item_stacks")
    assert not prof.syncs


def test_rule_broken(recorded):
    recorded("sync_item_stacks")


@pytest.mark.kernelprof_allow("no-syncs")
def test_baseline_regression(recorded, kernel_baseline):
    kernel_baseline.check(recorded("geglu_eager"))


def test_passes(kernelprof):
    kernelprof.load_trace("user_kernel.json.gz")  # a user's Triton kernel no evidence places


def test_cpu_profile(kernelprof):
    kernelprof(torch.relu, torch.randn(4))


def test_unrelated_failure():
    assert 1 == 2
"""

# The line of each test's failing statement in SUITE (1-based, as the file is written).
LINES = {name: i + 1 for i, line in enumerate(SUITE.strip().splitlines()) for name in [line.strip()] if name}
SYNC_ASSERT_LINE = LINES["assert not prof.syncs"]
RULE_LINE = LINES['recorded("sync_item_stacks")']
BASELINE_LINE = LINES['kernel_baseline.check(recorded("geglu_eager"))']
SYNC_LINE = LINES["assert not prof.syncs"]


@pytest.fixture
def project(cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + CONFTEST)
    cpu_pytester.makeini(INI)
    module = cpu_pytester.makepyfile(test_ci=SUITE)
    user_kernel_trace(cpu_pytester.path / "user_kernel.json.gz")
    # The file the recorded syncs were called from, as if the trace had been recorded in this
    # checkout: a sync is annotated at its own line only where that file is in the checkout.
    cpu_pytester.path.joinpath("train.py").write_text("# the recorded training step\n" * 60)
    path, _ = baseline_paths(module, "test_ci.py::test_baseline_regression")
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    return cpu_pytester


def _summary_of_the_failures(text: str) -> None:
    """What the Markdown summary of a run of SUITE says about its failures."""
    assert "### 3 tests failed: kernelprof_forbid rule (1), kernel baseline (1), host syncs (1)\n" in text
    rule, baseline, syncs = (
        text.index(f"test_ci.py::{name}")
        for name in ("test_rule_broken", "test_baseline_regression", "test_sync_assert")
    )
    assert rule < baseline < syncs  # worst first
    assert f"at <code>test_ci.py:{RULE_LINE}</code>" in text
    assert (
        "kernelprof_forbid rule 'no-syncs' (syncs&gt;0)" in text
        or "kernelprof_forbid rule 'no-syncs' (syncs>0)" in text
    )
    assert "cudaStreamSynchronize" in text  # the rule's table of syncs
    assert "kernel signature differs from the baseline sm90/default" in text
    assert "test_unrelated_failure" not in text
    assert "<code>test_ci.py::test_passes</code>" not in text  # not among the failures
    # Undecoded kernel names, the most frequent first, with the tests that ran them.
    assert "### 1 kernel name no evidence could place (unplaced)" in text
    assert "| `_geglu_tanh_forward_kernel` | 1 | 1 | `test_ci.py::test_passes` |" in text


def test_summary_limits_the_failures_it_shows() -> None:
    from pytest_kernelprof.reports.records import Failure, ReportRecord
    from pytest_kernelprof.reports.summary import MAX_FAILURES, render_summary

    tests = {
        f"t.py::test_{i:02}": ReportRecord(failure=Failure("kernels", "m", 0, "t.py", i))
        for i in range(MAX_FAILURES + 3)
    }
    text = render_summary(tests, [], rootpath=Path("."))
    assert text.count("<details>") == MAX_FAILURES
    # A trial: the heading counted them by category, and nothing named them.
    assert (
        "... and 3 more failed tests (see the job log): <code>t.py::test_10</code>, <code>t.py::test_11</code>, "
        "<code>t.py::test_12</code>." in text
    )
    assert render_summary({}, [], rootpath=Path(".")) == ""


def _annotations(output: list[str]) -> list[str]:
    return [line for line in output if line.startswith("::")]


def _annotations_of_the_failures(found: list[str]) -> None:
    """The GitHub annotations of a run of SUITE: the failing tests' lines and the sync's."""
    rule = (
        f"::error file=test_ci.py,line={RULE_LINE},title=kernelprof%3A kernelprof_forbid rule::"
        "test_ci.py::test_rule_broken%0A"
    )
    assert any(line.startswith(rule) for line in found), found
    baseline = f"::error file=test_ci.py,line={BASELINE_LINE},title=kernelprof%3A kernel baseline::"
    assert any(line.startswith(baseline) for line in found), found
    # The sync's own line, from the recorded stack (the profiler names the function's def line).
    sync = "::error file=train.py,line=40,title=kernelprof%3A host sync::host sync cudaStreamSynchronize"
    syncs = [line for line in found if line.startswith(sync)]
    assert len(syncs) == 2, found  # the rule break and the assertion on syncs
    assert len(found) == 4, found  # and nothing for the other tests
    assert all("\n" not in line for line in found)
    assert not any("test_unrelated_failure" in line or "test_passes" in line for line in found)


def _properties(xml: Path) -> dict[str, dict[str, list[str]]]:
    found: dict[str, dict[str, list[str]]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        props = found.setdefault(case.get("name", ""), {})
        for prop in case.iter("property"):
            props.setdefault(prop.get("name", ""), []).append(prop.get("value", ""))
    return found


def _junit_numbers(props: dict[str, dict[str, list[str]]]) -> None:
    """The JUnit XML properties of a run of SUITE: a profiled test's numbers, and no others."""
    sync = load_trace(SYNC_TRACE)
    rule = props["test_rule_broken"]
    assert rule["kernelprof.profiles"] == ["1"]
    assert rule["kernelprof.kernels"] == [str(len(sync.kernels))] == ["18"]
    assert rule["kernelprof.launches"] == [str(sync.launches)]
    assert rule["kernelprof.syncs"] == ["1"]
    assert rule["kernelprof.dtoh_copies"] == ["1"]
    assert rule["kernelprof.gpu_busy_us"] == [f"{sync.gpu_busy_us:.1f}"]
    assert rule["kernelprof.kernel_us"] == [f"{sync.fastest_call.kernels.total_us:.1f}"]
    assert rule["kernelprof.wall_us"] == [f"{sync.fastest_call.wall_us:.1f}"]
    assert rule["kernelprof.gpu_idle_fraction"] == [f"{sync.fastest_call.gpu_idle_fraction:.3f}"]
    # A trace cannot tell bytes, graph breaks or recompiles: left out, not 0.
    for name in ("peak_bytes", "retained_bytes", "graph_breaks", "recompiles"):
        assert f"kernelprof.{name}" not in rule
    # A live CPU profile tells what torch.compile did, and no GPU figure.
    assert props["test_cpu_profile"] == {
        "kernelprof.profiles": ["1"],
        "kernelprof.graph_breaks": ["0"],
        "kernelprof.recompiles": ["0"],
    }
    assert "kernelprof.profiles" not in props["test_unrelated_failure"]


def test_junit_properties_of_several_profiles() -> None:
    from pytest_kernelprof.reports.junit import properties

    pairs = dict(properties([load_trace(SYNC_TRACE), load_trace(DATA / "h200_linear_eager.json.gz")]))
    assert pairs["kernelprof.profiles"] == 2
    assert pairs["kernelprof.kernels"] == 18
    assert pairs["kernelprof.2.kernels"] == 1
    assert pairs["kernelprof.2.syncs"] == 0


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.sources: list[str] = []
        self.data = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        for key in ("src", "href"):
            if values.get(key):
                self.sources.append(str(values[key]))
        self._in_data = values.get("id") == "data"

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False


def parse_page(path: Path) -> tuple[_Page, dict[str, object]]:
    import json

    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page, json.loads(page.data)


def _pages_beside_the_traces(project: pytest.Pytester, result: pytest.RunResult) -> None:
    """The timeline pages of a run of SUITE with --kernelprof-trace-dir traces: one beside each
    failing test's trace, self-contained, and none for the passing tests."""
    traces = project.path / "traces"
    rule_trace = traces / trace_file_name("test_ci.py::test_rule_broken", 0)
    page_file = rule_trace.with_name(rule_trace.name.removesuffix(".json.gz") + ".html")
    assert rule_trace.exists()
    assert page_file.exists()
    result.stdout.fnmatch_lines(["*- kernelprof timeline pages -*", f"*{page_file.name}"])
    page, data = parse_page(page_file)
    assert page.sources == []  # self-contained: no script, style or image from anywhere
    calls = data["calls"]
    assert isinstance(calls, list)
    sync = load_trace(SYNC_TRACE)
    assert [len(c["kernels"]) for c in calls] == [len(c.kernels) for c in sync.calls]
    assert all(len(c["launches"]) == 18 and c["host"] for c in calls)  # read from the trace beside it
    # The memcpy and the memset of each call: the GPU work the idle shading leaves out is drawn.
    assert [len(c["copies"]) for c in calls] == [len(c.memory_ops) for c in sync.calls] == [2, 2, 2]
    assert all(c["idle"] and c["idle"][0][0] == 0.0 for c in calls)  # the shading: the model's idle spans
    # The baseline regression's page has the baseline and the run side by side.
    baseline_page = traces / trace_file_name("test_ci.py::test_baseline_regression", 0).replace(".json.gz", ".html")
    text = baseline_page.read_text()
    assert "baseline sm90/default" in text
    assert 'class="side"' in text
    assert '<tr class="add">' in text or '<tr class="chg">' in text
    # Passing tests get none (their traces are not saved by default either).
    assert not any("test_passes" in p.name for p in traces.iterdir())


def test_a_failing_run_on_github_actions_gets_its_summary_annotations_junit_properties_and_pages(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = project.runpytest(
        "--kernelprof-summary", "out/summary.md", "--junitxml", "out.xml", "--kernelprof-trace-dir", "traces"
    )
    result.assert_outcomes(passed=2, failed=4)
    # The job summary lists the failed profiles, worst first.
    text = (project.path / "out" / "summary.md").read_text()
    assert text.startswith("## pytest-kernelprof")
    _summary_of_the_failures(text)
    # Annotations point at the test lines and the sync, relative to the rootdir.
    _annotations_of_the_failures(_annotations(result.outlines))
    _junit_numbers(_properties(project.path / "out.xml"))
    _pages_beside_the_traces(project, result)


def test_everything_under_xdist_with_paths_relative_to_the_workspace(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.path.parent))
    result = project.runpytest("-n", "2", "--junitxml", "out.xml", "--kernelprof-summary", "summary.md")
    result.assert_outcomes(passed=2, failed=4)
    text = (project.path / "summary.md").read_text()
    assert "### 3 tests failed: kernelprof_forbid rule (1), kernel baseline (1), host syncs (1)\n" in text
    assert "_geglu_tanh_forward_kernel" in text
    found = _annotations(result.outlines)
    # Annotation paths are relative to $GITHUB_WORKSPACE, the checkout.
    rule = f"::error file={project.path.name}/test_ci.py,line={RULE_LINE},title=kernelprof%3A kernelprof_forbid rule::"
    assert any(line.startswith(rule) for line in found), found
    # The trace's train.py is not at the checkout's top (the workspace is the folder above):
    # no annotation points there (a trial saw ones at the recording machine's file); the failed
    # assertion on syncs is annotated at the test's own line instead.
    assert not any("file=train.py" in line for line in found), found
    syncs = f"::error file={project.path.name}/test_ci.py,line={SYNC_LINE},title=kernelprof%3A host syncs::"
    assert any(line.startswith(syncs) for line in found), found
    assert len(found) == 3, found  # the rule break, the baseline, the assertion on syncs
    assert _properties(project.path / "out.xml")["test_rule_broken"]["kernelprof.kernels"] == ["18"]


def test_off_github_actions_the_summary_goes_to_github_step_summary_and_no_annotations_are_made(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = project.path / "step_summary.md"
    target.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    result = project.runpytest("--kernelprof-update")
    result.assert_outcomes(passed=3, failed=3)  # the baseline is updated, so its test passes
    assert not _annotations(result.outlines)
    text = target.read_text()
    assert text.startswith("earlier step\n## pytest-kernelprof")  # appended
    assert "test_ci.py::test_rule_broken" in text
    # What the run did to baselines.
    assert "### Kernel baselines" in text
    assert "**1 baseline updated**" in text
    assert "test_baseline_regression.json: sm90/default" in text
    # --kernelprof-summary none writes none; --kernelprof-annotations on makes them anyway.
    result = project.runpytest("-k", "rule_broken", "--kernelprof-summary", "none", "--kernelprof-annotations", "on")
    result.assert_outcomes(failed=1)
    assert target.read_text() == text
    assert len(_annotations(result.outlines)) == 2  # the sync and the test line


def test_show_html_writes_one_self_contained_page(pytester: pytest.Pytester) -> None:
    out = pytester.path / "page.html"
    result = pytester.run(sys.executable, "-m", "pytest_kernelprof", "show", str(SYNC_TRACE), "--html", str(out))
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"timeline page: {out}"])
    page, data = parse_page(out)
    assert page.sources == []
    assert "svg" in page.tags
    assert page.tags.count("script") == 2
    assert sum(len(c["kernels"]) for c in data["calls"]) == 3 * 18  # type: ignore[attr-defined]
    assert out.stat().st_size < 60_000


def test_baseline_table_aligns_the_diff() -> None:
    from pytest_kernelprof.reports.timeline import baseline_table

    compiled = load_trace(DATA / "h200_geglu_compiled.json.gz").kernels
    eager = load_trace(DATA / "h200_geglu_eager.json.gz").kernels
    same = baseline_table(list(compiled), list(compiled))
    assert same.count('<tr class="same">') == len(compiled)
    diff = baseline_table(list(compiled), list(eager))
    rows = re.findall(r'<tr class="(\w+)">', diff)
    assert len(rows) >= max(len(compiled), len(eager))
    assert set(rows) - {"same"}
    # A trial: a kernel that moved to another dtype read as unchanged (the page had no dtype).
    from dataclasses import replace

    moved = [replace(k, dtype="fp32") if k.kind == "pointwise" else k for k in eager]
    side = baseline_table(list(eager), moved)
    assert re.findall(r'<tr class="(\w+)">', side) == ["same", "chg", "same", "chg", "same"]
    # Each side as the text diff's line shows it, fused ops included.
    assert "pointwise/aten bf16 [gelu]  at::native::vectorized_elementwise_kernel" in side
    assert "pointwise/aten fp32 [gelu]  at::native::vectorized_elementwise_kernel" in side
    unknown = [replace(k, dtype=None) for k in eager]  # a dtype one side does not know is no change
    assert baseline_table(list(eager), unknown).count('<tr class="same">') == len(eager)


def test_a_page_without_gpu_activity_or_trace() -> None:
    import torch

    from pytest_kernelprof import profile
    from pytest_kernelprof.reports.timeline import render_page

    text = render_page(profile(torch.relu, torch.randn(4)), title="cpu <relu>")
    assert "<title>cpu &lt;relu&gt; - kernelprof</title>" in text
    page = _Page()
    page.feed(text)
    data = __import__("json").loads(page.data)
    assert [c["kernels"] for c in data["calls"]] == [[], [], []]  # the default 3 calls
    assert not data["calls"][0]["host"]
    assert "aten::relu" in text  # the op table


def test_what_a_failure_was_about() -> None:
    from pytest_kernelprof.errors import BaselineMismatchError, ForbiddenError, NoDeviceActivityError
    from pytest_kernelprof.plugin.ci_facts import category

    assert category(ForbiddenError("kernelprof_forbid rule 'x' (kind=gemm) is broken"), True) == "rule"
    assert category(BaselineMismatchError("kernel signature differs from the baseline sm90"), True) == "baseline"
    # A plain assertion by what it compared or named (hooks.py and asserted() find that out).
    assert category(AssertionError("assert prof == kernel_baseline"), True, "baseline") == "baseline"
    assert category(AssertionError("assert not SyncList of 1: Sync(...)"), True, "syncs") == "syncs"
    assert category(AssertionError("assert 2 == 1\n +  where 2 = KernelCount(...)"), True, "kernels") == "kernels"
    assert category(NoDeviceActivityError("no GPU activity"), False) == "nodevice"
    # A profiled test that failed on its numbers, and a test that profiled nothing.
    assert category(AssertionError("assert tensor(False)\n +  where tensor(False) = allclose(a, b)"), True) is None
    assert category(AssertionError("assert 1 == 2"), False) is None
    assert category(AssertionError("assert not SyncList of 1: Sync(...)"), False, "syncs") is None
    assert category(RuntimeError("CUDA error in kernel launch"), True) is None


def test_a_category_does_not_change_with_the_wording_of_a_message() -> None:
    from pytest_kernelprof.errors import BaselineMismatchError, ForbiddenError, KernelSequenceMismatchError
    from pytest_kernelprof.plugin.ci_facts import category

    for profiled in (True, False):
        assert category(ForbiddenError("reworded"), profiled) == "rule"
        assert category(BaselineMismatchError("reworded"), profiled) == "baseline"
        assert category(KernelSequenceMismatchError("host syncs differ"), profiled) == "varied"
    # The words that once decided it decide nothing now.
    assert category(AssertionError("kernel signature differs from the baseline sm90/default"), True) is None
    assert category(AssertionError("host syncs: cudaStreamSynchronize"), True, "kernels") == "kernels"
    assert category(AssertionError("KernelList launch ops"), True, "syncs") == "syncs"


def test_what_an_assertion_was_about_comes_from_the_values_it_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_kernelprof.model import KernelList, KernelProfile, SyncList
    from pytest_kernelprof.plugin.ci_facts import asserted

    prof = load_trace(SYNC_TRACE)
    for cls in (KernelProfile, KernelList, SyncList):  # no message names what the values are
        monkeypatch.setattr(cls, "__repr__", lambda self: "value")
    with pytest.raises(AssertionError) as info:
        assert not prof.syncs
    assert "value" in str(info.value)
    assert asserted(info) == "syncs"
    with pytest.raises(AssertionError) as info:
        assert prof.launches == 0
    assert asserted(info) == "profile"  # an int, of the profile the statement names
    with pytest.raises(AssertionError) as info:
        assert len(prof.kernels) == 0
    assert asserted(info) == "kernels"
    numbers = [1, 2]
    with pytest.raises(AssertionError) as info:
        assert numbers == [2, 1]
    assert asserted(info) is None


REWORDED_CONFTEST = """
import pytest

from pytest_kernelprof.checks.baseline import KernelBaseline
from pytest_kernelprof.model import KernelCount, KernelList, KernelProfile, SyncList, explain


@pytest.fixture(autouse=True)
def reworded(monkeypatch):
    # Every message and repr of a profile value, reworded: none names syncs, kernels or baselines.
    monkeypatch.setattr(explain, "explain", lambda op, left, right: explain.Explanation([f"x {op} y"], []))
    for cls in (KernelProfile, KernelList, SyncList, KernelCount):
        monkeypatch.setattr(cls, "__repr__", lambda self: "value")
    compare = KernelBaseline._compare

    def reworded_compare(self, prof, name):
        failed = compare(self, prof, name)  # (the error's type, what failed)
        return None if failed is None else (failed[0], explain.Explanation(["x"], ["reworded"]))

    monkeypatch.setattr(KernelBaseline, "_compare", reworded_compare)
"""

REWORDED = """
import pytest

from pytest_kernelprof import ForbiddenError


def test_r1(recorded):
    recorded("sync_item_stacks")
    raise ForbiddenError("reworded")


def test_r2(recorded, kernel_baseline):
    kernel_baseline.check(recorded("geglu_eager"))


def test_r3(recorded, kernel_baseline):
    assert recorded("geglu_eager") == kernel_baseline


def test_r4(recorded):
    assert recorded("sync_item_stacks").syncs == []


def test_r5(recorded):
    count = recorded("sync_item_stacks").kernels.count("*")
    assert count == 0


def test_r6(recorded):
    prof = recorded("sync_item_stacks")
    assert not prof.syncs


def test_r7(recorded):
    prof = recorded("sync_item_stacks")
    assert prof.launches == 0


def test_r8(recorded):
    recorded("sync_item_stacks")
    assert 1 == 2


def test_r9(recorded):
    prof = recorded("copy_dtoh_pinned_nonblocking")
    assert prof.copies.count("DtoH") == 0
"""


def test_categories_come_from_types_whatever_the_messages_say(cpu_pytester: pytest.Pytester) -> None:
    """Through the plugin: the exception's type, the comparison pytest_assertrepr_compare saw,
    the values a failed statement named, with every message reworded."""
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + CONFTEST + REWORDED_CONFTEST)
    module = cpu_pytester.makepyfile(test_rw=REWORDED)
    for test in ("test_r2", "test_r3"):
        path, _ = baseline_paths(module, f"test_rw.py::{test}")
        record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md", "-p", "no:randomly")
    result.assert_outcomes(failed=9)
    text = (cpu_pytester.path / "summary.md").read_text()
    assert (
        "### 8 tests failed: kernelprof_forbid rule (1), kernel baseline (2), host syncs (2), copies (1), "
        "kernel assertion (1), profile assertion (1)\n"
    ) in text
    said = dict(re.findall(r"<code>test_rw\.py::(test_r\d)</code> ([\w ()]+?) at", text))
    assert said == {
        "test_r1": "failed (kernelprof_forbid rule)",
        "test_r2": "failed (kernel baseline)",
        "test_r3": "failed (kernel baseline)",
        "test_r4": "failed (host syncs)",
        "test_r5": "failed (kernel assertion)",
        "test_r6": "failed (host syncs)",
        "test_r7": "failed (profile assertion)",  # prof.launches == 0
        "test_r9": "failed (copies)",  # a trial's: it read "host syncs", the profile having none
    }
    # Each message without the profile tables folded under a plain assertion's (whose words are the tables').
    messages = [m.split("\n\nkernelprof profile ")[0] for m in re.findall(r"```text\n(.*?)\n```", text, re.S)]
    assert len(messages) == 8
    # (".syncs" is the test's own source in pytest's "where" line.)
    assert not [m for m in messages if re.search(r"(?<!\.)(sync|kernel|baseline)", m, re.I)], messages


def test_sync_locations_and_escapes() -> None:
    from pytest_kernelprof.plugin.ci_facts import sync_location
    from pytest_kernelprof.reports.annotations import command, relative

    assert sync_location("train.py(40): train_step_item") == ("train.py", 40, "train_step_item")
    assert sync_location("/repo/src/train.py:41") == ("/repo/src/train.py", 41, "")
    assert sync_location("<built-in method item>") is None
    assert relative("/repo/src/train.py", Path("/repo")) == "src/train.py"
    assert relative("/elsewhere/x.py", Path("/repo")) == "/elsewhere/x.py"
    line = command("error", "50% of\nit: a, b", file="a,b:c.py", line=3, title="t: x")
    assert line == "::error file=a%2Cb%3Ac.py,line=3,title=t%3A x::50%25 of%0Ait: a, b"
