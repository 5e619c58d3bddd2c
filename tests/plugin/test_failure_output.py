"""Failures that read like pytest's own, through pytester: whole aligned tables (inline where
pytest shows them whole, else in a report section), no plugin frames, ini errors that name
the ini key, what failing sync and copy assertions print.

One project holds a failing test per case; one run at the default verbosity checks each
case on its own failure section, and short runs that import no torch check the other
verbosities and CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_kernelprof import load_trace
from tests.helpers import DATA, section

# What a failed query on a recorded profile of three calls says of its table's times.
MEDIANS = " (times: each kernel's median over the 3 calls)"

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

def test_dtype():
    mixed = load_trace(DATA / "h200_bf16_mlp_fp32_linear.json.gz")  # in the test: its reports have it
    assert mixed.kernels.count(kind="gemm", dtype="fp32") == 0

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


UNREADABLE = """
from pytest_kernelprof import load_trace

def test_missing():
    load_trace("nope.json.gz")

def test_malformed():
    load_trace("bad.json")
"""

MEASURED_NOTHING = """
import torch

def test_syncs(kernelprof):
    assert kernelprof(torch.relu, torch.ones(4)).syncs.count() == 0

def test_copies(kernelprof):
    assert len(kernelprof(torch.relu, torch.ones(4)).copies) == 0

def test_launches(kernelprof):
    assert kernelprof(torch.relu, torch.ones(4)).launches == 0
"""

# The tests of SUITE that use no fixture: a run of only these imports no torch.
NO_FIXTURE = "not baseline and not generator"


@pytest.fixture
def project(cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """SUITE and unreadable traces at the root, whose tests import no torch, and tests that
    profile in ``cpu/``, under cpu_pytester's conftest (CUDA reads as unavailable there)."""
    _off_ci(monkeypatch)
    cpu = cpu_pytester.mkdir("cpu")
    (cpu_pytester.path / "conftest.py").rename(cpu / "conftest.py")
    (cpu / "test_nothing.py").write_text(MEASURED_NOTHING)
    cpu_pytester.makepyfile(test_s=SUITE.format(data=str(DATA)), test_t=UNREADABLE)
    cpu_pytester.path.joinpath("bad.json").write_text(
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}', encoding="utf-8"
    )
    return cpu_pytester


def _tables_cut_to_a_section_or_inline(result: pytest.RunResult) -> None:
    """Below -vv and off CI: a table too long for pytest's cut goes whole to a report section,
    one that fits is shown inline; kernel names are diffed."""
    section(result, "test_count").fnmatch_lines(
        [
            "E       AssertionError: assert 0 == 1",
            f"E         kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels{MEDIANS}",
            "E         (the rest, 6 lines, is in the 'kernelprof assertion' section below; -vv shows it here)",
            "*- kernelprof assertion -*",
            f"kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels{MEDIANS}",
            *_rows(),  # whole, aligned, one line each
        ],
        consecutive=False,
    )
    # A table that fits is shown inline, the matches starred.
    section(result, "test_count_small").fnmatch_lines(
        [
            f"E         kernels.count(kind='gemm') matched 1 of 1 kernels: #0{MEDIANS}",
            "E          #  kind  family  dtype  layout  fused ops  median us  launched by  name",
            "E         *0  gemm  nvjet   bf16   tn      bias             2.7  aten::addmm  "
            "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
        ]
    )
    section(result, "test_count_small").no_fnmatch_line("*kernelprof assertion*")
    section(result, "test_names").fnmatch_lines(
        [
            "E       AssertionError: assert KernelList(1 kernel) == ['nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNN']",
            "E         the kernel names differ: 1 expected, 1 ran (- expected, + this run)",
            "E         - nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNN",
            "E         + nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
        ]
    )
    # Issue 32 item 5: a dtype question says which kernels have which dtype.
    section(result, "test_dtype").fnmatch_lines(
        [
            f"E         kernels.count(kind='gemm', dtype='fp32') matched 1 of 7 kernels: #3{MEDIANS}",
            "*- kernelprof assertion -*",
            " #  kind       part of  family   dtype  layout*",
            "*3  gemm       -        cutlass  fp32   tn  *cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>",
            " 4  reduction  gemm     cublas   fp32   -  *cublasLt::splitKreduce_kernel<32, 16, int, float, *, ...>",
        ],
        consecutive=False,
    )
    assert "\\n" not in result.stdout.str()


