"""The annotations' messages (reports/annotations.py): cut to their bound, they keep what acts
(the update command, ``to fix:``, the marker that allows a rule) and no table's header alone;
every failure about a profile is annotated, a kernel assertion with its head (issue 32)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from pytest_kernelprof.plugin.ci_facts import MESSAGE_LINES as RECORD_LINES
from pytest_kernelprof.plugin.ci_facts import kept_message
from pytest_kernelprof.reports.annotations import MAX_ERRORS, MESSAGE_LINES, collect, workflow_commands
from pytest_kernelprof.reports.records import Failure, ReportRecord

UPDATE = "if the change is intended: pytest --kernelprof-update 't.py::test_b'"


def _message(category: str, lines: list[str], more_lines: int = 0) -> list[str]:
    tests = {"t.py::test_b": ReportRecord(failure=Failure(category, "\n".join(lines), more_lines, "t.py", 7))}
    [(file, line, _, message)] = collect(tests, Path("."))
    assert (file, line) == ("t.py", 7)
    head, *rest = message.splitlines()
    assert head == "t.py::test_b"
    return rest


def test_a_baseline_cut_keeps_its_update_command() -> None:
    # A user's trial: the 13th line, the command, was the one left out.
    diff = [f"= gemm/nvjet bf16 tn  kernel_{i}" for i in range(MESSAGE_LINES - 1)]
    shown = _message("baseline", ["kernel signature differs from the baseline sm90/default", *diff, UPDATE])
    assert len(shown) <= MESSAGE_LINES + 1
    assert shown[-1] == UPDATE
    assert shown[-2] == "(+1 line in the job log)"
    assert shown[0] == "kernel signature differs from the baseline sm90/default"


def test_one_line_left_out_is_one_line() -> None:
    shown = _message("baseline", [f"line {i}" for i in range(MESSAGE_LINES + 1)])
    assert shown[-1] == "(+1 line in the job log)"
    assert shown[:-1] == [f"line {i}" for i in range(MESSAGE_LINES)]


def test_a_rule_cut_keeps_no_header_without_its_rows_and_keeps_its_allow_marker() -> None:
    head = [f"kernelprof_forbid rule 'r{i}' (kernels>0) is broken" for i in range(MESSAGE_LINES - 3)]
    table = [
        "syncs = 3:",
        "#  call                   kind    host us  ops          where",
        "0  cudaStreamSynchronize  stream      7.3  aten::item   main.py(40): step",
        "1  cudaStreamSynchronize  stream      7.3  aten::item   main.py(41): step",
        "2  cudaStreamSynchronize  stream      7.3  aten::item   main.py(42): step",
    ]
    allow = "(a test that may break it: @pytest.mark.kernelprof_allow('r0'))"
    shown = _message("rule", [*head, *table, "", allow])
    assert shown[-1] == allow
    assert not any(line.startswith("#  call") for line in shown), shown
    assert shown[-2] == "(+5 lines in the job log)"
    assert shown[-3] == "syncs = 3:"
    # With room for the header's first row, both are kept.
    shown = _message("rule", [*head[:-1], *table, "", allow])
    assert shown[-4:] == [table[1], table[2], "(+3 lines in the job log)", allow]


def test_a_count_of_syncs_keeps_its_fixes() -> None:
    rows = [f"{i}  cudaStreamSynchronize  stream  7.3  aten::item  main.py({i}): step" for i in range(30)]
    fixes = [
        "to fix: keep values on the GPU, no .item()/bool()/nonzero",
        "to fix: torch.cuda.synchronize() only at the end",
    ]
    shown = _message("syncs", ["assert 30 == 0", "syncs.count() counted 30 of 30 host syncs", *rows, *fixes])
    assert shown[-2:] == fixes
    assert shown[-3] == "(+22 lines in the job log)"
    assert len(shown) == MESSAGE_LINES + 1


def test_a_kernel_assertion_is_annotated_with_its_head() -> None:
    lines = [
        "assert 3 == 2",
        "  kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4",
        " #  kind  family  dtype  name",
        "*0  gemm  nvjet   bf16   nvjet_a",
    ]
    tests = {"t.py::test_fused": ReportRecord(failure=Failure("kernels", "\n".join(lines), 0, "t.py", 12))}
    [command] = workflow_commands(tests, workspace=Path("."))
    assert command.startswith("::error file=t.py,line=12,title=kernelprof%3A failed on a kernel assertion::")
    assert unquote(command.split("::", 2)[2]).splitlines() == [
        "t.py::test_fused",
        "assert 3 == 2",
        "  kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4",
        "(+2 lines in the job log)",
    ]


def test_kernel_assertions_come_after_the_worse_failures_and_within_the_cap() -> None:
    tests = {
        f"t.py::test_k{i:02}": ReportRecord(failure=Failure("kernels", "assert 1 == 2", 0, "t.py", i))
        for i in range(12)
    }
    tests["t.py::test_z_rule"] = ReportRecord(failure=Failure("rule", "rule broken", 0, "t.py", 99))
    commands = list(workflow_commands(tests, workspace=Path(".")))
    assert len(commands) == MAX_ERRORS + 1
    assert "line=99," in commands[0]
    assert commands[-1].startswith("::notice title=kernelprof::3 more kernelprof annotations not written")


def test_the_record_keeps_the_update_command_of_a_long_diff() -> None:
    lines = ["kernel signature differs", *(f"+ pointwise  k{i}" for i in range(RECORD_LINES * 2)), UPDATE]
    kept = kept_message(lines)
    assert len(kept) == RECORD_LINES
    assert kept[-1] == UPDATE
    assert kept[:-1] == lines[: RECORD_LINES - 1]
    # And the annotation made of that record says it, after what the record left out.
    shown = _message("baseline", kept, more_lines=len(lines) - len(kept))
    assert shown[-2:] == [f"(+{len(lines) - MESSAGE_LINES} lines in the job log)", UPDATE]
