"""Baselines of a sweep per bucket, in a range form, on the sweeps recorded on an H100: recorded,
checked unchanged, and failing naming the bucket whose kernels changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kernelprof import BaselineError, BaselineMismatchError, ProfileSweep, load_sweep
from pytest_kernelprof.checks.baseline import BaselineNote, Checked, KernelBaseline, Recorded, read_baseline
from pytest_kernelprof.checks.baseline.buckets import BucketRanges, compare_bucket
from pytest_kernelprof.types import SweepCase
from tests.helpers import DATA

GEGLU = DATA / "h100_sweep_geglu"
BROKEN = DATA / "h100_sweep_geglu_odd_break"


def by_batch(case: SweepCase) -> str:
    return "batch<16" if case["batch"] < 16 else "batch>=16"


def baseline(path: Path, *, update: bool, names: str = "stable") -> tuple[KernelBaseline, list[BaselineNote]]:
    notes: list[BaselineNote] = []
    return KernelBaseline(path, "t.py::test_sweep", update=update, names=names, notes=notes), notes


def test_each_bucket_is_one_entry_of_ranges_over_its_cases(tmp_path: Path) -> None:
    path = tmp_path / "test_sweep.json"
    check, notes = baseline(path, update=True)
    check.check_sweep(load_sweep(GEGLU), by=by_batch)
    entries = read_baseline(path)["archs"]["sm90"]
    assert sorted(entries) == ["sweep[batch<16]", "sweep[batch>=16]"]
    small = entries["sweep[batch<16]"]
    assert small["device"] == "NVIDIA H100 80GB HBM3"
    assert small["bucket"]["cases"] == [
        "hidden=1024, batch=2",
        "hidden=1024, batch=3",
        "hidden=4096, batch=2",
        "hidden=4096, batch=3",
    ]
    assert small["bucket"]["counts"] == {"kernels": [4, 4], "gemm": [3, 3], "pointwise": [1, 1]}
    assert small["bucket"]["names"] == ["triton_poi_fused__unsafe_view_gelu_mul_0"]  # stable: Inductor's, not cuBLAS's
    assert small["bucket"]["metrics"] == {"launches": 4, "syncs": 0, "dtoh_copies": 0}
    assert Recorded("written", str(path), "sm90", "sweep[batch<16]") in notes
    assert Checked(str(path), "sm90", "sweep[batch>=16]") in notes


def test_an_unchanged_sweep_passes_and_a_changed_bucket_fails_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "test_sweep.json"
    baseline(path, update=True)[0].check_sweep(load_sweep(GEGLU), by=by_batch)
    check, notes = baseline(path, update=False)
    check.check_sweep(load_sweep(GEGLU), by=by_batch)
    assert Checked(str(path), "sm90", "sweep[batch>=16]") in notes
    # only the batch>=16 cases come from the sweep whose odd batches break the fusion
    mixed = ProfileSweep([*load_sweep(GEGLU)[:1], *(c for c in load_sweep(BROKEN) if c["batch"] >= 16)])
    with pytest.raises(BaselineMismatchError) as failure:
        baseline(path, update=False)[0].check_sweep(mixed, by=by_batch)
    text = str(failure.value)
    assert text.splitlines()[0] == (
        f"kernel_baseline.check_sweep failed: 1 of 2 buckets differ from the baseline sweep[...] in {path} "
        "(names compared: stable)"
    )
    assert "bucket 'batch>=16' differs from sm90/sweep[batch>=16] (its cases: hidden=1024, batch=16; " in text
    assert "bucket 'batch<16'" not in text
    assert "  hidden=1024, batch=33: 5 kernels in all per call, the baseline's cases ran 4" in text
    assert "  hidden=1024, batch=33: 2 pointwise kernels per call, the baseline's cases ran 1" in text
    assert "  hidden=1024, batch=33: launches 5, above the baseline's most 4 (lower is better)" in text
    assert (
        "a kernel the baseline's cases did not run: triton_poi_fused__unsafe_view_gelu_0 "
        "(in hidden=1024, batch=33; hidden=4096, batch=33)" in text
    )
    assert "  the kernels of hidden=1024, batch=33:" in text
    assert text.rstrip().endswith("if the change is intended: pytest --kernelprof-update 't.py::test_sweep'")


def test_a_bucket_without_an_entry_fails_saying_so(tmp_path: Path) -> None:
    path = tmp_path / "test_sweep.json"
    baseline(path, update=True)[0].check_sweep(load_sweep(GEGLU)[:4], by="hidden")
    with pytest.raises(BaselineMismatchError, match=r"bucket 'hidden=4096': no entry sm90/sweep\[hidden=4096\]"):
        baseline(path, update=False)[0].check_sweep(load_sweep(GEGLU), by="hidden")


def test_one_bucket_by_default_and_a_name_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "test_sweep.json"
    baseline(path, update=True)[0].check_sweep(load_sweep(GEGLU), name="geglu")
    assert list(read_baseline(path)["archs"]["sm90"]) == ["geglu[all]"]
    with pytest.raises(KeyError, match=r"has no argument 'seq'"):
        baseline(path, update=False)[0].check_sweep(load_sweep(GEGLU), by="seq")


def test_names_exact_compares_library_names_and_loose_none(tmp_path: Path) -> None:
    sweep = load_sweep(GEGLU)
    cases = [(case.label, case.profile) for case in sweep]
    exact = BucketRanges.of(cases, "exact")
    assert any(name.startswith("nvjet_") for name in exact.names)
    assert BucketRanges.of(cases, "loose").names == ()
    other_tiles = [(case.label, case.profile) for case in load_sweep(BROKEN) if case["batch"] % 2 == 0]
    assert compare_bucket(BucketRanges.of(cases[::2], "exact"), other_tiles, "exact", 0.05) == []
    assert compare_bucket(BucketRanges.of(cases[:1], "exact"), cases[1:2], "exact", 0.05) != []


def test_the_stored_ranges_read_back_as_written() -> None:
    ranges = BucketRanges.of([(case.label, case.profile) for case in load_sweep(GEGLU)], "stable")
    assert BucketRanges.from_json(json.loads(json.dumps(ranges.to_json()))) == ranges


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("counts", {"kernels": [5, 4]}),
            r"bucket.counts.kernels is \[5, 4\], not \[fewest, most\] with fewest <= most",
        ),
        (("counts", {"gemms": [1, 1]}), r"bucket.counts.gemms is no count a bucket keeps"),
        (("counts", {"gemm": [1]}), r"bucket.counts.gemm is \[1\], not \[fewest, most\]"),
        (("counts", {"gemm": [-1, 1]}), r"bucket.counts.gemm\[0\] is -1"),
        (("names", "x"), r"bucket.names is 'x', not a list of kernel names"),
        (("cases", None), r"bucket.cases is None, not a list of case labels"),
        (("metrics", {"speed": 1}), r"bucket.metrics.speed is not a baseline metric"),
    ],
)
def test_a_hand_edited_bucket_that_no_sweep_could_make_is_a_baseline_error(
    tmp_path: Path, edit: tuple[str, object], message: str
) -> None:
    path = tmp_path / "test_sweep.json"
    baseline(path, update=True)[0].check_sweep(load_sweep(GEGLU))
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["sweep[all]"]["bucket"][edit[0]] = edit[1]
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match=rf"entry sm90/sweep\[all\]: {message}"):
        read_baseline(path)


def test_a_sweep_of_nothing_measured_raises_before_any_entry_is_written(tmp_path: Path) -> None:
    from pytest_kernelprof import NoDeviceActivityError, Profiler

    sweep = Profiler(warmup=0, calls=1).sweep(lambda n: lambda: n + 1, dict(n=[1]))
    with pytest.raises(NoDeviceActivityError):
        baseline(tmp_path / "t.json", update=True)[0].check_sweep(sweep)
    assert not (tmp_path / "t.json").exists()
    with pytest.raises(TypeError, match="takes a ProfileSweep"):
        baseline(tmp_path / "t.json", update=False)[0].check_sweep(load_sweep(GEGLU)[0])  # type: ignore[arg-type]
