"""Failures that read like pytest's own, through pytester: whole aligned tables (inline where
pytest shows them whole, else in a report section), no plugin frames, ini errors that name
the ini key."""

from __future__ import annotations

import pytest

from pytest_kernelprof import load_trace
from tests.helpers import DATA

SUITE = """
from pathlib import Path
from pytest_kernelprof import load_trace

DATA = Path({data!r})
eager = load_trace(DATA / "h200_geglu_eager.json.gz")
linear = load_trace(DATA / "h200_linear_eager.json.gz")

def test_count():
    assert eager.kernels.count("triton_poi_fused_*gelu*mul*") == 1

def test_count_small():
    assert linear.kernels.count(kind="gemm") == 2

def test_names():
    assert linear.kernels == ["nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNN"]

def test_one():
    eager.kernels.one(kind="reduction")

def test_baseline_eq(kernel_baseline):
    assert eager == kernel_baseline

def test_baseline_check(kernel_baseline):
    kernel_baseline.check(eager)

def gen(x):
    yield x

def test_generator(kernelprof):
    kernelprof(gen, 1)
"""


def _rows() -> list[str]:
    return load_trace(DATA / "h200_geglu_eager.json.gz").kernels.table().splitlines()


def _off_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest never cuts an explanation short on CI (CI or BUILD_NUMBER set), and neither do we.
    for var in ("CI", "BUILD_NUMBER"):
        monkeypatch.delenv(var, raising=False)


def test_failures_show_whole_tables_and_no_plugin_frames(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _off_ci(monkeypatch)
    pytester.makepyfile(test_s=SUITE.format(data=str(DATA)))
    rows = _rows()
    for verbosity in ((), ("-v",)):
        result = pytester.runpytest(*verbosity)
        result.assert_outcomes(failed=7)
        out = result.stdout
        out.fnmatch_lines(
            [
                "E       AssertionError: assert 0 == 1",
                "E         kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels",
                "E         (the rest, 6 lines, is in the 'kernelprof assertion' section below; -vv shows it here)",
                "*- kernelprof assertion -*",
                "kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels",
                *rows,  # whole, aligned, one line each
            ],
            consecutive=False,
        )
        # A table that fits is shown inline, the matches starred.
        out.fnmatch_lines(
            [
                "E         kernels.count(kind='gemm') matched 1 of 1 kernels: #0",
                "E          #  kind  family  layout  ops    us  launched by  name",
                "E         *0  gemm  nvjet   tn      bias  2.7  aten::addmm  "
                "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
            ]
        )
        out.fnmatch_lines(
            [
                "E       AssertionError: assert KernelList(1 kernel) == "
                "['nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNN']",
                "E         the kernel names differ: 1 expected, 1 ran (- expected, + this run)",
                "E         - nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNN",
                "E         + nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
            ]
        )
        out.fnmatch_lines(
            [
                "E       AssertionError: assert KernelProfile == kernel_baseline failed:",
                "E         no kernel baseline sm90/default in *test_baseline_eq.json",
                "E         record it with: pytest --kernelprof-update 'test_s.py::test_baseline_eq'",
            ]
        )
        text = out.str()
        assert "\\n" not in text
        out.fnmatch_lines(["E       TypeError: kernelprof cannot profile gen: it is a generator function*"])
        for plugin_source in (
            "def one(",
            "def check(",
            "raise AssertionError",
            "def _compare(",
            "def capture_callable(",
        ):
            assert plugin_source not in text, plugin_source

    result = pytester.runpytest("-vv", "-k", "test_count and not small")
    result.assert_outcomes(failed=1, deselected=6)
    result.stdout.fnmatch_lines(
        ["E         kernels.count(*) matched 0 of 5 kernels", *(f"E         {row}" for row in rows)]
    )
    result.stdout.no_fnmatch_line("*kernelprof assertion*")


@pytest.mark.parametrize("var", ["CI", "BUILD_NUMBER"])
def test_on_ci_the_table_is_inline_as_pytest_shows_it_whole(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    _off_ci(monkeypatch)
    monkeypatch.setenv(var, "1")
    pytester.makepyfile(test_s=SUITE.format(data=str(DATA)))
    result = pytester.runpytest("-k", "test_count and not small")
    result.assert_outcomes(failed=1, deselected=6)
    result.stdout.fnmatch_lines(
        ["E         kernels.count(*) matched 0 of 5 kernels", *(f"E         {row}" for row in _rows())]
    )
    result.stdout.no_fnmatch_line("*kernelprof assertion*")


def test_ini_errors_name_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    pytester.makeini("[pytest]\nkernelprof_calls = 0\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option kernelprof_calls must be at least 1, got 0*"])
    pytester.makeini("[pytest]\nkernelprof_require_gpu = maybe\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option kernelprof_require_gpu: invalid truth value 'maybe'; it takes true or false (or yes/no*"]
    )


def test_a_trace_that_cannot_be_read_fails_at_the_tests_line_without_reader_frames(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("bad.json").write_text(
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}', encoding="utf-8"
    )
    pytester.makepyfile(
        test_t="""
        from pytest_kernelprof import load_trace

        def test_missing():
            load_trace("nope.json.gz")

        def test_malformed():
            load_trace("bad.json")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            '>       load_trace("nope.json.gz")',
            "E       pytest_kernelprof.errors.TraceError: nope.json.gz: no such trace file",
            '>       load_trace("bad.json")',
            "E       pytest_kernelprof.errors.TraceError: bad.json: event 0 has a negative duration*",
        ]
    )
    for reader_frame in ("traces.py", "events.py", "api.py"):
        result.stdout.no_fnmatch_line(f"*pytest_kernelprof*{reader_frame}*")


def test_a_profile_that_measured_nothing_fails_at_the_tests_line(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(
        test_t="""
        import torch

        def test_syncs(kernelprof):
            assert kernelprof(torch.relu, torch.ones(4)).syncs.count() == 0

        def test_copies(kernelprof):
            assert len(kernelprof(torch.relu, torch.ones(4)).copies) == 0

        def test_launches(kernelprof):
            assert kernelprof(torch.relu, torch.ones(4)).launches == 0
        """
    )
    result = cpu_pytester.runpytest()
    result.assert_outcomes(failed=3)
    assert result.stdout.str().count("E       pytest_kernelprof.errors.NoDeviceActivityError: no GPU activity") == 3
    result.stdout.no_fnmatch_line("*pytest_kernelprof*model*.py*")