def _no_plugin_frames(result: pytest.RunResult) -> None:
    text = result.stdout.str()
    for plugin_source in ("def one(", "def check(", "raise AssertionError", "def _compare(", "def capture_callable("):
        assert plugin_source not in text, plugin_source


def test_failures_show_whole_tables_at_the_tests_line_and_no_plugin_frames(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(failed=13)
    _tables_cut_to_a_section_or_inline(result)
    section(result, "test_baseline_eq").fnmatch_lines(
        [
            "E       AssertionError: assert KernelProfile == kernel_baseline failed:",
            "E         no kernel baseline sm90/default in *test_baseline_eq.json",
            "E         record it with: pytest --kernelprof-update 'test_s.py::test_baseline_eq'",
        ]
    )
    section(result, "test_generator").fnmatch_lines(
        ["E       TypeError: kernelprof cannot profile gen: it is a generator function*"]
    )
    # A trace that cannot be read fails at the test's line, without the reader's frames.
    section(result, "test_missing").fnmatch_lines(
        [
            '>       load_trace("nope.json.gz")',
            "E       pytest_kernelprof.errors.TraceError: nope.json.gz: no such trace file "
            f"(relative paths are read from the current directory, {project.path})",
        ]
    )
    section(result, "test_malformed").fnmatch_lines(
        [
            '>       load_trace("bad.json")',
            "E       pytest_kernelprof.errors.TraceError: bad.json: event 0 has a negative duration*",
        ]
    )
    # A profile that measured nothing fails at the test's line, whatever was asked of it.
    for test in ("test_syncs", "test_copies", "test_launches"):
        section(result, test).fnmatch_lines(
            [
                ">       assert *kernelprof(torch.relu, torch.ones(4))*",
                "E       pytest_kernelprof.errors.NoDeviceActivityError: no GPU activity*",
            ]
        )
    _no_plugin_frames(result)
    for plugin_file in ("traces.py", "events.py", "api.py", "model*.py"):
        result.stdout.no_fnmatch_line(f"*pytest_kernelprof*{plugin_file}*")


def test_at_v_the_tables_are_cut_as_at_the_default_verbosity(project: pytest.Pytester) -> None:
    result = project.runpytest("-v", "test_s.py", "-k", NO_FIXTURE)
    result.assert_outcomes(failed=5, deselected=3)
    _tables_cut_to_a_section_or_inline(result)
    _no_plugin_frames(result)


def _whole_table_inline(result: pytest.RunResult) -> None:
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            f"E         kernels.count(*) matched 0 of 5 kernels{MEDIANS}",
            *(f"E         {row}" for row in _rows()),
        ]
    )
    result.stdout.no_fnmatch_line("*kernelprof assertion*")


def test_at_vv_the_table_is_inline_as_pytest_shows_it_whole(project: pytest.Pytester) -> None:
    _whole_table_inline(project.runpytest("-vv", "test_s.py", "-k", "test_count and not small"))


