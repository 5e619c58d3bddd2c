"""The builder's rules on small hand-made event streams (times in ns)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_kernelprof import (
    IncompleteProfileError,
    IncompleteProfileWarning,
    KernelProfile,
    KernelSequenceMismatchError,
    NoDeviceActivityError,
    VariedProfileError,
    load_trace,
)
from tests.helpers import DATA, Stream, build, write


def linear_calls(n: int = 3, durations: tuple[float, ...] = (2.0, 2.0, 2.0)) -> Stream:
    s = Stream()
    for i in range(n):
        t = 100.0 * i
        s.step(i, t, 50)
        s.op("aten::linear", t + 1, 40)
        s.op("aten::t", t + 2, 3)
        mm = s.op("aten::addmm", t + 10, 20)
        s.launch(mm, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN", t + 12, dur=durations[i])
    return s


def test_calls_come_from_profiler_steps_and_durations_are_medians() -> None:
    prof = build(linear_calls(durations=(1.0, 9.0, 3.0)))
    assert len(prof.calls) == 3
    assert prof.kernels.one(kind="gemm").duration_us == pytest.approx(3.0)
    assert [c.kernels[0].duration_us for c in prof.calls] == pytest.approx([1.0, 9.0, 3.0])
    assert prof.ops["aten::linear"].device_time_us == pytest.approx(3.0)
    assert prof.ops["aten::linear"].kernels[0].duration_us == pytest.approx(3.0)


def test_a_trace_without_steps_is_one_call() -> None:
    s = Stream()
    mm = s.op("aten::mm", 0, 20)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", 2)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", 5)
    prof = build(s)
    assert len(prof.calls) == 1
    assert len(prof.kernels) == 2


def test_kernel_op_is_resolved_against_ops_not_runtime_correlations() -> None:
    s = Stream()
    s.step(0, 0, 100)
    mm = s.op("aten::mm", 1, 50)
    corr = s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", 2)
    # An op whose own id equals the launch's CUPTI correlation id: it must not be taken.
    s.x("cpu_op", "aten::decoy", 60, 5, **{"External id": corr})
    prof = build(s)
    assert prof.kernels[0].op == "aten::mm"


def test_lost_gpu_records_raise_with_the_counts() -> None:
    s = linear_calls(1)
    mm = s.op("aten::mm", 20, 5)
    s.launch(mm, "some_kernel", 21, record=False)
    with pytest.raises(IncompleteProfileError, match=r"1 of 2 kernel launches .* \(cudaLaunchKernel x1\)"):
        build(s)
    assert build(s, check_complete=False).kernels.names == ["nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"]


def test_gpu_records_with_no_launch_record_raise_rather_than_read_as_no_syncs() -> None:
    # An adversarial probe: a trace stripped of its runtime events read as 0 launches and no
    # host syncs, so `assert not prof.syncs` and a `syncs>0` rule passed on what was not recorded.
    s = linear_calls(2)
    stripped = Stream()
    stripped.events = [e for e in s.events if e["cat"] != "cuda_runtime"]
    with pytest.raises(IncompleteProfileError, match=r"none of the 2 GPU records .* has a launch record .* nvjet_"):
        build(stripped)
    assert build(stripped, check_complete=False).kernels.names == ["nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"]
    assert build(s).launches == 1  # with them: complete


def test_a_graph_launch_with_many_records_is_complete() -> None:
    s = Stream()
    s.step(0, 0, 100)
    op = s.op("CUDAGraph::replay", 1, 50)
    s.launch(op, "triton_poi_fused_mul_0", 2, api="cudaGraphLaunch", records=3)
    prof = build(s)
    assert len(prof.kernels) == 3
    assert prof.runtime == {"cudaGraphLaunch": 1}


def test_different_sequences_fail_with_a_diff_unless_allowed() -> None:
    s = linear_calls(2)
    mm = s.op("aten::add", 140, 5)
    s.launch(mm, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)", 141)
    with pytest.raises(KernelSequenceMismatchError) as info:
        build(s)
    message = str(info.value)
    assert "call 0: 1 kernels, call 1: 2 kernels" in message
    assert "+at::native::vectorized_elementwise_kernel" in message
    assert "allow_variation=True" in message
    prof = build(s, allow_variation=True)
    assert prof.varied
    assert [len(c.kernels) for c in prof.calls] == [1, 2]
    assert len(prof.call.kernels) == 1  # the table's: the first call, not an average
    with pytest.raises(VariedProfileError, match="call 0: 1 kernel, call 1: 2 kernels"):
        len(prof.kernels)  # no one answer for calls that differ


def test_memory_ops_are_kept_apart_from_kernels() -> None:
    s = linear_calls(1)
    op = s.op("aten::zero_", 30, 5)
    s.launch(op, "Memset (Device)", 31, api="cudaMemsetAsync", cat="gpu_memset")
    s.launch(op, "Memcpy HtoD (Pageable -> Device)", 33, api="cudaMemcpyAsync", cat="gpu_memcpy")
    prof = build(s)
    assert len(prof.kernels) == 1
    assert [(m.kind, m.op) for m in prof.memory_ops] == [("memset", "aten::zero_"), ("memcpy", "aten::zero_")]
    assert prof.ops["aten::zero_"].device_time_us == pytest.approx(4.0)
    assert len(prof.ops["aten::zero_"].kernels) == 0


def test_a_kernel_without_a_launch_record_joins_the_step_that_ran_before_it() -> None:
    s = linear_calls(2)
    s.x("kernel", "orphan_kernel", 160, 1, tid=7, correlation=99999, stream=7)
    s.x("kernel", "orphan_kernel", 60, 1, tid=7, correlation=99998, stream=7)
    # Issue 34: read, with a warning that their launches are not seen (they were read silently).
    with pytest.warns(IncompleteProfileWarning, match=r"^2 of the 4 GPU records .* have no launch record"):
        prof = build(s)
    assert [c.kernels.names[-1] for c in prof.calls] == ["orphan_kernel", "orphan_kernel"]


def test_old_kineto_categories_and_lower_case_external_id() -> None:
    s = linear_calls(1)
    for ev in s.events:
        ev["cat"] = {"kernel": "Kernel", "cuda_runtime": "Runtime", "cpu_op": "Operator"}.get(str(ev["cat"]), ev["cat"])
        args = ev["args"]
        assert isinstance(args, dict)
        if "External id" in args:
            args["external id"] = args.pop("External id")
    prof = build(s)
    assert prof.kernels.one(kind="gemm").op == "aten::addmm"


def test_device_facts_come_from_device_properties() -> None:
    from pytest_kernelprof.traces.chrome import chrome_source

    source = chrome_source({"deviceProperties": [{"name": "NVIDIA A100", "computeMajor": 8, "computeMinor": 0}]}, "t")
    assert (source.device, source.arch) == ("NVIDIA A100", "sm80")
    assert chrome_source({}, "t").device is None


def test_kernels_built_fast_are_whole_kernels() -> None:
    import dataclasses

    from pytest_kernelprof.types import Kernel, MemoryOp

    prof = load_trace(DATA / "h200_train_compiled.json.gz")
    for call in (prof.call, *prof.calls):
        for kernel in call.kernels:
            assert set(vars(kernel)) == {f.name for f in dataclasses.fields(Kernel)}
            assert Kernel(**dataclasses.asdict(kernel)) == kernel
        assert call.memory_ops  # the optimizer's memsets
        for memory_op in call.memory_ops:
            assert vars(memory_op) == vars(MemoryOp(**dataclasses.asdict(memory_op)))


def test_without_steps_every_event_belongs_to_the_one_call() -> None:
    s = Stream()
    # Kernels whose launch records are missing, before the first and after the last CPU
    # event: with no steps to place them by, they still belong to the trace's one call.
    s.x("kernel", "early_kernel", 10, 1, tid=7, correlation=424241, stream=7)
    mm = s.op("aten::mm", 100, 10)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", 102)
    s.x("kernel", "late_kernel", 500, 1, tid=7, correlation=424242, stream=7)
    prof = build(s, check_complete=False)
    assert prof.kernels.names == ["early_kernel", "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", "late_kernel"]


def test_children_are_the_first_occurrences_and_say_when_others_differ() -> None:
    s = Stream()
    s.step(0, 0, 100)
    s.op("aten::linear", 1, 20)
    s.op("aten::t", 2, 3)
    s.op("aten::addmm", 10, 5)
    s.op("aten::linear", 30, 20)
    s.op("aten::matmul", 31, 10)
    s.op("aten::t", 60, 3)
    prof = build(s, check_complete=False)
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]
    assert prof.ops["aten::linear"].children_vary
    assert not prof.ops["aten::t"].children_vary


def _calls_of_spans(*spans: float) -> KernelProfile:
    """A profile of one kernel per call, the calls' host spans ``spans``."""
    s = Stream()
    for i, span in enumerate(spans):
        s.step(i, 100.0 * i, span)
        s.launch(s.op("aten::add", 100.0 * i + 1, 2), "k", 100.0 * i + 2)
    return build(s)


