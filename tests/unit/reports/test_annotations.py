"""The annotations' messages (reports/annotations.py): cut to their bound, they keep what acts
(the update command, ``to fix:``, the marker that allows a rule) and no table's header alone;
every failure about a profile is annotated, a kernel assertion with its head (issue 32)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from pytest_kernelprof.plugin.ci_facts import MESSAGE_LINES as RECORD_LINES
from pytest_kernelprof.plugin.ci_facts import kept_message
from pytest_kernelprof.reports.annotations import MAX_ERRORS, MESSAGE_LINES, collect, workflow_commands
from pytest_kernelprof.reports.categories import noun
from pytest_kernelprof.reports.records import Failure, ReportRecord
from pytest_kernelprof.reports.summary import render_summary

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


# A failed kernel_baseline.check of the eager GeGLU MLP against the compiled one's baseline.
GEGLU_DIFF = [
    "kernel signature differs from the baseline sm90/default in __kernelprof__/t/test_b.json (names compared: stable)",
    "kernels per call: 4 -> 5 (launches too)",
    "count changes: pointwise: 1 -> 2",
    "--- baseline",
    "+++ this run",
    "= gemm/nvjet bf16 tn  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "+ pointwise/aten bf16 [gelu]  at::native::vectorized_elementwise_kernel<8, GeluCUDAKernelImpl(...)>",
    "= gemm/nvjet bf16 tn  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "- pointwise/inductor ? [gelu,mul]  triton_poi_fused__unsafe_view_gelu_mul_0",
    "+ pointwise/aten bf16 [mul]  at::native::vectorized_elementwise_kernel<8, BinaryFunctor<...>>",
    "= gemm/nvjet bf16 tn  nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
    "split: triton_poi_fused__unsafe_view_gelu_mul_0 -> gelu (aten pointwise) + mul (aten pointwise)",
    "note: pointwise kernels of unknown dtype (?): 1 in the baseline, 0 in this run; left out of the dtype comparison",
    UPDATE,
]


def test_a_cut_baseline_diff_tells_its_unchanged_kernels_in_one_line() -> None:
    # Trial: the annotation kept three unchanged "=" GEMM lines and dropped the split: line, the
    # one that says what happened.
    shown = _message("baseline", GEGLU_DIFF)
    assert len(shown) <= MESSAGE_LINES
    unchanged = "(3 unchanged kernels: their = lines are in the job log)"
    assert shown == [*GEGLU_DIFF[:5], unchanged, *(line for line in GEGLU_DIFF[5:] if not line.startswith("= "))]
    # A diff that fits keeps its = lines where they are.
    assert _message("baseline", GEGLU_DIFF[:-3]) == GEGLU_DIFF[:-3]


def test_a_long_baseline_diff_keeps_what_changed_ahead_of_what_did_not() -> None:
    added = [f"+ pointwise/aten bf16 [add]  kernel_{i}" for i in range(20)]
    same = [f"= gemm/nvjet bf16 tn  gemm_{i}" for i in range(30)]
    fused = "fused: nvjet gemm + add (aten pointwise) -> nvjet_bias"
    shown = _message("baseline", [*GEGLU_DIFF[:5], *same[:15], *added, *same[15:], fused, UPDATE])
    assert len(shown) <= MESSAGE_LINES + 1
    assert shown[:6] == [*GEGLU_DIFF[:5], "(30 unchanged kernels: their = lines are in the job log)"]
    assert shown[6] == added[0]
    assert shown[-3:] == [fused, "(+16 lines in the job log)", UPDATE]
    assert not [line for line in shown if line.startswith("= ")]


def test_one_line_left_out_is_one_line() -> None:
    shown = _message("baseline", [f"line {i}" for i in range(MESSAGE_LINES + 1)])
    assert shown[-1] == "(+1 line in the job log)"
    assert shown[:-1] == [f"line {i}" for i in range(MESSAGE_LINES)]


def test_a_rule_cut_keeps_no_header_without_its_rows_and_keeps_its_allow_marker() -> None:
    head = [f"kernelprof_forbid rule 'r{i}' (kernels>0) is broken" for i in range(MESSAGE_LINES - 3)]
    table = [
        "syncs = 3:",
        "#  runtime call           kind    host us  ops          where",
        "0  cudaStreamSynchronize  stream      7.3  aten::item   main.py(40): step",
        "1  cudaStreamSynchronize  stream      7.3  aten::item   main.py(41): step",
        "2  cudaStreamSynchronize  stream      7.3  aten::item   main.py(42): step",
    ]
    allow = "(a test that may break it: @pytest.mark.kernelprof_allow('r0'))"
    shown = _message("rule", [*head, *table, "", allow])
    assert shown[-1] == allow
    assert not any(line.startswith("#  runtime call") for line in shown), shown
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
    shown = _message("syncs", ["assert 30 == 0", "syncs.count() matched 30 of 30 host syncs", *rows, *fixes])
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
    assert command.startswith("::error file=t.py,line=12,title=kernelprof%3A kernel assertion::")
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


def test_a_cut_table_of_syncs_keeps_its_fix_lines() -> None:
    # The summary's tables of a failure (`assert not prof.syncs`) are cut to what the message
    # left of its limits: the `to fix:` lines they end with are kept, as a message's are.
    fixes = ["to fix: a copy to or from pageable memory blocks the host", "to fix: a DtoH copy reads GPU results"]
    tables = ["kernelprof profile 1 of 1, its host syncs:", *(f"{i}  cudaMemcpyAsync" for i in range(400)), *fixes]
    kept = kept_message(tables, RECORD_LINES - 10, 50_000)
    assert len(kept) == RECORD_LINES - 10
    assert kept[-2:] == fixes
    assert kept_message(tables, 0, 50_000) == []  # no room left: nothing, not the fixes alone


def test_annotations_come_in_the_summary_order_by_file_and_line() -> None:
    # A user's trial: a test that loaded a trace (its id sorts last) at a line before the others'
    # was annotated last, where the summary lists it by its line.
    def failure(line: int, file: str = "t.py") -> ReportRecord:
        return ReportRecord(failure=Failure("kernels", "assert 1 == 2", 0, file, line))

    tests = {
        "t.py::test_a": failure(11),
        "t.py::test_b": failure(23),
        "t.py::test_c": failure(29),
        "t.py::test_loaded": failure(17),
        "s.py::test_z": failure(40, "s.py"),
    }
    lines = [line for _, line, _, _ in collect(tests, Path("."))]
    assert lines == [40, 11, 17, 23, 29]
    summary = render_summary(tests, [], rootpath=Path("."))
    assert [line for _, line, _, _ in collect(tests, Path("."))] == [
        int(m) for m in re.findall(r"at <code>\w+\.py:(\d+)</code>", summary)
    ]


def test_past_the_cap_the_annotated_tests_are_those_the_summary_lists_first() -> None:
    tests = {
        f"t.py::test_k{i:02}": ReportRecord(failure=Failure("kernels", "assert 1 == 2", 0, "t.py", 100 - i))
        for i in range(12)
    }
    annotated = [line for _, line, _, _ in collect(tests, Path("."))][:MAX_ERRORS]
    summary = render_summary(tests, [], rootpath=Path("."))
    listed = [int(m) for m in re.findall(r"at <code>t\.py:(\d+)</code>", summary)]
    assert annotated == listed == sorted(annotated)


@pytest.mark.parametrize("category", ["rule", "baseline", "syncs", "copies", "kernels", "ops", "a newer one"])
def test_a_failure_has_one_name_in_the_annotation_and_the_summary(category: str) -> None:
    # A user's trial: the annotation said "baseline regression" where the summary said "differs
    # from its kernel baseline", "copies" where it said "a copy assertion".
    tests = {"t.py::test_x": ReportRecord(failure=Failure(category, "assert 1 == 2", 0, "t.py", 3))}
    [(_, _, title, _)] = collect(tests, Path("."))
    name = title.removeprefix("kernelprof: ")
    assert name == noun(category)
    summary = render_summary(tests, [], rootpath=Path("."))
    assert f"### 1 test failed: {name}\n" in summary
    assert f"<code>t.py::test_x</code> failed ({name}) at" in summary


# A failed count's explanation (model/kernels.py): its head, the hints below it, its table.
NEAREST = "  nearest names: 'triton_poi_fused__unsafe_view_gelu_mul_0'"
UNDECIDED = "  1 kernel of unknown dtype (#2) could be it: teach the decoder"
COUNT = [
    "assert 0 == 1",
    "  kernels.count('triton_poi_fused_gelu*', dtype='bf16') matched 0 of 4 kernels",
    NEAREST,
    UNDECIDED,
    "  #  kind       family    dtype  name",
    *(f"  {i}  gemm       nvjet     bf16   nvjet_{i}" for i in range(4)),
]


def test_a_kernel_assertion_keeps_the_hints_below_its_head() -> None:
    # A user's trial: a count failure's annotation stopped after its first explanation line, the
    # nearest names and the kernels of unknown dtype that could be it left "in the job log".
    assert _message("kernels", COUNT) == [*COUNT[:4], "(+5 lines in the job log)"]
    # A query whose hint follows its table (KernelList.one): after the cut, where it is.
    one = [
        "expected exactly one kernel with name matching 'gelu*', matched 0 of 4 kernels:",
        *COUNT[4:],
        NEAREST.strip(),
    ]
    assert _message("kernels", one) == [one[0], "(+5 lines in the job log)", NEAREST.strip()]
    # Bounded: of many hint lines, half the lines of an annotation.
    hints = [f"  {i} kernels of unknown kind (#{i}) could be it: teach the decoder" for i in range(20)]
    assert _message("kernels", [*COUNT[:2], *hints, *COUNT[4:]]) == [
        *COUNT[:2],
        *hints[:6],
        "(+19 lines in the job log)",
    ]


def test_the_record_of_a_long_table_keeps_the_hint_after_it_and_the_summary_shows_it() -> None:
    # A table of 300 kernels whose failed query ends with its nearest names: the record (the
    # summary's, the annotation's) keeps them as it keeps a baseline's update command.
    one = ["expected exactly one kernel with name matching 'gelu*', matched 0 of 300 kernels:", "#  kind  name"]
    lines = [*one, *(f"{i}  gemm  nvjet_{i}" for i in range(300)), NEAREST.strip()]
    kept = kept_message(lines)
    assert len(kept) == RECORD_LINES
    assert kept[-1] == NEAREST.strip()
    failure = Failure("kernels", "\n".join(kept), len(lines) - len(kept), "t.py", 7)
    text = render_summary({"t.py::test_b": ReportRecord(failure=failure)}, [], rootpath=Path("."))
    assert f"\n... {len(lines) - len(kept)} more lines in the job log\n{NEAREST.strip()}\n" in text
    assert _message("kernels", kept, len(lines) - len(kept))[-1] == NEAREST.strip()


def test_one_annotation_past_the_cap_is_one_annotation() -> None:
    # A trial: "1 more kernelprof annotations not written".
    tests = {
        f"t.py::test_k{i:02}": ReportRecord(failure=Failure("kernels", "assert 1 == 2", 0, "t.py", i))
        for i in range(MAX_ERRORS + 1)
    }
    commands = list(workflow_commands(tests, workspace=Path(".")))
    assert commands[-1].startswith("::notice title=kernelprof::1 more kernelprof annotation not written")
