"""The profile's values (``model/profiles.py``) show as one line in a repr and as their table
in IPython."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_kernelprof as kp
from pytest_kernelprof import load_trace
from pytest_kernelprof.cli import main
from tests.helpers import DATA

Trace = Callable[[str], Path]


@pytest.fixture
def linear(trace: Trace) -> kp.KernelProfile:
    return load_trace(trace("linear_eager"))


def test_reprs_are_one_line_and_ipython_gets_the_table(linear: kp.KernelProfile) -> None:
    shown: list[str] = []

    class Printer:
        def text(self, text: str) -> None:
            shown.append(text)

    for value in (linear, linear.kernels, linear.ops, linear.calls[0]):
        assert "\n" not in repr(value)
        value._repr_pretty_(Printer(), False)
        assert "\n" in shown[-1]
    assert "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT" in shown[1]


def test_a_trace_files_name_stays_on_the_tables_first_line(trace: Trace, tmp_path: Path) -> None:
    """The table starts with where the profile came from: a file named with a newline and
    ``::error::`` (an artifact from another job) must not start a line, a workflow command."""
    path = tmp_path / "x\n::error::fromfilename.json.gz"
    path.write_bytes(trace("sync_device").read_bytes())
    prof = load_trace(path)
    assert len(prof.kernels) == 1
    text = prof.table()
    assert not [line for line in text.splitlines() if line.strip().startswith("::")], text
    assert text.splitlines()[0].endswith(
        r"x\n::error::fromfilename.json.gz on NVIDIA H200 (sm90): 3 calls (each kernel's time its median over them)"
    )
    assert "\n" not in repr(prof)


def test_the_line_that_names_the_fastest_call_shows_its_own_syncs(trace: Trace) -> None:
    from dataclasses import replace

    from pytest_kernelprof.model import SyncList

    prof = load_trace(trace("copy_dtoh_pageable_nonblocking"))
    assert [round(c.syncs[0].duration_us, 1) for c in prof.calls] == [297.2, 298.5, 291.0]
    assert round(prof.syncs[0].duration_us, 1) == 291.0  # the fastest call's own (a trial: it was 297.2, no call's)
    line, *table = prof.host_summary().splitlines()
    assert line.startswith("call 2, numbered from 0, the fastest of 3 by host span:")
    assert line.endswith(", 1 host sync:")
    assert table[1].split()[:5] == ["0", "cudaMemcpyAsync", "copy", "DtoH", "pageable"]
    assert table[1].split()[5] == "291.0"  # call 2's own
    # Calls that synced differently: the call with the most, said so.
    twice = SyncList([*prof.calls[2].syncs, *prof.calls[2].syncs])
    calls = (*prof.calls[:2], replace(prof.calls[2], syncs=twice))
    varied = replace(prof, calls=calls, call=replace(prof.call, syncs=twice))
    line = varied.host_summary().splitlines()[0]
    assert line.endswith(", 2 host syncs (call 2's, the call with the most: the calls synced differently):")


def test_the_per_call_line_gives_the_kernel_tables_sum_where_the_call_differs() -> None:
    # Trial report: a failed count's table of medians added to 221.6us, the line under it said
    # "222.8us in kernels" (the then median call's own), and the two read as contradicting each other.
    prof = load_trace(DATA / "h200_geglu_compiled.json.gz")
    lines = prof.table().splitlines()
    # The header "median us": medians over the calls (a row has one word fewer: "fused ops" is one cell).
    column = lines[1].split().index("median") - 1
    table_us = sum(float(row.split()[column]) for row in lines[2:6])
    assert f"{table_us:.1f}" == "221.6" != f"{prof.fastest_call.kernels.total_us:.1f}"
    assert lines[-1].startswith(
        "call 2, numbered from 0, the fastest of 3 by host span: 4 launches, 222.1us in kernels "
        "(the table's medians add to 221.6us), host span 223.0us"
    )


def _gemm_in_calls(*kernels: int) -> kp.KernelProfile:
    """A profile (allow_variation=True) whose call i launched ``kernels[i]`` GEMMs under one mm."""
    from tests.helpers import Stream, build

    s = Stream()
    for i, count in enumerate(kernels):
        t = 100.0 * i
        s.step(i, t, 60)
        mm = s.op("aten::mm", t + 1, 50)
        for n in range(count):
            s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", t + 2 + 5 * n)
    return build(s, allow_variation=True)


@pytest.mark.parametrize("kernels", [(0, 1, 1), (1, 1, 0)])
def test_kernels_of_calls_that_differ_refuse_to_answer_for_call_0(kernels: tuple[int, ...]) -> None:
    # An adversarial probe: where call 0 lost its GEMM, len(prof.kernels) == 0 and
    # count(kind="gemm") == 0 answered for call 0 alone, silently, while calls 1 and 2 ran it.
    from pytest_kernelprof import VariedProfileError

    prof = _gemm_in_calls(*kernels)
    assert prof.varied
    with pytest.raises(VariedProfileError) as raised:
        prof.kernels.count(kind="gemm")
    message = str(raised.value)
    counts = ", ".join(f"call {i}: {n} kernel{'' if n == 1 else 's'}" for i, n in enumerate(kernels))
    assert counts in message
    assert "launched nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT, which call" in message
    assert ".kernels, or every call" in message
    assert 'all(c.kernels.count(kind="gemm") == 1 for c in prof.calls)' in message
    assert isinstance(raised.value, AssertionError)
    # Each call still answers for itself, and the profile's table and repr still say the calls differ.
    assert [c.kernels.count(kind="gemm") for c in prof.calls] == list(kernels)
    assert "calls launched different kernel sequences" in prof.table()
    assert "3 calls" in repr(prof)
    assert re.match(r"call \d, numbered from 0, the fastest of 3 by host span: ", prof.host_summary())


def test_the_ops_of_calls_that_differ_say_they_are_call_0s() -> None:
    # prof.ops of calls that launched different kernels is call 0's own: its table said nothing of
    # whose, and a failed `"op" in prof.ops` called its times medians over the 3 calls.
    prof = _gemm_in_calls(1, 2, 1)
    assert prof.varied
    table = prof.ops.table()
    assert table.splitlines()[0].split()[2:5] == ["call", "0", "cpu"]
    assert "median" not in table
    assert prof.ops.heading == "the ops of call 0"


def test_kernels_of_calls_alike_still_answer() -> None:
    prof = _gemm_in_calls(1, 1, 1)
    assert not prof.varied
    assert prof.kernels.count(kind="gemm") == 1


def _cpu_trace_with_an_op_in_call(
    tmp_path: Path, call: int, name: str = "aten::_scaled_dot_product_attention_math", cat: str = "cpu_op"
) -> Path:
    """The recorded CPU trace with one more op inside call ``call``'s ProfilerStep range."""
    import gzip
    import json

    trace = json.loads(gzip.decompress((DATA / "cpu_torch2.13.0_step.json.gz").read_bytes()))
    events = trace["traceEvents"]
    step = sorted((e for e in events if str(e.get("name", "")).startswith("ProfilerStep")), key=lambda e: e["ts"])[call]
    op = {"ph": "X", "cat": cat, "name": name, "pid": step["pid"]}
    events.append({**op, "tid": step["tid"], "ts": step["ts"] + step["dur"] - 2, "dur": 1.0, "args": {}})
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    return path