@pytest.mark.parametrize("var", ["CI", "BUILD_NUMBER"])
def test_on_ci_the_table_is_inline_as_pytest_shows_it_whole(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    monkeypatch.setenv(var, "1")
    _whole_table_inline(project.runpytest("test_s.py", "-k", "test_count and not small"))


def test_off_ci_junit_xml_keeps_the_section_the_failure_points_at(project: pytest.Pytester) -> None:
    # Trial report: JUnit XML without CI=true (Jenkins) held "(the rest, 6 lines, is in the
    # 'kernelprof assertion' section below ...)" and no such section: XML writes the failure, not
    # the report's sections.
    result = project.runpytest("test_s.py", "-k", "test_count and not small", "--junitxml", "out.xml")
    result.assert_outcomes(failed=1, deselected=7)
    (failure,) = ET.parse(project.path / "out.xml").getroot().iter("failure")
    text = pytest.LineMatcher((failure.text or "").splitlines())
    text.fnmatch_lines(
        [
            "E         (the rest, 6 lines, is in the 'kernelprof assertion' section below; -vv shows it here)",
            "*- kernelprof assertion -*",
            f"kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels{MEDIANS}",
            *_rows(),
        ],
        consecutive=False,
    )
    assert result.stdout.str().count("- kernelprof assertion -") == 1  # the terminal: once, as before


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


# Also the stacks ini key reaching the fixture (the option and the ini key set the same setting:
# tests/plugin/test_options.py).
def test_failing_sync_and_copy_assertions_print_the_table(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makeini("[pytest]\nkernelprof_stacks = true\n")
    pytester.makepyfile(
        test_syncs=f"""
        import torch
        from pytest_kernelprof import load_trace

        TRACE = {str(DATA / "h200_sync_cpu_copy.json.gz")!r}

        def test_the_ini_key_turns_stacks_on(kernelprof):
            assert kernelprof.stacks is True
            assert kernelprof(torch.relu, torch.randn(4)).ops["aten::relu"].count == 1

        def test_no_syncs():
            assert not load_trace(TRACE).syncs

        def test_no_dtoh_copies():
            assert load_trace(TRACE).copies.count(direction="DtoH") == 0

        def test_syncs_equal_a_list():
            assert load_trace(TRACE).syncs == []
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*assert not SyncList of 2: cudaMemcpyAsync in aten::copy_; cudaStreamSynchronize in aten::copy_",
            "*assert 1 == 0",
            "*copies.count(direction='DtoH') matched 1 of 1 copies (times: each one's median over the 3 calls)",
            "*#  direction  host mem    bytes  median gpu us  op           name",
            "*0  DtoH       pageable  4194304          211.6  aten::copy_  Memcpy DtoH (Device -> Pageable)",
            "*assert SyncList of 2 == []",
            "*SyncList of 2: cudaMemcpyAsync in aten::copy_*",
            "*#  runtime call           kind    copy           call 2 host us  ops  *  where",
            "*1  cudaStreamSynchronize  stream  -                         3.6  aten::to > aten::_to_copy > *",
            "*to fix: a copy to or from pageable memory blocks the host: *",
            "*to fix: a DtoH copy reads GPU results on the host: *",
        ]
    )


def test_a_dtype_failure_in_the_job_summary_shows_the_dtypes(project: pytest.Pytester) -> None:
    # Issue 32 item 5: the summary carries the table a dtype question failed on, dtypes included.
    result = project.runpytest("test_s.py", "-k", "test_dtype", "--kernelprof-summary", "summary.md", "-vv")
    result.assert_outcomes(failed=1, deselected=7)
    text = (project.path / "summary.md").read_text()
    assert f"kernels.count(kind='gemm', dtype='fp32') matched 1 of 7 kernels: #3{MEDIANS}" in text
    rows = [line.split() for line in text.splitlines()]
    header = [
        "#",
        "kind",
        "part",
        "of",
        "family",
        "dtype",
        "layout",
        "fused",
        "ops",
        "median",
        "us",
        "launched",
        "by",
        "name",
    ]
    assert header in rows
    assert any(row[:5] == ["*3", "gemm", "-", "cutlass", "fp32"] for row in rows)


TABLES = """
import pytest
from pathlib import Path


DATA = Path({data!r})


def test_count_cut(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_decode_eager.json.gz")
    assert prof.kernels.count(kind="gemm") == 2


def test_one(kernelprof):
    kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz").kernels.one("triton_poi_fused_*gelu*mul*")


def test_selection(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    assert prof.kernels.of_kind("gemm").count("triton*") == 1


def test_caught_then_other(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    with pytest.raises(AssertionError):
        assert prof.kernels.count(kind="gemm") == 2
    assert prof.launches == 0
"""


def test_a_profile_section_does_not_repeat_a_table_the_failure_showed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure that showed the profile's whole kernel table (a count's explanation, in its
    section or inline, or a failed one()) has the profile's section say so in one line, not
    show it again (the trial's 49-kernel count printed it twice: ~100 lines); the section keeps
    the table where the failure showed another (a selection's) or none. The fixture is one line."""
    _off_ci(monkeypatch)
    pytester.makepyfile(test_tables=TABLES.format(data=str(DATA)))
    result = pytester.runpytest()
    result.assert_outcomes(failed=4)
    shown_above = "(its kernel table is shown above, with the failure)"
    gemv = (
        "*internal::gemvx::kernel<int, int, ..., 7, ..., cublasGemvParamsEx<int, "
        "cublasGemvTensorStridedBatched<...>, ...> >"
    )
    count_cut = section(result, "test_count_cut")
    count_cut.fnmatch_lines(
        [
            "*- kernelprof assertion -*",
            gemv,
            "*- kernelprof profile 1 of 1 -*",
            "KernelProfile from *h200_decode_eager.json.gz on NVIDIA H200 (sm90): 3 calls (each kernel's time*",
            shown_above,
            "call *, numbered from 0, the fastest of 3 by host span: 49 launches, *us in kernels*, host *",
        ]
    )
    assert sum(line.endswith(gemv[1:]) for line in count_cut.lines) == 12  # once each
    assert len(count_cut.lines) < 75
    section(result, "test_one").fnmatch_lines(
        [
            "E       pytest_kernelprof.errors.KernelMatchError: *",
            "*- kernelprof profile 1 of 1 -*",
            "*: 3 calls (each kernel's time its median over them)",
            shown_above,
        ]
    )
    for test in ("test_selection", "test_caught_then_other"):
        kept = section(result, test)
        kept.fnmatch_lines(["*- kernelprof profile 1 of 1 -*", "*: 3 calls (each*", "#  kind *", "0  gemm *"])
        kept.no_fnmatch_line(shown_above)
    # The fixture's value in a traceback: one line, as every value the plugin hands out.
    section(result, "test_one").fnmatch_lines(["kernelprof = Profiler(1 profile loaded)"])
    result.stdout.no_fnmatch_line("*Profiler object at 0x*")


def test_a_profiles_repr_and_its_section_name_the_trace_alike(pytester: pytest.Pytester) -> None:
    # A trial saw the whole path in the "where" line (the repr) and the rootdir-relative one in the
    # section and the summary: both name it relative to the rootdir the suite runs from.
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "sync.json.gz").write_bytes((DATA / "h200_sync_cpu_copy.json.gz").read_bytes())
    pytester.makepyfile(
        test_where="""
        from pathlib import Path

        def test_no_syncs(kernelprof):
            prof = kernelprof.load_trace(Path(__file__).parent.resolve() / "data" / "sync.json.gz")
            assert not prof.syncs
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*= KernelProfile('data/sync.json.gz' on NVIDIA H200 (sm90): 1 kernel per call, 3 calls).syncs",
            "KernelProfile from data/sync.json.gz on NVIDIA H200 (sm90): 3 calls*",
        ]
    )
    assert str(pytester.path) + "/data" not in result.stdout.str().replace("Path(__file__)", "")


def test_a_family_count_fails_as_every_count_does(cpu_pytester: pytest.Pytester) -> None:
    # A trial: "the compiled model launches no eager ATen pointwise kernel" could not be written.
    cpu_pytester.makepyfile(
        test_f=f"""
from pytest_kernelprof import load_trace

def test_no_aten_pointwise():
    prof = load_trace({str(DATA / "h200_geglu_eager.json.gz")!r})
    assert prof.kernels.count(family="aten", kind="pointwise") == 0
"""
    )
    result = cpu_pytester.runpytest("-p", "no:randomly", "-vv")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: assert 2 == 0",
            f"E         kernels.count(kind='pointwise', family='aten') matched 2 of 5 kernels: #1, #3{MEDIANS}",
            "E          #  kind * family *",
            "E          0  gemm * nvjet *",
            "E         [*]1  pointwise  aten *",
            "E          2  gemm * nvjet *",
            "E         [*]3  pointwise  aten *",
        ]
    )
