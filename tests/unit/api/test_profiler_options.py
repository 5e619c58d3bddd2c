"""The entry points build one ProfileOptions and hand that object down: a profiler's options,
a call's replace of them, the record block's, kernel_benchmark's and profile_ranks'."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from pytest_kernelprof import Profiler, profile_ranks
from pytest_kernelprof.api import profiler as api
from pytest_kernelprof.capture import CapturedSession
from pytest_kernelprof.decode import BUILT_IN
from pytest_kernelprof.options import ProfileOptions
from pytest_kernelprof.plugin import benchmark
from pytest_kernelprof.plugin.fixtures import KernelBenchmark
from pytest_kernelprof.types import Decoder

Trace = Callable[[str], Path]


@pytest.fixture
def handed_down(monkeypatch: pytest.MonkeyPatch) -> list[ProfileOptions]:
    """The options each capture_callable and record_block of the profiler was given."""
    seen: list[ProfileOptions] = []
    real_callable, real_block = api.capture_callable, api.record_block

    def capture_callable(fn: Any, args: Any, kwargs: Any, options: ProfileOptions) -> CapturedSession:
        seen.append(options)
        return real_callable(fn, args, kwargs, options)

    @contextlib.contextmanager
    def record_block(options: ProfileOptions) -> Iterator[Any]:
        seen.append(options)
        with real_block(options) as block:
            yield block

    monkeypatch.setattr(api, "capture_callable", capture_callable)
    monkeypatch.setattr(api, "record_block", record_block)
    return seen


def test_a_call_hands_down_the_profilers_options_with_its_own_settings(handed_down: list[ProfileOptions]) -> None:
    profiler = Profiler(warmup=1, calls=2, stacks=True)
    profiler.profile(torch.relu, (torch.randn(4),))
    profiler.profile(torch.relu, (torch.randn(4),), calls=1, stacks=None, no_grad=True)
    first, second = handed_down
    assert first is profiler.options
    assert second == ProfileOptions(warmup=1, calls=1, stacks=True, no_grad=True)
    assert profiler.options == ProfileOptions(warmup=1, calls=2, stacks=True)  # unchanged


def test_the_profilers_own_modules_setting_skips_a_callable_that_is_no_model(
    handed_down: list[ProfileOptions],
) -> None:
    model = torch.nn.Linear(4, 4)
    profiler = Profiler(warmup=0, calls=1, modules=True)
    profiler(torch.relu, torch.randn(4))
    profiler(model, torch.randn(4))
    assert [options.modules for options in handed_down] == [False, True]
    assert list(profiler.captures[-1].profile.modules) == ["Linear"]
    with pytest.raises(TypeError, match="modules=True records the modules of the profiled nn.Module"):
        profiler.profile(torch.relu, (torch.randn(4),), modules=True)  # asked for in the call: insisted on


def test_a_block_takes_its_own_modules_and_none_of_the_profilers(handed_down: list[ProfileOptions]) -> None:
    model = torch.nn.Linear(4, 4)
    profiler = Profiler(modules=True, allow_variation=True)
    with profiler.record(stacks=True):
        torch.relu(torch.randn(4))
    with profiler.record(modules=model) as rec:
        model(torch.randn(4))
    assert [(o.modules, o.stacks, o.allow_variation) for o in handed_down] == [
        (False, True, True),
        (model, False, True),
    ]
    assert list(rec.profile.modules) == ["Linear"]
    with (
        pytest.raises(TypeError, match="^modules= takes True, False or an nn.Module, got str$"),
        profiler.record(modules="model"),
    ):
        pass


def test_the_profilers_attributes_read_and_replace_its_options() -> None:
    profiler = Profiler(calls=2, forbid=[])
    assert (profiler.warmup, profiler.calls, profiler.forbid, profiler.decoder) == (2, 2, (), BUILT_IN)
    profiler.calls = 5
    assert profiler.options.calls == 5
    with pytest.raises(ValueError, match="^calls must be an int >= 1, got 0$"):
        profiler.calls = 0
    assert profiler.calls == 5  # a refused value leaves the options as they were
    profiler.teach("my_kernel*", kind="gemm")
    assert profiler.options.decoder is profiler.decoder is not BUILT_IN
    assert Profiler.from_options(ProfileOptions(calls=7)).decoder is BUILT_IN  # None: the built-in one


def test_a_profiler_refuses_bad_options_when_it_is_made() -> None:
    with pytest.raises(ValueError, match="^warmup must be an int >= 0, got -1$"):
        Profiler(warmup=-1)
    with pytest.raises(TypeError, match=r"^decoder must be a pytest_kernelprof\.types\.Decoder or None, got str$"):
        Profiler(decoder="built-in")  # type: ignore[arg-type]
    assert Profiler(decoder=Decoder()).decoder is not BUILT_IN


def test_kernel_benchmark_profiles_its_rounds_with_variation_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[ProfileOptions] = []

    def benchmark_callable(bench: Any, fn: Any, args: Any, kwargs: Any, options: ProfileOptions, **rest: Any) -> Any:
        given.append(options)
        return rest

    monkeypatch.setattr(benchmark, "benchmark_callable", benchmark_callable)
    assert KernelBenchmark(object()).profile(torch.relu, (torch.randn(4),), rounds=7, warmup=1, end_to_end=True) == {
        "end_to_end": True
    }
    assert given == [ProfileOptions(warmup=1, calls=7, allow_variation=True)]
    with pytest.raises(ValueError, match="^calls must be an int >= 1, got 0$"):
        KernelBenchmark(object()).profile(torch.relu, rounds=0)


def test_profile_ranks_refuses_bad_counts_before_it_starts_a_rank() -> None:
    with pytest.raises(ValueError, match="^warmup must be at most 1000, got 5000"):
        profile_ranks(_never_called, 2, warmup=5000)
    with pytest.raises(ValueError, match="^calls must be an int >= 1, got 0$"):
        profile_ranks(_never_called, 2, calls=0)


def _never_called(rank: int, world_size: int) -> Any:
    raise AssertionError("no rank should have started")


def test_forbid_takes_rule_lines_and_refuses_what_is_no_rule(trace: Trace) -> None:
    from pytest_kernelprof import ForbiddenError

    for forbid in ("no-mm: op=aten::mm | fuse it", ["no-mm: op=aten::mm | fuse it"]):
        profiler = Profiler(forbid=forbid)
        assert [rule.name for rule in profiler.forbid] == ["no-mm"]
        with pytest.raises(ForbiddenError, match="rule 'no-mm' .* is broken: fuse it") as broken:
            profiler.load_trace(trace("geglu_compiled"))
        # Not the marker's: it lifts the suite's kernelprof_forbid rules, and knows none of these.
        assert "kernelprof_allow" not in str(broken.value)
        assert "('no-mm': given to this profiler's forbid=, which a test that may break it leaves out)" in str(
            broken.value
        )
    profiler = Profiler()
    profiler.forbid = ["no-mm: op=aten::mm", "no-gemm: kind=gemm"]
    assert [rule.name for rule in profiler.forbid] == ["no-mm", "no-gemm"]
    profiler.forbid = profiler.forbid[1:]  # Rules, as the profiler holds them
    assert [rule.name for rule in profiler.forbid] == ["no-gemm"]
    with pytest.raises(TypeError, match=r"^forbid takes rule lines .* or a list of Rules, got int$"):
        Profiler(forbid=[3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"^forbid line 1 'no-mm op=aten::mm': expected 'NAME: CONDITION"):
        profiler.forbid = "no-mm op=aten::mm"
    with pytest.raises(ValueError, match=r"^forbid has two rules named 'a'$"):
        Profiler(forbid=["a: kind=gemm", "a: kind=sort"])
    assert [rule.name for rule in profiler.forbid] == ["no-gemm"]  # a refused value leaves the rules as they were
