"""What --kernelprof-update says it wrote, --kernelprof-prune, and the diff's `=` lines."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import Signature, compare, record
from pytest_kernelprof.paths import baseline_file_name
from tests.helpers import DATA


def test_equal_lines_show_this_runs_name_when_only_the_tile_changed() -> None:
    eager = Signature.of(load_trace(DATA / "h200_geglu_eager.json.gz"))
    old_tile = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_TNN"
    stored = replace(eager, kernels=tuple(replace(k, name=old_tile) if k.kind == "gemm" else k for k in eager.kernels))
    compiled = Signature.of(load_trace(DATA / "h200_geglu_compiled.json.gz"))
    lines = compare(stored, compiled, "stable")
    assert lines is not None
    now = compiled.kernels[0].name
    at = lines.index(f"= gemm/nvjet bf16 tn  {now}")
    assert lines[at + 1] == f"    named in the baseline: {old_tile}"
    # Where the names agree, no second line.
    same = compare(eager, compiled, "stable")
    assert same is not None
    assert not any("named in" in line for line in same)


PROJECT = """
import os
from pathlib import Path
from pytest_kernelprof import load_trace

DATA = Path({data!r})

def prof():
    return load_trace(DATA / ("h200_" + Path("which.txt").read_text().strip() + ".json.gz"))

def test_a(kernel_baseline):
    kernel_baseline.check(prof())
    kernel_baseline.check(load_trace(DATA / "h200_linear_eager.json.gz"), name="linear")

def test_b(kernel_baseline):
    assert prof() == kernel_baseline

def test_c(kernel_baseline):
    kernel_baseline.check(load_trace(DATA / "h200_linear_eager.json.gz"))
    assert not Path("fail.txt").exists()