@pytest.mark.parametrize("call", [0, 1])
def test_ops_of_calls_that_differ_refuse_to_answer_for_call_0(tmp_path: Path, call: int) -> None:
    # An adversarial probe: an op that ran in call 1 alone was not `in prof.ops`, so
    # `assert "aten::x" not in prof.ops` passed; one that ran in call 0 alone was in it.
    from pytest_kernelprof import VariedProfileError

    name = "aten::_scaled_dot_product_attention_math"
    prof = load_trace(_cpu_trace_with_an_op_in_call(tmp_path, call))
    with pytest.raises(VariedProfileError) as raised:
        assert name not in prof.ops
    message = str(raised.value)
    assert "the 3 profiled calls ran different ops" in message
    assert f"call {call} ran {name}, which call {1 - call} did not" in message
    assert "prof.calls[1].ops, or every call" in message
    assert [name in c.ops for c in prof.calls] == [i == call for i in range(3)]
    assert "KernelProfile from" in prof.table()


def test_recorded_cpu_trace_ops_still_answer() -> None:
    prof = load_trace(DATA / "cpu_torch2.13.0_step.json.gz")
    assert "aten::linear" in prof.ops


def test_modules_of_calls_that_differ_refuse_to_answer_for_call_0(tmp_path: Path) -> None:
    from pytest_kernelprof import VariedProfileError

    prof = load_trace(_cpu_trace_with_an_op_in_call(tmp_path, 1, "nn.Module: extra", "user_annotation"))
    with pytest.raises(
        VariedProfileError, match=r"call 1 ran nn.Module: extra, which call 0 did not\). Ask one call, "
    ):
        assert "extra" not in prof.modules
    with pytest.raises(VariedProfileError, match=r"prof.calls\[1\].modules, or every call"):
        prof.module("extra")
    assert "extra" in prof.calls[1].modules


