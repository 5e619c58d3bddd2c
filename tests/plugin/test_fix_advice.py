"""What would remove a failure's host syncs or copies (``to fix: ...``) is printed once, where the
failure is read: a user's trial read it twice on long lines, in the repr that pytest prints twice
for ``assert not prof.syncs`` (the assertion and its "where" line).

The profile's report section says it under its sync table; a failed count or comparison, whose
explanation says it, leaves it out there. The job summary says it under the record tables of
``assert not prof.syncs``. On CI pytest's short summary repeats each failure's message whole
(pytest's own echo, also of every kernel count's table): a count's advice is in it a second time,
the advice of ``assert not prof.syncs`` never."""

from __future__ import annotations

import re

import pytest

from tests.helpers import DATA

SUITE = """
from pathlib import Path

DATA = Path({data!r})
CPU_COPY = DATA / "h200_sync_cpu_copy.json.gz"  # x.cpu(): a pageable DtoH copy, then a stream sync


def test_no_syncs(kernelprof):
    assert not kernelprof.load_trace(CPU_COPY).syncs


def test_no_copies(kernelprof):
    assert not kernelprof.load_trace(DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz").copies


def test_sync_count(kernelprof):
    assert kernelprof.load_trace(CPU_COPY).syncs.count(kind="copy") == 0


def test_syncs_equal(kernelprof):
    assert kernelprof.load_trace(CPU_COPY).syncs == []
"""

PAGEABLE = (
    "to fix: a copy to or from pageable memory blocks the host: copy into pinned host memory "
    "(t.pin_memory(), or pin_memory=True) with non_blocking=True"
)
DTOH = "to fix: a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step"
TESTS = ("test_no_syncs", "test_no_copies", "test_sync_count", "test_syncs_equal")
# The tests whose failure message (an explanation) carries the advice: pytest's CI short summary
# repeats those messages.
EXPLAINED = ("test_sync_count", "test_syncs_equal")


def _parts(lines: list[str]) -> tuple[dict[str, str], str]:
    """Each test's failure section, and the short test summary."""
    text = "\n".join(lines)
    end = text.index("short test summary info")
    failures = text[:end]
    starts = {test: failures.index(f"_ {test} _") for test in TESTS}
    ordered = sorted(starts.values())
    sections = {}
    for test, start in starts.items():
        later = [at for at in ordered if at > start]
        sections[test] = failures[start : later[0] if later else end]
    return sections, text[end:]


@pytest.mark.parametrize(
    ("options", "ci"),
    [([], False), (["-v"], False), ([], True), (["-v"], True)],
    ids=["default", "-v", "CI=true", "CI=true -v"],
)
def test_the_advice_is_printed_once_per_failure(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str], ci: bool
) -> None:
    if ci:
        monkeypatch.setenv("CI", "true")
    cpu_pytester.makepyfile(test_s=SUITE.format(data=str(DATA)))
    result = cpu_pytester.runpytest_subprocess("-p", "no:randomly", *options)
    result.assert_outcomes(failed=4)
    output = result.stdout.str()
    sections, short = _parts(result.outlines)
    for test in TESTS:
        assert sections[test].count(PAGEABLE) == 1, (test, sections[test])
    # The reprs of `assert not prof.syncs` and `assert not prof.copies`: short, no fix.
    assert "SyncList of 2: cudaMemcpyAsync in aten::copy_; cudaStreamSynchronize in aten::copy_ = " in output
    assert "CopyList of 1: DtoH pageable 4194304 B by aten::copy_ = " in output
    # A count's advice is that of what it counted (the copy sync); the profile's table adds the
    # copies' own, which the count did not say.
    for test in TESTS:
        assert sections[test].count(DTOH) == 1, (test, sections[test])
    echoed = [test for test in TESTS if PAGEABLE in _short_line(short, test)]
    assert echoed == (list(EXPLAINED) if ci else [])
    assert short.count("to fix") == len(echoed)
    assert output.count(PAGEABLE) == len(TESTS) + len(echoed)
    assert output.count(DTOH) == len(TESTS)


def _short_line(short: str, test: str) -> str:
    """What pytest's short summary says of ``test``: its line, and on CI the message's lines after it."""
    found = re.search(rf"^FAILED \S+::{test} - (.*?)(?=^FAILED |^=)", short, re.M | re.S)
    assert found, short
    return found[1]


