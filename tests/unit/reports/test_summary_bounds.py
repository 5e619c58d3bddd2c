"""The job summary, the annotations and the JUnit properties stay bounded whatever a run holds
(issue 34): a test id, a message, a kernel name or a hook's lines of any length."""

from __future__ import annotations

from pathlib import Path

from pytest_kernelprof.reports.annotations import LINE_CHARS, workflow_commands
from pytest_kernelprof.reports.junit import LEFT_OUT, MAX_NAME, MAX_PROPERTIES, MAX_VALUE, bounded
from pytest_kernelprof.reports.records import Failure, ReportRecord, Unplaced
from pytest_kernelprof.reports.summary import FAILURE_CHARS, MAX_TEXT, SUMMARY_BYTES, clip, render_summary

ROOT = Path("/work/project")


def test_clip_keeps_the_start_and_the_end_and_says_how_much_it_left_out() -> None:
    assert clip("short") == "short"
    cut = clip("t.py::test_x[" + "a" * 10_000 + "]")
    assert len(cut) <= MAX_TEXT
    assert cut.startswith("t.py::test_x[aaa")
    assert cut.endswith("a]")
    assert f"[...{10_014 - MAX_TEXT} chars...]" in cut


def test_every_text_of_a_users_is_cut_in_the_summary() -> None:
    long_id = "t.py::test_x[" + "i" * 80_000 + "]"
    tests = {
        long_id: ReportRecord(
            failure=Failure("kernels", "m" * 200_000, 0, "t.py", 3),
            unplaced=(Unplaced("triton_" + "k" * 50_000, "op", 1),),
        )
    }
    text = render_summary(tests, [["kernelprof: written", "x" * 50_000]], rootpath=ROOT)
    assert len(text) < FAILURE_CHARS + 10 * MAX_TEXT
    assert max(len(line) for line in text.splitlines() if "m" * 100 not in line) < 3 * MAX_TEXT
    assert "more lines in the job log" in text


def test_a_message_of_backticks_is_fenced_in_one_pass() -> None:
    tests = {"t.py::test_x": ReportRecord(failure=Failure("kernels", "`" * 50_000, 0, "t.py", 3))}
    text = render_summary(tests, [], rootpath=ROOT)
    assert "`" * 50_001 + "text\n" in text  # the fence one longer than the message's run


def test_the_summary_stops_at_its_budget_and_says_what_it_left_out() -> None:
    tests = {f"t.py::test_{i}": ReportRecord(failure=Failure("kernels", "m" * 50_000, 0, "t.py", i)) for i in range(10)}
    extra = [f"extra line {i}" for i in range(3)]
    whole = render_summary(tests, [], rootpath=ROOT, extra=extra)
    assert "extra line 2" in whole
    text = render_summary(tests, [], rootpath=ROOT, extra=extra, budget=200_000)
    assert len(text.encode()) <= 200_000
    assert text.count("<details>") == text.count("</details>") == 3  # no entry cut in its middle
    assert "is left out: a step's summary is kept under GitHub's 1 MiB limit" in text
    assert "the JUnit XML" in text
    assert "extra line" not in text
    assert len(whole.encode()) < SUMMARY_BYTES


def test_paths_under_the_rootdir_are_relative_and_others_are_left_alone() -> None:
    message = (
        f"differs from the baseline sm90/default in {ROOT}/__kernelprof__/t/test_x.json\n"
        f"and {ROOT}2/elsewhere.json and /other{ROOT}/x.json"
    )
    tests = {"t.py::test_x": ReportRecord(failure=Failure("baseline", message, 0, f"{ROOT}/t.py", 3))}
    text = render_summary(
        tests, [[f"kernelprof: written {ROOT}/a.json", f"written {ROOT}/b.json: sm90/x"]], rootpath=ROOT
    )
    assert "in __kernelprof__/t/test_x.json" in text
    assert f"and {ROOT}2/elsewhere.json and /other{ROOT}/x.json" in text  # not under the rootdir
    assert "**written a\\.json**" in text
    assert "- `written b.json: sm90/x`" in text


def test_an_annotation_is_bounded_and_its_paths_relative_to_the_workspace() -> None:
    nodeid = "t.py::test_x[" + "i" * 80_000 + "]"
    message = f"in {ROOT}/__kernelprof__/x.json " + "y" * 80_000 + "\nsecond"
    tests = {nodeid: ReportRecord(failure=Failure("baseline", message, 0, f"{ROOT}/t.py", 3))}
    (line,) = workflow_commands(tests, workspace=ROOT)
    assert len(line) < MAX_TEXT + LINE_CHARS * 2 + 200
    assert line.startswith("::error file=t.py,line=3,")
    assert "in __kernelprof__/x.json" in line
    assert str(ROOT) not in line


def test_setup_and_teardown_errors_are_annotated_once() -> None:
    error = Failure("kernels", "one() matched 3", 0, "t.py", 5, when="setup")
    teardown = Failure("kernels", "one() matched 3", 0, "t.py", 9, when="teardown")
    tests = {"t.py::test_b": ReportRecord(failure=Failure("baseline", "m", 0, "t.py", 7))}
    errors = {"t.py::test_a": [error], "t.py::test_b": [teardown]}
    found = list(workflow_commands(tests, workspace=ROOT, errors=errors))
    assert len(found) == 2, found  # test_b's teardown: its call's failure is annotated
    assert found[1].startswith("::error file=t.py,line=5,title=kernelprof%3A kernel assertion (setup error)::")
    assert "t.py::test_a errored in setup (kernel assertion)" in found[1]


def test_junit_properties_are_bounded() -> None:
    pairs: list[tuple[str, object]] = [("kernelprof.kernels", 5), ("n" * 1000, "v" * 100_000), ("b", True)]
    kept = bounded(pairs + [("x", i) for i in range(MAX_PROPERTIES)])
    assert kept[0] == ("kernelprof.kernels", 5)
    assert kept[1] == ("n" * MAX_NAME + "...", "v" * MAX_VALUE + "...")
    assert kept[2] == ("b", True)
    assert len(kept) == MAX_PROPERTIES + 1
    assert kept[-1] == (LEFT_OUT, 3)
