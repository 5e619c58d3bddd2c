"""Real sweeps on the CPU: a profile per case, what torch.compile did in each, the checks, export
and load, and Hypothesis's search (``explore``). A CPU profile has ops and no kernels: what reads
kernels raises NoDeviceActivityError, as everywhere else."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from pytest_kernelprof import (
    KernelProfile,
    MissingHypothesisError,
    NoDeviceActivityError,
    Profiler,
    SweepError,
    load_sweep,
)
from tests import fake_gpu


def mean_or_sum(n: int) -> Callable[[], Any]:
    """A case: odd sizes sum where even ones take the mean."""
    x = torch.randn(n, 4)
    return (lambda: x.sum()) if n % 2 else (lambda: x.mean())


def takes_the_mean(prof: KernelProfile) -> bool:
    return "aten::mean" in prof.ops


@pytest.fixture
def quick() -> Profiler:
    return Profiler(warmup=0, calls=1)


def test_each_case_is_built_by_fn_and_profiled(quick: Profiler) -> None:
    built: list[dict[str, Any]] = []

    def build(n: int, scale: float = 1.0) -> Callable[[], Any]:
        built.append({"n": n, "scale": scale})
        return mean_or_sum(n)

    sweep = quick.sweep(build, [dict(n=2), dict(n=3, scale=0.5)])
    assert built == [{"n": 2, "scale": 1.0}, {"n": 3, "scale": 0.5}]
    assert [case.params for case in sweep] == [{"n": 2}, {"n": 3, "scale": 0.5}]
    assert len(quick.captures) == 2  # each case is one profile of the profiler, for the test's reports
    assert "aten::mean" in sweep.profile(n=2).ops
    assert "aten::sum" in sweep.profile(n=3).ops
    assert "aten::randn" not in sweep.profile(n=3).ops  # building the inputs is not profiled


def test_a_cpu_sweep_compares_ops_and_raises_where_kernels_are_read(quick: Profiler) -> None:
    sweep = quick.sweep(mean_or_sum, dict(n=[2, 3, 4, 7]))
    table = sweep.table()
    assert "no GPU activity in any case, so no kernels, launches or syncs" in table
    assert "kernels" not in table.splitlines()[1]
    with pytest.raises(NoDeviceActivityError):
        sweep.every(lambda prof: prof.kernels.count() == 1)
    with pytest.raises(SweepError) as failure:
        sweep.every(takes_the_mean)
    text = str(failure.value)
    assert "the check broke in 2 of 4 cases: n=3; n=7" in text
    assert "pin it: cases=[dict(n=3)]" in text
    assert "left: n=4 (the nearest case that passed); right: n=3" in text
    assert "no GPU activity in one of them: their CPU ops, by count per call" in text
    # the op only the case that passed ran: on the left alone
    assert any(line.startswith("aten::mean ") and line.rstrip().endswith("-") for line in text.splitlines())


def test_a_failing_case_with_an_int_past_a_float_is_a_sweep_error(quick: Profiler) -> None:
    huge = 10**400
    sweep = quick.sweep(lambda n, big: mean_or_sum(n), [dict(n=2, big=huge), dict(n=3, big=huge + 1)])
    with pytest.raises(SweepError, match=r"(?s)broke in 1 of 2 cases.*n=3, big=1000"):
        sweep.every(takes_the_mean)


def test_a_builder_that_returns_no_callable_names_the_case(quick: Profiler) -> None:
    with pytest.raises(TypeError, match=r"returns the callable to profile .* for the case n=2 it returned Tensor"):
        quick.sweep(lambda n: torch.ones(n), dict(n=[2]))
    with pytest.raises(TypeError, match="takes the function that builds a case"):
        quick.sweep(torch.ones(2), dict(n=[2]))  # type: ignore[arg-type]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_an_error_while_a_case_builds_or_runs_says_which_case(quick: Profiler) -> None:
    def build(n: int) -> Callable[[], Any]:
        if n == 3:
            raise RuntimeError("no such shape")
        return lambda: torch.ones(2, n) @ torch.ones(3, 2)

    with pytest.raises(RuntimeError, match="no such shape") as building:
        quick.sweep(build, dict(n=[3]))
    assert "raised while fn built the sweep's case n=3" in building.value.__notes__
    with pytest.raises(RuntimeError) as running:
        quick.sweep(build, dict(n=[2]))
    assert "raised while the sweep's case n=2 was profiled" in running.value.__notes__


def breaks_for_odd_batches(x: torch.Tensor) -> torch.Tensor:
    h = F.gelu(x)
    if x.shape[0] % 2:
        torch._dynamo.graph_break()
    return h * x


def test_what_torch_compile_did_in_each_case_is_reported() -> None:
    torch._dynamo.reset()
    compiled = torch.compile(breaks_for_odd_batches, backend="eager", dynamic=False)

    def build(batch: int) -> Callable[[], Any]:
        x = torch.randn(batch, 8)
        return lambda: compiled(x)

    sweep = Profiler().sweep(build, dict(batch=[2, 3, 4]))
    assert [case.compiled for case in sweep] == [1, 2, 1]  # a recompile per new batch; the break's resume too
    assert [case.profile.compile.regions for case in sweep] == [1, 2, 1]
    assert [case.profile.compile.recompiles for case in sweep] == [0, 0, 0]  # all in the warm-up
    table = sweep.table()
    assert "torch.compile compiled 4 frames in 3 cases, each in the case's warm-up (compiled)" in table
    assert table.splitlines()[1].split() == ["#", "batch", "ops", "regions", "compiled"]
    with pytest.raises(SweepError, match=r"pin it: cases=\[dict\(batch=3\)\]"):
        sweep.every(lambda prof: prof.compile.regions == 1)


def test_traces_kept_while_the_cases_ran_export_and_load_back(quick: Profiler, tmp_path: Path) -> None:
    sweep = quick.sweep(mean_or_sum, dict(n=[2, 3]), keep_traces=True)
    index = sweep.export(tmp_path / "sweep")
    assert sorted(p.name for p in index.parent.iterdir()) == ["case-00.json.gz", "case-01.json.gz", "sweep.json"]
    loaded = load_sweep(tmp_path / "sweep")
    assert [case.profile.ops.names for case in loaded] == [case.profile.ops.names for case in sweep]
    assert [case.compiled for case in loaded] == [case.compiled for case in sweep]
    with pytest.raises(ValueError, match=r"holds no trace to export: .*keep_traces=True"):
        quick.sweep(mean_or_sum, dict(n=[2])).export(tmp_path / "other")


@pytest.mark.usefixtures("fake_gpu_sessions")
def test_kept_traces_of_gpu_cases_keep_their_kernels(tmp_path: Path) -> None:
    # Each case's trace is exported after the later cases ran: from what was kept as it ended.
    sweep = Profiler().sweep(lambda n: lambda: torch.ones(n).sum(), dict(n=[1, 2, 3]), keep_traces=True)
    loaded = load_sweep(sweep.export(tmp_path))
    kernels = [fake_gpu.KERNELS[name] for name in fake_gpu.RECORDED]
    assert [len(case.profile.kernels) for case in sweep] == kernels
    assert [len(case.profile.kernels) for case in loaded] == kernels


def test_a_case_value_json_cannot_hold_is_kept_as_its_repr(quick: Profiler, tmp_path: Path) -> None:
    sweep = quick.sweep(
        lambda dtype: lambda: torch.ones(2, dtype=dtype).sum(), dict(dtype=[torch.float64]), keep_traces=True
    )
    assert load_sweep(sweep.export(tmp_path))[0].params == {"dtype": "torch.float64"}


def test_an_int_past_pythons_text_limit_is_swept_named_and_exported(quick: Profiler, tmp_path: Path) -> None:
    # An adversarial probe: repr() and json.dumps() of an int of more than 4,300 digits raise
    # ValueError; the sweep, its failure and its export passed it on as a raw traceback.
    huge = 10**5000
    sweep = quick.sweep(lambda n: lambda: torch.ones(n % 7 + 1).sum(), dict(n=[huge, 3]), keep_traces=True)
    assert f"\n0  {hex(huge)[:40]}" in sweep.table()  # cut short, as every long cell
    with pytest.raises(SweepError, match=rf"the check broke in 2 of 2 cases: n={hex(huge)}; n=3\n"):
        sweep.every(lambda prof: False)
    assert [case.params for case in load_sweep(sweep.export(tmp_path))] == [{"n": hex(huge)}, {"n": 3}]


def test_distinct_cases_that_show_alike_are_profiled_and_named_apart(quick: Profiler, tmp_path: Path) -> None:
    # An adversarial review: two nn.Linear(4, 4) were refused as "the case m=Linear(...) is listed twice".
    a, b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    cases = [dict(m=a), dict(m=b), dict(m=torch.nn.Identity())]
    sweep = quick.sweep(lambda m: lambda: m(torch.ones(1, 4)), cases, keep_traces=True)
    shown = "m=Linear(in_features=4, out_features=4, bias=True)"
    assert [case.label for case in sweep] == [f"{shown} #0", f"{shown} #1", "m=Identity()"]
    assert [case.params["m"] for case in sweep][:2] == [a, b]
    with pytest.raises(SweepError, match=rf"the check broke in 2 of 3 cases: {re.escape(shown)} #0; .* #1\n"):
        sweep.every(lambda prof: "aten::linear" not in prof.ops)
    assert [case.label for case in sweep[1:]] == [f"{shown} #1", "m=Identity()"]  # a case keeps its name in a slice
    loaded = load_sweep(sweep.export(tmp_path))  # their values as their reprs: the same text twice
    stored = "m='Linear(in_features=4, out_features=4, bias=True)'"
    assert [case.label for case in loaded] == [f"{stored} #0", f"{stored} #1", "m='Identity()'"]


# -- explore ------------------------------------------------------------------------------


def test_explore_fails_with_the_smallest_case_that_breaks_the_check(quick: Profiler) -> None:
    with pytest.raises(SweepError) as failure:
        quick.explore(mean_or_sum, dict(n=st.integers(2, 64)), takes_the_mean, max_cases=16)
    text = str(failure.value)
    assert text.startswith("explore(takes_the_mean) broke at n=3: the smallest case Hypothesis found (")
    assert "pin it: cases=[dict(n=3)]" in text
    assert "the check there: returned False" in text
    assert "left: n=2 (the nearest case that passed); right: n=3" in text
    assert len(quick.captures) <= 16


def test_explore_returns_the_cases_it_profiled_where_none_broke_the_check(quick: Profiler) -> None:
    sweep = quick.explore(mean_or_sum, st.fixed_dictionaries({"n": st.sampled_from([2, 4, 6])}), takes_the_mean)
    assert sorted(case["n"] for case in sweep) == [2, 4, 6]  # each drawn case profiled once
    assert len(quick.captures) == 3


def test_explore_profiles_no_more_cases_than_its_budget(quick: Profiler) -> None:
    sweep = quick.explore(mean_or_sum, dict(n=st.integers(1, 10**6).map(lambda n: 2 * n)), takes_the_mean, max_cases=3)
    assert len(sweep) == len(quick.captures) == 3
    once = Profiler(warmup=0, calls=1)
    assert len(once.explore(mean_or_sum, dict(n=st.just(2)), takes_the_mean, deadline=1e-9)) == 1


def test_explore_says_when_its_budget_ran_out_before_the_smallest_case(quick: Profiler) -> None:
    with pytest.raises(SweepError) as failure:
        quick.explore(mean_or_sum, dict(n=st.integers(2, 64)), takes_the_mean, max_cases=3)
    assert "the budget ran out: a smaller case may break it too (raise max_cases or deadline)" in str(failure.value)


def test_explore_raises_the_first_error_that_is_no_broken_check(quick: Profiler) -> None:
    with pytest.raises(NoDeviceActivityError):
        quick.explore(mean_or_sum, dict(n=st.integers(2, 64)), lambda prof: len(prof.kernels) == 1)
    assert len(quick.captures) == 1  # told once: nothing more profiled
    with pytest.raises(ZeroDivisionError):
        quick.explore(lambda n: 1 / 0, dict(n=st.integers(2, 64)), takes_the_mean)


@pytest.mark.parametrize(
    ("cases", "options", "error", "message"),
    [
        ([1, 2], {}, TypeError, "a Hypothesis strategy of dicts"),
        ({"n": st.integers(2, 4)}, {"max_cases": 0}, ValueError, "max_cases must be an int from 1 to 1000"),
        ({"n": st.integers(2, 4)}, {"deadline": 0}, ValueError, "deadline is a number of seconds above 0"),
        ({"n": st.integers(2, 4)}, {"deadline": float("nan")}, ValueError, "deadline is a number of seconds above 0"),
        ({"n": st.integers(2, 4)}, {"deadline": float("inf")}, ValueError, "deadline is a number of seconds above 0"),
        (st.integers(2, 4), {}, TypeError, "drew 2, not a dict of keyword arguments"),
    ],
)
def test_explore_arguments_that_cannot_be_used(
    quick: Profiler, cases: Any, options: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        quick.explore(mean_or_sum, cases, takes_the_mean, **options)


def test_explore_without_hypothesis_says_how_to_get_it(quick: Profiler, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(
        MissingHypothesisError, match=r"pip install hypothesis \(sweep\(\) over a list of cases needs nothing\)"
    ):
        quick.explore(mean_or_sum, {"n": [2]}, takes_the_mean)
    quick.sweep(mean_or_sum, dict(n=[2]))  # a sweep needs nothing


def _yields(prof: KernelProfile) -> Any:
    raise AssertionError("never runs")
    yield


async def _is_async(prof: KernelProfile) -> None:
    raise AssertionError("never runs")


@pytest.mark.parametrize("check", [_yields, _is_async])
def test_explore_refuses_a_check_whose_call_runs_nothing(quick: Profiler, check: Any) -> None:
    with pytest.raises(TypeError, match=rf"^a sweep's check {check.__name__}: it is a (generator|coroutine) function"):
        quick.explore(mean_or_sum, {"n": st.integers(2, 4)}, check)


def test_cases_of_tensors_fail_with_a_sweep_error_and_are_found(quick: Profiler) -> None:
    # An adversarial probe: the failure's nearest passing case compared tensors with ==, which
    # raised (shapes 4 and 3) and lost the SweepError; sweep.profile(x=t) did the same.
    four, three, zeros = torch.ones(4), torch.ones(3), torch.zeros(4)
    sweep = quick.sweep(lambda x: lambda: torch.relu(x), [dict(x=four), dict(x=three), dict(x=zeros)])
    calls = iter([False, True, False])
    with pytest.raises(SweepError, match="the check broke in 2 of 3 cases"):
        sweep.every(lambda prof: next(calls))
    assert sweep.profile(x=three) is sweep.cases[1].profile