def test_show_and_a_profiles_section_tell_the_memory_ops_alike(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial read "memory ops: ..." in show and "memory ops per call: ..." in a failure's profile
    # section: each is one call's, and both say whose in the same words; show names its one call,
    # as its table's "call 1 us" does ("per call" under show --calls' "call 0:" read wrong: a trial).
    assert main(["show", str(trace("geglu_eager"))]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("memory ops")]
    prof = load_trace(trace("geglu_eager"))
    section = [line for line in prof.table().splitlines() if line.startswith("memory ops")]
    assert shown == ["memory ops in call 2: Memset (Device) x2"]
    assert section == ["memory ops per call: Memset (Device) x2"]
    # None, said as show says it: a section without the line read as "not reported" (a trial).
    linear = load_trace(trace("linear_eager")).table().splitlines()
    assert [line for line in linear if line.startswith("memory ops")] == ["memory ops per call: none"]
    assert main(["show", "--calls", str(trace("geglu_eager"))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("memory ops")] == [
        f"memory ops in call {i}: Memset (Device) x2" for i in range(3)
    ]
    # Where the calls made different memory ops, the section's are one call's, which it names.
    other = dataclasses.replace(prof, memory_from=2)
    assert "memory ops per call (call 2's: the calls made different ones): Memset (Device) x2" in other.table()


def test_the_device_label_is_the_card_and_its_arch_or_the_name_alone(linear: kp.KernelProfile) -> None:
    """One property names the card for every output (the table, ``kernelprof show``, the timeline
    page, a sweep's head, the JUnit property): no ``(None)`` where a trace gives no arch."""
    assert linear.device_label == "NVIDIA H200 (sm90)"
    assert dataclasses.replace(linear, arch=None).device_label == "NVIDIA H200"
    assert dataclasses.replace(linear, device=None).device_label is None
    assert dataclasses.replace(linear, device=None, arch=None).device_label is None


CPU_ONLY = "CPU only (no GPU activity recorded)"


def test_a_cpu_profile_is_cpu_only_in_its_table_its_repr_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    """One phrase where a profile recorded no GPU activity: its table (a failure's section, ``show
    --medians``) and repr said "no GPU named", ``kernelprof show`` and the timeline page "CPU only"."""
    path = DATA / "cpu_torch2.13.0_calls.json.gz"
    prof = load_trace(path)
    assert prof.table().splitlines()[0] == f"KernelProfile from {path}, {CPU_ONLY}: 3 calls"
    assert repr(prof) == f"KernelProfile('tests/data/cpu_torch2.13.0_calls.json.gz', {CPU_ONLY}, 3 calls)"
    for args in (["show"], ["show", "--medians"]):
        assert main([*args, str(path)]) == 0
        head = capsys.readouterr().out.splitlines()[0]
        assert CPU_ONLY in head, args
        assert "no GPU named" not in head, args
    # A trace that names its card and recorded no GPU work: the card, then the phrase, as show says it.
    named = dataclasses.replace(prof, device="NVIDIA H200", arch="sm90")
    assert f" on NVIDIA H200 (sm90), {CPU_ONLY}: 3 calls" in named.table().splitlines()[0]
    assert f"' on NVIDIA H200 (sm90), {CPU_ONLY}, 3 calls)" in repr(named)


def test_no_gpu_named_is_said_only_of_gpu_work_in_a_trace_that_names_no_card(linear: kp.KernelProfile) -> None:
    unnamed = dataclasses.replace(linear, device=None, arch=None)
    assert unnamed.has_device_activity
    assert ", no GPU named: 3 calls" in unnamed.table().splitlines()[0]
    assert ", no GPU named: 1 kernel per call, 3 calls)" in repr(unnamed)
    assert "CPU only" not in unnamed.table()
