"""How a baseline check compares: memory operations have a direction like the metrics, CUDA-graph
kernels compare across processes, and a diff line shows what differs."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_kernelprof import KernelProfile, KernelSequenceMismatchError, load_sweep, load_trace
from pytest_kernelprof.checks.baseline import (
    BaselineNote,
    Improved,
    KernelBaseline,
    Signature,
    compare,
    compare_metrics,
    read_baseline,
    record,
)
from pytest_kernelprof.checks.diff import summary_lines, unknown_dtype_note
from pytest_kernelprof.checks.sweep import ProfileSweep, SweepCase
from tests.helpers import DATA, Stream, build, user_kernel_trace

Trace = Callable[[str], Path]


# -- item 4: fewer copies is an improvement ----------------------------------------------


def test_fewer_memcpys_are_better_and_more_are_worse(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    one_copy = replace(sig, memcpy=1)
    for mode in ("stable", "exact"):
        assert compare(one_copy, sig, mode) is None  # the signature holds the kernels
        worse, better = compare_metrics(one_copy, sig, 0.05, mode)
        assert (worse, [str(c) for c in better]) == ([], ["memcpys: 1 -> 0"])
        worse, better = compare_metrics(sig, one_copy, 0.05, mode)
        assert ([str(c) for c in worse], better) == (["memcpys: 0 -> 1"], [])
    assert compare_metrics(one_copy, sig, 0.05, "loose") == ([], [])


def test_memsets_have_a_direction_where_they_are_compared(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))  # two cuBLAS workspace memsets
    assert compare_metrics(sig, replace(sig, memset=3), 0.05, "stable") == ([], [])
    worse, _ = compare_metrics(sig, replace(sig, memset=3), 0.05, "exact")
    assert [str(c) for c in worse] == ["memsets: 2 -> 3"]
    _, better = compare_metrics(sig, replace(sig, memset=1), 0.05, "exact")
    assert [str(c) for c in better] == ["memsets: 2 -> 1"]


def test_a_removed_item_copy_passes_as_an_improvement(tmp_path: Path, trace: Trace) -> None:
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("geglu_compiled")))
    data = json.loads(path.read_text())
    entry = data["archs"]["sm90"]["default"]
    entry["memcpy"], entry["metrics"]["syncs"], entry["metrics"]["dtoh_copies"] = 1, 1, 1  # a step with .item()
    path.write_text(json.dumps(data))
    notes: list[BaselineNote] = []
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=notes)
    baseline.check(load_trace(trace("geglu_compiled")))  # the .item() is gone
    assert [note for note in notes if isinstance(note, Improved)] == [
        Improved("t.py::test_m", "default", "syncs", 1, 0),
        Improved("t.py::test_m", "default", "dtoh_copies", 1, 0),
        Improved("t.py::test_m", "default", "memcpys", 1, 0),
    ]


def test_an_added_copy_fails_as_worse_where_copies_are_compared(tmp_path: Path, trace: Trace) -> None:
    path = tmp_path / "test_m.json"
    profile = load_trace(trace("compile_graph_break"))  # one .item(): one DtoH memcpy
    record(path, "sm90", "default", profile)
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["default"]["memcpy"] = 0
    path.write_text(json.dumps(data))
    KernelBaseline(path, "t.py::test_m", update=False, names="loose", notes=[]).check(profile)
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(AssertionError) as info:
        baseline.check(profile)
    message = str(info.value)
    assert "kernel signature differs" not in message
    assert "(lower is better):\n  memcpys: 0 -> 1\nif the change is intended" in message


def test_the_worse_metrics_come_before_the_signature_whose_count_changes_run_into_its_diff(
    tmp_path: Path, trace: Trace
) -> None:
    # Issue 32: "worse than the baseline ... launches: 4 -> 5" sat between "count changes:" and the
    # "--- baseline" diff those lines head. Launches that moved by more than the kernels (2 launches
    # for 1 kernel more) are a change of their own: on their own line.
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("geglu_compiled")))
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["default"]["metrics"]["launches"] = 3
    path.write_text(json.dumps(data))
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(AssertionError) as info:
        baseline.check(load_trace(trace("geglu_eager")))
    lines = str(info.value).splitlines()
    worse = next(i for i, line in enumerate(lines) if line.startswith("worse than the baseline"))
    differs = next(i for i, line in enumerate(lines) if line.startswith("kernel signature differs"))
    assert worse < differs
    assert lines[worse + 1] == "  launches: 3 -> 5"
    assert lines[differs + 1 : differs + 4] == [
        "kernels per call: 4 -> 5",
        "count changes: pointwise: 1 -> 2",
        "--- baseline",
    ]


def test_a_lost_fusion_is_told_once(tmp_path: Path, trace: Trace) -> None:
    # Trial report: a compiled GeGLU baseline run eager failed with "kernels per call: 4 -> 5",
    # "launches: 4 -> 5" and "kernels of unknown dtype (dtype not compared): ...", read as three
    # regressions. A launch per kernel: the launches are told on the kernels' line; the unknown
    # dtypes are a note after the diff, a limit of the comparison.
    lines = _failure_lines(tmp_path, load_trace(trace("geglu_compiled")), load_trace(trace("geglu_eager")))
    assert not [line for line in lines if line.startswith("worse than") or "launches:" in line]
    differs = next(i for i, line in enumerate(lines) if line.startswith("kernel signature differs"))
    assert lines[differs + 1 : differs + 4] == [
        "kernels per call: 4 -> 5 (launches too)",
        "count changes: pointwise: 1 -> 2",
        "--- baseline",
    ]
    assert lines[-2:] == [
        "note: pointwise kernels of unknown dtype (?): 1 in the baseline, 0 in this run; left out of the dtype "
        "comparison (a limit of what is compared, not a change)",
        "if the change is intended: pytest --kernelprof-update 't.py::test_m'",
    ]


def test_launches_that_follow_the_kernels_are_told_with_their_numbers_where_they_differ(trace: Trace) -> None:
    compiled, eager = (Signature.of(load_trace(trace(name))) for name in ("geglu_compiled", "geglu_eager"))
    more = {**compiled.metrics, "launches": 8}
    lines = compare(replace(compiled, metrics=more), replace(eager, metrics={**more, "launches": 9}), "stable")
    assert lines is not None
    assert lines[0] == "kernels per call: 4 -> 5 (launches 8 -> 9 with them)"
    worse, _ = compare_metrics(replace(compiled, metrics=more), replace(eager, metrics={**more, "launches": 9}), 0.05)
    assert [str(c) for c in worse] == ["launches: 8 -> 9"]  # the check leaves it out: the kernels' line told it


def _failure_lines(tmp_path: Path, stored: KernelProfile, run: KernelProfile) -> list[str]:
    """The lines of the failure of ``run`` checked against a baseline recorded from ``stored``."""
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", stored)
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(AssertionError) as info:
        baseline.check(run)
    return str(info.value).splitlines()


def test_a_baseline_failure_tells_what_kernelprof_diff_tells_above_its_kernels(tmp_path: Path, trace: Trace) -> None:
    # Trial report: an eager GeGLU baseline failed on the compiled run with "count change:
    # pointwise: 2 -> 1" and no line for the Triton kernel of unknown dtype, where `kernelprof
    # diff` and the timeline page said "count changes: ..." and "kernels of unknown dtype ...".
    eager, compiled = load_trace(trace("geglu_eager")), load_trace(trace("geglu_compiled"))
    lines = _failure_lines(tmp_path, eager, compiled)
    told = summary_lines(list(eager.kernels), list(compiled.kernels))
    assert told == ["count changes: pointwise: 2 -> 1"]
    differs = next(i for i, line in enumerate(lines) if line.startswith("kernel signature differs"))
    assert lines[differs + 1 :][: len(told) + 2] == ["kernels per call: 5 -> 4 (launches too)", *told, "--- baseline"]
    # And the note kernelprof diff tells after its kernels, each side named as the failure names it.
    assert unknown_dtype_note(list(eager.kernels), list(compiled.kernels), "the baseline", "this run") == [lines[-2]]


def test_a_baseline_failure_tells_unplaced_kernels_in_kernelprof_diffs_words(tmp_path: Path, trace: Trace) -> None:
    # The failure said "their kinds say nothing" where `kernelprof diff` says the counts by kind
    # may not hold and how to teach them.
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("geglu_eager")))
    run = load_trace(user_kernel_trace(tmp_path / "user.json.gz"))
    assert len(run.kernels.unplaced()) == 1
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[])
    with pytest.raises(AssertionError) as info:
        baseline.check(run)
    lines = str(info.value).splitlines()
    # The headline first (a trial's failure, its annotation and its summary block opened with
    # the parenthesis), then the count of each side as kernelprof diff gives it.
    assert lines[0].startswith("kernel signature differs from the baseline sm90/default")
    unknown = (
        "(0 kernels of unknown kind in the baseline, 1 in this run: the counts by kind may not hold; "
        "teach them with kernelprof_kernels)"
    )
    assert unknown in lines[: lines.index("--- baseline")]


def _acme(tmp_path: Path, name: str) -> Path:
    """The user kernel trace with its unplaced kernel named ``name``."""
    text = gzip.decompress(user_kernel_trace(tmp_path / "user.json.gz").read_bytes()).decode()
    path = tmp_path / f"{name}.json.gz"
    path.write_bytes(gzip.compress(text.replace("_geglu_tanh_forward_kernel", name).encode()))
    return path


@pytest.mark.parametrize("names", ["stable", "exact"])
def test_one_unplaced_kernel_swapped_for_another_is_removed_and_added(tmp_path: Path, names: str) -> None:
    # A user's trial: "~ other/unknown ?  acme_fused_thing_v2" and "renamed in this run:
    # acme_fused_thing_v3", where nothing says the two kernels are alike.
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(_acme(tmp_path, "acme_fused_thing_v2")))
    baseline = KernelBaseline(path, "t.py::test_m", update=False, names=names, notes=[])
    with pytest.raises(AssertionError) as info:
        baseline.check(load_trace(_acme(tmp_path, "acme_fused_thing_v3")))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("kernel signature differs from the baseline sm90/default")
    assert lines[1] == (
        "(1 kernel of unknown kind in the baseline, 1 in this run: the counts by kind may not hold; "
        "teach them with kernelprof_kernels)"
    )
    assert "- other/unknown ?  acme_fused_thing_v2" in lines
    assert "+ other/unknown ?  acme_fused_thing_v3" in lines
    assert not any(line.startswith("~") or "renamed" in line for line in lines), lines


def test_a_kernel_whose_dtype_moved_among_other_changes_is_changed_with_its_dtypes() -> None:
    # A user's trial: the GeGLU's Triton kernel, bf16 in the baseline and fp32 in this run (its
    # GEMMs swapped library too), was "= pointwise/inductor fp32 ..." below the dtype changes.
    bf16 = load_trace(DATA / "h100_inductor_geglu_bf16.json.gz")
    fp32 = load_trace(DATA / "h100_inductor_geglu_fp32.json.gz")
    lines = compare(Signature.of(bf16), Signature.of(fp32), "stable")
    assert lines is not None
    # The run's kernel on the ~ line, as on = lines; the baseline's dtype below it.
    at = lines.index("~ pointwise/inductor fp32 [gelu,mul]  triton_poi_fused_gelu_mul_0")
    assert lines[at + 1] == "    dtype: bf16 in the baseline, fp32 in this run"
    assert not any(line.startswith("= pointwise") for line in lines), lines
    # Alone, the move is told on its line as before.
    fused = Signature.of(bf16)
    moved = replace(
        fused, kernels=tuple(replace(k, dtype="fp16") if k.kind == "pointwise" else k for k in fused.kernels)
    )
    lines = compare(moved, fused, "stable")
    assert lines is not None
    assert lines[-1] == "#2 pointwise/inductor: fp16 in the baseline, bf16 in this run  triton_poi_fused_gelu_mul_0"


def test_a_dtype_move_reads_as_kernelprof_diff_reads_it(tmp_path: Path, trace: Trace) -> None:
    # docs/baselines.md showed "dtype change: ..." where `kernelprof diff` prints "dtype changes: ...".
    bf16 = load_trace(trace("linear_eager"))
    fp32 = load_trace(trace("linear_fp32"))
    lines = _failure_lines(tmp_path, bf16, fp32)
    told = summary_lines(list(bf16.kernels), list(fp32.kernels))
    assert any(line.startswith("dtype changes: ") for line in told)
    assert all(line in lines for line in told)
    assert not any(line.startswith(("dtype change: ", "count change: ")) for line in lines)


# -- item 1: CUDA-graph kernels compare across processes --------------------------------

GRAPH_CALL = "## Call CompiledFxGraph f5fynath66gguty3njil7xsajzoned6muqxhts2mxzo25ex2vxfg ##"


def _rehashed(tmp_path: Path, trace: Trace) -> Path:
    """The CUDA-graph decode trace as another process records it: Inductor's graph hash differs."""
    text = gzip.decompress(trace("decode_graphs").read_bytes()).decode()
    assert GRAPH_CALL in text
    path = tmp_path / "rehashed.json"
    path.write_text(
        text.replace(GRAPH_CALL, "## Call CompiledFxGraph fzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz ##")
    )
    return path


