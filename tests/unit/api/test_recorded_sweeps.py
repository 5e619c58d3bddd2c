"""Sweeps recorded on an H100 (tools/record_sweeps.py), read back with ``load_sweep``: the GeGLU MLP
compiled at 8 shapes, the same with a graph break for odd batch sizes, SDPA at 5 sequence lengths."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import KernelProfile, ProfileSweep, SweepError, TraceError, load_sweep
from tests.helpers import DATA

GEGLU = DATA / "h100_sweep_geglu"
BROKEN = DATA / "h100_sweep_geglu_odd_break"
SDPA = DATA / "h100_sweep_sdpa"


def fuses_gelu_and_mul(prof: KernelProfile) -> None:
    assert prof.kernels.count("triton_*gelu*mul*") == 1


def runs_flash_attention(prof: KernelProfile) -> bool:
    return {k.family for k in prof.kernels.of_kind("attention")} == {"flash"}


def test_a_loaded_sweep_has_each_case_its_arguments_and_what_compiled() -> None:
    sweep = load_sweep(GEGLU)
    assert len(sweep) == 8
    assert [case.params for case in sweep][:3] == [
        {"hidden": 1024, "batch": 2},
        {"hidden": 1024, "batch": 3},
        {"hidden": 1024, "batch": 16},
    ]
    assert sweep[1]["batch"] == 3
    assert sweep[1].label == "hidden=1024, batch=3"
    assert all(case.compiled == 1 for case in sweep)  # statically compiled: a recompile per shape
    assert all(case.profile.device == "NVIDIA H100 80GB HBM3" for case in sweep)
    assert sweep.profile(hidden=4096, batch=33) is sweep[7].profile
    assert len(sweep[2:4]) == 2
    assert repr(sweep) == "ProfileSweep(8 cases on NVIDIA H100 80GB HBM3)"
    assert load_sweep(GEGLU / "sweep.json")[0].params == sweep[0].params  # the index or its folder


def test_the_table_shows_the_facts_that_differ_and_those_the_same_in_every_case() -> None:
    table = load_sweep(GEGLU).table()
    assert "ProfileSweep of 8 cases from" in table
    assert "torch.compile compiled 8 frames in 8 cases, each in the case's warm-up (compiled)" in table
    assert (
        "the same in every case: kernels 4, gemm 3, pointwise 1, launches 4, syncs 0, ops 7, regions 1, compiled 1"
        in table
    )
    assert "kernel names that differ, by family:\n  nvjet:" in table
    assert "inductor:" not in table  # the fused kernel's name is the same at every shape
    header = table.splitlines()[1].split()
    assert header == ["#", "hidden", "batch"]


def test_every_passes_where_the_fusion_holds_at_every_shape() -> None:
    sweep = load_sweep(GEGLU)
    sweep.every(fuses_gelu_and_mul)
    with pytest.raises(SweepError, match=r"sweep\.none\(fuses_gelu_and_mul\) failed: the check held in 8 of 8"):
        sweep.none(fuses_gelu_and_mul)


def test_a_fusion_broken_at_odd_batches_fails_naming_the_smallest_and_the_nearest_that_passed() -> None:
    sweep = load_sweep(BROKEN)
    with pytest.raises(SweepError) as failure:
        sweep.every(fuses_gelu_and_mul)
    assert isinstance(failure.value, AssertionError)  # a test fails, not errors
    lines = str(failure.value).splitlines()
    assert lines[0] == (
        "sweep.every(fuses_gelu_and_mul) failed: the check broke in 4 of 8 cases: "
        "hidden=1024, batch=3; hidden=1024, batch=33; hidden=4096, batch=3; hidden=4096, batch=33"
    )
    assert lines[1] == "the smallest: hidden=1024, batch=3; pin it: cases=[dict(hidden=1024, batch=3)]"
    assert lines[2] == "the check there: AssertionError: assert 0 == 1"
    text = str(failure.value)
    # the table marks the cases that broke it, and shows the facts that differ
    assert re.search(r"^\*1\s+1024\s+3\s+5\s+2\s+5\s+10\s+2\s+2$", text, re.M)
    assert re.search(r"^0\s+1024\s+2\s+4\s+1\s+4\s+7\s+1\s+1$", text, re.M)
    assert "cases 1, 3, 5, 7: triton_poi_fused__unsafe_view_gelu_0, triton_poi_fused__unsafe_view_mul_0" in text
    # the kernels of the nearest case that passed beside those of the smallest that broke
    assert "left: hidden=1024, batch=2 (the nearest case that passed); right: hidden=1024, batch=3" in text
    side = text[text.index("left: hidden=1024, batch=2") :].splitlines()[1:]
    assert re.split(r"\s{2,}", side[0].strip()) == ["#", "kind", "family", "fused ops", "name"] * 2
    assert any("triton_poi_fused__unsafe_view_gelu_mul_0" in line and line.rstrip().endswith("-") for line in side)
    assert any(line.lstrip().startswith("+  1  pointwise  inductor") for line in side)
    assert sum(" ~ " in line for line in side) == 3  # the GEMMs: other tiles at batch 3


def test_none_fails_naming_the_cases_where_the_check_held() -> None:
    sweep = load_sweep(BROKEN)
    broken = ProfileSweep([case for case in sweep if case["batch"] % 2])
    broken.none(fuses_gelu_and_mul)
    with pytest.raises(SweepError) as failure:
        sweep.none(fuses_gelu_and_mul)
    text = str(failure.value)
    assert "the check held in 4 of 8 cases: hidden=1024, batch=2;" in text
    assert "the smallest: hidden=1024, batch=2;" in text
    assert "the check there: the check held" in text
    assert "left: hidden=1024, batch=3 (the nearest case that passed); right: hidden=1024, batch=2" in text


def test_a_check_that_returns_false_breaks_and_one_that_returns_none_holds() -> None:
    sweep = load_sweep(SDPA)
    with pytest.raises(SweepError, match=r"the check there: returned False"):
        sweep.every(runs_flash_attention)
    sweep.every(lambda prof: None)
    sweep[:1].every(runs_flash_attention)
    sweep[1:].none(runs_flash_attention)
    with pytest.raises(SweepError, match=r"pin it: cases=\[dict\(seq_len=2\)\]"):
        sweep.every(runs_flash_attention)


def test_an_error_that_is_no_assertion_propagates() -> None:
    sweep = load_sweep(SDPA)
    with pytest.raises(ZeroDivisionError):
        sweep.every(lambda prof: 1 / 0)
    with pytest.raises(TypeError, match="a function of a KernelProfile"):
        sweep.every("not a check")  # type: ignore[arg-type]


def test_a_question_a_varied_profile_cannot_answer_is_no_answer() -> None:
    # VariedProfileError is an AssertionError (a test fails on it): taken for "does not hold",
    # none(check) passed on cases whose calls differed.
    from pytest_kernelprof import VariedProfileError

    def asks_a_varied_profile(prof: KernelProfile) -> bool:
        raise VariedProfileError("prof.kernels has no one answer: the profiled calls launched different kernels")

    sweep = load_sweep(SDPA)
    with pytest.raises(VariedProfileError, match="no one answer"):
        sweep.none(asks_a_varied_profile)


def test_a_case_named_by_arguments_that_match_none_lists_the_cases() -> None:
    sweep = load_sweep(SDPA)
    with pytest.raises(KeyError, match=r"0 cases have seq_len=5; the cases:\\n  seq_len=1\\n  seq_len=2"):
        sweep.profile(seq_len=5)


def test_a_loaded_sweep_exports_again_and_reads_the_same(tmp_path: Path) -> None:
    sweep = load_sweep(SDPA)
    index = sweep.export(tmp_path / "copy")
    again = load_sweep(index)
    assert [c.params for c in again] == [c.params for c in sweep]
    assert [c.profile.kernels.names for c in again] == [c.profile.kernels.names for c in sweep]
    assert json.loads(index.read_text())["cases"][0] == {
        "params": {"seq_len": 1},
        "trace": "case-00.json.gz",
        "compiled": 0,
    }


def test_a_sweep_exports_into_a_folder_on_a_file_system_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An adversarial probe: exporting into a mount point (a CI volume) failed with "Invalid
    # cross-device link": the traces were written beside the folder, then renamed into it.
    import errno
    import os

    from pytest_kernelprof.checks import sweep as sweep_module

    mount = tmp_path / "mnt"
    rename = os.replace

    def across_file_systems(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).resolve().is_relative_to(mount) != Path(src).resolve().is_relative_to(mount):
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(src))
        rename(src, dst)

    monkeypatch.setattr(sweep_module.os, "replace", across_file_systems)
    index = load_sweep(SDPA).export(mount)
    assert [c.params for c in load_sweep(index)] == [c.params for c in load_sweep(SDPA)]
    traces = [f"case-{i:02}.json.gz" for i in range(len(load_sweep(SDPA).cases))]
    assert sorted(p.name for p in mount.iterdir()) == [*traces, "sweep.json"]  # the staging folder gone


def test_a_loaded_sweep_reordered_into_its_own_folder_keeps_each_case_its_trace(tmp_path: Path) -> None:
    folder = tmp_path / "sweep"
    load_sweep(GEGLU).export(folder)
    first = {
        case.label: gzip.decompress((folder / f"case-{i:02d}.json.gz").read_bytes())
        for i, case in enumerate(load_sweep(folder))
    }
    load_sweep(folder)[::-1].export(folder)  # case-00 is replaced while case-07 still copies from it
    again = load_sweep(folder)
    assert [case.label for case in again] == list(first)[::-1]
    for i, case in enumerate(again):
        assert gzip.decompress((folder / f"case-{i:02d}.json.gz").read_bytes()) == first[case.label], case.label
    assert [p.name for p in tmp_path.iterdir()] == ["sweep"]  # nothing left beside it


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (None, r"no such sweep index"),
        ("not json", r"not a sweep index \("),
        ('{"format": 2, "cases": []}', r"not a sweep index \(format 1 with a list of cases\)"),
        ('{"format": 1, "cases": [{"params": {}, "trace": "../x.json.gz"}]}', r"cases\[0\] is not a case"),
        ('{"format": 1, "cases": [{"params": [], "trace": "x.json.gz"}]}', r"cases\[0\] is not a case"),
        ('{"format": 1, "cases": [{"params": {}, "trace": "x", "compiled": -1}]}', r"cases\[0\] is not a case"),
    ],
)
def test_an_index_that_is_not_one_says_how_to_write_one(tmp_path: Path, write: str | None, message: str) -> None:
    if write is not None:
        (tmp_path / "sweep.json").write_text(write)
    with pytest.raises(TraceError, match=message) as failure:
        load_sweep(tmp_path)
    assert "ProfileSweep.export(folder)" in str(failure.value)


def test_a_missing_trace_is_a_trace_error_naming_it(tmp_path: Path) -> None:
    shutil.copytree(SDPA, tmp_path / "sdpa")
    (tmp_path / "sdpa" / "case-03.json.gz").unlink()
    with pytest.raises(TraceError, match="case-03.json.gz"):
        load_sweep(tmp_path / "sdpa")


def _breaks_but_yields(prof: KernelProfile) -> Any:
    raise AssertionError("never runs: calling a generator function runs nothing")
    yield


async def _breaks_but_is_async(prof: KernelProfile) -> None:
    raise AssertionError("never runs: calling a coroutine function runs nothing")


async def _breaks_but_is_an_async_generator(prof: KernelProfile) -> Any:
    raise AssertionError("never runs")
    yield


@pytest.mark.parametrize(
    ("check", "what"),
    [
        (_breaks_but_yields, "a generator function"),
        (_breaks_but_is_async, r"a coroutine function \(async def\)"),
        (_breaks_but_is_an_async_generator, "an async generator function"),
    ],
)
def test_a_check_whose_call_runs_nothing_is_refused(check: Any, what: str) -> None:
    """Calling such a check returns a generator or coroutine, which is true: every case held."""
    sweep = load_sweep(GEGLU)
    for method in (sweep.every, sweep.none):
        with pytest.raises(TypeError, match=rf"^a sweep's check {check.__name__}: it is {what}, and calling it runs"):
            method(check)


def test_a_check_that_returns_deferred_work_is_refused() -> None:
    sweep = load_sweep(GEGLU)
    with pytest.raises(TypeError, match=r"^a sweep's check <lambda> returned a generator, so nothing ran"):
        sweep.every(lambda prof: _breaks_but_yields(prof))


def test_an_empty_slice_of_a_sweep_names_the_slice() -> None:
    sweep = load_sweep(GEGLU)
    with pytest.raises(IndexError, match=r"^sweep\[5:2\] selects none of the sweep's 8 cases"):
        sweep[5:2]
    assert len(sweep[5:]) == 3


def _index_of(tmp_path: Path, cases: list[dict[str, Any]]) -> Path:
    shutil.copy(GEGLU / "case-00.json.gz", tmp_path / "case-00.json.gz")
    listed = [{"params": params, "trace": "case-00.json.gz", "compiled": None} for params in cases]
    (tmp_path / "sweep.json").write_text(json.dumps({"format": 1, "cases": listed}))
    return tmp_path


def test_an_index_of_more_cases_than_a_sweep_holds_is_refused_before_any_trace_is_read(tmp_path: Path) -> None:
    folder = _index_of(tmp_path, [{"batch": n} for n in range(1001)])
    with pytest.raises(TraceError, match=r"sweep\.json: lists 1,001 cases; a sweep profiles at most 1000 cases"):
        load_sweep(folder)