def test_the_profiles_figures_are_the_fastest_calls() -> None:
    # Call 0 holds the profiler's start-up and call 1 often its tail: the median of three was
    # call 1, whose idle share a trial read as the program's. The fastest call is the steady state.
    prof = _calls_of_spans(50.0, 30.0, 10.0)
    assert [c.wall_us for c in prof.calls] == [50.0, 30.0, 10.0]
    assert prof.fastest_call is prof.calls[2]
    assert prof.wall_us == 10.0
    assert prof.gpu_idle_fraction == prof.calls[2].gpu_idle_fraction


def test_of_calls_as_fast_the_first_gives_the_figures() -> None:
    prof = _calls_of_spans(50.0, 10.0, 10.0)
    assert prof.fastest_call is prof.calls[1]


def _copy_in_call(stream: Stream, call: int, name: str = "Memcpy DtoH (Device -> Pinned)") -> None:
    t = 100.0 * call
    op = stream.op("aten::copy_", t + 35, 5)
    stream.launch(op, name, t + 36, api="cudaMemcpyAsync", cat="gpu_memcpy")


def test_a_copy_in_only_one_call_is_a_copy_of_the_profile() -> None:
    s = linear_calls(3)
    _copy_in_call(s, 2)
    prof = build(s)
    assert [len(c.copies) for c in prof.calls] == [0, 0, 1]
    assert prof.copies.count(direction="DtoH") == 1
    # Its table says whose copy it is (not "call 0's", which copied nothing): one call's own time.
    assert prof.copies.times == "call 2's, the call with the most DtoH copies: the calls copied differently"
    assert "  gpu us  " in prof.copies.table().splitlines()[0]
    assert "median" not in prof.copies.table()
    assert [m.name for m in prof.memory_ops] == ["Memcpy DtoH (Device -> Pinned)"]


