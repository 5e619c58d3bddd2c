"""The JUnit ``message`` of a failure about a recorded profile, cut to pytest's bound
(``reports/junit.py``'s ``short_message``, set by ``plugin/ci.py``): no table ended at its
header, no ``to fix:`` line cut in its middle.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.helpers import DATA

SUITE = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_kind_ruled_out(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_liger.json.gz")
    prof.kernels.one("*geglu*", kind="reduction")


def test_pageable_copy(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz")
    assert prof.copies.count("DtoH") == 0
"""

# A table's header (its index column first) and a row of it.
HEADER = re.compile(r"#  \S")
ROW = re.compile(r"\d+  \S")
POINTER = re.compile(r"\(the rest, \d+ lines?, is in this failure's text\)")


@pytest.fixture
def messages(cpu_pytester: pytest.Pytester) -> dict[str, tuple[list[str], list[str]]]:
    """Each test's JUnit message and the failure's text, as their lines, stripped."""
    cpu_pytester.makepyfile(test_junit=SUITE)
    result = cpu_pytester.runpytest("-p", "no:randomly", "--junitxml=junit.xml")
    result.assert_outcomes(failed=2)
    found = {}
    for case in ET.parse(cpu_pytester.path / "junit.xml").iter("testcase"):
        failure = case.find("failure")
        assert failure is not None
        message = failure.get("message", "")
        assert len(message) <= 500, message  # within pytest's bound: not cut again
        assert "full report in element text" not in message, message  # pytest's own cut
        found[case.get("name", "")] = (
            [line.strip() for line in message.splitlines()],
            [line.removeprefix("E").strip() for line in (failure.text or "").splitlines()],
        )
    assert set(found) == {"test_kind_ruled_out", "test_pageable_copy"}
    return found


def test_a_cut_message_never_ends_a_table_at_its_header(messages: dict[str, tuple[list[str], list[str]]]) -> None:
    # Trial report: `found 0 of 4 kernels ...:`, the table's header, then the hint below the
    # table: a table with no rows, which reads as though no kernel ran.
    for test, (lines, text) in messages.items():
        for at, line in enumerate(lines):
            if HEADER.match(line):
                assert ROW.match(lines[at + 1]), (test, lines)  # its pointer below it, at least
        assert POINTER.fullmatch(lines[-1]), (test, lines)
        assert all(line in text for line in lines[1:-1]), (test, lines, text)  # each line whole
    lines, _ = messages["test_kind_ruled_out"]
    assert lines[-2] == "'*geglu*' matches #2 by name: its kind ruled it out", lines


def test_a_to_fix_line_is_kept_whole_or_left_out(messages: dict[str, tuple[list[str], list[str]]]) -> None:
    # Trial report: `to fix: ... copy into p[...25 chars...]_memory=True) with non_blocking=True`.
    lines, text = messages["test_pageable_copy"]
    fixes = [line for line in text if line.startswith("to fix:")]
    assert len(fixes) == 2, text
    shown = [line for line in lines if line.startswith("to fix:")]
    assert shown, lines  # the first fits whole
    assert all(line in fixes for line in shown), lines
    assert "chars...]" not in "\n".join(lines)
    assert POINTER.fullmatch(lines[-1]), lines  # the rest: where it is
