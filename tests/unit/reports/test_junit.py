"""The JUnit properties' figures (``reports/junit.py``) read without a contradiction (issue 32 item 8)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import KernelProfile, load_trace
from pytest_kernelprof.cli import main
from pytest_kernelprof.errors import KernelProfError
from pytest_kernelprof.reports.junit import figures, properties
from tests.helpers import DATA

Trace = Callable[[str], Path]


def test_the_gpu_work_of_a_call_is_told_beside_its_busy_time_within_the_host_span(trace: Trace) -> None:
    # The eager GeGLU MLP: back-to-back kernels that run on after the host returns.
    found = figures(load_trace(trace("geglu_eager")))
    # All of call 2, the fastest call by host span: 232.5us of kernels and 1.6us of memsets.
    assert (found["kernel_us"], found["gpu_busy_us"], found["gpu_work_us"]) == (232.5, 112.8, 234.1)


def test_the_host_span_and_idle_share_that_every_text_output_leads_with_are_properties_too(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial report: kernel_us, gpu_busy_us and gpu_work_us, but not `host 161.6us` nor `(idle 30%)`,
    # which `show` leads with and docs/guide/syncs.md asserts (gpu_idle_fraction).
    prof = load_trace(trace("geglu_eager"))
    found = figures(prof)
    # In the order of the text line: kernels, host span, busy within it, its idle share, work in all.
    times = [name for name in found if name.endswith("_us") or name == "gpu_idle_fraction"]
    assert times == ["kernel_us", "wall_us", "gpu_busy_us", "gpu_idle_fraction", "gpu_work_us"]
    assert (found["wall_us"], found["gpu_idle_fraction"]) == (161.6, 0.302)  # 1 - 112.8 / 161.6
    # All of one call, the one the other figures are of.
    call = prof.fastest_call
    assert (found["wall_us"], found["gpu_idle_fraction"]) == (round(call.wall_us, 1), round(call.gpu_idle_fraction, 3))
    assert main(["show", str(trace("geglu_eager"))]) == 0
    assert "host span 161.6us, GPU busy 112.8us within it (idle 30%)" in capsys.readouterr().out


def test_the_times_are_written_with_fixed_decimals(trace: Trace) -> None:
    # A trial: gpu_idle_fraction read 0.92 in one test and 0.657 in another (str() of a rounded float).
    written = dict(properties([load_trace(trace("bf16_mlp_fp32_linear"))]))
    assert written["kernelprof.gpu_idle_fraction"] == "0.895"
    for name, prof in _gpu_traces():
        for prop, value in properties([prof]):
            figure = prop.removeprefix("kernelprof.")
            if figure == "device":
                assert value == f"{prof.device} ({prof.arch})", (name, prop, value)  # the one text
            elif figure == "gpu_idle_fraction":
                assert re.fullmatch(r"[01]\.\d{3}", str(value)), (name, prop, value)
            elif figure.endswith("_us"):
                assert re.fullmatch(r"\d+\.\d", str(value)), (name, prop, value)
            else:
                assert isinstance(value, int), (name, prop, value)  # a count


def test_the_properties_name_the_card(trace: Trace) -> None:
    # A trial: an H100's figures and an H200's looked alike on a dashboard.
    h200 = load_trace(trace("geglu_eager"))
    pairs = properties([h200, h200])
    assert pairs[:2] == [("kernelprof.profiles", 2), ("kernelprof.device", "NVIDIA H200 (sm90)")]
    assert dict(pairs)["kernelprof.2.device"] == "NVIDIA H200 (sm90)"
    # The name alone where the profile has no arch; nothing where it names no device.
    assert dict(properties([dataclasses.replace(h200, arch=None)]))["kernelprof.device"] == "NVIDIA H200"
    cpu = load_trace(DATA / "cpu_torch2.9.1_step.json.gz")
    assert cpu.device is None
    assert not any(name.endswith("device") for name, _ in properties([cpu]))


def _gpu_traces() -> list[tuple[str, KernelProfile]]:
    found = []
    for path in sorted(DATA.glob("*.json.gz")):
        try:
            prof = load_trace(path, allow_variation=True)
        except KernelProfError:  # a Kineto dump or a sweep's file: read by another loader
            continue
        if prof.has_device_activity:
            found.append((path.name, prof))
    return found


def _contradictions(kernel: float, busy: float, work: float, wall: float, memory: float, overlapped: bool) -> list[str]:
    """What no single call can show (figures rounded to 0.1us, so 0.15 of slack)."""
    wrong = []
    if busy > work + 0.15:
        wrong.append(f"GPU busy {busy} above GPU work {work}")
    if busy > wall + 0.15:
        wrong.append(f"GPU busy {busy} above the host span {wall}")
    if work > kernel + memory + 0.15:
        wrong.append(f"GPU work {work} above kernels {kernel} + memory ops {memory:.1f}")
    if not overlapped and kernel > work + 0.15:
        wrong.append(f"kernels {kernel} above GPU work {work} with no kernels overlapping")
    return wrong


def _overlapped(prof: KernelProfile) -> bool:
    spans = sorted((k.start_us or 0.0, (k.start_us or 0.0) + k.duration_us) for k in prof.fastest_call.kernels)
    return any(start < end - 0.001 for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


def test_the_per_call_figures_of_every_recorded_trace_could_all_be_one_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Medians taken figure by figure mixed calls: the eager decode step printed 78.3us of kernels
    # (each kernel's median) beside 78.6us of GPU work (call 2) and no memory op.
    traces = _gpu_traces()
    assert len(traces) > 40
    wrong = {}
    for name, prof in traces:
        memory = sum(m.duration_us for m in prof.fastest_call.memory_ops)
        overlapped = _overlapped(prof)
        found = figures(prof)
        junit = _contradictions(
            found["kernel_us"], found["gpu_busy_us"], found["gpu_work_us"], round(prof.wall_us, 1), memory, overlapped
        )
        assert main(["show", str(DATA / name)]) == 0
        out = capsys.readouterr().out
        kernel = float(
            re.findall(r"^[\d,]+ launch(?:es)?(?: \([\d,]+ graph\))?, ([\d,.]+)us in kernels", out, re.M)[0].replace(
                ",", ""
            )
        )
        line = r"host span ([\d,.]+)us, GPU busy ([\d,.]+)us within it .*GPU work ([\d,.]+)us in all"
        host = re.findall(line, out)[0]
        wall, busy, work = (float(x.replace(",", "")) for x in host)
        shown = _contradictions(kernel, busy, work, wall, memory, overlapped)
        if junit or shown:
            wrong[name] = {"junit": junit, "show": shown}
    assert not wrong


def test_the_decode_steps_figures_are_its_fastest_calls() -> None:
    prof = load_trace(DATA / "h200_decode_eager.json.gz")
    assert [round(c.wall_us, 1) for c in prof.calls] == [4417.0, 1010.9, 984.2]
    assert prof.fastest_call is prof.calls[2]
    assert figures(prof)["kernel_us"] == round(prof.calls[2].kernels.total_us, 1) == 78.6
    assert (prof.wall_us, prof.gpu_busy_us, prof.gpu_work_us) == (
        prof.calls[2].wall_us,
        prof.calls[2].gpu_busy_us,
        prof.calls[2].gpu_work_us,
    )
    assert round(prof.kernels.total_us, 1) == 78.3  # each kernel's median, as the table shows them


def test_a_short_message_keeps_its_head_and_what_to_do_within_pytests_bound() -> None:
    from pytest_kernelprof.reports.junit import MESSAGE_CHARS, short_message

    update = "if the change is intended: pytest --kernelprof-update 't.py::test_b'"
    diff = [f"= gemm/nvjet bf16 tn  kernel_{i}" for i in range(30)]
    message = "\n".join(["x" * 600, "kernels per call: 4 -> 5", "--- baseline", "+++ this run", *diff, update])
    lines = short_message(message).splitlines()
    assert len("\n".join(lines)) <= MESSAGE_CHARS
    assert lines[0].startswith("xxx")
    assert "chars...]" in lines[0]  # a first line too long, clipped
    assert lines[1:] == [update, "(the rest, 33 lines, is in this failure's text)"]
    assert short_message("\n".join(diff[:3] + [update])) == "\n".join(diff[:3] + [update])  # within the bound
    assert short_message("\n".join(diff)) == "\n".join(diff)  # nothing that acts: pytest cuts it


def test_a_short_message_keeps_a_to_fix_line_whole_or_leaves_it_out() -> None:
    # A trial read `to fix: ... copy into p[...25 chars...]_memory=True) with non_blocking=True`.
    from pytest_kernelprof.reports.junit import MESSAGE_CHARS, short_message

    long_fix = "  to fix: a copy to or from pageable memory blocks the host: " + "pin it " * 30
    short_fix = "  to fix: keep them on the GPU"
    head = ["AssertionError: assert 1 == 0", *(f"  line {i} " + "." * 60 for i in range(8))]
    lines = short_message("\n".join([*head, long_fix, short_fix])).splitlines()
    assert len("\n".join(lines)) <= MESSAGE_CHARS
    assert long_fix not in lines
    assert not any("chars...]" in line for line in lines), lines
    assert lines[-2:] == [short_fix, "(the rest, 4 lines, is in this failure's text)"]  # 3 of the head, the fix


def test_a_short_message_never_ends_a_table_at_its_header() -> None:
    # A trial read `found 0 of 4 kernels ...:`, the table's header, then `nearest names: ...`.
    from pytest_kernelprof.reports.junit import short_message

    first = "KernelMatchError: expected exactly one kernel with kind='reduction', matched 0 of 4 kernels" + "." * 150
    header = "#  kind       family  dtype  layout  median us  name"
    rows = [f"{i}  gemm       nvjet   bf16   tn            56.0  nvjet_sm90_tst_{'x' * 80}_TNT" for i in range(4)]
    hint = "nearest names: " + ", ".join(f"'geglu_{i}'" for i in range(6))
    lines = short_message("\n".join([first, header, *rows, hint])).splitlines()
    assert lines == [first, hint, "(the rest, 5 lines, is in this failure's text)"]
    # With room for a row, the header stays above it.
    lines = short_message("\n".join([first[:100], header, *rows, hint])).splitlines()
    assert lines == [first[:100], header, rows[0], hint, "(the rest, 3 lines, is in this failure's text)"]
    # Nothing that acts, where pytest's cut (whole lines) would end at the header: cut here, without it.
    lines = short_message("\n".join(["x" * 300, header, *rows])).splitlines()
    assert lines == ["x" * 300, "(the rest, 5 lines, is in this failure's text)"]
    # ... and where it would keep a row, the message is pytest's to cut.
    message = "\n".join(["x" * 100, header, *rows])
    assert short_message(message) == message