"""


def test_update_says_what_it_wrote_and_prune_deletes_what_is_unused(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_u=PROJECT.format(data=str(DATA)))
    folder = pytester.path / "__kernelprof__" / "test_u"
    a, b, c = (folder / f"test_{x}.json" for x in "abc")
    # Each line names a file as the failures and the job summary do: relative to the rootdir
    # (the trial: "written /tmp/proj/tests/__kernelprof__/..." at the end of a run).
    rel_a, rel_b, rel_c = (p.relative_to(pytester.path) for p in (a, b, c))
    # test_a has no baseline yet, test_b one of another trace (and an entry no check uses),
    # test_c the one it will record; a removed test's file is left over.
    record(b, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    record(b, "sm90", "gone", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    record(c, "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    orphan = folder / baseline_file_name("test_removed")
    orphan.write_text("{}")
    stale = folder / ".test_c.json.k2j3x9.tmp"  # a write that a killed run left
    stale.write_text('{"format": 2, "ar')
    rel_orphan, rel_stale = orphan.relative_to(pytester.path), stale.relative_to(pytester.path)
    (pytester.path / "which.txt").write_text("geglu_eager")
    (pytester.path / "fail.txt").write_text("")  # test_c fails after its check

    # Under xdist the counts and the unused entries reach the controller; a failing run prunes nothing.
    result = pytester.runpytest("--kernelprof-update", "--kernelprof-prune", "-n", "2")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: 2 baselines written, 1 updated, 1 unchanged -*",
            f"updated {rel_b}: sm90/default",
            # What the update accepts, as the failed check said it (compiled -> eager GEGLU).
            "  kernels per call: 4 -> 5 (launches too)",
            "  count changes: pointwise: 1 -> 2",
            f"written {rel_a}: sm90/default (new entry)",
            f"written {rel_a}: sm90/linear (new entry)",
        ]
    )
    result.stdout.no_fnmatch_line(f"* {rel_c}: sm90/*")  # unchanged files are not listed
    assert oct(a.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: 3 unused baseline entries -*",
            f"{rel_b}: sm90/gone",
            f"{rel_orphan} (no test of that name ran)",
            f"{rel_stale} (a baseline write that a killed run left unfinished)",
            "not deleted: the run did not pass (exit status 1)",
        ]
    )
    assert orphan.exists()
    assert "gone" in json.loads(b.read_text())["archs"]["sm90"]

    (pytester.path / "fail.txt").unlink()
    # Tests left out by -k or -m keep their files (tests/plugin/test_baseline_prune.py); node ids narrow.
    result = pytester.runpytest("--kernelprof-prune", "test_u.py::test_b", "test_u.py::test_c")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: 1 unused baseline entry -*",
            f"{rel_b}: sm90/gone",
            "not deleted: the run was narrowed to node ids or --lf: run without them to prune",
        ]
    )

    result = pytester.runpytest("--kernelprof-prune")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: deleted 3 baseline entries -*",
            f"{rel_stale} (a baseline write that a killed run left unfinished)",
            f"{rel_b}: sm90/gone",
            f"{rel_orphan} (no test of that name ran)",
        ]
    )
    assert not stale.exists()
    result.stdout.no_fnmatch_line("*kernelprof: *unused*")
    assert not orphan.exists()
    assert sorted(json.loads(b.read_text())["archs"]["sm90"]) == ["default"]
    assert sorted(json.loads(a.read_text())["archs"]["sm90"]) == ["default", "linear"]


def test_update_says_what_the_replaced_entry_differed_in(pytester: pytest.Pytester) -> None:
    """The trial: `updated ...: sm90/default` and nothing of what the new baseline accepts."""
    pytester.makepyfile(test_u=PROJECT.format(data=str(DATA)))
    (pytester.path / "which.txt").write_text("geglu_eager")
    pytester.runpytest("--kernelprof-update", "test_u.py::test_b").assert_outcomes(passed=1)
    (pytester.path / "which.txt").write_text("geglu_compiled")
    failed = pytester.runpytest("test_u.py::test_b")
    failed.assert_outcomes(failed=1)
    headline = ["*kernels per call: 5 -> 4 (launches too)", "*count changes: pointwise: 2 -> 1"]
    failed.stdout.fnmatch_lines(headline)

    result = pytester.runpytest("--kernelprof-update", "test_u.py::test_b")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: 1 baseline updated -*",
            "updated __kernelprof__/test_u/test_b.json: sm90/default",
            *(line.replace("*", "  ", 1) for line in headline),
            f"  {UNGUARDED}",
            "*= 1 passed in *",
        ],
        consecutive=True,
    )
    # Recorded again unchanged: nothing said of the entry.
    result = pytester.runpytest("--kernelprof-update", "test_u.py::test_b")
    result.stdout.fnmatch_lines(["*- kernelprof: 1 baseline unchanged -*", "*= 1 passed in *"], consecutive=True)


# The compiled GeGLU's Triton kernel, recorded before the plugin read Inductor's dtypes.
UNGUARDED = (
    "dtype not guarded: 1 kernel name of unknown dtype, stored as null: triton_poi_fused__unsafe_view_gelu_mul_0 "
    "(record it from a live profile, which reads Inductor's dtypes)"
)


def test_an_entry_written_with_kernels_of_unknown_dtype_says_their_dtype_is_not_guarded(
    pytester: pytest.Pytester,
) -> None:
    # A trial recorded the compiled GeGLU's trace: "dtype": null in the file, and nothing said
    # that the Triton kernel's dtype would never be compared, until a later failure's note.
    pytester.makepyfile(test_u=PROJECT.format(data=str(DATA)))
    (pytester.path / "which.txt").write_text("geglu_compiled")
    result = pytester.runpytest("--kernelprof-update", "test_u.py::test_b")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["written __kernelprof__/test_u/test_b.json: sm90/default (new entry)", f"  {UNGUARDED}"], consecutive=True
    )
    # Every dtype known: nothing more than the entry's line.
    (pytester.path / "which.txt").write_text("geglu_eager")
    result = pytester.runpytest("--kernelprof-update", "test_u.py::test_c")
    result.stdout.fnmatch_lines(
        ["written __kernelprof__/test_u/test_c.json: sm90/default (new entry)", "*= 1 passed in *"]
    )
    assert "dtype not guarded" not in result.stdout.str()


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask
