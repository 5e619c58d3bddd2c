"""``kernel_baseline.check_sweep`` as a suite uses it: a baseline per bucket of a sweep's cases,
recorded with --kernelprof-update, passing unchanged, failing naming the bucket whose kernels
changed; on the sweeps recorded on an H100."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import DATA

PROJECT = """
import os
from pytest_kernelprof import ProfileSweep, load_sweep

GOOD = load_sweep({good!r})
# The sweep whose odd batch sizes break the gelu*mul fusion (a graph break).
BROKEN = load_sweep({broken!r})


def by_batch(case):
    return "batch<16" if case["batch"] < 16 else "batch>=16"


def test_geglu_sweep(kernel_baseline):
    cases = list(GOOD)
    if os.environ.get("BREAK_LARGE_BATCHES"):
        cases = [c for c in GOOD if c["batch"] < 16] + [c for c in BROKEN if c["batch"] >= 16]
    kernel_baseline.check_sweep(ProfileSweep(cases), by=by_batch)
"""


def test_record_rerun_unchanged_then_one_bucket_changes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_s=PROJECT.format(good=str(DATA / "h100_sweep_geglu"), broken=str(DATA / "h100_sweep_geglu_odd_break"))
    )
    stored = pytester.path / "__kernelprof__" / "test_s" / "test_geglu_sweep.json"

    recorded = pytester.runpytest("--kernelprof-update")
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines(
        [
            "*- kernelprof: 2 baselines written -*",
            "written __kernelprof__/test_s/test_geglu_sweep.json: sm90/sweep[[]batch<16[]] (new entry)",
            "written __kernelprof__/test_s/test_geglu_sweep.json: sm90/sweep[[]batch>=16[]] (new entry)",
        ]
    )
    entries = json.loads(stored.read_text())["archs"]["sm90"]
    assert entries["sweep[batch>=16]"]["bucket"]["cases"] == [
        "hidden=1024, batch=16",
        "hidden=1024, batch=33",
        "hidden=4096, batch=16",
        "hidden=4096, batch=33",
    ]

    pytester.runpytest("--kernelprof-prune").assert_outcomes(passed=1)  # both entries used: none pruned
    assert set(json.loads(stored.read_text())["archs"]["sm90"]) == {"sweep[batch<16]", "sweep[batch>=16]"}

    monkeypatch.setenv("BREAK_LARGE_BATCHES", "1")
    changed = pytester.runpytest()
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "E*kernel_baseline.check_sweep failed: 1 of 2 buckets differ from the baseline sweep[[]...[]] in "
            f"{stored.relative_to(pytester.path)} (names compared: stable)",  # as the job summary names it
            "E*bucket 'batch>=16' differs from sm90/sweep[[]batch>=16[]] (its cases: hidden=1024, batch=16; *",
            "E*hidden=1024, batch=33: 2 pointwise kernels per call, the baseline's cases ran 1",
            "E*a kernel the baseline's cases did not run: triton_poi_fused__unsafe_view_gelu_0 *",
            "E*if the change is intended: pytest --kernelprof-update 'test_s.py::test_geglu_sweep'",
        ]
    )
    assert "bucket 'batch<16'" not in changed.stdout.str()


def test_argument_names_with_control_characters_reach_the_terminal_escaped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = "hid\x1b]0;pwned\x07\x1b[2J\nden"
    folders = {}
    for name, source in (("good", "h100_sweep_geglu"), ("broken", "h100_sweep_geglu_odd_break")):
        folder = pytester.path / name
        shutil.copytree(DATA / source, folder)
        index = json.loads((folder / "sweep.json").read_text())
        for case in index["cases"]:
            case["params"] = {evil if k == "hidden" else k: v for k, v in case["params"].items()}
        (folder / "sweep.json").write_text(json.dumps(index))
        folders[name] = str(folder)
    pytester.makepyfile(test_s=PROJECT.format(**folders))
    pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    monkeypatch.setenv("BREAK_LARGE_BATCHES", "1")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([r"*the kernels of hid\x1b]0;pwned\x07\x1b?2J\nden=1024, batch=33:"])
    assert not any(char in line for line in result.outlines for char in "\x1b\x07")
