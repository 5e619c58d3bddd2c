"""``kernelprof show`` and ``kernelprof diff`` on recorded traces, and their exit statuses; where the
input is odd: a trace that lost every kernel record is refused, not shown; ``-`` reads standard input."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import IncompleteProfileError, load_trace
from pytest_kernelprof.checks.diff import diff_kernels
from pytest_kernelprof.cli import CLOSED_PIPE, main
from pytest_kernelprof.cli.show import INDUCTORS_NOTE, INDUCTORS_RANGE, OP_TREE_NOTE, OP_TREE_ROWS, op_tree, shown_op
from pytest_kernelprof.errors import QueryError
from pytest_kernelprof.tables import format_us
from tests.helpers import DATA, Stream, user_kernel_trace, write

Trace = Callable[[str], Path]


def test_show_prints_the_kernel_table(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(trace("geglu_eager"))]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA H200 (sm90), 3 calls" in out
    assert "launched by" in out
    assert out.count("nvjet_sm90_tst_") == 3
    assert "memory ops in call 2: Memset (Device) x2" in out
    assert "runtime calls: cuLaunchKernelEx x3, cudaLaunchKernel x2, cudaMemsetAsync x2" in out


def test_the_time_column_of_show_says_whose_times_it_holds(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial report: show's column `us` (one call's own times) read 59.2 where a failure's `median us`
    # (each kernel's median over the calls) read 60.1 for the same kernel: a contradiction, unlabelled.
    prof = load_trace(trace("geglu_eager"))
    assert main(["show", str(trace("geglu_eager"))]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("#  kind"))
    assert "  call 2 us  median us  launched by" in header  # the call's own, then a failure's medians
    assert main(["show", "--calls", str(trace("geglu_eager"))]) == 0
    headers = [line for line in capsys.readouterr().out.splitlines() if line.startswith("#  kind")]
    assert [re.findall(r"call \d us", line) for line in headers] == [["call 0 us"], ["call 1 us"], ["call 2 us"]]
    assert "  median us  launched by" in prof.kernels.table()  # a failure's: each kernel's median


def test_show_says_how_to_teach_a_placed_kernels_unknown_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: the cuDNN attention kernel's dtype read "?" and show said nothing of it (the line on
    # Inductor's kernels counted 6 of the table's 7).
    path = str(DATA / "h200_llama_layer_compiled_modules.json.gz")
    assert main(["show", path]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("dtype ?: no evidence gave the dtype of 1 kernel name; teach it with --kernels:")
    cudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0"
    assert out[at + 1] == f"  --kernels '{cudnn}: dtype=...'"
    assert out[at + 2].startswith("  (where dtype is one of fp64, fp32, ")
    assert any(line.startswith("dtype ?: this trace has no dtype for 6 Inductor kernel names;") for line in out)
    # Taught as the line says, the kernel has its dtype and the line is gone.
    assert main(["show", path, "--kernels", f"{cudnn}: dtype=bf16"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(" bf16 (user) " in line and "cudnn_generated" in line for line in out)
    assert not any(line.startswith("dtype ?: no evidence") for line in out)


def test_show_says_why_an_inductor_kernels_dtype_is_unknown(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # A trial read the recorded compiled GeGLU's `?` as dtype questions failing on compiled code.
    assert main(["show", str(trace("geglu_compiled"))]) == 0
    note = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("dtype ?:"))
    assert note.startswith("dtype ?: this trace has no dtype for 1 Inductor kernel name; a trace the plugin saves")
    # Names, and the rows where more rows have them: a trial counted 12 rows of "?" against "2 kernels".
    assert main(["show", str(DATA / "h200_decode_graphs.json.gz")]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " inductor " in line and "  ?  " in line]
    assert len(rows) == 12
    assert "dtype ?: this trace has no dtype for 2 Inductor kernel names (12 kernels); " in out
    # What to do, said here: a wheel carries no docs/ to point at (a trial); in one short line (330
    # characters read as a wall: a trial).
    assert note.endswith("(--kernelprof-trace-dir, kernelprof.captures[i].export_trace(path))")
    assert "docs/" not in note
    assert len(note) <= 200  # (330 read as a wall; "from a live profile" added: a loaded trace re-saved has none)
    assert main(["show", str(DATA / "h100_inductor_geglu_bf16.json.gz")]) == 0  # recorded with them: no line
    assert "dtype ?" not in capsys.readouterr().out


def test_show_calls_and_ops(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(trace("linear_eager")), "--calls", "--ops"]) == 0
    out = capsys.readouterr().out
    calls = [line for line in out.splitlines() if line.startswith("call ")]
    assert calls == ["call 0:", "call 1:", "call 2 (the fastest call by host span):"]  # a trial: unmarked
    assert "\n  aten::t " in out  # the tree is indented under aten::linear
    assert "\n    aten::transpose " in out


def test_show_ops_marks_inductors_own_ranges(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: the graph call and the range named after its Triton kernel read as ops, which
    # Kernel.op skips and the timeline's op table leaves out; the tree lists them, marked.
    prof = load_trace(trace("geglu_compiled"))
    graph = next(name for name in prof.ops if name.startswith("## Call CompiledFxGraph "))
    kernel = "triton_poi_fused__unsafe_view_gelu_mul_0"
    assert kernel in prof.ops
    assert main(["show", str(trace("geglu_compiled")), "--ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Its hash cut to 8 characters, as diff --ops shows it: 52 made the op column over 100 wide (a trial).
    shown = graph[: len("## Call CompiledFxGraph ") + 8] + "... ##"
    assert len(graph) > len(shown)
    assert any(line.startswith(f"  {shown}  (Inductor's range) ") for line in lines)
    assert any(line.startswith(f"    {kernel}  (Inductor's range) ") for line in lines)
    assert any(line.startswith("    aten::mm ") for line in lines)  # an op of the graph's: unmarked
    assert not any("Torch-Compiled Region" in line and "Inductor's range" in line for line in lines)


def test_show_gives_one_call_whole(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial report: show's launches/host line was one call's, its sync and copy tables
    # (297.2, 205.7) and --ops the medians over calls: one section, figures of several calls.
    prof = load_trace(trace("copy_dtoh_pageable_nonblocking"))
    median = prof.fastest_call
    assert median.index == 2
    assert median.copies[0].duration_us != prof.copies[0].duration_us  # the trap: the copies are medians
    assert main(["show", str(trace("copy_dtoh_pageable_nonblocking")), "--ops"]) == 0
    out = capsys.readouterr().out
    head = "call 2, numbered from 0, the fastest of 3 by host span (--calls shows each)"
    assert f"\n{head}:\n" in out
    assert f"{median.syncs[0].duration_us:.1f}  aten::copy_" in out
    assert f"{median.copies[0].duration_us:.1f}  aten::copy_" in out
    assert f"{prof.copies[0].duration_us:.1f}  aten::copy_" not in out
    assert f"host span {median.wall_us:.1f}us, GPU busy {median.gpu_busy_us:.1f}us" in out
    assert op_tree(median.ops) in out


@pytest.mark.parametrize("name", ["geglu_eager", "copy_dtoh_pageable_nonblocking"])
def test_show_words_the_call_figures_as_the_profile_line_does(
    trace: Trace, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial report: show said "launches: 5; host 223.3us, ..." and "GPU time: 234.0us in kernels", the
    # profile line of a failed assertion "5 launches, 234.0us in kernels, host 223.3us, ...".
    prof = load_trace(trace(name))
    line = prof.host_summary().splitlines()[0].split("by host span: ", 1)[1]  # after "call 1, ... by host span: "
    line = re.sub(r" \(the table's medians add to [0-9.]+us\)", "", line)
    assert main(["show", str(trace(name))]) == 0
    out = capsys.readouterr().out
    assert line in out.splitlines()
    assert "launches:" not in out
    assert "GPU time:" not in out
    assert main(["show", str(trace(name)), "--calls"]) == 0
    out = capsys.readouterr().out
    for call in prof.calls:
        launches = f"{call.launches} launch{'' if call.launches == 1 else 'es'}"
        assert (
            f"\n{launches}, {call.kernels.total_us:.1f}us in kernels, host span {call.wall_us:.1f}us, GPU busy" in out
        )


def test_diff_eager_and_compiled_geglu_shows_the_fusion(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(trace("geglu_eager")), str(trace("geglu_compiled"))]) == 1
    out = capsys.readouterr().out
    assert "- pointwise/aten bf16 [gelu]" in out
    assert "- pointwise/aten bf16 [mul]" in out
    assert "+ pointwise/inductor ? [gelu,mul]  triton_poi_fused__unsafe_view_gelu_mul_0" in out
    assert "fused: gelu (aten pointwise) + mul (aten pointwise) -> triton_poi_fused__unsafe_view_gelu_mul_0" in out
    assert "count changes: pointwise: 2 -> 1" in out
    assert "dtype changes" not in out  # the Triton kernel's dtype is unknown: no move to tell
    # show's figures: 232.5us, 222.1us, of the calls the line above the table names
    assert "\nthe fastest call by host span: a's call 2, b's call 2 (of 3 each, numbered from 0)\n" in out
    assert re.search(r"\nGPU time in kernels +232\.5us +222\.1us +-4\.5%\n", out)
    assert "the kernels differ" in out


def test_diff_compares_the_host_span_and_gpu_work_of_the_calls_too(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial report: only "GPU time in kernels" was compared; the compiled GeGLU's kernels are
    # 4.5% faster, but its host span is 38% longer (show: host span 161.6us, then 223.0us).
    assert main(["diff", str(trace("geglu_eager")), str(trace("geglu_compiled"))]) == 1
    lines = capsys.readouterr().out.splitlines()
    kernels = next(i for i, line in enumerate(lines) if line.startswith("GPU time in kernels"))
    assert [line.split() for line in lines[kernels + 1 : kernels + 4]] == [
        ["host", "span", "161.6us", "223.0us", "+38.0%"],
        ["GPU", "idle", "in", "host", "span", "30%", "52%", "+22", "pt"],  # points, as the two figures differ
        ["GPU", "work", "in", "all", "234.1us", "223.6us", "-4.5%"],
    ]
    # Each call's span beside the fastest's: one call's noise told from a change (a trial).
    each = "host span of each call, from call 0: a 3467.4, 223.3, 161.6us; b 3088.5, 371.0, 223.0us"
    assert lines[kernels + 4] == each
    spans = [[round(call.wall_us, 1) for call in load_trace(trace(n)).calls] for n in ("geglu_eager", "geglu_compiled")]
    assert spans == [[3467.4, 223.3, 161.6], [3088.5, 371.0, 223.0]]
    # The figures show gives for each side's fastest call.
    for name, host, work in (("geglu_eager", "161.6", "234.1"), ("geglu_compiled", "223.0", "223.6")):
        assert main(["show", str(trace(name))]) == 0
        assert f"host span {host}us, GPU busy" in (out := capsys.readouterr().out)
        assert f"GPU work {work}us in all" in out


def test_diff_compares_the_launches_syncs_and_copies_of_the_calls(capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: a CUDA graph's 49 launches -> 2 showed nowhere in the diff (kernels per call 49 -> 25).
    eager, graphs = DATA / "h200_decode_eager.json.gz", DATA / "h200_decode_graphs.json.gz"
    assert main(["diff", str(eager), str(graphs)]) == 1
    table = capsys.readouterr().out.splitlines()[2:11]
    assert table[4] == "the fastest call by host span: a's call 2, b's call 2 (of 3 each, numbered from 0)"
    assert [line.split() for line in table[6:]] == [
        ["launches", "49", "2", "(1", "graph)", "-47"],  # each count's change, 0 where none (a trial read blank)
        ["host", "syncs", "0", "0", "0"],
        ["DtoH", "copies", "0", "0", "0"],
    ]
    b = load_trace(graphs).fastest_call
    assert (b.launches, b.graph_launches) == (2, 1)
    assert main(["diff", str(DATA / "h200_sync_item_stacks.json.gz"), str(DATA / "h200_sync_device.json.gz")]) == 1
    rows = {line.rsplit(None, 3)[0].strip(): line.split()[-3:] for line in capsys.readouterr().out.splitlines()[2:11]}
    syncs = len(load_trace(DATA / "h200_sync_device.json.gz").fastest_call.syncs)
    assert rows["host syncs"] == ["1", str(syncs), f"{syncs - 1:+d}" if syncs != 1 else "0"]
    assert rows["DtoH copies"][0] == "1"
    # Memory ops by kind, as a baseline's `memcpys: 0 -> 1` counts them: 2 memsets against a memset
    # and a memcpy read as "memory ops 2 2", unchanged (a trial).
    assert main(["diff", str(DATA / "h200_geglu_eager.json.gz"), str(DATA / "h200_sync_item_stacks.json.gz")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2].split() == ["per", "call", "a", "b"]  # the counts of every call, apart from the fastest call's
    rows = {line.split()[0]: line.split()[-2:] for line in out[3:6]}
    assert rows["memsets"] == ["2", "1"]


def test_diff_compiled_and_eager_geglu_shows_the_lost_fusion(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(trace("geglu_compiled")), str(trace("geglu_eager"))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith(("split:", "fused:"))] == [
        "split: triton_poi_fused__unsafe_view_gelu_mul_0 -> gelu (aten pointwise) + mul (aten pointwise)"
    ]


def test_diff_tells_a_move_to_another_dtype(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # The trial's bf16 linear against its fp32 one: the same count, another library, another dtype.
    assert main(["diff", str(trace("linear_eager")), str(trace("linear_fp32"))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "dtype changes: gemm: bf16 1 -> 0, fp32 0 -> 1" in out
    assert not any(line.startswith("count changes") for line in out)
    assert any(line.startswith("- gemm/nvjet bf16 tn [bias]  nvjet_sm90_") for line in out)
    # addmm's bias-add runs in the fp32 GEMM too (beta=1 on the bias copied in): no fusion lost.
    assert any(line.startswith("+ gemm/cublas fp32 tn [bias]  sm80_xmma_gemm_f32f32") for line in out)


def test_diff_counts_a_bias_epilogue_that_took_over_an_add_as_a_fusion(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", str(trace("matmul_add_eager")), str(trace("matmul_add_compiled"))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "+ gemm/nvjet bf16 nn [bias]  nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_NNT" in out
    assert [line for line in out if line.startswith(("fused:", "removed"))] == [
        "fused: nvjet gemm + add (aten pointwise) -> nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_NNT"
    ]


def test_diff_of_a_trace_with_itself_is_clean(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(trace("geglu_compiled"))
    assert main(["diff", path, path]) == 0
    assert "same kernels" in capsys.readouterr().out


def test_renamed_kernels_of_the_same_shape_pair_up(trace: Trace) -> None:
    from pytest_kernelprof.types import Kernel

    tile_a = Kernel(name="nvjet_sm90_tst_64x8_64x16_1x2_h_bz_TNT", kind="gemm", family="nvjet", layout="tn")
    tile_b = Kernel(name="nvjet_sm90_tst_128x64_64x4_1x2_h_bz_TNT", kind="gemm", family="nvjet", layout="tn")
    gelu = Kernel(name="gelu_kernel", kind="pointwise", family="aten", fused_ops=("gelu",))
    renamed = diff_kernels([tile_a, gelu], [tile_b, gelu])
    assert [c.mark for c in renamed.changes] == ["~", "="]
    assert not renamed.same
    assert diff_kernels([tile_a, gelu], [tile_b, gelu], by="shape").same

    eager = list(load_trace(trace("linear_eager")).kernels)
    other_layout = list(load_trace(trace("matmul_add_compiled")).kernels)  # an nvjet GEMM with layout nn
    assert [c.mark for c in diff_kernels(eager, other_layout).changes] == ["-", "+"]  # tn vs nn is no rename


def test_diff_by_shape_ignores_tile_names(trace: Trace, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The same profile with cuBLAS's GEMM on another tile, as on another card of the arch.
    a = trace("linear_eager")
    tile, other_tile = "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT", "nvjet_sm90_tst_128x64_64x4_1x2_h_bz_bias_TNT"
    text = gzip.decompress(a.read_bytes()).decode()
    assert tile in text
    b = tmp_path / "other_tile.json.gz"
    b.write_bytes(gzip.compress(text.replace(tile, other_tile).encode()))
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out.splitlines()
    at = out.index("~ gemm/nvjet bf16 tn [bias]  " + other_tile)  # b's kernel, as on a = line
    assert out[at + 1] == "    named in a: " + tile
    assert main(["diff", str(a), str(b), "--by", "shape"]) == 0
    assert "same kernels" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["show", "missing.json"], ["diff", "missing.json", "missing.json"]])
def test_errors_exit_2_with_one_line_and_no_traceback(tmp_path: Path, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_kernelprof", *command], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "kernelprof: error: missing.json: no such trace file "
        f"(relative paths are read from the current directory, {os.path.realpath(tmp_path)})"
    )
    assert "Traceback" not in done.stderr


def test_a_corrupt_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00broken")
    assert main(["show", str(bad)]) == 2
    assert "gzip stream is truncated or corrupt" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


def test_a_trace_that_lost_gpu_records_is_shown_with_a_warning(
    tmp_path: Path, trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip
    import json

    data = json.loads(gzip.decompress(trace("geglu_eager").read_bytes()))
    kernel = next(e for e in data["traceEvents"] if e.get("cat") == "kernel")
    data["traceEvents"].remove(kernel)  # as if the profiler dropped it
    path = tmp_path / "lossy.json"
    path.write_text(json.dumps(data))
    with pytest.raises(IncompleteProfileError, match="1 of 15 kernel launches"):
        load_trace(path)
    assert main(["show", str(path)]) == 0
    captured = capsys.readouterr()
    # Trial report: the warning was the builder's refusal ("... so the profile is refused"), the
    # table shown after it, and the header blamed the workload ("calls launched different kernel
    # sequences") for what the profiler lost.
    assert captured.err == (
        f"kernelprof: warning: {path}: shown anyway: counts are short by 1 kernel (cuLaunchKernelEx x1); "
        "the profiler lost GPU records: 1 of 15 kernel launches recorded on the CPU side have no GPU record. "
        "Synchronize before the profiler stops, or raise the CUPTI buffer size; rerun to see if it persists. "
        "It may be why the calls recorded different kernel sequences (the header).\n"
    )
    assert captured.out.splitlines()[0] == (
        f"{path}: NVIDIA H200 (sm90), 3 calls, calls recorded different kernel sequences: "
        "the profiler lost 1 GPU record (the warning above)"
    )
    assert "launched by" in captured.out
    assert main(["diff", str(path), str(trace("geglu_eager"))]) == 1
    captured = capsys.readouterr()
    assert "refused" not in captured.err
    assert "a's calls recorded different kernels: each call of a against the call of b" in captured.out
    assert "launched different" not in captured.out


def _relu_calls(outside: int = 0) -> Stream:
    """Three calls of one relu each, and ``outside`` relus launched after each call's step: in no call."""
    s = Stream()
    for i in range(3):
        s.step(i, 100.0 * i, 50)
        s.launch(s.op("aten::relu", 100.0 * i + 1, 5), "relu_kernel", 100.0 * i + 2)
        for j in range(outside):
            s.launch(s.op("aten::relu", 100.0 * i + 60 + 10 * j, 5), "relu_kernel", 100.0 * i + 61 + 10 * j)
    return s


