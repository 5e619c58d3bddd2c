"""--kernelprof-trace-dir and --kernelprof-save, through pytester.

--kernelprof-save all (and loading the traces back) is checked in tests/plugin/test_xdist.py's
run, --kernelprof-save none in tests/plugin/test_fixture.py's, bad values in tests/plugin/test_options.py.
Here also: a test's earlier profiles keep their kernels in the traces saved at its end (on GPU
sessions that tests/fake_gpu.py plays), and torch exports nothing where no trace will be saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.paths import trace_file_name
from tests import fake_gpu

FAILS, FAILS_2 = trace_file_name("test_suite.py::test_fails", 0), trace_file_name("test_suite.py::test_fails", 1)
EXPORTED = trace_file_name("test_suite.py::test_exports_then_fails", 0)

SUITE = """
import torch

def test_passes(kernelprof):
    kernelprof(torch.relu, torch.randn(4))

def test_fails(kernelprof):
    kernelprof(torch.relu, torch.randn(4))
    kernelprof(torch.sigmoid, torch.randn(4))
    assert False, "on purpose"

def test_no_profile():
    assert False

def test_exports_then_fails(kernelprof):
    kernelprof.profile(lambda: torch.ones(3).sum().item(), stacks=True)
    kernelprof.captures[-1].export_trace("mine.json")
    assert False
"""


def _written(pytester: pytest.Pytester) -> list[str]:
    folder = pytester.path / "traces"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_failed_tests_get_their_traces_by_default(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(test_suite=SUITE)
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "traces")
    result.assert_outcomes(passed=1, failed=3)
    assert "INTERNALERROR" not in result.stdout.str()
    # Each failing test's trace, and its timeline page beside it (timeline.py); a test that
    # exported its trace itself still gets it saved.
    traces = (FAILS_2, FAILS, EXPORTED)
    assert _written(cpu_pytester) == sorted([*traces, *(name.replace(".json.gz", ".html") for name in traces)])
    assert (cpu_pytester.path / "mine.json").exists()
    result.stdout.fnmatch_lines(["*- kernelprof traces -*", f"*traces/{FAILS}  (kernelprof show *"])


def test_long_and_odd_test_ids_make_safe_unique_names() -> None:
    a = trace_file_name("tests/test_x.py::test_y[" + "a" * 300 + "]", 0)
    b = trace_file_name("tests/test_x.py::test_y[" + "a" * 299 + "b]", 0)
    assert a != b
    assert len(a) < 140
    assert trace_file_name("t.py::test[x/y: z]", 1).startswith("t.py__test_x_y_z-")


# Profiles taken before later ones in the same test: each trace is kept as its session ends
# (capture/session_traces.py), since a later session takes what torch writes it from.
# tests/fake_gpu.py plays the GPU's part: a trace exported after a later session has no kernels.
LATER_PROFILES = """
import json
import os

import torch

import pytest_kernelprof as kp

FAIL = os.environ.get("KP_FAIL") == "1"


def _work():
    return torch.ones(4).sum()


def _live(request, profiles):
    # The live kernels per call, in the order the plugin names the traces.
    folder = request.config.rootpath / "live"
    folder.mkdir(exist_ok=True)
    (folder / f"{request.node.name}.json").write_text(json.dumps([len(p.kernels) for p in profiles]))


def test_two(kernelprof, request):
    first = kernelprof(_work)
    second = kernelprof(_work)
    _live(request, [first, second])
    assert not FAIL


def test_three(kernelprof, request):
    first = kernelprof(_work)
    other = kp.profile(_work)  # another profiler of the test: its trace is named after the fixture's
    third = kernelprof(_work)
    _live(request, [first, third, other])
    assert not FAIL