def test_a_cuda_graph_baseline_holds_in_the_next_process(tmp_path: Path, trace: Trace) -> None:
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("decode_graphs")))
    ops = {k["op"] for k in json.loads(path.read_text())["archs"]["sm90"]["default"]["kernels"]}
    assert ops == {"Torch-Compiled Region", "aten::_foreach_copy_"}  # the graph call's hash is no op
    for names in ("stable", "exact", "loose"):
        KernelBaseline(path, "t.py::test_m", update=False, names=names, notes=[]).check(
            load_trace(_rehashed(tmp_path, trace))
        )


@pytest.mark.parametrize("stored", [GRAPH_CALL, "## Call CompiledFxGraph ##"])
def test_a_baseline_that_stored_the_graph_call_as_op_still_matches(tmp_path: Path, trace: Trace, stored: str) -> None:
    # Before the replayed kernels' op was their compiled region, baselines stored the graph call:
    # with its hash (0.1), then without it.
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", load_trace(trace("decode_graphs")))
    data = json.loads(path.read_text())
    kernels = data["archs"]["sm90"]["default"]["kernels"]
    for kernel in kernels:
        kernel["op"] = stored if kernel["op"] == "Torch-Compiled Region" else kernel["op"]
    assert sum(kernel["op"] == stored for kernel in kernels) == 24
    path.write_text(json.dumps(data))
    KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[]).check(
        load_trace(_rehashed(tmp_path, trace))
    )


