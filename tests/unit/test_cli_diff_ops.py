"""``kernelprof diff --ops A B``: the two traces' CPU op trees compared, each op's count at its
place in the fastest call's tree, for traces recorded without a GPU as for those with one; and the
kernel diff of traces without GPU activity, which still compares nothing, pointing to it."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.diff import time_change
from pytest_kernelprof.cli import main
from tests.helpers import DATA, Stream, write

CPU_13, CPU_12 = DATA / "cpu_torch2.13.0_calls.json.gz", DATA / "cpu_torch2.12.1_calls.json.gz"
TIME_NOTE = (
    "CPU time per op is left out, not compared: it varies from run to run; kernelprof show --ops shows each side's"
)


def _renamed(path: Path, old: str, new: str) -> Path:
    """``cpu_torch2.13.0_calls`` with op ``old`` renamed ``new`` in every call."""
    text = gzip.decompress(CPU_13.read_bytes()).decode("utf-8")
    assert f'"{old}"' in text
    path.write_bytes(gzip.compress(text.replace(f'"{old}"', f'"{new}"').encode("utf-8")))
    return path


def _adds(folder: Path, adds: int) -> Path:
    """A call of one op ``outer`` that runs ``adds`` aten::add, each launching a kernel, and an aten::mul."""
    s = Stream()
    s.step(0, 0, 100)
    s.op("outer", 1, 60)
    for i in range(adds):
        s.launch(s.op("aten::add", 2 + 10 * i, 5), "vectorized_elementwise_kernel", 3 + 10 * i)
    s.op("aten::mul", 70, 10)
    folder.mkdir()
    return write(folder, s)


def test_two_cpu_traces_of_the_same_ops_are_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--ops", str(CPU_13), str(CPU_12)]) == 0
    a, b = load_trace(CPU_13).fastest_call, load_trace(CPU_12).fastest_call
    assert capsys.readouterr().out.splitlines() == [
        f"a = {CPU_13}: CPU only (no GPU activity recorded), 3 calls",
        f"b = {CPU_12}: CPU only (no GPU activity recorded), 3 calls",
        "the fastest call by host span: a's call 2, b's call 2 (of 3 each, numbered from 0)",
        "op counts: 21 ops at their places in the trees, each run as often in both",
        f"host span: {time_change(a.wall_us, b.wall_us)}",
        f"({TIME_NOTE})",
        "same ops",
    ]


def test_an_op_renamed_shows_where_it_was_and_where_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gelu = _renamed(tmp_path / "gelu.json.gz", "aten::relu", "aten::gelu")
    assert main(["diff", "--ops", str(CPU_13), str(gelu)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "op counts: 23 ops at their places in the trees: 19 the same, 2 only in a, 2 only in b"
    table = out[5 : out.index("the ops differ") - 1]
    assert [line.split() for line in table] == [
        ["op", "count", "a", "count", "b"],
        ["=", "my_block", "1", "1"],
        ["-", "aten::relu", "1", "-"],
        ["-", "aten::clamp_min", "1", "-"],
        ["+", "aten::gelu", "-", "1"],
        ["+", "aten::clamp_min", "-", "1"],
    ]
    # Indented as show --ops indents the tree, after the mark.
    assert [line[: len(line) - len(line[2:].lstrip())] for line in table[1:]] == [
        "= ",
        "-   ",
        "-     ",
        "+   ",
        "+     ",
    ]
    assert out[-2].startswith("(each row: an op at its place in the op tree")
    assert out[-2].endswith(f"; {TIME_NOTE})")
    assert out[-1] == "the ops differ"
    assert "kernels: not compared" not in "\n".join(out)  # CPU traces: there were none


def test_a_count_changed_under_a_parent_in_gpu_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _adds(tmp_path / "one", 1), _adds(tmp_path / "two", 2)
    assert main(["diff", "--ops", str(one), str(two)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split() for line in out[5:8]] == [
        ["op", "count", "a", "count", "b"],
        ["=", "outer", "1", "1"],
        ["~", "aten::add", "1", "2"],
    ]
    assert out[8].startswith("(each row:")
    assert out[3] == "op counts: 3 ops at their places in the trees: 2 the same, 1 count changed"
    assert out[-2:] == ["kernels: not compared (kernelprof diff without --ops compares them)", "the ops differ"]
    # The kernel diff of the same traces compares kernels, not ops.
    assert main(["diff", str(one), str(two)]) == 1
    assert "the kernels differ" in capsys.readouterr().out


def test_a_compiled_graphs_hash_is_shortened_where_it_is_matched_without_it(capsys: pytest.CaptureFixture[str]) -> None:
    # 52 characters of hash made the op column over 100 wide (a trial); the diff matches without it.
    compiled = DATA / "h200_geglu_compiled.json.gz"
    assert main(["diff", "--ops", str(compiled), str(DATA / "h200_linear_compiled.json.gz")]) == 1
    out = capsys.readouterr().out.splitlines()
    graph = [line for line in out if "CompiledFxGraph" in line]
    assert [line.split("  (")[0].rstrip() for line in graph] == ["=   ## Call CompiledFxGraph fadri2gv... ##"]
    assert max(len(line) for line in out[4:9]) < 90  # 131 with the whole hash


def test_a_gpu_trace_against_itself_has_the_same_ops(capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(DATA / "h200_geglu_eager.json.gz")
    assert main(["diff", "--ops", trace, trace]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["kernels: not compared (kernelprof diff without --ops compares them)", "same ops"]


def test_ops_with_by_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for by in ("name", "shape"):
        assert main(["diff", "--ops", "--by", by, str(CPU_13), str(CPU_12)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            f"kernelprof: error: --ops with --by {by}: --by says how to align kernels, and --ops compares the CPU "
            "op trees, not the kernels; drop --by (or --ops to compare the kernels)\n"
        )
    # --by alone is as it was.
    trace = str(DATA / "h200_geglu_eager.json.gz")
    assert main(["diff", "--by", "name", trace, trace]) == 0
    assert capsys.readouterr().out.endswith("\nsame kernels\n")


def test_the_kernel_diff_of_two_cpu_traces_still_fails_and_names_the_op_diff(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A CI gate on kernels must not pass on CPU traces: exit 2 as before, the message now says what can be compared.
    assert main(["diff", str(CPU_13), str(CPU_12)]) == 2
    assert capsys.readouterr().err == (
        "kernelprof: error: neither trace recorded GPU activity: no kernels to compare "
        f"(kernelprof diff --ops {CPU_13} {CPU_12} compares their CPU op trees)\n"
    )


def test_the_op_diff_hint_names_the_traces_as_the_command_takes_them(tmp_path: Path) -> None:
    # Standard input as -, not as <stdin> (the name the lines give it); a name with a space quoted.
    spaced = tmp_path / "a trace.json.gz"
    spaced.write_bytes(CPU_13.read_bytes())

    def run(*args: str) -> tuple[int, str, str]:
        command = [sys.executable, "-m", "pytest_kernelprof", *args]
        done = subprocess.run(command, input=CPU_12.read_bytes(), capture_output=True, check=False)
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    status, _, err = run("diff", "-", str(spaced))
    assert status == 2
    assert err == (
        "kernelprof: error: neither trace recorded GPU activity: no kernels to compare "
        f"(kernelprof diff --ops - '{spaced}' compares their CPU op trees)\n"
    )
    status, out, err = run("diff", "--ops", "-", str(spaced))
    assert status == 0, err
    assert out.startswith("a = <stdin>: CPU only (no GPU activity recorded), 3 calls\n")
    assert out.endswith("\nsame ops\n")


def test_two_traces_without_cpu_ops_compare_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Nothing compared is no "same ops": exit 2, as the kernel diff of two traces without kernels.
    s = Stream()
    s.step(0, 0, 100)
    empty = write(tmp_path, s)
    assert main(["diff", "--ops", str(empty), str(empty)]) == 2
    assert capsys.readouterr().err == "kernelprof: error: neither trace recorded CPU ops: no op trees to compare\n"
