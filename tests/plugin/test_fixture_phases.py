"""Work done in a fixture's setup or teardown is in the plugin's books as a test's call is: a
baseline a teardown checks counts as used (``--kernelprof-prune`` keeps it), and a failure in a
fixture's setup or teardown gets its report sections and saved traces on that phase's report;
a profile made in a session- or module-scoped fixture belongs to the test in whose setup (or
teardown) it was made. In one process and under xdist."""

from __future__ import annotations

import json

import pytest

from pytest_kernelprof.paths import trace_file_name
from tests.helpers import DATA

WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])

# Each test checks one entry of its baseline in its call and one in a fixture: in its setup, in its
# teardown, or profiled in setup and checked in teardown. KP_TRACE picks the trace (a changed one mismatches).
CHECKED_IN_FIXTURES = """
import os
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

TRACE = Path({data!r}) / os.environ.get("KP_TRACE", "h200_linear_eager.json.gz")
CALL = load_trace(Path({data!r}) / "h200_linear_eager.json.gz")  # at import: no test's profile


@pytest.fixture
def checked_in_setup(kernel_baseline, kernelprof):
    kernel_baseline.check(kernelprof.load_trace(TRACE), name="setup")


@pytest.fixture
def checked_in_teardown(kernel_baseline, kernelprof):
    yield
    kernel_baseline.check(kernelprof.load_trace(TRACE), name="teardown")


@pytest.fixture
def profiled_in_setup(kernelprof):
    return kernelprof.load_trace(TRACE)


@pytest.fixture
def checked_later(profiled_in_setup, kernel_baseline):
    yield
    kernel_baseline.check(profiled_in_setup, name="later")


def test_setup(checked_in_setup, kernel_baseline):
    kernel_baseline.check(CALL, name="call")


def test_teardown(checked_in_teardown, kernel_baseline):
    kernel_baseline.check(CALL, name="call")


def test_later(checked_later, kernel_baseline):
    kernel_baseline.check(CALL, name="call")
"""

# Each file's entry checked in the call makes the file used: an entry of it no check used would be pruned.
STORED = {
    "test_later.json": ["call", "later"],
    "test_setup.json": ["call", "setup"],
    "test_teardown.json": ["call", "teardown"],
}


def _stored(pytester: pytest.Pytester) -> dict[str, list[str]]:
    folder = pytester.path / "__kernelprof__" / "test_phases"
    return {p.name: sorted(json.loads(p.read_text())["archs"]["sm90"]) for p in sorted(folder.iterdir())}


@pytest.fixture
def recorded(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    cpu_pytester.makepyfile(test_phases=CHECKED_IN_FIXTURES.format(data=str(DATA)))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=3)
    assert _stored(cpu_pytester) == STORED
    return cpu_pytester


@WORKERS
def test_prune_keeps_the_entries_that_fixtures_check(recorded: pytest.Pytester, workers: list[str]) -> None:
    if workers:
        pytest.importorskip("xdist")

    result = recorded.runpytest(*workers, "--kernelprof-prune")

    result.assert_outcomes(passed=3)
    assert "unused baseline" not in result.stdout.str()
    assert "deleted" not in result.stdout.str()
    assert _stored(recorded) == STORED


@WORKERS
def test_a_mismatch_in_a_fixture_gets_its_profile_and_trace_on_that_phases_report(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    monkeypatch.setenv("KP_TRACE", "h200_bf16_mlp_fp32_linear.json.gz")

    result = recorded.runpytest(*workers, "--kernelprof-trace-dir", "traces", "-rE")

    # The setup check errs in setup (the test does not run), the teardown ones after a passed call.
    result.assert_outcomes(passed=2, errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*_ ERROR at setup of test_setup _*",
            "*_ ERROR at teardown of test_teardown _*",
            "*_ ERROR at teardown of test_later _*",
        ]
    )
    out = result.stdout.str()
    assert out.count("- kernelprof profile 1 of 1 -") == 3, out
    assert out.count("- kernelprof traces -") == 3, out
    for test in ("test_setup", "test_teardown", "test_later"):
        assert (recorded.path / "traces" / trace_file_name(f"test_phases.py::{test}", 0)).exists()
    assert "INTERNALERROR" not in out


# Profiles in a session-scoped fixture's setup and teardown, and in a module-scoped one's: each
# is the books' of the test that was running then (the first to use it; the last, for a teardown).
WIDER_SCOPES = """
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

TRACE = Path({data!r}) / "h200_linear_eager.json.gz"


@pytest.fixture(scope="session")
def shared():
    prof = load_trace(TRACE)
    yield prof
    load_trace(TRACE)


@pytest.fixture(scope="module")
def per_module():
    return load_trace(TRACE)


def test_first(shared, per_module):
    assert shared.kernels


def test_second(shared, per_module, kernelprof):
    kernelprof.load_trace(TRACE)


def test_last(shared):
    pass
"""


@WORKERS
def test_profiles_of_wider_fixtures_belong_to_the_test_that_was_running(
    cpu_pytester: pytest.Pytester, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    cpu_pytester.makepyfile(test_wide=WIDER_SCOPES.format(data=str(DATA)))

    # One worker sees the whole module under --dist loadfile, so the fixtures are made once.
    spread = [*workers, "--dist", "loadfile"] if workers else []
    result = cpu_pytester.runpytest(*spread, "--kernelprof-trace-dir", "traces", "--kernelprof-save", "all")

    result.assert_outcomes(passed=3)
    assert "INTERNALERROR" not in result.stdout.str()
    saved = sorted(p.name for p in (cpu_pytester.path / "traces").iterdir() if p.name.endswith(".json.gz"))
    first = [trace_file_name("test_wide.py::test_first", i) for i in range(2)]  # the session's, the module's
    second = [trace_file_name("test_wide.py::test_second", 0)]
    last = [trace_file_name("test_wide.py::test_last", 0)]  # the session fixture's teardown
    assert saved == sorted([*first, *second, *last])


BREAKS_A_RULE_IN_TEARDOWN = """
import pytest

TRACE = {trace!r}


@pytest.fixture
def loads_at_the_end(kernelprof):
    yield
    kernelprof.load_trace(TRACE)


def test_rule(loads_at_the_end):
    pass
"""


@WORKERS
def test_a_rule_broken_in_a_teardown_saves_the_trace_on_the_teardowns_report(
    cpu_pytester: pytest.Pytester, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    cpu_pytester.makeini(
        "[pytest]\nkernelprof_forbid =\n    no-tanh: kind=pointwise name=*tanh* | fuse the activation\n"
    )
    cpu_pytester.makepyfile(test_rule=BREAKS_A_RULE_IN_TEARDOWN.format(trace=str(DATA / "h200_decode_eager.json.gz")))

    result = cpu_pytester.runpytest(*workers, "--kernelprof-trace-dir", "traces")

    result.assert_outcomes(passed=1, errors=1)
    saved = trace_file_name("test_rule.py::test_rule", 0)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_rule _*",
            "E   *ForbiddenError: kernelprof_forbid rule 'no-tanh' (*) is broken: fuse the activation",
            "*- kernelprof traces -*",
            f"*traces/{saved}  (kernelprof show *",
        ]
    )
    assert (cpu_pytester.path / "traces" / saved).exists()
