"""Kernel signatures and how they compare, without pytest in between."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_kernelprof import BaselineError, TeachingError, load_trace
from pytest_kernelprof.checks.baseline import (
    BaselineKernel,
    KernelBaseline,
    Signature,
    compare,
    read_baseline,
    record,
)
from pytest_kernelprof.types import Decoder

Trace = Callable[[str], Path]


def _renamed(signature: Signature, family: str, new_name: str) -> Signature:
    kernels = tuple(replace(k, name=new_name) if k.family == family else k for k in signature.kernels)
    return replace(signature, kernels=kernels)


def test_signature_of_a_profile(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    assert [k.kind for k in sig.kernels] == ["gemm", "gemm", "pointwise", "gemm"]
    assert sig.kernels[2].fused_ops == ("gelu", "mul")  # its name's views left out
    # The compiled region without Dynamo's compile ids, which depend on what ran before.
    assert sig.kernels[2].op == "Torch-Compiled Region"
    assert (sig.memcpy, sig.memset) == (0, 2)


def test_identical_signatures_match_in_every_mode(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    for mode in ("stable", "exact", "loose"):
        assert compare(sig, sig, mode) is None


def test_lost_fusion_is_reported_in_every_mode(trace: Trace) -> None:
    fused = Signature.of(load_trace(trace("geglu_compiled")))
    unfused = Signature.of(load_trace(trace("geglu_eager")))
    for mode in ("stable", "exact", "loose"):
        lines = compare(fused, unfused, mode)
        assert lines is not None
        text = "\n".join(lines)
        assert "kernels per call: 4 -> 5" in text
        assert "count changes: pointwise: 1 -> 2" in text
        assert "- pointwise/inductor ? [gelu,mul]  triton_poi_fused__unsafe_view_gelu_mul_0" in text
        assert "+ pointwise/aten bf16 [gelu]" in text


def test_library_kernel_names_count_only_in_exact_mode(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    other_tiles = _renamed(sig, "nvjet", "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_TNN")
    assert compare(sig, other_tiles, "stable") is None
    assert compare(sig, other_tiles, "loose") is None
    lines = compare(sig, other_tiles, "exact")
    assert lines is not None
    assert any(line.startswith("~ gemm/nvjet bf16 tn") for line in lines)


def test_inductor_names_count_unless_loose(trace: Trace) -> None:
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    renamed = _renamed(sig, "inductor", "triton_poi_fused__unsafe_view_gelu_mul_1")
    assert compare(sig, renamed, "stable") is not None
    assert compare(sig, renamed, "loose") is None


def test_memory_operations_are_not_part_of_the_kernel_signature(trace: Trace) -> None:
    # They are better lower, like the metrics: compare_metrics (test_baseline_compare.py).
    sig = Signature.of(load_trace(trace("geglu_compiled")))
    for mode in ("stable", "exact", "loose"):
        assert compare(sig, replace(sig, memset=3, memcpy=1), mode) is None


def test_record_writes_stable_sorted_json_and_keeps_other_archs(tmp_path: Path, trace: Trace) -> None:
    path = tmp_path / "b" / "test_x.json"
    record(path, "sm80", "default", load_trace(trace("linear_eager")))
    record(path, "sm90", "default", load_trace(trace("linear_eager")))
    record(path, "sm90", "compiled", load_trace(trace("linear_compiled")))
    text = path.read_text()
    assert text.endswith("}\n")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert sorted(data["archs"]) == ["sm80", "sm90"]
    assert sorted(data["archs"]["sm90"]) == ["compiled", "default"]
    assert [p.name for p in path.parent.iterdir()] == ["test_x.json"]  # no temporary left


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", '{"format": 0, "archs": {}}', '{"format": 1, "archs": {"sm90": {"default": {"x": 1}}}}'],
)
def test_a_corrupt_baseline_is_an_error_and_stays_untouched(tmp_path: Path, trace: Trace, content: str) -> None:
    path = tmp_path / "test_x.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=r"test_x.json: .*delete it and run with --kernelprof-update"):
        read_baseline(path)
    with pytest.raises(BaselineError):
        record(path, "sm90", "default", load_trace(trace("linear_eager")))
    assert path.read_text() == content


# -- a family the decoder was taught is one a baseline holds -----------------------------


def test_a_baseline_of_kernels_in_a_taught_family_reads_back_and_matches(tmp_path: Path, trace: Trace) -> None:
    taught = Decoder().teach_lines(["*vectorized_elementwise*: kind=pointwise family=mylib"], "pytest.ini")
    prof = load_trace(trace("sync_device"), decoder=taught)
    assert {k.family for k in prof.kernels} == {"mylib"}
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", prof)
    assert read_baseline(path)["archs"]["sm90"]["default"]["kernels"][0]["family"] == "mylib"
    KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[]).check(prof)


def _taught(family: str) -> bool:
    try:
        Decoder().teach("k", family=family)
    except TeachingError:
        return False
    return True


def _read(family: str) -> bool:
    kernel = {"name": "k", "kind": "pointwise", "family": family, "layout": None, "fused_ops": [], "op": None}
    try:
        BaselineKernel.from_json(kernel, "kernels[0]")
    except ValueError:
        return False
    return True


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.from_regex(r"[A-Za-z0-9][\w.-]*"))
@example("flash-attn")
@example("my.lib_2")
@example("-lib")
@example("a b")
@example("")
@example("é")
def test_a_baseline_holds_every_family_the_decoder_can_be_taught_and_no_other(family: str) -> None:
    assert _read(family) == _taught(family)


def test_a_kernel_that_moved_to_another_dtype_differs_from_the_baseline(trace: Trace, tmp_path: Path) -> None:
    # Trial report: a baseline of the eager GeGLU passed a run whose GELU ran in fp32 (the
    # baseline kept no dtype), where kernelprof diff told the move.
    stored = Signature.of(load_trace(trace("geglu_eager")))
    gelu = next(i for i, k in enumerate(stored.kernels) if k.fused_ops == ("gelu",))
    moved = replace(
        stored, kernels=tuple(replace(k, dtype="fp32") if i == gelu else k for i, k in enumerate(stored.kernels))
    )
    lines = compare(stored, moved, "stable")
    assert lines is not None
    assert "dtype changes: pointwise: bf16 2 -> 1, fp32 0 -> 1" in lines
    assert any(line.startswith(f"#{gelu} pointwise/aten: bf16 in the baseline, fp32 in this run  ") for line in lines)
    # Stored and read back, the dtype is kept; a file written before dtypes were kept (no field)
    # and a kernel whose dtype one side does not know compare as before.
    back = Signature.from_json(json.loads(json.dumps(stored.to_json(load_trace(trace("geglu_eager"))))))
    assert [k.dtype for k in back.kernels] == [k.dtype for k in stored.kernels]
    assert compare(back, moved, "exact") is not None
    data = stored.to_json(load_trace(trace("geglu_eager")))
    for kernel in data["kernels"]:
        del kernel["dtype"]
    assert compare(Signature.from_json(data), moved, "exact") is None
    unknown = replace(moved, kernels=tuple(replace(k, dtype=None) for k in moved.kernels))
    assert compare(stored, unknown, "exact") is None
    with pytest.raises(ValueError, match=r"kernels\[0\]\.dtype is 'float32', not one of fp64"):
        Signature.from_json({**data, "kernels": [{**data["kernels"][0], "dtype": "float32"}]})


def _as_written_before(data: dict[str, Any], fused_ops: Callable[[dict[str, Any]], list[str]]) -> dict[str, Any]:
    return {**data, "kernels": [{**kernel, "fused_ops": fused_ops(kernel)} for kernel in data["kernels"]]}


def _old_fused_ops(kernel: dict[str, Any]) -> list[str]:
    """What a baseline written before views were left out and ops read from the launching op holds."""
    name, ops = kernel["name"], kernel["fused_ops"]
    if name.startswith("triton_poi_fused__unsafe_view_"):
        return ["_unsafe_view", *ops]
    if "threshold_kernel_impl" in name:
        return ["relu"]
    if ops and (kernel["kind"] == "gemm" and ops == ["bias"] and "_bias_" not in name):
        return []
    if ops and kernel["family"] == "aten" and "CUDAFunctor" not in name and ops[0] == kernel["op"][len("aten::") :]:
        return []
    return ops


@pytest.mark.parametrize("name", ["geglu_compiled", "linear_fp32", "sync_item_stacks", "bf16_mlp_fp32_linear"])
def test_a_baseline_of_an_older_decoders_fused_ops_keeps_passing(trace: Trace, name: str) -> None:
    # Written before: a view among Inductor's ops, no bias for addmm's fp32 GEMM, "relu" for
    # ReLU's backward, nothing for ATen kernels whose functor names no op. Read as it would be
    # written now, it matches the same run.
    prof = load_trace(trace(name))
    data = Signature.of(prof).to_json(prof)
    old = _as_written_before(data, _old_fused_ops)
    assert old != data  # the file does hold what an older decoder wrote
    for mode in ("exact", "stable", "loose"):
        assert compare(Signature.from_json(old), Signature.of(prof), mode) is None


def test_a_baseline_read_as_now_still_tells_a_fusion_that_changed(trace: Trace) -> None:
    prof = load_trace(trace("geglu_compiled"))
    data = Signature.of(prof).to_json(prof)
    lost = _as_written_before(data, lambda k: ["_unsafe_view", "mul"] if k["family"] == "inductor" else k["fused_ops"])
    assert [k.fused_ops for k in Signature.from_json(lost).kernels if k.family == "inductor"] == [("mul",)]
    assert compare(Signature.from_json(lost), Signature.of(prof), "loose") is not None


def test_a_baseline_failure_tells_a_helper_kernel_as_part_of_its_work(trace: Trace) -> None:
    # As the kernel tables and `kernelprof diff` do: cuBLAS's scal_kernel is "part of gemm", on
    # the stored side too, which the file does not hold (this decoder reads it from the name).
    prof = load_trace(trace("compile_clean"))
    data = Signature.of(prof).to_json(prof)
    assert all("part_of" not in kernel for kernel in data["kernels"])  # the file's format is unchanged
    stored = Signature.from_json(data)
    helper = next(i for i, k in enumerate(stored.kernels) if "scal_kernel" in k.name)
    assert stored.kernels[helper].part_of == "gemm"
    current = Signature.of(prof)
    moved = replace(
        current, kernels=tuple(replace(k, dtype="bf16") if i == helper else k for i, k in enumerate(current.kernels))
    )
    lines = compare(stored, moved, "exact")
    assert lines is not None
    assert any(
        line.startswith(f"#{helper} pointwise/cublas (part of gemm): fp32 in the baseline, bf16 ") for line in lines
    )
    dropped = replace(current, kernels=current.kernels[:helper] + current.kernels[helper + 1 :])
    lines = compare(stored, dropped, "exact")
    assert lines is not None
    assert any(line.startswith("- pointwise/cublas (part of gemm) fp32  scal_kernel") for line in lines)
    # Told, not compared: a stored kernel that says no part (read by an older decoder) matches.
    unparted = replace(stored, kernels=tuple(replace(k, part_of=None) for k in stored.kernels))
    assert compare(unparted, current, "exact") is None