def test_a_diff_line_shows_the_field_that_differs(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    moved = replace(sig, kernels=(replace(sig.kernels[0], op="aten::addmm"), *sig.kernels[1:]))
    lines = compare(sig, moved, "stable")
    assert lines is not None
    # Issue 32: no "kernels per call: 4" where the count is unchanged (it read as a line cut short).
    assert lines[:2] == ["--- baseline", "+++ this run"]
    at = lines.index("~ gemm/nvjet bf16 tn  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT")
    assert lines[at + 1] == "    op: aten::mm in the baseline, aten::addmm in this run"
    assert "renamed" not in "\n".join(lines)  # the name is the same
    renamed = replace(moved, kernels=(replace(moved.kernels[0], name="nvjet_sm90_tst_other_TNT"), *sig.kernels[1:]))
    lines = compare(sig, renamed, "exact") or []
    at = lines.index("~ gemm/nvjet bf16 tn  nvjet_sm90_tst_other_TNT")  # this run's, as a = line
    assert lines[at + 1 : at + 3] == [
        "    named in the baseline: nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
        "    op: aten::mm in the baseline, aten::addmm in this run",
    ]


# -- what check() takes -------------------------------------------------------------------


@pytest.mark.parametrize("name", [1, None, ("a", "b"), b"default", 1.5])
def test_a_check_name_that_is_not_a_str_is_a_type_error_at_the_call(tmp_path: Path, trace: Trace, name: object) -> None:
    # Stored as a JSON key, the name would come back as another value (1 as "1") or not at all
    # (a torch.dtype): said at the call, before anything is written or read.
    path = tmp_path / "test_m.json"
    prof = load_trace(trace("linear_eager"))
    for update in (True, False):
        notes: list[BaselineNote] = []
        baseline = KernelBaseline(path, "t.py::test_m", update=update, names="stable", notes=notes)
        with pytest.raises(TypeError, match=r"kernel_baseline\.check\(\) takes name= as a str .*got "):
            baseline.check(prof, name=name)  # type: ignore[arg-type]
        assert notes == []
    assert not path.exists()


def test_two_profiles_under_one_name_in_a_test_are_refused(tmp_path: Path, trace: Trace) -> None:
    # An adversarial probe: a loop checking two traces under the default name wrote one over the
    # other under --kernelprof-update, and every later run failed whatever it ran.
    path = tmp_path / "test_m.json"
    baseline = KernelBaseline(path, "t.py::test_m", update=True, names="stable", notes=[])
    baseline.check(load_trace(trace("linear_eager")))
    with pytest.raises(ValueError, match=r"second profile under name='default' in one test: .* its own name="):
        baseline.check(load_trace(trace("geglu_eager")))
    baseline.check(load_trace(trace("geglu_eager")), name="geglu")  # its own name: recorded
    assert {name for arch in read_baseline(path)["archs"].values() for name in arch} == {"default", "geglu"}


def test_a_sweep_name_that_is_not_a_str_is_a_type_error(tmp_path: Path) -> None:
    baseline = KernelBaseline(tmp_path / "t.json", "t.py::test_m", update=True, names="stable", notes=[])
    with pytest.raises(TypeError, match=r"kernel_baseline\.check_sweep\(\) takes name= as a str"):
        baseline.check_sweep(load_sweep(DATA / "h100_sweep_geglu"), name=3)  # type: ignore[arg-type]
    assert not (tmp_path / "t.json").exists()


def _varied() -> KernelProfile:
    """Two calls: a GEMM, then the GEMM and an add."""
    s = Stream()
    for i in range(2):
        s.step(i, 100.0 * i, 50)
        mm = s.op("aten::mm", 100.0 * i + 10, 20)
        s.launch(mm, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN", 100.0 * i + 12)
    add = s.op("aten::add", 140, 5)
    s.launch(add, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)", 141)
    prof = build(s, allow_variation=True)
    assert prof.varied
    return prof


@pytest.mark.parametrize("update", [True, False], ids=["update", "compare"])
def test_a_profile_whose_calls_differ_is_refused_rather_than_judged_by_its_first_call(
    tmp_path: Path, update: bool
) -> None:
    path = tmp_path / "test_m.json"
    prof = _varied()
    if not update:
        record(path, "sm90", "default", replace(prof, varied=False))  # the first call's signature
    before = path.read_bytes() if path.exists() else None
    baseline = KernelBaseline(path, "t.py::test_m", update=update, names="stable", notes=[])
    with pytest.raises(KernelSequenceMismatchError) as info:
        baseline.check(prof)
    assert str(info.value) == (
        "kernel_baseline.check() compares one call's kernel sequence, and the 2 calls of this profile "
        "launched different ones (call 0: 1 kernel, call 1: 2 kernels; it was taken with "
        "allow_variation=True): profile without allow_variation (raise warmup= if the first calls "
        "still compile or autotune), or with calls=1"
    )
    with pytest.raises(KernelSequenceMismatchError):
        assert prof == baseline
    assert (path.read_bytes() if path.exists() else None) == before


def test_a_sweep_case_whose_calls_differ_is_refused(tmp_path: Path) -> None:
    sweep = ProfileSweep([SweepCase({"n": 1}, _varied())])
    baseline = KernelBaseline(tmp_path / "t.json", "t.py::test_m", update=True, names="stable", notes=[])
    with pytest.raises(KernelSequenceMismatchError, match=r"^kernel_baseline\.check_sweep\(\) .* the case n=1 "):
        baseline.check_sweep(sweep)
    assert not (tmp_path / "t.json").exists()


def test_a_profile_allowed_to_vary_whose_calls_did_not_is_checked(tmp_path: Path) -> None:
    # allow_variation=True on calls that all launched one sequence: not varied, nothing to refuse.
    s = Stream()
    for i in range(2):
        s.step(i, 100.0 * i, 50)
        s.launch(s.op("aten::mm", 100.0 * i + 10, 20), "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN", 100.0 * i + 12)
    prof = build(s, allow_variation=True)
    assert not prof.varied
    path = tmp_path / "t.json"
    KernelBaseline(path, "t.py::test_m", update=True, names="stable", notes=[]).check(prof)
    KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[]).check(prof)
