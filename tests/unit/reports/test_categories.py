"""What a failure was about (categories.py): by the type of the error the package raised, never
its words; each category has the words the job summary says it in."""

from __future__ import annotations

import builtins
import inspect
import sys

import pytest

import pytest_kernelprof.errors as errors
from pytest_kernelprof import load_trace
from pytest_kernelprof.model.explain import _SUBJECTS
from pytest_kernelprof.reports.categories import CATEGORIES, MAX_LEAVES, leaves, noun, of_error
from tests.helpers import DATA

COMPILED = DATA / "h200_geglu_compiled.json.gz"


def _raised(query: object) -> BaseException:
    assert callable(query)
    with pytest.raises(errors.KernelProfError) as info:
        query()
    return info.value


def test_each_query_that_fails_raises_what_names_its_category() -> None:
    prof = load_trace(COMPILED)
    cpu = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz")
    cases = {
        "kernels": lambda: prof.kernels.one(kind="gemm"),
        "op-lookup": lambda: prof.ops["aten::gelu"],
        "module-lookup": lambda: prof.module("mlp"),
        "query": lambda: prof.kernels.count(kind="gemm", dtype="float32"),
        "nodevice": lambda: len(cpu.kernels),
    }
    for name, query in cases.items():
        error = _raised(query)
        assert of_error(error) == name, (name, error)
    for query in (lambda: prof.kernels.count(kind="gemms"), lambda: prof.copies.count(direction="D2H")):
        error = _raised(query)
        assert isinstance(error, ValueError)
        assert of_error(error) == "query"
    for query in (lambda: prof.kernels.count(3), lambda: prof.kernels == [1]):
        error = _raised(query)
        assert isinstance(error, TypeError)
        assert of_error(error) == "query"


def test_every_error_of_the_package_has_a_category_and_no_other_error_has_one() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.KernelProfError)]
    assert len(classes) > 15
    for cls in classes:
        name = of_error(cls("reworded: host syncs, kernel baseline, rule"))
        assert name in CATEGORIES, cls
    assert of_error(errors.ForbiddenError("x")) == "rule"
    assert of_error(errors.BaselineMismatchError("x")) == "baseline"
    assert of_error(errors.KernelSequenceMismatchError("x")) == "varied"
    assert of_error(errors.UndecodedKernelWarning("x")) == "undecoded"
    assert of_error(errors.CannotTellError("x")) == "error"
    assert of_error(AssertionError("kernel")) is None
    assert of_error(ValueError("unknown dtype")) is None


def test_what_an_assertion_can_be_about_is_a_category() -> None:
    assert {name for name, _ in _SUBJECTS} <= set(CATEGORIES)


def test_an_op_lookup_is_not_called_a_kernel_assertion() -> None:
    assert noun("op-lookup") == "op lookup"
    assert noun("kernels") == "kernel assertion"
    assert noun("a category of a newer version") == "profile"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11's")
def test_the_errors_inside_exception_groups_are_read_in_order_and_bounded() -> None:
    group, base = vars(builtins)["ExceptionGroup"], vars(builtins)["BaseExceptionGroup"]  # 3.11's
    a, b, c = ValueError("a"), KeyError("b"), RuntimeError("c")
    nested = base("outer", [a, group("inner", [b, group("deep", [c])])])
    assert leaves(nested) == [a, b, c]
    assert leaves(a) == [a]
    many = group("many", [ValueError(str(n)) for n in range(10 * MAX_LEAVES)])
    assert len(leaves(many)) == MAX_LEAVES
    deep: BaseException = ValueError("bottom")
    for _ in range(10_000):  # no recursion
        deep = group("level", [deep])
    assert len(leaves(deep)) == 1