def test_the_job_summary_says_the_advice_under_the_record_tables(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpu_pytester.makepyfile(test_s=SUITE.format(data=str(DATA)))
    result = cpu_pytester.runpytest_subprocess("-p", "no:randomly", "--kernelprof-summary", "summary.md")
    result.assert_outcomes(failed=4)
    summary = (cpu_pytester.path / "summary.md").read_text()
    for test in TESTS:
        found = re.search(rf"<code>test_s\.py::{test}</code>.*?```text\n(.*?)\n```", summary, re.S)
        assert found, summary
        text = found[1]
        assert text.count(PAGEABLE) == 1, (test, text)
        if test in EXPLAINED:
            continue
        # `assert not prof.syncs`: the message is its one line; the table, then its advice.
        lines = text.splitlines()
        # A sync table names its call above it (its times are that call's); a copy table's are medians.
        whose = "host syncs in call 2, numbered from 0, the fastest of 3 by host span"
        title = lines.index(f"kernelprof profile 1 of 1, its {whose if test == 'test_no_syncs' else 'copies'}:")
        assert lines[title + 1].startswith("#  ")
        assert lines.index(PAGEABLE) > title + 1
        assert "to fix" not in "\n".join(lines[:title])


ITEM_SUITE = """
from pathlib import Path

ITEM = Path({data!r}) / "h200_sync_item_stacks.json.gz"  # loss.item(): a DtoH copy into pinned memory, a sync


def test_len_copies(kernelprof):
    assert len(kernelprof.load_trace(ITEM).copies) == 0


def test_not_copies(kernelprof):
    assert not kernelprof.load_trace(ITEM).copies


def test_copy_count(kernelprof):
    assert kernelprof.load_trace(ITEM).copies.count("DtoH") == 0


def test_len_syncs(kernelprof):
    assert len(kernelprof.load_trace(ITEM).syncs) == 0
"""
COPY_TABLE = "#  direction  host mem  bytes  median gpu us  op                         name"
SYNC_TABLE = "#  runtime call           kind    copy  call 2 host us  ops                                     where"


def _failure_blocks(lines: list[str]) -> dict[str, list[str]]:
    """Each failed test's block of the terminal's failures, its message without pytest's ``E``."""
    blocks: dict[str, list[str]] = {}
    block: list[str] = []
    for line in lines:
        if header := re.fullmatch(r"_+ (test_\w+) _+", line):
            block = blocks.setdefault(header[1], [])
        elif "short test summary info" in line:
            break
        else:
            block.append(re.sub(r"^E {7}", "", line))
    return blocks


def test_a_failed_copies_question_shows_the_copies_in_the_terminal_where_the_summary_does(
    cpu_pytester: pytest.Pytester,
) -> None:
    # Trial report: a failed `len(prof.copies) == 0` showed the copies table in the job summary,
    # and in the terminal neither its message nor its 'kernelprof profile' section did.
    cpu_pytester.makepyfile(test_s=ITEM_SUITE.format(data=str(DATA)))
    result = cpu_pytester.runpytest_subprocess("-p", "no:randomly", "--kernelprof-summary", "summary.md")
    result.assert_outcomes(failed=4)
    summary = (cpu_pytester.path / "summary.md").read_text()
    blocks = _failure_blocks(result.outlines)
    for test in ("test_len_copies", "test_not_copies", "test_copy_count", "test_len_syncs"):
        found = re.search(rf"<code>test_s\.py::{test}</code>.*?```text\n(.*?)\n```", summary, re.S)
        assert found, summary
        terminal, summarized = blocks[test], found[1].splitlines()
        # The terminal and the summary agree: the copies where the question was about copies.
        copies = [any(line.strip() == COPY_TABLE for line in lines) for lines in (terminal, summarized)]
        assert copies == [test != "test_len_syncs"] * 2, test
        assert SYNC_TABLE in terminal  # the profile's table ends with its syncs
        assert SYNC_TABLE in summarized or test != "test_len_syncs"
        assert sum(line.strip() == DTOH for line in terminal) == (test != "test_len_syncs"), test
        if test in ("test_len_copies", "test_not_copies"):  # named in a line: the section ends with the copies
            section = terminal[terminal.index(next(line for line in terminal if "kernelprof profile 1 of 1" in line)) :]
            at = section.index(COPY_TABLE)
            assert section[at - 1] == "1 copy per call:"
            # Then the command that prints the profile's table again, the section's last line.
            trace = DATA / "h200_sync_item_stacks.json.gz"
            plain = "(plain show: call 2's own times beside them)"
            medians = f"kernelprof show --medians {trace} prints this table {plain}"
            assert section[at + 2 :] == [DTOH, medians]


def _annotations(lines: list[str]) -> dict[str, list[str]]:
    """Each ``::error`` annotation's message lines, by where it points (``file:line``)."""
    found: dict[str, list[str]] = {}
    for line in lines:
        if match := re.fullmatch(r"::error file=([^,]+),line=(\d+),title=[^:]*::(.*)", line):
            message = match[3].replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
            found[f"{match[1]}:{match[2]}"] = message.splitlines()
    return found


def test_the_annotation_of_syncs_or_copies_named_in_a_line_says_their_fixes(cpu_pytester: pytest.Pytester) -> None:
    # Trial report: the annotation of `assert not prof.syncs` held only the assertion's two lines,
    # while the job summary said what would remove the sync.
    cpu_pytester.makepyfile(test_s=SUITE.format(data=str(DATA)))
    result = cpu_pytester.runpytest_subprocess("-p", "no:randomly", "--kernelprof-annotations", "on")
    result.assert_outcomes(failed=4)
    found = _annotations(result.outlines)
    source = SUITE.splitlines()
    for test in TESTS:
        message = [line.strip() for line in found[f"test_s.py:{source.index(f'def {test}(kernelprof):') + 1}"]]
        assert message[0] == f"test_s.py::{test}"
        # Each fix once: a count's explanation says its own already, and it is not said again.
        assert message.count(PAGEABLE) == 1, (test, message)
        assert message.count(DTOH) == (test not in EXPLAINED), (test, message)
        assert message.index(PAGEABLE) > 1  # after the assertion's head


def test_the_annotation_at_a_syncs_own_line_says_its_fix(cpu_pytester: pytest.Pytester) -> None:
    # Where the sync's file is in the checkout, the sync's line is annotated and the test's is not:
    # that annotation is the one that says what to do.
    cpu_pytester.makepyfile(test_s=ITEM_SUITE.format(data=str(DATA)))
    (cpu_pytester.path / "train.py").write_text("\n" * 60)  # the recorded stack's train.py(40)
    result = cpu_pytester.runpytest_subprocess(
        "-p", "no:randomly", "-k", "test_len_syncs", "--kernelprof-annotations", "on"
    )
    result.assert_outcomes(failed=1, deselected=3)
    found = _annotations(result.outlines)
    assert list(found) == ["train.py:40"], found
    read = (
        "to fix: the host read a GPU value (.item(), bool(t), nonzero, boolean-mask indexing): keep it on the GPU "
        "(torch.where, masks as multipliers) or read it once per step"
    )
    assert found["train.py:40"][1:] == [read], found
