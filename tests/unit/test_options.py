"""ProfileOptions: the defaults the docs give, one validation with the messages users have
always seen, ``replace`` validating again, and a leaf that imports neither torch nor a stage."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from typing import Any

import pytest
import torch

from pytest_kernelprof import Profiler
from pytest_kernelprof.checks.rules import parse_rules
from pytest_kernelprof.options import DEFAULTS, MAX_CALLS, MAX_CALLS_WHY, ProfileOptions, check_calls
from pytest_kernelprof.plugin.settings import Settings
from pytest_kernelprof.types import Decoder


def test_the_defaults_are_the_documented_ones() -> None:
    # docs/guide/profiling.md: 2 warm-up calls, then 3 profiled calls, the others off.
    assert ProfileOptions() == DEFAULTS
    assert dataclasses.asdict(DEFAULTS) == {
        "warmup": 2,
        "calls": 3,
        "no_grad": False,
        "allow_variation": False,
        "stacks": False,
        "modules": False,
        "decoder": None,
        "forbid": (),
        "keep_traces": False,
    }
    assert (Settings().warmup, Settings().calls) == (DEFAULTS.warmup, DEFAULTS.calls)


def test_the_profilers_keywords_default_to_the_options_defaults() -> None:
    defaults = {name: p.default for name, p in inspect.signature(Profiler).parameters.items()}
    fields = {field.name for field in dataclasses.fields(ProfileOptions)}
    assert set(defaults) == fields
    for name in fields:  # decoder=None, in both: the built-in decoder
        assert defaults[name] == getattr(DEFAULTS, name), name
    assert Profiler().options == DEFAULTS


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"warmup": -1}, ValueError, "warmup must be an int >= 0, got -1"),
        ({"warmup": 1.5}, ValueError, "warmup must be an int >= 0, got 1.5"),
        ({"warmup": True}, ValueError, "warmup must be an int >= 0, got True"),
        ({"calls": 0}, ValueError, "calls must be an int >= 1, got 0"),
        ({"calls": "3"}, ValueError, "calls must be an int >= 1, got '3'"),
        ({"calls": False}, ValueError, "calls must be an int >= 1, got False"),
        ({"warmup": 1001}, ValueError, f"warmup must be at most 1000, got 1001: {MAX_CALLS_WHY}"),
        ({"calls": 10**20}, ValueError, f"calls must be at most 1000, got {10**20}: {MAX_CALLS_WHY}"),
        ({"modules": "yes"}, TypeError, "modules= takes True, False or an nn.Module, got str"),
        ({"modules": None}, TypeError, "modules= takes True, False or an nn.Module, got NoneType"),
        ({"modules": torch.nn.functional.relu}, TypeError, "modules= takes True, False or an nn.Module, got function"),
        ({"decoder": "built-in"}, TypeError, "decoder must be a pytest_kernelprof.types.Decoder or None, got str"),
    ],
)
def test_bad_values_fail_with_their_message(changes: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as made:
        ProfileOptions(**changes)
    assert str(made.value) == message
    with pytest.raises(error) as replaced:
        DEFAULTS.replace(**changes)
    assert str(replaced.value) == message


def test_the_bounds_themselves_are_taken() -> None:
    options = ProfileOptions(warmup=0, calls=1)
    assert (options.warmup, options.calls) == (0, 1)
    options = ProfileOptions(warmup=MAX_CALLS, calls=MAX_CALLS)
    assert (options.warmup, options.calls) == (1000, 1000)


def test_the_bound_is_checked_before_the_lower_bound_and_warmup_before_calls() -> None:
    # The order the checks ran in before there was one place for them.
    with pytest.raises(ValueError, match="^calls must be at most 1000"):
        ProfileOptions(warmup=-1, calls=5000)
    with pytest.raises(ValueError, match="^warmup must be an int >= 0"):
        ProfileOptions(warmup=-1, calls=0)
    with pytest.raises(TypeError, match="^decoder must be"):
        ProfileOptions(warmup=5000, decoder=object())


def test_models_decoders_and_rules_are_taken() -> None:
    model = torch.nn.Linear(2, 2)
    decoder = Decoder().teach("my_kernel*", kind="gemm")
    rules = parse_rules(["no-mm: op=aten::mm | use the fused op"])
    options = ProfileOptions(modules=model, decoder=decoder, forbid=list(rules))
    assert options.modules is model
    assert options.decoder is decoder
    assert options.forbid == tuple(rules)  # any sequence, held as a tuple
    assert ProfileOptions(modules=True).modules is True


def test_replace_makes_new_options_and_validates_them() -> None:
    options = ProfileOptions(warmup=1)
    changed = options.replace(calls=5, stacks=True)
    assert changed == ProfileOptions(warmup=1, calls=5, stacks=True)
    assert options == ProfileOptions(warmup=1)  # frozen: the original is unchanged
    with pytest.raises(ValueError, match="^calls must be an int >= 1, got 0$"):
        changed.replace(calls=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'call'"):
        options.replace(call=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.calls = 5  # type: ignore[misc]


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ProfileOptions(2, 3)  # type: ignore[misc]


def test_check_calls_names_the_count() -> None:
    assert check_calls("rounds", 1000) == 1000
    assert check_calls("rounds", "many") == "many"  # type: ignore[arg-type]  # the type is the options' to check
    with pytest.raises(ValueError, match="^rounds must be at most 1000, got 1001: every profiled call"):
        check_calls("rounds", 1001)


def test_the_leaf_imports_neither_torch_nor_a_stage_and_still_refuses_what_is_no_model() -> None:
    code = (
        "import sys\n"
        "from pytest_kernelprof.options import ProfileOptions\n"
        "for bad in ({'modules': object()}, {'decoder': object()}):\n"
        "    try:\n"
        "        ProfileOptions(**bad)\n"
        "    except TypeError as exc:\n"
        "        print(exc)\n"
        "loaded = [m for m in sys.modules if m == 'torch' or m.startswith('pytest_kernelprof.')]\n"
        "print(sorted(loaded))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [
        "modules= takes True, False or an nn.Module, got object",
        "decoder must be a pytest_kernelprof.types.Decoder or None, got object",
        "['pytest_kernelprof.options']",
    ]
