"""The job summary's Markdown (summary.py): headings that say what the tests failed on, in
words, and names from traces shown as they are, each on its row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_kernelprof.reports.records import Failure, ReportRecord, Unplaced
from pytest_kernelprof.reports.summary import MAX_FAILURES, code_span, render_summary


def _failed(*categories: str) -> dict[str, ReportRecord]:
    return {
        f"t.py::test_{i}": ReportRecord(failure=Failure(category, "m", 0, "t.py", i + 1))
        for i, category in enumerate(categories)
    }


def test_a_heading_says_what_the_tests_failed_on_in_words() -> None:
    def heading(*categories: str) -> str:
        return render_summary(_failed(*categories), [], rootpath=Path(".")).splitlines()[2]

    assert heading("kernels") == "### 1 test failed: kernel assertion"
    assert heading("syncs", "syncs") == "### 2 tests failed: host syncs"
    assert heading("baseline", "baseline") == "### 2 tests failed: kernel baseline"
    assert heading("kernels", "rule", "kernels", "syncs") == (
        "### 4 tests failed: kernelprof_forbid rule (1), host syncs (1), kernel assertion (2)"
    )
    # An op lookup is no kernel assertion, nor an unknown dtype, nor a profile that measured nothing.
    assert heading("op-lookup", "query", "kernels", "nodevice", "profile") == (
        "### 5 tests failed: no GPU activity (1), kernel assertion (1), op lookup (1), profile assertion (1), "
        "invalid profile query (1)"
    )


def test_failures_are_listed_worst_category_first_then_by_file_and_line() -> None:
    # The trial's order: test_name_in_fails (line 40) came before test_names_equal_fails (line 35).
    failures = {
        "b.py::test_name_in_fails": Failure("kernels", "m", 0, "b.py", 40),
        "b.py::test_names_equal_fails": Failure("kernels", "m", 0, "b.py", 35),
        "a.py::test_z": Failure("kernels", "m", 0, "a.py", 90),
        "b.py::test_op": Failure("op-lookup", "m", 0, "b.py", 3),
        "b.py::test_rule": Failure("rule", "m", 0, "b.py", 50),
        "b.py::test_param[2]": Failure("kernels", "m", 0, "b.py", 12),
        "b.py::test_param[1]": Failure("kernels", "m", 0, "b.py", 12),
        "b.py::test_param[10]": Failure("kernels", "m", 0, "b.py", 12),  # a trial's: [10] came before [2]
    }
    text = render_summary({k: ReportRecord(failure=f) for k, f in failures.items()}, [], rootpath=Path("."))
    listed = [line.split("</code>")[0].removeprefix("<details><summary><code>") for line in text.splitlines()]
    assert [test for test in listed if "::" in test] == [
        "b.py::test_rule",
        "a.py::test_z",
        "b.py::test_param[1]",
        "b.py::test_param[2]",
        "b.py::test_param[10]",
        "b.py::test_names_equal_fails",
        "b.py::test_name_in_fails",
        "b.py::test_op",
    ]


HOSTILE = [
    "two\nlines | and a pipe",
    "`tick` **bold** [link]<https://example.com> <script>alert</script>",  # shown whole: no parameter list
    "::error file=x,line=1::command",
]


def test_names_from_a_trace_stay_in_their_row() -> None:
    tests = {"t.py::test_a": ReportRecord(unplaced=tuple(Unplaced(name, "op\nx", 1) for name in HOSTILE))}
    text = render_summary(tests, [], rootpath=Path("."))
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(HOSTILE)  # a newline in a name does not end its row
    for row in rows:
        # Four cells: a name's pipe is escaped, its backticks cannot end the code span.
        assert row.replace("\\|", "").count("|") == 5, row
        assert row.endswith(" | 1 | 1 | `t.py::test_a` |"), row
    assert r"| `two\nlines \| and a pipe` | 1 | 1 | `t.py::test_a` |" in rows
    tick = "| `` `tick` **bold** [link]<https://example.com> <script>alert</script> `` | 1 | 1 | `t.py::test_a` |"
    assert tick in rows
    assert not [line for line in text.splitlines() if line.lstrip().startswith("::")]


def test_the_unplaced_kernels_are_told_in_the_terminals_words_and_counted_by_launches() -> None:
    # Trial report: "### 2 kernel names not decoded" over "| kernel | kernels | tests |", where the
    # terminal says "no evidence could place" and the API "unplaced", and "kernels" counted launches.
    tests = {
        "t.py::test_a": ReportRecord(unplaced=(Unplaced("acme_fwd", "acme::fwd", 3), Unplaced("acme_bwd", "", 1))),
        "t.py::test_b": ReportRecord(unplaced=(Unplaced("acme_fwd", "acme::fwd", 2),)),
    }
    lines = render_summary(tests, [], rootpath=Path(".")).splitlines()
    assert "### 2 kernel names no evidence could place (unplaced)" in lines
    header = lines.index("| kernel name | launches | tests | first test |")
    assert lines[header + 2 : header + 4] == [
        "| `acme_fwd` | 5 | 2 | `t.py::test_a` |",
        "| `acme_bwd` | 1 | 1 | `t.py::test_a` |",
    ]
    assert "not decoded" not in "\n".join(lines)


def test_a_test_id_in_the_failures_is_text() -> None:
    tests = {"t.py::test_a[<b>\nx]": ReportRecord(failure=Failure("syncs", "m", 0, "t.py", 3))}
    text = render_summary(tests, [], rootpath=Path("."))
    assert r"<summary><code>t.py::test_a[&lt;b&gt;\nx]</code> failed (host syncs) at" in text


def test_a_long_diff_still_ends_with_its_update_command() -> None:
    # The record keeps a long diff's first lines and its update command (plugin/ci_facts.py): the
    # count of what it left out goes where it left them out, and the command stays last.
    update = "if the change is intended: pytest --kernelprof-update 't.py::test_b'"
    message = "\n".join(["kernel signature differs", "+ pointwise  k0", update])
    tests = {"t.py::test_b": ReportRecord(failure=Failure("baseline", message, 300, "t.py", 3))}
    text = render_summary(tests, [], rootpath=Path("."))
    assert f"+ pointwise  k0\n... 300 more lines in the job log\n{update}\n" in text


def read_code_span(markdown: str) -> str:
    """The text of the code span ``markdown`` is, as CommonMark reads it: opened by a run of
    backticks, closed by the next run of the same length, one space stripped from each end where
    both ends have one and it is not all spaces."""
    opening = re.match(r"`+", markdown)
    assert opening is not None, markdown
    ticks = opening.group()
    closing = next(run for run in re.finditer(r"`+", markdown[len(ticks) :]) if run.group() == ticks)
    assert len(ticks) + closing.end() == len(markdown), markdown  # the span is the whole string
    text = markdown[len(ticks) : len(ticks) + closing.start()]
    if len(text) > 1 and text[0] == text[-1] == " " and text.strip(" "):
        text = text[1:-1]
    return text


@pytest.mark.parametrize(
    "text",
    [
        "pytest --kernelprof-update 'test_x.py::test_a[a'\"'\"'b `x` c]'",
        "`",
        "``",
        "`starts",
        "ends`",
        "a ``` b ` c",
        " both ",
        " ",
        "  ",
        " left",
        "plain",
    ],
)
def test_a_code_span_shows_its_text_as_it_is_backticks_included(text: str) -> None:
    # Before: each backtick was written ', so a command pasted from the summary named another test.
    assert read_code_span(code_span(text)) == text


@pytest.mark.parametrize(("more", "words"), [(1, "1 more failed test "), (2, "2 more failed tests ")])
def test_the_failures_past_the_cap_are_counted_in_words_that_agree(more: int, words: str) -> None:
    # A trial: "... and 1 more failed tests (see the job log)".
    tests = {
        f"t.py::test_{i:02}": ReportRecord(failure=Failure("kernels", "assert 1 == 2", 0, "t.py", i))
        for i in range(MAX_FAILURES + more)
    }
    text = render_summary(tests, [], rootpath=Path("."))
    assert f"... and {words}(see the job log)" in text
