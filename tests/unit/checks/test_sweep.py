"""A sweep's check: where it holds, where it breaks, and what is no answer at all (a
``NoAnswerError``), which propagates out of ``every`` and ``none`` rather than read as "breaks"."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest

from pytest_kernelprof import (
    KernelProfError,
    KernelProfile,
    NoAnswerError,
    NoDeviceActivityError,
    SweepError,
    VariedProfileError,
    errors,
    load_trace,
)
from pytest_kernelprof.checks.sweep import ProfileSweep, SweepCase, run_check
from tests.helpers import DATA

# Every kind of "no answer" errors.py defines, the base included: one added there is tested here too.
NO_ANSWERS = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if cls.__module__ == errors.__name__ and issubclass(cls, NoAnswerError)
]


@pytest.fixture(scope="module")
def sweep() -> ProfileSweep:
    profile = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz")
    return ProfileSweep([SweepCase({"n": 2}, profile), SweepCase({"n": 3}, profile)])


def raising(error: type[BaseException]) -> Callable[[KernelProfile], None]:
    def check(prof: KernelProfile) -> None:
        raise error("no answer from this profile")

    return check


def test_the_errors_that_are_no_answer_keep_their_bases() -> None:
    assert {NoDeviceActivityError, VariedProfileError} < set(NO_ANSWERS)
    for cls in NO_ANSWERS:
        assert {KernelProfError, AssertionError} <= set(cls.__mro__), cls


@pytest.mark.parametrize("error", NO_ANSWERS, ids=lambda cls: cls.__name__)
def test_a_check_that_meets_no_answer_propagates_it(sweep: ProfileSweep, error: type[NoAnswerError]) -> None:
    check = raising(error)
    with pytest.raises(error, match="no answer from this profile"):
        run_check(check, sweep[0].profile)
    with pytest.raises(error):
        sweep.every(check)
    with pytest.raises(error):
        sweep.none(check)  # read as "breaks", none(...) would pass


def test_a_new_kind_of_no_answer_propagates_without_being_named(sweep: ProfileSweep) -> None:
    class AskedTooEarly(NoAnswerError):
        """What a later version may add: run_check must let it through by its base."""

    with pytest.raises(AskedTooEarly):
        sweep.none(raising(AskedTooEarly))


def test_an_assertion_that_answers_is_a_broken_check(sweep: ProfileSweep) -> None:
    outcome = run_check(raising(AssertionError), sweep[0].profile)
    assert (outcome.held, outcome.said) == (False, "AssertionError: no answer from this profile")
    sweep.none(raising(AssertionError))
    with pytest.raises(SweepError, match="the check broke in 2 of 2 cases"):
        sweep.every(raising(AssertionError))


def test_the_table_counts_kinds_as_count_does() -> None:
    # The compiled decode step's softmax is a persistent reduction, the eager one's a reduction:
    # count(kind="reduction") is 1 in both, and so is the table's column.
    compiled = load_trace(DATA / "h200_decode_compiled.json.gz")
    eager = load_trace(DATA / "h200_decode_eager.json.gz")
    assert compiled.kernels.count(kind="reduction") == eager.kernels.count(kind="reduction") == 1
    table = ProfileSweep([SweepCase({"mode": "compiled"}, compiled), SweepCase({"mode": "eager"}, eager)]).table()
    rows = table.splitlines()
    header = ["#", "mode", "kernels", "pointwise", "persistent_reduction", "launches", "ops", "regions"]
    assert rows[1].split() == header
    assert rows[2].split()[4] == "1"
    assert rows[3].split()[4] == "0"
    assert "the same in every case: gemm 12, reduction 1, syncs 0" in table