def test_the_call_with_the_most_dtoh_copies_stands_for_calls_that_copied_differently() -> None:
    s = linear_calls(3)
    _copy_in_call(s, 0, "Memcpy HtoD (Pinned -> Device)")
    s.launch(s.op("aten::zero_", 38, 1), "Memset (Device)", 38.5, api="cudaMemsetAsync", cat="gpu_memset")
    _copy_in_call(s, 1)
    prof = build(s)
    assert [m.name for m in prof.memory_ops] == ["Memcpy DtoH (Device -> Pinned)"]
    assert prof.copies.count(direction="DtoH") == 1


def test_varied_calls_keep_a_copy_of_any_call() -> None:
    s = linear_calls(2)
    mm = s.op("aten::mm", 130, 5)
    s.launch(mm, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN", 131)
    _copy_in_call(s, 1)
    prof = build(s, allow_variation=True)
    assert prof.varied
    assert prof.copies.count(direction="DtoH") == 1


def test_a_recorded_dtoh_copy_in_the_last_call_only_is_seen(tmp_path: Path) -> None:
    trace = json.loads(gzip.decompress((DATA / "h200_copy_dtoh_pinned_nonblocking.json.gz").read_bytes()))
    # The copies of calls 0 and 1 (their ops, runtime calls and memcpy records) taken out.
    dropped = {3075, 3078}
    trace["traceEvents"] = [
        e
        for e in trace["traceEvents"]
        if not (e.get("cat") in ("cpu_op", "gpu_memcpy", "cuda_runtime") and e["args"].get("External id") in dropped)
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    prof = load_trace(path)
    assert [len(c.copies) for c in prof.calls] == [0, 0, 1]
    assert prof.copies.count(direction="DtoH") == 1
    # Its table says whose copy it is (not "call 0's", which copied nothing).
    assert prof.copies.times == "call 2's, the call with the most DtoH copies: the calls copied differently"


def _launched_between_steps(stream: Stream) -> Stream:
    # Every runtime call moved 60 us on, into the gap after its step, on another thread.
    for e in stream.events:
        if e["cat"] == "cuda_runtime":
            e["ts"] = float(e["ts"]) + 60  # type: ignore[arg-type]
            e["tid"] = 2
    return stream


def test_gpu_records_no_call_took_are_refused_with_their_count() -> None:
    # An adversarial probe: launches outside every ProfilerStep range read as "(no kernels)".
    s = _launched_between_steps(linear_calls(3))
    with pytest.raises(IncompleteProfileError, match=r"no profiled call took 3 of the 3 GPU records .* outside every"):
        build(s)
    assert build(s, check_complete=False).kernels.names == []


def test_steps_of_zero_duration_are_refused_as_such() -> None:
    s = linear_calls(3)
    for e in s.events:
        e["dur"] = 0
    with pytest.raises(
        IncompleteProfileError, match=r"took 3 of the 3 GPU records .* 3 ProfilerStep ranges lasts 0 us"
    ):
        build(s)


def test_a_few_gpu_records_outside_the_calls_are_read_with_a_warning() -> None:
    s = linear_calls(3)
    s.launch(s.op("aten::zero_", 70, 1), "stray_kernel", 70.5)  # between call 0 and call 1
    # Issue 34: read silently before; a loss of any size is told.
    told = r"^no profiled call took 1 of the 4 GPU records .*stray_kernel x1"
    with pytest.warns(IncompleteProfileWarning, match=told):
        assert build(s).kernels.names == ["nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"]
    s.launch(s.op("aten::zero_", 270, 1), "stray_kernel", 270.5)
    s.launch(s.op("aten::zero_", 280, 1), "stray_kernel", 280.5)
    s.launch(s.op("aten::zero_", 290, 1), "stray_kernel", 290.5)
    with pytest.raises(IncompleteProfileError, match=r"took 4 of the 7 GPU records of the trace \(stray_kernel x4\)"):
        build(s)


def test_calls_that_differ_where_the_shown_names_do_not_say_where() -> None:
    # A trial: GELU in fp32 in one call only read "call 0: 5 kernels, call 1: 5 kernels" and an
    # empty diff, the shown (shortened) names being alike.
    gelu = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, {lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)"
    )
    s = Stream()
    for i, name in enumerate((gelu.replace("c10::BFloat16", "float"), gelu)):
        t = 100.0 * i
        s.step(i, t, 50)
        s.launch(s.op("aten::gelu", t + 1, 40), name, t + 2)
    with pytest.raises(KernelSequenceMismatchError) as info:
        build(s)
    assert "#0: at::native::vectorized_elementwise_kernel<8, GeluCUDAKernelImpl(...)" in str(info.value)
    assert str(info.value).endswith("in a part the shown names leave out: float -> c10::BFloat16 (2 places)")


def test_a_trace_without_gpu_activity_says_what_the_trace_holds(tmp_path: Path) -> None:
    # A trial: a loaded CPU trace's kernels said "the callable launched no GPU work", where no callable ran.
    cpu = DATA / "cpu_torch2.13.0_step.json.gz"
    with pytest.raises(NoDeviceActivityError) as raised:
        load_trace(cpu).kernels.count()
    assert str(raised.value) == (
        f"{cpu} recorded no GPU activity: it holds no kernel, memcpy or memset records and names no GPU (a "
        "CPU-only profile, recorded where CUDA was not available). Record the trace on a GPU to query its "
        "kernels. Its CPU ops (prof.ops) can be queried as they are."
    )
    assert load_trace(cpu).ops["aten::linear"].count == 2  # as it says
    s = Stream()
    s.step(0, 0, 50)
    s.op("aten::relu", 1, 10)
    on_a_gpu = write(tmp_path, s)  # names its device, "Fake GPU", and launched nothing on it
    with pytest.raises(NoDeviceActivityError) as raised:
        load_trace(on_a_gpu).kernels.count()
    assert str(raised.value).startswith(
        f"{on_a_gpu} recorded no GPU activity, though it was recorded on Fake GPU: it holds no kernel, memcpy or "
        "memset records (the profiled code launched no GPU work, its tensors on the CPU?, or CUPTI recorded nothing"
    )
