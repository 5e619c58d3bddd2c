"""Failure explanations (``model/explain.py``): what pytest shows under a failed assertion on a
profile's values, what goes to the 'kernelprof assertion' section, and the message made whole
again for the CI outputs (``restore``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.model.explain import explain, restore, subject
from pytest_kernelprof.tables import display_name
from tests.helpers import DATA

# What a failed query on a recorded profile of three calls says of its table's times.
MEDIANS = " (times: each kernel's median over the 3 calls)"


Trace = Callable[[str], Path]


def test_explanations_give_pytest_lines(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    failed = explain("==", kernels.count("triton_poi_fused_*gelu*mul*"), 1)
    assert failed is not None
    assert failed.head == [
        "0 == 1",
        f"kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels{MEDIANS}",
    ]
    assert failed.body == kernels.table().splitlines()
    # pytest's default limits (8 lines, 640 characters): head shown, body to a section.
    shown, section = failed.shown(8, 640)
    assert shown[:2] == failed.head
    assert "'kernelprof assertion' section" in shown[2]
    assert section == [*failed.head[1:], *failed.body]
    assert failed.shown(0, 0) == ([*failed.head, *failed.body], [])  # -vv: no limit
    names = explain("==", kernels, ["nvjet_x", *kernels.names[1:]])
    assert names is not None
    assert names.body[:2] == ["- nvjet_x", "+ " + kernels.names[0]]
    gemm = explain("==", kernels.count(kind="gemm"), 2)
    assert gemm is not None
    assert gemm.head[1] == f"kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4{MEDIANS}"
    assert [line[:2] for line in gemm.body[1:]] == ["*0", " 1", "*2", " 3", "*4"]
    assert explain("==", 3, 1) is None


def test_names_tables_and_ops_explain_the_other_comparisons(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    kernels = prof.kernels
    table = kernels.table().splitlines()
    # The expected names on the left read as on the right: a diff, expected first.
    flipped = explain("==", ["nvjet_x"], kernels)
    assert flipped is not None
    assert flipped.head[1] == "the kernel names differ: 1 expected, 5 ran (- expected, + this run)"
    assert flipped.body[:2] == ["- nvjet_x", "+ " + display_name(kernels.names[0])]
    # Not names: no diff, the table.
    not_names = explain("==", kernels, [1, 2])
    assert not_names is not None
    assert not_names.head == ["KernelList(5 kernels) == [1, 2]", "the kernels:"]
    assert not_names.body == table
    # A name looked up exactly: what matches patterns, and the kernel it is marked.
    missing = explain("in", "nvjet_x", kernels)
    assert missing is not None
    assert missing.head[1] == "no kernel has that exact name (prof.kernels.count('glob*') matches patterns)"
    assert not any(line.startswith("*") for line in missing.body)
    present = explain("not in", kernels.names[1], kernels)
    assert present is not None
    assert len(present.head) == 1
    assert [line[:2] for line in present.body[1:3]] == [" 0", "*1"]
    ops = explain("in", "aten::foo", prof.ops)
    assert ops is not None
    assert ops.head == [
        "'aten::foo' in OpTable(11 ops)",
        "the ops of the 3 calls:",
    ]
    assert ops.body == prof.ops.table().splitlines()
    # Any other comparison with a profile or its kernels: the kernels.
    other = explain("!=", prof, 3)
    assert other is not None
    assert other.head[1:] == ["the kernels:"]
    assert other.body == table


def test_a_profile_without_gpu_activity_says_so_and_shows_no_table() -> None:
    kernels = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").kernels
    assert not kernels.measured
    compared = explain("==", kernels, 3)
    assert compared is not None
    assert compared.head[1] == f"no GPU activity was recorded: {kernels!r}"
    assert compared.body == []
    for found in (explain("in", "k", kernels), explain("==", kernels, ["k"])):
        assert found is not None
        assert found.body == []
    assert explain("in", "k", kernels).head[1] == "no GPU activity was recorded"  # type: ignore[union-attr]


# An explanation as the plugin hands it to pytest, cut (the pointer), and whole; the messages
# below are pytest's, as it wrote them for each shape of assertion (copied from its runs).
SHOWN = ("3 == 2", "matched 3 of 5", "(the rest, 2 lines, is in the section below)")
WHOLE = ("3 == 2", "matched 3 of 5", "#  kind", "0  gemm")
TOP = "  matched 3 of 5\n  #  kind\n  0  gemm"


@pytest.mark.parametrize(
    ("message", "restored"),
    [
        ("assert 3 == 2\n  matched 3 of 5\n  (the rest, 2 lines, is in the section below)", f"assert 3 == 2\n{TOP}"),
        (  # the assertion's own message first
            "one gemm\nassert 3 == 2\n  matched 3 of 5\n  (the rest, 2 lines, is in the section below)",
            f"one gemm\nassert 3 == 2\n{TOP}",
        ),
        (  # an ``and``: what followed the comparison stays after the last line
            "assert (3 == 2\n  matched 3 of 5\n  (the rest, 2 lines, is in the section below))",
            f"assert (3 == 2\n{TOP})",
        ),
        (  # an ``or``, and pytest's "where" lines after it
            "assert (3 == 2\n  matched 3 of 5\n  (the rest, 2 lines, is in the section below) or 5 == 4)\n"
            " +  where 5 = len(x)",
            f"assert (3 == 2\n{TOP} or 5 == 4)\n +  where 5 = len(x)",
        ),
        (  # inside a call: pytest indents deeper
            "assert False\n +  where False = bool(3 == 2\n    matched 3 of 5\n"
            "    (the rest, 2 lines, is in the section below))",
            "assert False\n +  where False = bool(3 == 2\n    matched 3 of 5\n    #  kind\n    0  gemm)",
        ),
        (  # cut by pytest itself: its cut and its footer go
            "assert 3 == 2\n  matched 3 of 5\n  (the rest, 2 lines...\n  \n"
            "  ...Full output truncated, use '-vv' to show",
            f"assert 3 == 2\n{TOP}",
        ),
        ("assert 3 == 2\n  matched 3 o...\n  \n  ...Full output truncated, use '-vv' to show", f"assert 3 == 2\n{TOP}"),
        # Another assertion's message, though it holds the same comparison.
        ("assert 3 == 2\n +  where 3 = len(x)", None),
        ("assert 1 == 0", None),
    ],
    ids=["top", "message", "and", "or", "call", "cut", "cut early", "pytest's own", "another"],
)
def test_a_message_made_whole_again(message: str, restored: str | None) -> None:
    assert restore(message, SHOWN, WHOLE) == restored


def test_a_message_shown_whole_stays_as_it_is() -> None:
    whole_message = f"assert 3 == 2\n{TOP}"
    assert restore(whole_message, WHOLE, WHOLE) == whole_message
    assert restore("msg\nassert 0 == 1", ["0 == 1"], ["0 == 1"]) == "msg\nassert 0 == 1"
    assert restore("assert 2 == 1", ["0 == 1"], ["0 == 1"]) is None


def test_what_values_are_about_the_most_telling_first(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    kernels, count = prof.kernels, prof.kernels.count(kind="gemm")
    op = prof.ops["aten::gelu"]
    assert subject(count, kernels, prof, 2) == "kernels"
    assert subject(op, prof.ops, prof, 1) == "ops"  # prof.ops["aten::gelu"].count == 1
    assert subject(op.kernels, op, prof) == "kernels"
    assert subject(prof, 0) == "profile"  # prof.launches == 0
    assert subject(prof.runtime) == "profile"
    assert subject([prof.syncs, kernels]) == "syncs"
    assert subject(prof.memory_ops[0]) == "memory"  # a memset (a memcpy is a copy: syncs)
    assert subject(1, "x") is None


def test_an_explanation_names_the_kernels_whose_whole_table_it_shows(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    for explained in (
        explain("==", prof.kernels.count(kind="gemm"), 2),
        explain("==", prof.kernels, ["x"]),
        explain("in", "x", prof.kernels),
        explain("==", len(prof.kernels), prof),
    ):
        assert explained is not None
        assert explained.table_of is prof.kernels
    gemms = prof.kernels.of_kind("gemm")
    explained = explain("==", gemms.count("nvjet*"), 1)
    assert explained is not None
    assert explained.table_of is gemms  # a selection's table: not the profile's


def test_kernel_names_are_a_list_the_report_explains(trace: Trace) -> None:
    kernels = load_trace(trace("linear_eager")).kernels
    names = kernels.names
    assert names == [k.name for k in kernels]
    assert [k.name for k in kernels] == names
    assert subject(names) == "kernels"
    assert subject([k.name for k in kernels]) is None  # a plain list of strings is not ours
    failed = explain("==", names, ["x", *names])
    assert failed is not None
    assert failed.head == [
        "[1 kernel name] == ['x', 'nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT']",
        "the kernel names differ from #0: 1 on the left, 2 on the right (- left, + right)",
    ]
    assert failed.body == ["+ x", "  " + display_name(names[0])]
    assert explain("==", names, [1, 2]) is None  # not names: pytest's own diff
    assert explain("!=", names, names) is None


def test_tables_of_medians_over_calls_say_so(trace: Trace) -> None:
    prof = load_trace(trace("copy_dtoh_pageable_nonblocking"))
    explanation = explain("==", prof.copies.count("DtoH"), 0)
    assert explanation is not None
    assert explanation.head[1] == (
        "copies.count(direction='DtoH') matched 1 of 1 copies (times: each one's median over the 3 calls)"
    )
    explanation = explain("in", "aten::mm", prof.ops)
    assert explanation is not None
    # Said once, by the table (its headers and its note), where "the call (times: ...)" was ambiguous with 3.
    assert explanation.head[1] == "the ops of the 3 calls:"
    assert explanation.body[0].split()[2:4] == ["median", "cpu"]
    assert explanation.body[-1].count("median: over the 3 calls") == 1
    explanation = explain("==", prof.copies, [])
    assert explanation is not None
    assert explanation.head[1].endswith(" (times: each one's median over the 3 calls)")
    one_call = explain("in", "aten::mm", prof.calls[1].ops)  # a call's own ops: its own times
    assert one_call is not None
    assert one_call.head[1] == "the ops of call 1:"
    assert "median" not in "\n".join(one_call.body)


def test_an_ops_kernels_say_their_times_are_medians(trace: Trace) -> None:
    # A trial: prof.ops["aten::linear"].kernels.count(...) failed with a table of medians, unsaid.
    prof = load_trace(trace("linear_eager"))
    failed = explain("==", prof.ops["aten::linear"].kernels.count(kind="gemm"), 2)
    assert failed is not None
    assert failed.head[1].endswith(MEDIANS)


# Trust (issue 34): `names == ["x"] * 10**6` put 5 MB into the report section and JUnit XML.
def test_a_run_of_equal_names_is_one_line_with_its_length() -> None:
    from pytest_kernelprof.model.kernels import KernelNames

    explanation = explain("==", KernelNames(["a", "b"]), ["x"] * 100_000)
    assert explanation is not None
    assert explanation.body == ["- a", "- b", "+ x  (100,000 times in a row)"]


def test_long_unchanged_runs_are_told_by_their_length() -> None:
    from pytest_kernelprof.model.kernels import KernelNames

    names = [f"k{i}" for i in range(100)]
    changed = [*names[:50], "new", *names[51:]]
    explanation = explain("==", KernelNames(names), changed)
    assert explanation is not None
    assert explanation.body == [
        "  k0", "  k1", "  k2", "  ... 44 names alike ...", "  k47", "  k48", "  k49",
        "- k50", "+ new",
        "  k51", "  k52", "  k53", "  ... 43 names alike ...", "  k97", "  k98", "  k99",
    ]  # fmt: skip


def test_an_explanation_too_long_to_read_says_what_it_left_out() -> None:
    from pytest_kernelprof.model.explain import MAX_BODY_LINES, MAX_LINE_CHARS, Explanation
    from pytest_kernelprof.model.kernels import KernelNames

    # Too long to align: the names between the lists' common start and end are one changed block.
    a = [f"k{i}" for i in range(10_000)]
    b = [f"k{i}" if i % 2 else f"z{i}" for i in range(10_000)]
    explanation = explain("==", KernelNames(["same", *a, "end"]), ["same", *b, "end"])
    assert explanation is not None
    assert explanation.body[:3] == ["  same", "- k0", "- k1"]
    assert len(explanation.body) == MAX_BODY_LINES + 1
    assert (
        explanation.body[-1] == "... 18,001 more lines left out (an explanation shows 2,000)"  # of 1 + 2 x 9,999 + 2
    )
    (line,) = Explanation(["0 == 1"], ["a" * 10_000]).body
    assert line == "a" * (MAX_LINE_CHARS - 40) + "... (8,040 more characters)"


# Trust (issue 34): both sides were shortened to display names before the diff, which then
# said the names differ and showed one unmarked line.
def test_names_that_differ_where_their_display_names_do_not_are_shown_whole() -> None:
    kernels = load_trace(DATA / "h200_linear_eager.json.gz").kernels
    ran = kernels.names[0]
    assert "(" not in ran
    wrong = f"{ran}(int)"
    assert display_name(wrong) == display_name(ran)  # the parameter list is not shown
    failed = explain("==", kernels, [wrong])
    assert failed is not None
    assert failed.head[1] == "the kernel names differ: 1 expected, 1 ran (- expected, + this run)"
    assert failed.body[:3] == [f"- {wrong}", f"+ {ran}", "the kernels:"]
    lists = explain("==", kernels.names, [wrong])
    assert lists is not None
    assert lists.body == [f"- {ran}", f"+ {wrong}"]
    # Names past the length that is cut in the middle, differing in the cut part.
    from pytest_kernelprof.model.kernels import KernelNames

    long_a, long_b = "k" + "a" * 400 + "x" + "a" * 400, "k" + "a" * 400 + "y" + "a" * 400
    assert display_name(long_a) == display_name(long_b)
    cut = explain("==", KernelNames(["same", long_a]), ["same", long_b])
    assert cut is not None
    assert cut.head[1] == "the kernel names differ from #1: 2 on the left, 2 on the right (- left, + right)"
    assert cut.body == ["  same", f"- {long_a}", f"+ {long_b}"]


def test_expected_names_written_as_shown_pair_with_the_kernels_they_name(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    shown = [display_name(n) for n in kernels.names]
    assert shown != list(kernels.names)  # some are shortened
    failed = explain("==", kernels, [*shown[:-1], "nvjet_x"])
    assert failed is not None
    diff = failed.body[: failed.body.index("the kernels:")]
    assert diff == [*(f"  {n}" for n in shown[:-1]), "- nvjet_x", f"+ {shown[-1]}"]


def test_a_count_of_many_matches_names_the_first_twenty_on_its_line() -> None:
    # The head line listed every matching index: 3,000 matches made one line of 20,000 characters.
    from pytest_kernelprof.model.counts import KernelCount
    from pytest_kernelprof.model.kernel_text import ROWS_SHOWN

    prof = load_trace(DATA / "h200_geglu_eager.json.gz")
    count = prof.kernels.count()
    many = KernelCount(tuple(range(3000)), count.kernels, None, None)
    explanation = explain("==", many, 1)
    assert explanation is not None
    line = next(line for line in explanation.head if "matched" in line)
    listed = ", ".join(f"#{i}" for i in range(ROWS_SHOWN))
    assert f"matched 3000 of 5 kernels: {listed}, ... and 2980 more" in line


def test_a_records_comparison_ends_with_what_would_remove_them(trace: Trace) -> None:
    # `assert prof.syncs == []`: the head names the records (no fix: the repr says none), the body
    # is their table and a `to fix:` line per cause, said there once.
    prof = load_trace(trace("sync_cpu_copy"))
    for records in (prof.syncs, prof.copies):
        explanation = explain("==", records, [])
        assert explanation is not None
        assert "to fix" not in "".join(explanation.head)
        fixes = records.fix_lines()
        assert fixes
        assert explanation.body == [*records.table().splitlines(), *fixes]


def test_two_counts_compared_explain_both_with_one_table_of_one_call(trace: Trace) -> None:
    # A trial: `count(kind="gemm") == count(kind="gemm", dtype="bf16")` explained only the left.
    kernels = load_trace(trace("bf16_mlp_fp32_linear")).kernels
    failed = explain("==", kernels.count(kind="gemm"), kernels.count(kind="gemm", dtype="bf16"))
    assert failed is not None
    assert failed.head == [
        "3 == 2",
        f"left: kernels.count(kind='gemm') matched 3 of 7 kernels: #0, #3, #6{MEDIANS}",
        f"right: kernels.count(kind='gemm', dtype='bf16') matched 2 of 7 kernels: #0, #6{MEDIANS}",
        "* marks the kernels one count matched and the other did not: #3",
    ]
    # One table, marked where the counts part.
    assert failed.body == kernels.table(marked=frozenset({3})).splitlines()
    assert failed.table_of is kernels
    # Of two calls: each call's table, marked with its own count's matches.
    other = load_trace(trace("linear_eager")).kernels
    apart = explain("<", kernels.count(kind="gemm"), other.count(kind="gemm"))
    assert apart is not None
    assert apart.head[1].startswith("left: kernels.count(kind='gemm') matched 3 of 7")
    assert apart.head[2].startswith(f"right: kernels.count(kind='gemm') matched 1 of {len(other)}")
    assert apart.body == [
        "the left's kernels (* marks its matches):",
        *kernels.table(marked=frozenset({0, 3, 6})).splitlines(),
        "the right's kernels (* marks its matches):",
        *other.table(marked=frozenset(other.count(kind="gemm").matched)).splitlines(),
    ]


def test_kernel_sync_and_copy_counts_fail_in_one_verb(trace: Trace) -> None:
    # Trial: a kernel count failed with `matched 1 of 7 kernels`, a copy count with `counted 1 of 1 copies`.
    prof = load_trace(trace("sync_cpu_copy"))
    counts = [prof.syncs.count(), prof.copies.count(direction="DtoH"), load_trace(trace("geglu_eager")).kernels.count()]
    heads = [explanation.head[1] for explanation in (explain("==", count, 0) for count in counts) if explanation]
    assert [head.split(")", 1)[1].split()[:3:2] for head in heads] == [["matched", "of"]] * 3, heads
    with pytest.raises(AssertionError) as info:  # one(), which said `found 3 of 5 kernels`
        counts[-1].kernels.one(kind="gemm")
    assert str(info.value).splitlines()[0].startswith("expected exactly one kernel with kind='gemm', matched 3 of 5 ")