"""


def _fake_gpu_project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(fake_gpu=Path(fake_gpu.__file__).read_text(), test_suite=LATER_PROFILES)
    pytester.makeconftest(fake_gpu.conftest())


@pytest.mark.parametrize(("save", "fail", "workers"), [("all", False, 0), ("failed", True, 0), ("failed", True, 2)])
def test_every_saved_trace_holds_its_own_profiles_kernels(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, save: str, fail: bool, workers: int
) -> None:
    if workers:
        pytest.importorskip("xdist")
    _fake_gpu_project(pytester)
    monkeypatch.setenv("KP_FAIL", "1" if fail else "0")
    xdist = ["-n", str(workers)] if workers else []
    result = pytester.runpytest("--kernelprof-trace-dir", "traces", f"--kernelprof-save={save}", *xdist)
    result.assert_outcomes(**({"failed": 2} if fail else {"passed": 2}))
    for name, profiles in (("test_two", 2), ("test_three", 3)):
        live = json.loads((pytester.path / "live" / f"{name}.json").read_text())
        assert len(live) == profiles
        assert all(live)
        saved = [trace_file_name(f"test_suite.py::{name}", index) for index in range(profiles)]
        assert [len(load_trace(pytester.path / "traces" / file).kernels) for file in saved] == live
    if fail:  # the report's lines are as they were
        result.stdout.fnmatch_lines(["*- kernelprof traces -*", f"*traces/{saved[1]}  (kernelprof show *"])


# Counts torch's exports (either kind of session) in the inner run, one line per export.
COUNTING_CONFTEST = """
import torch

from pytest_kernelprof.capture import KinetoSession


def _counted(real):
    def export_chrome_trace(self, path):
        with open("exports.txt", "a") as out:
            out.write(path + "\\n")
        real(self, path)
    return export_chrome_trace


def pytest_configure(config):
    torch.cuda.is_available = lambda: False
    for cls in (KinetoSession, torch.profiler.profile):
        cls.export_chrome_trace = _counted(cls.export_chrome_trace)
"""


@pytest.mark.parametrize(
    ("options", "exports", "files"),
    [
        (("--kernelprof-trace-dir", "traces", "--kernelprof-save=none"), 0, 0),
        (("--kernelprof-trace-dir", "traces"), 3, 0),  # a test may fail: each trace is kept until it ends
        (("--kernelprof-trace-dir", "traces", "--kernelprof-save=all"), 3, 3),  # saved from what was kept
    ],
    ids=["save-none", "save-failed-passing", "save-all"],
)
def test_torch_exports_a_trace_only_where_traces_will_be_saved(
    pytester: pytest.Pytester, options: tuple[str, ...], exports: int, files: int
) -> None:
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(
        test_suite="""
import torch

def test_three(kernelprof):
    for fn in (torch.relu, torch.sigmoid, torch.tanh):
        kernelprof(fn, torch.randn(4))
"""
    )
    result = pytester.runpytest(*options)
    result.assert_outcomes(passed=1)
    counted = pytester.path / "exports.txt"
    assert (len(counted.read_text().splitlines()) if counted.exists() else 0) == exports
    assert len(_written(pytester)) == files
    for index in range(files):
        name = trace_file_name("test_suite.py::test_three", index)
        assert (
            load_trace(pytester.path / "traces" / name).ops.names[0]
            == ("aten::relu", "aten::sigmoid", "aten::tanh")[index]
        )


def test_a_loaded_trace_changed_by_the_test_is_not_saved_and_the_session_goes_on(
    cpu_pytester: pytest.Pytester,
) -> None:
    # The export re-read the half-written file at the end of the test: INTERNALERROR (EOFError).
    data = Path(__file__).parents[1] / "data" / "h200_linear_eager.json.gz"
    cpu_pytester.makepyfile(
        test_suite=f"""
        import shutil

        def test_rewrites(kernelprof, tmp_path):
            p = tmp_path / "t.json.gz"
            shutil.copy({str(data)!r}, p)
            prof = kernelprof.load_trace(p)
            p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
            assert len(prof.kernels) == 4

        def test_after():
            pass
        """
    )
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "traces")
    result.assert_outcomes(passed=1, failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*test_rewrites*.json.gz: not written (the trace file *t.json.gz changed since it was loaded*"]
    )
