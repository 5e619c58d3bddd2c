"""A failure whose message carries no kernel table (a plain ``len()``, an ``all()`` over kernels)
gets its profile's table in the job summary, as the terminal's 'kernelprof profile' section shows
it: a CI reader has no terminal section. And no memory address, which changes every run."""

from __future__ import annotations

import re

import pytest

from tests.helpers import DATA, github_step_summary

SUITE = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_len(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    assert len(prof.kernels) == 40


def test_dtype(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_bf16_mlp_fp32_linear.json.gz")
    gemms = [k for k in prof.kernels if k.kind == "gemm"]
    assert all(k.dtype == "bf16" for k in gemms)


def test_count(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    assert prof.kernels.count(kind="gemm") == 2


def test_no_syncs(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_sync_item_stacks.json.gz")
    assert not prof.syncs
"""


def _failure(summary: str, test: str) -> str:
    found = re.search(
        rf"<details><summary><code>test_s\.py::{test}</code>[^\n]*</summary>\n\n```text\n(.*?)\n```\n\n</details>\n",
        summary,
        re.S,
    )
    assert found, summary
    return found[1]


@pytest.mark.parametrize("options", [[], ["-n", "2"]], ids=["plain", "-n 2"])
def test_a_failure_without_a_table_gets_its_profiles_table_in_the_summary(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    if options:
        pytest.importorskip("xdist")
    summary = github_step_summary(cpu_pytester.path, monkeypatch)
    cpu_pytester.makepyfile(test_s=SUITE)
    result = cpu_pytester.runpytest(*options)
    result.assert_outcomes(failed=4)
    text = summary.read_text()
    assert not re.search(r" at 0x[0-9a-f]{4,}", text), text
    length = pytest.LineMatcher(_failure(text, "test_len").splitlines())
    length.fnmatch_lines(
        [
            "assert 5 == 40",
            "*",
            "kernelprof profile 1 of 1:",
            "*#  kind *dtype*",
            "*0  gemm *bf16*nvjet_sm90_*",
            "*4  gemm *bf16*nvjet_sm90_*",
        ]
    )
    dtype = pytest.LineMatcher(_failure(text, "test_dtype").splitlines())
    dtype.fnmatch_lines(["assert False", "*<generator object *<genexpr> at 0x...>*", "kernelprof profile 1 of 1:"])
    dtype.fnmatch_lines(["*gemm *fp32*"])
    # Trial report: `assert not prof.syncs` is one line in the message; the summary held only
    # that, without the op chain and the time the log's profile section shows.
    syncs = pytest.LineMatcher(_failure(text, "test_no_syncs").splitlines())
    syncs.fnmatch_lines(
        [
            "assert not SyncList of 1: cudaStreamSynchronize at train.py(40)*",
            # Which call the table's "call 2 host us" is (a trial: the summary left that line out).
            "kernelprof profile 1 of 1, its host syncs in call 2, numbered from 0, the fastest of 3 by host span:",
            "#  runtime call * kind *call 2 host us  ops * where",
            "0  cudaStreamSynchronize  stream * aten::item > aten::_local_scalar_dense  train.py(40)*",
        ]
    )
    # A count's explanation showed the table already: not twice; the profile's section still names
    # the trace and card the table is of, and the call's figures (a trial could not tell).
    count = _failure(text, "test_count")
    assert count.count("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT") == 2
    section = count[count.index("kernelprof profile 1 of 1:") :].splitlines()
    assert section[1].startswith("KernelProfile from ")
    assert " on NVIDIA H200 (sm90): 3 calls" in section[1]
    assert section[2] == "(its kernel table is shown above, with the failure)"
    assert any(line.startswith("call 2, numbered from 0, the fastest of 3 by host span: ") for line in section)


PAGEABLE_DTOH = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_no_syncs(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz")
    assert not prof.syncs
"""


def test_the_summary_keeps_every_fix_line_of_a_sync_once(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trial report: the terminal's profile section said two `to fix:` lines for a pageable DtoH
    # copy's sync (pageable memory, and the DtoH read); the job summary kept only the first.
    summary = github_step_summary(cpu_pytester.path, monkeypatch)
    cpu_pytester.makepyfile(test_s=PAGEABLE_DTOH)
    result = cpu_pytester.runpytest()
    result.assert_outcomes(failed=1)
    terminal = sorted({line for line in result.outlines if line.startswith("to fix: ")})
    assert len(terminal) == 2
    assert any("pageable" in line for line in terminal)
    assert any("DtoH" in line for line in terminal)
    failure = _failure(summary.read_text(), "test_no_syncs").splitlines()
    assert sorted(line for line in failure if line.startswith("to fix: ")) == terminal  # each once


def test_the_annotations_and_the_junit_message_write_no_address(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user's trial: the summary wrote `at 0x...` where the annotation and the JUnit message of
    # the same failure kept the address, which changes every run.
    for name in ("CI", "BUILD_NUMBER", "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    cpu_pytester.makepyfile(
        test_s=SUITE
        + """

def test_not_profiled():
    assert all(x == 1 for x in [2])
"""
    )
    result = cpu_pytester.runpytest("--junitxml", "out.xml")
    result.assert_outcomes(failed=5)
    [annotation] = [line for line in result.outlines if line.startswith("::error file=test_s.py,line=14,")]
    assert "genexpr> at 0x...>" in annotation, annotation
    assert not re.search(r" at 0x[0-9a-f]{4,}", annotation), annotation
    xml = (cpu_pytester.path / "out.xml").read_text()
    [dtype] = re.findall(r'<testcase [^>]*name="test_dtype".*?<failure message="([^"]*)"', xml, re.S)
    assert "genexpr&gt; at 0x...&gt;" in dtype, dtype
    # A test that took no profile: its message is pytest's.
    [plain] = re.findall(r'<testcase [^>]*name="test_not_profiled".*?<failure message="([^"]*)"', xml, re.S)
    assert re.search(r" at 0x[0-9a-f]{4,}", plain), plain


OP_ASSERTIONS = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_op_count(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    assert prof.ops["aten::mm"].count == 2


def test_a_calls_op(kernelprof):
    gelu = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz").calls[1].ops["aten::gelu"]
    assert gelu.device_time_us < 1
"""


def test_an_op_assertion_gets_the_op_table_in_the_summary_and_the_terminal(cpu_pytester: pytest.Pytester) -> None:
    # Trial report: `assert prof.ops["aten::mm"].count == 2` showed the op's repr in one line; the
    # job summary had only that, where a failed `"aten::add" in prof.ops` showed the op table.
    cpu_pytester.makepyfile(test_s=OP_ASSERTIONS)
    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md")
    result.assert_outcomes(failed=2)
    text = (cpu_pytester.path / "summary.md").read_text()
    expected = [
        # Whose ops and times, said once: the headers and the note, not "the call" of 3.
        "*the ops of the 3 calls, * the op the assertion named:",
        "  op * count  median cpu us (all)  median device us (all)  kernels",
        "  aten::linear * 3 * 122.3 * 165.6 * 3",
        "* aten::mm * 3 * 86.6 * 165.6 * 3",
        "  aten::_unsafe_view *",
        "(all: each op's occurrences in a call summed, its children included; median: over the 3 calls; device *",
        "aten::mm's kernels:",
        "#  kind  family *",
        # Each kernel by its number in the call, as the profile's table numbers it (#1 is the gelu).
        "0  gemm  nvjet *aten::mm *nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
        "2  gemm  nvjet *aten::mm *nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
        "4  gemm  nvjet *aten::mm *nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
    ]
    count = pytest.LineMatcher(_failure(text, "test_op_count").splitlines())
    count.fnmatch_lines(["assert 3 == 2", "*where 3 = Op('aten::mm', count=3, *", "", "kernelprof profile 1 of 1, *"])
    count.fnmatch_lines(expected)
    assert [line for line in _failure(text, "test_op_count").splitlines() if line.startswith("* ")] == [
        "* aten::mm                3                 86.6                   165.6        3"
    ]
    result.stdout.fnmatch_lines(
        ["*- kernelprof profile 1 of 1 -*", "call 2, numbered from 0, the fastest of * by host span: *", *expected]
    )
    # An op of one call: that call's table, with its own times.
    call = pytest.LineMatcher(_failure(text, "test_a_calls_op").splitlines())
    call.fnmatch_lines(
        ["*where * = Op('aten::gelu', *", "kernelprof profile 1 of 1, the ops of call 1, * the op the assertion named:"]
    )
    call.fnmatch_lines(["  op * count  call 1 cpu us (all)  call 1 device us (all)  kernels", "* aten::gelu *1 *"])
    call.fnmatch_lines(["(all: each op's occurrences in a call summed, its children included; device *"])
    call.fnmatch_lines(["aten::gelu's kernels:", "1  pointwise *gelu*"])