def test_a_trace_whose_calls_took_few_of_its_records_is_shown_without_the_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = _relu_calls(outside=2)
    path = write(tmp_path, s)
    assert main(["show", str(path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"kernelprof: warning: {path}: shown anyway: no profiled call took 6 of the 9 GPU records")
    assert "The kernels and copies read as missing. Profile with" in err
    assert "refused" not in err
    assert "check_complete" not in err


def test_a_trace_with_a_lost_step_range_warns_as_a_line_of_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The warning came out as Python prints one: "<frozen runpy>:88: IncompleteProfileWarning: ...".
    s = _relu_calls()
    s.events = [e for e in s.events if e["name"] != "ProfilerStep#1"]
    path = write(tmp_path, s)
    assert main(["show", str(path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"kernelprof: warning: {path}: no profiled call took 1 of the 3 GPU records")
    assert "IncompleteProfileWarning" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.metadata

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"kernelprof {importlib.metadata.version('pytest-kernelprof')}\n"


def test_a_reader_that_closed_the_pipe_ends_the_command_quietly(trace: Trace) -> None:
    """`kernelprof show trace | head`: no error line, the status of a process ended by SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_kernelprof", "show", str(trace("train_liger")), "--calls", "--ops"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == CLOSED_PIPE == 141


def test_what_standard_output_cannot_encode_is_printed_as_escapes(tmp_path: Path) -> None:
    """A kernel named in Greek on an ASCII (or cp1252) console, a trace path holding a byte that is
    not UTF-8: each character the output cannot hold is its escape, not a UnicodeEncodeError."""
    text = gzip.decompress((DATA / "h200_geglu_liger.json.gz").read_bytes()).decode("utf-8")
    path = os.path.join(os.fsencode(tmp_path), b"trace\xff.json")
    with open(path, "wb") as handle:
        handle.write(text.replace("_geglu_tanh_forward_kernel", "_geglu_\u03b1_kernel").encode("utf-8"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_kernelprof", "show", path],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )
    assert done.returncode == 0, done.stderr
    assert b"trace\\udcff.json: NVIDIA H200" in done.stdout
    assert b"_geglu_\\u03b1_kernel" in done.stdout


class _Unseekable(io.TextIOWrapper):
    """A standard output that cannot be reconfigured (a pipe that says it seeks, handed over)."""

    def reconfigure(self, **_: object) -> None:
        raise OSError(29, "Illegal seek")


def test_show_prints_to_a_standard_output_that_cannot_be_reconfigured(monkeypatch: pytest.MonkeyPatch) -> None:
    # tools/doc_images.py's `kernelprof show --html`, started by the suite's warm launcher, died
    # in reconfigure() with "Illegal seek" before it wrote a byte.
    out = _Unseekable(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["show", str(DATA / "h200_geglu_eager.json.gz")]) == 0
    out.flush()
    assert b"tests/data/h200_geglu_eager.json.gz: NVIDIA H200" in out.buffer.getvalue()  # type: ignore[attr-defined]


def test_deeply_nested_json_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"traceEvents": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    assert main(["show", str(path)]) == 2
    assert capsys.readouterr().err == f"kernelprof: error: {path}: JSON nested too deeply to be a trace (line 1)\n"


def test_a_device_that_never_ends_exits_2_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "/dev/zero"]) == 2
    assert capsys.readouterr().err == (
        "kernelprof: error: /dev/zero: not a Chrome trace: it starts with "
        r"b'\x00\x00\x00\x00\x00\x00\x00\x00', not with '{'" + "\n"
    )


def test_show_names_the_kernels_no_evidence_placed_and_takes_teaching(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = str(user_kernel_trace(tmp_path / "user_kernel.json.gz"))
    assert main(["show", trace]) == 0
    out = capsys.readouterr().out
    assert "1 kernel name no evidence could place (kind 'other'); teach it with --kernels:" in out
    assert "  --kernels '_geglu_tanh_forward_kernel: kind=... family=...'" in out
    assert main(["show", trace, "--kernels", "_geglu_tanh_forward_kernel: kind=pointwise family=liger"]) == 0
    taught = capsys.readouterr().out
    assert "pointwise (user)  liger" in taught
    assert "no evidence could place" not in taught
    assert main(["show", trace, "--kernels", "_geglu*: kind=matmul"]) == 2
    assert "--kernels, line 1: unknown kind 'matmul'" in capsys.readouterr().err


@pytest.mark.parametrize("kernel", ["evil'$(touch pwned)'k", "void it's<int>(int)", "void <lambda>(int)"])
def test_the_teaching_hint_is_one_shell_word_that_teaches_the_kernel(
    kernel: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The hint's line comes from a kernel name: a quote in it ended the hint's single quotes, so
    that the pasted command broke, or ran what the name held."""
    s = Stream()
    s.step(0, 0, 100)
    s.launch(s.op("my_ext::op", 1, 20), kernel, 2)
    trace = str(write(tmp_path, s))
    assert main(["show", trace]) == 0
    hints = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  --kernels ")]
    assert len(hints) == 1
    words = shlex.split(hints[0])
    assert len(words) == 2
    assert words[0] == "--kernels"
    assert main(["show", trace, "--kernels", words[1].replace("kind=... family=...", "kind=gemm family=mine")]) == 0
    taught = capsys.readouterr().out
    assert "gemm (user)  mine" in taught
    assert "no evidence could place" not in taught


def test_diff_says_when_unknown_kernels_make_its_kind_counts_uncertain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = DATA
    main(["diff", str(data / "h200_geglu_eager.json.gz"), str(user_kernel_trace(tmp_path / "user_kernel.json.gz"))])
    # Each side's count, as a baseline failure gives them (it gave both sides' sum).
    assert "(0 kernels of unknown kind in a, 1 in b: the counts by kind may not hold" in capsys.readouterr().out
    main(["diff", str(data / "h200_geglu_eager.json.gz"), str(data / "h200_geglu_compiled.json.gz")])
    assert "of unknown kind" not in capsys.readouterr().out


def _without_kernels(tmp_path: Path, trace: Trace) -> Path:
    data = json.loads(gzip.decompress(trace("geglu_eager").read_bytes()))
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("cat") != "kernel"]  # all dropped
    path = tmp_path / "lost.json"
    path.write_text(json.dumps(data))
    return path


def test_show_refuses_a_trace_that_lost_every_kernel_record(
    tmp_path: Path, trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _without_kernels(tmp_path, trace)
    assert main(["show", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no profile: there is nothing true to show
    lost = "the profiler lost GPU records: 15 of 15 kernel launches"
    assert captured.err.startswith(f"kernelprof: error: {path}: {lost}")
    assert "refused" in captured.err
    assert "warning" not in captured.err
    assert len(captured.err.splitlines()) == 1


def test_diff_refuses_it_too(tmp_path: Path, trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    path = _without_kernels(tmp_path, trace)
    assert main(["diff", str(trace("geglu_eager")), str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"kernelprof: error: {path}: the profiler lost GPU records")


def _run_cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_kernelprof", *args], input=stdin, capture_output=True, check=False
    )


@pytest.mark.parametrize("packed", [True, False], ids=["gzip", "json"])
def test_show_dash_reads_standard_input(trace: Trace, packed: bool) -> None:
    data = trace("geglu_eager").read_bytes()
    result = _run_cli("show", "-", stdin=data if packed else gzip.decompress(data))
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert out.startswith("<stdin>: NVIDIA H200 (sm90), 3 calls\n")
    assert out.count("nvjet_sm90_tst_") == 3


def test_a_page_of_standard_input_names_it_stdin(trace: Trace, tmp_path: Path) -> None:
    # A page of a trace read from a pipe named its temporary copy, gone when show ended.
    page = tmp_path / "page.html"
    result = _run_cli("show", "-", "--html", str(page), stdin=trace("geglu_eager").read_bytes())
    assert result.returncode == 0, result.stderr
    heading = re.search("<h1>(.*)</h1><div>(.*)</div>", page.read_text())
    assert heading is not None
    assert heading[1] == "&lt;stdin&gt;"
    assert heading[2].startswith("3 calls on NVIDIA H200 (sm90); showing call ")
    assert "kernelprof-" not in page.read_text()


def test_diff_reads_one_side_from_standard_input(trace: Trace) -> None:
    result = _run_cli("diff", "-", str(trace("geglu_compiled")), stdin=trace("geglu_eager").read_bytes())
    assert result.returncode == 1, result.stderr
    assert result.stdout.decode().startswith("a = <stdin>: NVIDIA H200")


def test_bad_standard_input_names_stdin_not_a_temporary_file() -> None:
    result = _run_cli("show", "-", stdin=b"")
    assert result.returncode == 2
    assert result.stderr.decode() == "kernelprof: error: <stdin>: the file is empty, not a Chrome trace\n"


def test_standard_input_is_read_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "-", "-"]) == 2
    assert capsys.readouterr().err == "kernelprof: error: only one of the traces can be standard input ('-')\n"


def _op_tree_trace(tmp_path: Path, nest: Callable[[Stream], None]) -> Path:
    """A call whose ops ``nest`` writes, then one GEMM."""
    s = Stream()
    s.step(0, 0, 10**7)
    nest(s)
    s.launch(s.op("aten::mm", 9 * 10**6, 10), "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", 9 * 10**6 + 1)
    return write(tmp_path, s)


def test_an_op_tree_thousands_deep_is_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A RecursionError (a traceback) past a thousand levels, and time square in the depth.
    def chain(s: Stream) -> None:
        for i in range(5_000):
            s.op(f"op{i}", 1 + i, 10**6 - 2 * i)

    assert main(["show", str(_op_tree_trace(tmp_path, chain)), "--ops"]) == 0
    out = capsys.readouterr().out
    shown = [found[1] for found in map(re.compile(r"^[ .]*(op\d+) ").match, out.splitlines()) if found]
    assert shown == [f"op{i}" for i in range(5_000)]  # each under the one before (its indent cut at 256 columns)


def test_an_op_tree_that_doubles_at_each_level_by_name_has_a_row_per_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Op ``n{i}``'s occurrence holds ``n{i+1}`` (nesting the next level) and then ``n{i+2}`` to
    ``n{k-1}``: shown by name under each op that holds it, the rows doubled with each level, 2**(k-1)
    of them from k*k/2 events. A row per path of occurrences: one row per event."""

    def doubling(s: Stream, k: int = 30) -> None:
        start, end = 10, 10**5
        for i in range(k):
            s.op(f"n{i}", start, end - start)
            for j in range(i + 2, k):  # after the next level, within this one
                s.op(f"n{j}", end - 2 * k + 2 * (j - i), 1)
            start, end = start + 1, end - 2 * k - 1

    assert main(["show", str(_op_tree_trace(tmp_path, doubling)), "--ops"]) == 0
    tree = capsys.readouterr().out.split("\nop ", 1)[1]
    events = 30 + sum(max(0, 30 - i - 2) for i in range(30)) + 1  # and aten::mm
    assert len(_tree_names("op " + tree)) == events  # a row per event: no two share a path


def test_an_op_tree_past_its_rows_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def wide(s: Stream) -> None:
        for i in range(OP_TREE_ROWS + 5):
            s.op(f"op{i}", 10 + 2 * i, 1)

    assert main(["show", str(_op_tree_trace(tmp_path, wide)), "--ops"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) < OP_TREE_ROWS + 100
    assert f"... the op tree goes on past {OP_TREE_ROWS:,} rows" in out


def test_html_refuses_to_write_over_the_trace_it_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `kernelprof show t.json --html t.json` replaced the trace with the page.
    trace = tmp_path / "t.json.gz"
    trace.write_bytes((DATA / "h200_geglu_eager.json.gz").read_bytes())
    link = tmp_path / "page.html"
    link.symlink_to(trace)
    for page in (trace, link):
        assert main(["show", str(trace), "--html", str(page)]) == 2
        assert capsys.readouterr().err == (
            f"kernelprof: error: --html {page}: that is the trace being read; name another file for the page\n"
        )
    assert trace.read_bytes() == (DATA / "h200_geglu_eager.json.gz").read_bytes()


def test_a_trace_file_named_with_an_escape_sequence_is_named_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The lines name the file as given: its terminal escape (here, clear the screen) reached the terminal.
    trace = tmp_path / "t\x1b[2J\n.json.gz"
    trace.write_bytes((DATA / "h200_geglu_eager.json.gz").read_bytes())
    assert main(["show", str(trace)]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path}/t\\x1b[2J\\n.json.gz: NVIDIA H200 (sm90)")
    assert main(["diff", str(trace), str(tmp_path / "gone\x1b[2J.json")]) == 2
    assert capsys.readouterr().err == f"kernelprof: error: {tmp_path}/gone\\x1b[2J.json: no such trace file\n"


def test_show_refuses_a_trace_whose_kernels_no_call_took(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An adversarial probe: launches between the steps printed "(no kernels)", "launches: 0", exit 0.
    s = Stream()
    for i in range(3):
        s.step(i, 100.0 * i, 50)
        op = s.op("aten::foo", 100.0 * i + 1, 40)
        s.launch(op, "k1", 100.0 * i + 60)
    assert main(["show", str(write(tmp_path, s))]) == 2
    assert "no profiled call took 3 of the 3 GPU records" in capsys.readouterr().err


def _tree_names(tree: str) -> list[str]:
    """The op names of the tree's rows (a name may hold spaces: the last three columns are numbers)."""
    rows = tree.splitlines()[1:]
    if rows[-1] == INDUCTORS_NOTE:
        rows.pop()
    *rows, note = rows
    assert note == OP_TREE_NOTE
    return [line.rsplit(None, 3)[0].strip().removesuffix(INDUCTORS_RANGE.strip()).strip() for line in rows]


def _tree_rows(tree: str) -> list[tuple[int, str, int, float, float]]:
    """(depth, name, count, cpu us, device us) of each row."""
    found = []
    for line in tree.splitlines()[1:]:
        if line.startswith("("):
            break
        name, count, cpu, device = line.rsplit(None, 3)
        depth = (len(name) - len(name.lstrip())) // 2
        found.append((depth, name.strip(), int(count), float(cpu), float(device)))
    return found


def test_the_op_trees_header_says_its_figures_are_each_rows_own(trace: Trace) -> None:
    # Issue 32: aten::linear's "cpu us" 122.3 was the sum of its 3 occurrences, its children
    # within; each row's figures are now those of its own occurrences, and the header says so.
    call = load_trace(trace("geglu_eager")).fastest_call
    tree = op_tree(call.ops).splitlines()
    assert tree[0].split()[1:] == ["count", "here", "cpu", "us", "here", "device", "us", "here"]
    linear = next(row.split() for row in tree if row.split()[0] == "aten::linear")
    assert linear[1:3] == ["3", format_us(call.ops["aten::linear"].cpu_time_us)]
    assert tree[-1] == OP_TREE_NOTE


def test_a_row_of_the_op_tree_is_its_ops_occurrences_there(trace: Trace) -> None:
    # A trial: aten::as_strided 11 sat under an aten::mean that ran it once, aten::fill_ 91.6us
    # under an aten::zero_ of 84.3us: each op's totals over the call, repeated at every place.
    call = load_trace(trace("sync_item_stacks")).fastest_call
    rows = _tree_rows(op_tree(call.ops))
    parents: list[tuple[int, str, int, float, float]] = []
    for row in rows:
        del parents[row[0] :]
        if parents:
            parent = parents[-1]
            assert row[2] >= 1
            assert row[3] <= parent[3] + 0.05, (parent, row)
            assert row[4] <= parent[4] + 0.05, (parent, row)
        parents.append(row)
    mean = next(i for i, row in enumerate(rows) if row[1] == "aten::mean")
    assert rows[mean + 1][1:3] == ("aten::as_strided", 1)
    assert call.ops["aten::as_strided"].count == 11  # the total by name, where the API gives it
    zero = next(i for i, row in enumerate(rows) if row[1] == "aten::zero_")
    assert rows[zero + 1][1] == "aten::fill_"
    assert rows[zero + 1][3] < rows[zero][3]


def test_a_profiles_own_ops_have_no_tree(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    with pytest.raises(QueryError, match=r"read prof.fastest_call.ops.tree\(\) or prof.calls\[i\].ops.tree\(\)"):
        prof.ops.tree()


def test_the_op_trees_device_time_counts_memory_ops_as_its_note_says(trace: Trace) -> None:
    # Trial: aten::mm's device us 166.8 under a kernel table whose three GEMMs add to 165.2; the
    # 1.6us is cuBLAS's two memsets, which the note did not say the device time counts.
    call = load_trace(trace("geglu_eager")).fastest_call
    tree = op_tree(call.ops).splitlines()
    mm = [row.split() for row in tree if row.split()[0] == "aten::mm"]
    gemms = sum(k.duration_us for k in call.ops["aten::mm"].kernels)
    memsets = sum(m.duration_us for m in call.memory_ops if m.op == "aten::mm")
    assert memsets > 0
    shown = sum(float(row[-1]) for row in mm)
    assert shown == pytest.approx(gemms + memsets, abs=0.05 * len(mm))
    assert shown != pytest.approx(gemms, abs=0.05)
    assert "device us: kernels, memcpys, memsets" in tree[-1]


@pytest.mark.parametrize("name", ["train_compiled", "train_liger"])
def test_every_op_of_the_table_is_in_the_tree(trace: Trace, name: str) -> None:
    # An adversarial probe: aten::sum (an aten::sum inside an aten::sum) was in no row of the tree.
    ops = load_trace(trace(name)).fastest_call.ops
    tree = op_tree(ops)
    assert set(_tree_names(tree)) == {shown_op(name) for name in ops}  # a graph's hash shortened
    assert re.search(r"^aten::sum +1 ", tree, re.MULTILINE)  # at the top, the aten::sum inside it part of it


def test_a_range_inside_a_range_of_its_name_shows_both_and_what_is_inside(tmp_path: Path) -> None:
    # An adversarial probe: only the inner aten::add was shown, as a root. The inner node is part
    # of the outer one, so aten::add is the outer node's child.
    s = Stream()
    s.step(0, 0, 100)
    s.op("node", 1, 50)
    s.op("node", 2, 40)
    s.launch(s.op("aten::add", 3, 10), "vectorized_elementwise_kernel", 4)
    s.op("aten::mul", 60, 10)
    assert _tree_names(op_tree(load_trace(write(tmp_path, s)).ops)) == ["node", "aten::add", "aten::mul"]


def test_a_diff_of_two_traces_without_gpu_activity_compares_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # An adversarial probe: two traces both recorded without a GPU diffed as "same" (exit 0).
    calls, step = DATA / "cpu_torch2.13.0_calls.json.gz", DATA / "cpu_torch2.13.0_step.json.gz"
    assert main(["diff", str(calls), str(step)]) == 2
    assert "neither trace recorded GPU activity: no kernels to compare" in capsys.readouterr().err


def test_a_diff_of_a_trace_without_gpu_activity_against_one_with_it_compares_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Trial report: it exited 1, "the kernels differ", having printed only "no GPU activity in ...".
    cpu, gpu = DATA / "cpu_torch2.13.0_calls.json.gz", DATA / "h200_linear_eager.json.gz"
    for a, b in ((cpu, gpu), (gpu, cpu)):
        assert main(["diff", str(a), str(b)]) == 2
        out, err = capsys.readouterr()
        assert err == (
            f"kernelprof: error: {cpu} recorded no GPU activity: no kernels to compare with the other trace's "
            f"(kernelprof show --ops {cpu} shows its CPU side; "
            f"kernelprof diff --ops {a} {b} compares their CPU op trees)\n"
        )
        # Told by the error, and on stdout only where the heads name each side (a trial read a line of
        # its own on each stream): `CPU only (no GPU activity recorded)`, as show and the page word it.
        assert [line for line in out.splitlines() if "no GPU activity" in line] == [
            f"{'a' if a == cpu else 'b'} = {cpu}: CPU only (no GPU activity recorded), 3 calls"
        ]


def test_show_of_a_trace_without_gpu_activity_points_to_its_cpu_side(capsys: pytest.CaptureFixture[str]) -> None:
    cpu = str(DATA / "cpu_torch2.13.0_step.json.gz")
    assert main(["show", cpu]) == 0
    # Its host span, the one figure a CPU trace has (a trial found none shown): the fastest call's.
    span = f"{load_trace(cpu).fastest_call.wall_us:.1f}"
    assert span == "56.3"
    line = f"\nhost span {span}us; no GPU activity recorded; --ops shows its CPU side, the op tree\n"
    assert line in capsys.readouterr().out
    assert main(["show", cpu, "--ops"]) == 0
    out = capsys.readouterr().out
    assert f"\nhost span {span}us; no GPU activity recorded\n" in out
    assert "aten::" in out


def test_html_naming_a_folder_is_refused_before_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial report: the whole report was printed, then "[Errno 21] not a regular file but a folder: ...".
    assert main(["show", str(DATA / "h200_geglu_eager.json.gz"), "--html", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"kernelprof: error: --html {tmp_path} is a folder; name a file, such as {tmp_path}/timeline.html\n"
    )


def test_html_into_a_missing_folder_makes_it_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trial report: `show --html` made missing folders without a word, so a mistyped one went unseen.
    # Made as the trace dir and the job summary make theirs, and named.
    monkeypatch.chdir(tmp_path)
    assert main(["show", str(DATA / "h200_geglu_eager.json.gz"), "--html", "new/deeper/t.html"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "timeline page: new/deeper/t.html (made the folder new)"
    assert (tmp_path / "new" / "deeper" / "t.html").is_file()
    page = tmp_path / "new" / "again.html"
    assert main(["show", str(DATA / "h200_geglu_eager.json.gz"), "--html", str(page)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"timeline page: {page}"  # the folder was there


def test_the_op_trees_note_says_a_child_may_run_more_often_than_its_parent() -> None:
    # A trial read "a row never exceeds the one it is under" against aten::resolve_conj 4 under
    # aten::addmm 2: times nest, counts need not.
    call = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").fastest_call
    rows = [row.split() for row in op_tree(call.ops).splitlines()]
    addmm = next(i for i, row in enumerate(rows) if row[0] == "aten::addmm")
    conj = next(row for row in rows[addmm + 1 :] if row[0] == "aten::resolve_conj")
    assert int(conj[1]) > int(rows[addmm][1])
    note = op_tree(call.ops).splitlines()[-1]
    assert note.startswith("(a row: its op's runs under the ops above it, children included; ")


def test_the_op_trees_note_on_a_cpu_trace_explains_no_device_time(capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: the note explained device time (kernels, memcpys, memsets) under a column of "-".
    assert main(["show", "--ops", str(DATA / "cpu_torch2.13.0_calls.json.gz")]) == 0
    note = capsys.readouterr().out.splitlines()[-1]
    assert "device us: none recorded (-); " in note
    assert "kernels, memcpys, memsets" not in note
