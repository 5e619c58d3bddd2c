"""Baseline files as a person edits them: every stored value is checked when the file is read,
and an impossible one is a BaselineError that names the file, the entry and the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import BaselineError, load_trace
from pytest_kernelprof.checks.baseline import KernelBaseline, read_baseline, record
from pytest_kernelprof.checks.baseline.files import accepted_lines
from tests.helpers import DATA

Trace = Callable[[str], Path]


@pytest.fixture
def recorded(tmp_path: Path, trace: Trace) -> Path:
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("geglu_compiled")))
    return path


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data["archs"]["sm90"]["default"])
    path.write_text(json.dumps(data))


def _set(*keys: str | int, value: object) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target: Any = entry
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _drop(*keys: str | int) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target: Any = entry
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return change


def _rename(*keys: str | int, to: str) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target: Any = entry
        for key in keys[:-1]:
            target = target[key]
        target[to] = target.pop(keys[-1])

    return change


EDITS = [
    (_set("kernels", 0, "kind", value="gemmm"), "kernels[0].kind", "'gemmm', not one of gemm, convolution"),
    (_set("kernels", 1, "family", value="cu blas"), "kernels[1].family", "'cu blas', not a family name"),
    (_set("kernels", 1, "family", value=7), "kernels[1].family", "7, not a family name"),
    (_set("kernels", 0, "layout", value="TN"), "kernels[0].layout", "'TN', not one of nn, nt, tn, tt or null"),
    (_set("kernels", 2, "fused_ops", value="gelu"), "kernels[2].fused_ops", "'gelu', not a list of op names"),
    (_set("kernels", 2, "name", value=3), "kernels[2].name", "3, not a string"),
    (_set("kernels", 2, "op", value=["x"]), "kernels[2].op", "['x'], not a string or null"),
    (_drop("kernels", 3, "kind"), "kernels[3].kind", "missing"),
    (_set("kernels", 1, value="gemm"), "kernels[1]", "'gemm', not an object"),
    (_set("kernels", value={}), "kernels", "{}, not a list"),
    (_set("metrics", "launches", value=-5), "metrics.launches", "-5, not a count from 0 to 1,000,000,000"),
    (_set("memset", value=1e308), "memset", "1e+308, not a count from 0 to 1,000,000,000"),
    (_set("memcpy", value=True), "memcpy", "True, not a count"),
    (_set("metrics", "syncs", value=10**30), "metrics.syncs", "1000000000000000000000000000000, not a count"),
    (_set("metrics", "syncs", value=2.0), "metrics.syncs", "2.0, not a count"),
    (_set("metrics", "peak_bytes", value=2**60), "metrics.peak_bytes", "not a size from 0 to 1 PiB"),
    (_set("metrics", "synx", value=0), "metrics.synx", "not a baseline metric; they are syncs, dtoh_copies"),
    (_set("metrics", value=[]), "metrics", "[], not an object"),
    # A misspelt or made-up key is no field: read as absent, "dtpye" would leave the dtype
    # uncompared (as an older file's is) and the check would pass.
    (
        _rename("kernels", 0, "dtype", to="dtpye"),
        "kernels[0].dtpye",
        "not a baseline kernel field; they are name, kind, family, layout, fused_ops, op, dtype",
    ),
    (_set("kernels", 1, "grid", value=[1, 2]), "kernels[1].grid", "not a baseline kernel field; they are name"),
    (_set("memcpys", value=0), "memcpys", "not a key of a baseline entry; they are device, kernels, memcpy"),
]


@pytest.mark.parametrize(("change", "field", "said"), EDITS, ids=[field for _, field, _ in EDITS])
def test_an_impossible_value_names_the_file_and_the_field(
    recorded: Path, change: Callable[[dict[str, Any]], None], field: str, said: str
) -> None:
    _edit(recorded, change)
    with pytest.raises(BaselineError) as info:
        read_baseline(recorded)
    message = str(info.value)
    assert message.startswith(f"{recorded}: entry sm90/default: {field} is ")
    assert said in message
    assert message.endswith("delete it and run with --kernelprof-update to record it again")


def test_the_check_fails_with_the_error_instead_of_reporting_an_improvement(recorded: Path, trace: Trace) -> None:
    _edit(recorded, _set("metrics", "syncs", value=10**30))
    baseline = KernelBaseline(recorded, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(BaselineError, match=r"metrics\.syncs is 1000000000000000000000000000000, not a count"):
        baseline.check(load_trace(trace("geglu_compiled")))


def test_values_a_profile_can_have_are_read(recorded: Path, trace: Trace) -> None:
    _edit(recorded, _set("metrics", "peak_bytes", value=80 * 2**30))
    _edit(recorded, _set("kernels", 0, "layout", value=None))
    assert read_baseline(recorded)["archs"]["sm90"]["default"]["metrics"]["peak_bytes"] == 80 * 2**30


def test_a_newer_baseline_format_says_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "test_x.json"
    path.write_text('{"format": 99, "archs": {}}')
    with pytest.raises(BaselineError) as info:
        read_baseline(path)
    assert str(info.value) == (
        f"{path}: baseline format 99 is newer than this pytest-kernelprof reads (format 1): "
        "upgrade pytest-kernelprof to compare against it"
    )
    with pytest.raises(BaselineError, match="upgrade pytest-kernelprof"):
        record(path, "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    assert path.read_text() == '{"format": 99, "archs": {}}'


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"format": "1", "archs": {}}', "unknown baseline format '1' (this pytest-kernelprof reads format 1)"),
        ('{"format": 0, "archs": {}}', "unknown baseline format 0 (this pytest-kernelprof reads format 1)"),
        ('{"archs": {}}', "not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys)"),
        ("[]", "not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys)"),
        ('{"format": 1}', "archs is missing"),
        ('{"format": 1, "archs": []}', "archs is [], not an object"),
        ('{"format": 1, "archs": {"sm90": []}}', "entry 'sm90' is not an object"),
        ('{"format": 1, "archs": {"sm90": {"default": 3}}}', "entry sm90/default is not an object"),
        ('{"format": 1, "archs": {}, "arch": {}}', "arch is not a key of a baseline file; they are format, archs"),
        (
            '{"format": 1, "archs": {"sm90": {"s[M<64]": {"bucket": {}, "case": []}}}}',
            "entry sm90/s[M<64]: case is not a key of a sweep's baseline entry; they are device, bucket",
        ),
        (
            '{"format": 1, "archs": {"sm90": {"s[M<64]": {"bucket": {"case": []}}}}}',
            "entry sm90/s[M<64]: bucket.case is not a field of a sweep's bucket; "
            "they are cases, counts, names, metrics",
        ),
        # json keeps the last of a key given twice: a hand edit would silently drop the first.
        ('{"format": 1, "format": 1, "archs": {}}', "the key 'format' appears twice in one object"),
        ('{"format": 1, "archs": {"sm90": {}, "sm90": {}}}', "the key 'sm90' appears twice in one object"),
    ],
)
def test_other_formats_say_what_is_wrong(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "test_x.json"
    path.write_text(content)
    with pytest.raises(BaselineError) as info:
        read_baseline(path)
    assert str(info.value).startswith(f"{path}: {said}; fix it from version control, or delete it")


def test_a_baseline_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    path = tmp_path / "test_x.json"
    path.mkdir()  # as a folder is where a file was expected
    with pytest.raises(BaselineError, match=r"test_x\.json: cannot read the baseline \(Is a directory\)$"):
        read_baseline(path)


def test_a_baseline_an_editor_saved_with_a_byte_order_mark_is_read(recorded: Path, trace: Trace) -> None:
    # Editors on Windows may save UTF-8 with a BOM; the trace reader skips one, so does this.
    recorded.write_bytes(b"\xef\xbb\xbf" + recorded.read_bytes())
    assert "default" in read_baseline(recorded)["archs"]["sm90"]
    KernelBaseline(recorded, "t.py::test_m", update=False, names="stable", notes=[]).check(
        load_trace(trace("geglu_compiled"))
    )
    # An update rewrites the file without one.
    KernelBaseline(recorded, "t.py::test_m", update=True, names="stable", notes=[]).check(
        load_trace(trace("geglu_eager"))
    )
    assert not recorded.read_bytes().startswith(b"\xef\xbb\xbf")
    assert "default" in read_baseline(recorded)["archs"]["sm90"]
    # A byte that is no UTF-8 is placed in the file, the mark counted.
    recorded.write_bytes(b'\xef\xbb\xbf{"format": 1, "archs": {"sm90": "\xff"}}')
    with pytest.raises(BaselineError, match=r"not UTF-8 text \(byte 0xff at offset 36\)"):
        read_baseline(recorded)


def test_a_family_the_file_could_hold_but_this_run_does_not_give_is_a_change_not_a_corrupt_file(
    recorded: Path, trace: Trace
) -> None:
    # Family-shaped: a family taught when it was recorded, or a typo; either way the kernels'
    # family differs from this run's, which the diff shows, and nothing blames the file.
    _edit(recorded, _set("kernels", 1, "family", value="cublass"))
    baseline = KernelBaseline(recorded, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(AssertionError, match=r"(?s)differs from the baseline.*- gemm/cublass"):
        baseline.check(load_trace(trace("geglu_compiled")))


def test_a_kernel_field_given_twice_is_refused_not_the_last_kept(recorded: Path) -> None:
    text = recorded.read_text()
    assert text.count('"kind": "gemm"') >= 1
    recorded.write_text(text.replace('"kind": "gemm"', '"kind": "gemm", "kind": "pointwise"', 1))
    with pytest.raises(BaselineError, match=r"test_m\.json: the key 'kind' appears twice in one object; fix it"):
        read_baseline(recorded)


def test_a_file_holds_every_field_a_buckets_ranges_write(tmp_path: Path) -> None:
    from pytest_kernelprof import load_sweep
    from pytest_kernelprof.checks.baseline.buckets import BucketRanges

    ranges = BucketRanges.of([(case.label, case.profile) for case in load_sweep(DATA / "h100_sweep_geglu")], "stable")
    stored = json.loads(json.dumps(ranges.to_json()))
    assert all(stored.values())  # every field written, none empty: each is read and checked
    path = tmp_path / "test_s.json"
    path.write_text(json.dumps({"format": 1, "archs": {"sm90": {"s[all]": {"device": "H100", "bucket": stored}}}}))
    assert read_baseline(path)["archs"]["sm90"]["s[all]"]["bucket"] == stored


def test_an_update_tells_what_it_accepted_where_no_kernel_changed(tmp_path: Path) -> None:
    """What --kernelprof-update prints under an `updated` line (tests/plugin/test_baseline_update.py
    has the kernels' headline): a metric moved either way, else the device, else that nothing compared moved."""
    prof = load_trace(DATA / "h200_geglu_eager.json.gz")
    path = tmp_path / "t.json"
    record(path, "sm90", "default", prof)
    stored = json.loads(path.read_text())["archs"]["sm90"]["default"]
    assert accepted_lines(stored, prof, "stable", 0.05) == (
        "no change the check compares (names compared: stable), only names or fields it does not",
    )
    assert accepted_lines({**stored, "device": "NVIDIA H100"}, prof, "stable", 0.05) == (
        "device: NVIDIA H100 -> NVIDIA H200",
    )
    lower = {**stored, "metrics": {**stored["metrics"], "launches": 4}}
    assert accepted_lines(lower, prof, "stable", 0.05) == ("worse: launches: 4 -> 5",)
    higher = {**stored, "metrics": {**stored["metrics"], "launches": 6}}
    assert accepted_lines(higher, prof, "stable", 0.05) == ("better: launches: 6 -> 5",)
    assert accepted_lines({"bucket": {}}, prof, "stable", 0.05) == ("the entry held a check_sweep bucket's ranges",)
