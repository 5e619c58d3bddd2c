"""A sweep's cases: a list or a product, how they are named and pinned, the smallest, the nearest."""

from __future__ import annotations

import itertools
import re

import pytest
import torch

from pytest_kernelprof.checks.sweep_cases import (
    MAX_CASES,
    case_code,
    case_distance,
    case_label,
    case_list,
    case_size,
    clashing_labels,
)


def test_a_dict_of_values_is_their_product_in_order() -> None:
    cases = case_list({"dynamic": [False, True], "batch": [1, 17]})
    assert cases == (
        {"dynamic": False, "batch": 1},
        {"dynamic": False, "batch": 17},
        {"dynamic": True, "batch": 1},
        {"dynamic": True, "batch": 17},
    )


def test_a_list_of_dicts_is_kept_as_given() -> None:
    assert case_list([{"batch": 8}, {"batch": 1, "hidden": 64}]) == ({"batch": 8}, {"batch": 1, "hidden": 64})
    assert case_list(dict(seq_len=range(1, 4))) == ({"seq_len": 1}, {"seq_len": 2}, {"seq_len": 3})


@pytest.mark.parametrize(
    ("cases", "error", "message"),
    [
        ({"batch": 8}, TypeError, r"'batch' maps to int: write batch=\[8\]"),
        ({"name": "abc"}, TypeError, r"'name' maps to str"),
        ("batch=8", TypeError, r"cases is a list of cases"),
        ([8, 16], TypeError, r"each case is a dict of keyword arguments \(dict\(batch=8\)\), got 8"),
        ([{1: 2}], TypeError, r"argument names \(strings\), got 1"),
        ([{"batch": 8}, {"batch": 8}], ValueError, r"the case batch=8 is listed twice"),
        ([], ValueError, r"at least one case"),
        ({"batch": []}, ValueError, r"at least one case"),
    ],
)
def test_cases_that_cannot_be_swept_say_how_to_write_them(cases: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        case_list(cases)  # type: ignore[arg-type]


def test_a_case_is_named_as_python_and_pinned_as_a_dict() -> None:
    case = {"batch": 17, "hidden": 4096, "mode": "max-autotune"}
    assert case_label(case) == "batch=17, hidden=4096, mode='max-autotune'"
    assert case_code(case) == "dict(batch=17, hidden=4096, mode='max-autotune')"
    assert eval(case_code(case)) == case  # noqa: S307 - the pinned text is the case
    assert case_code({"not a name": 1}) == "{'not a name': 1}"
    assert case_label({}) == "(no arguments)"
    assert case_code({}) == "dict()"


def test_the_smallest_case_has_the_least_sum_of_numbers() -> None:
    assert case_size({"batch": 17, "hidden": 64, "dynamic": True, "name": "x"}) == 81
    assert case_size({"scale": -2.5, "nan": float("nan")}) == 2.5


def test_numbers_past_a_float_are_sized_and_compared_exactly() -> None:
    huge = 10**400  # JSON and Python allow it; float() of it overflows
    assert case_size({"batch": huge, "scale": float("inf")}) == huge
    assert case_size({"batch": huge + 1}) > case_size({"batch": huge}) > case_size({"batch": 1e308})
    assert case_distance({"batch": huge}, {"batch": -huge}) == (1, 1.0)
    assert case_distance({"batch": huge}, {"batch": huge // 2}) == (1, 0.5)
    assert case_distance({"batch": float("inf")}, {"batch": 1}) == (1, 1.0)


def test_an_int_past_pythons_text_limit_is_named_and_pinned_in_hex() -> None:
    # An adversarial probe: repr() of an int of more than 4,300 digits raises ValueError, which
    # listing, naming and pinning such a case passed on as a raw traceback.
    huge = 10**5000
    cases = case_list([{"n": huge}, {"n": huge + 1}])
    assert len(cases) == 2
    assert case_label({"n": -huge}) == f"n={hex(-huge)}"
    assert eval(case_code({"n": huge, "m": 1})) == {"n": huge, "m": 1}  # noqa: S307 - the pinned text is the case
    assert eval(case_code({"not a name": huge})) == {"not a name": huge}  # noqa: S307
    with pytest.raises(ValueError, match="listed twice"):
        case_list([{"n": huge}, {"n": huge}])


def test_the_nearest_case_differs_in_fewest_arguments_then_by_the_closest_numbers() -> None:
    target = {"batch": 17, "hidden": 4096}
    near = [{"batch": 16, "hidden": 4000}, {"batch": 64, "hidden": 4096}, {"batch": 17, "hidden": 1024}]
    ordered = sorted(near, key=lambda case: case_distance(target, case))
    # 47/64 of batch is nearer than 3072/4096 of hidden; two arguments apart is farthest
    assert ordered == [{"batch": 64, "hidden": 4096}, {"batch": 17, "hidden": 1024}, {"batch": 16, "hidden": 4000}]
    assert case_distance(target, target) == (0, 0.0)
    assert case_distance({"mode": "a"}, {"mode": "b"}) == (1, 1.0)


# -- how many (an adversarial review: sweep() listed every case before counting them) -------


def test_a_product_past_the_cap_is_refused_saying_how_many() -> None:
    with pytest.raises(ValueError, match=re.escape("cases={...} makes 1,600 cases (a: 40 values x b: 40 values)")):
        case_list(dict(a=range(40), b=range(40)))
    with pytest.raises(
        ValueError, match=re.escape("makes 400,000,000 cases (a: 20,000 values x b: 20,000 values)")
    ) as info:
        case_list(dict(a=range(20000), b=range(20000)))  # 2.5 GB, then a MemoryError, before the cap
    assert f"a sweep profiles at most {MAX_CASES} cases" in str(info.value)
    assert "explore(" in str(info.value)  # what to do instead
    assert len(case_list(dict(a=range(10), b=range(MAX_CASES // 10)))) == MAX_CASES


def test_endless_values_and_endless_cases_are_refused_at_the_cap() -> None:
    with pytest.raises(ValueError, match=rf"cases={{...}}: 'a' has more than {MAX_CASES} values"):
        case_list(dict(a=itertools.count()))
    with pytest.raises(ValueError, match=rf"more than {MAX_CASES} cases"):
        case_list(dict(n=n) for n in itertools.count())
    assert len(case_list(dict(n=n) for n in range(MAX_CASES))) == MAX_CASES


# -- which cases are the same (the review: distinct values that show alike were "listed twice") -


class _Thing:
    """A value that shows like every other of its class and is only equal to itself."""

    def __repr__(self) -> str:
        return "Thing()"


def test_distinct_values_that_show_alike_are_two_cases() -> None:
    a, b = _Thing(), _Thing()
    assert case_list([dict(m=a), dict(m=b)]) == ({"m": a}, {"m": b})
    x, y = torch.zeros(10_000), torch.zeros(10_000)
    y[5_000] = 1
    assert repr(x) == repr(y)  # a big tensor's repr shows its ends only
    assert len(case_list([dict(x=x), dict(x=y)])) == 2
    assert len(case_list([dict(x=float("nan")), dict(x=float("nan"))])) == 2  # a nan equals nothing


_THING = _Thing()


@pytest.mark.parametrize(
    "cases",
    [
        [{"m": _THING}, {"m": _THING}],
        [{"x": [1, (2, 3)]}, {"x": [1, (2, 3)]}],
        [{"x": torch.float16}, {"x": torch.float16}],
        [{"x": 0.5}, {"x": 0.5}],
    ],
    ids=["the same object", "equal lists", "a dtype", "equal floats"],
)
def test_the_same_value_twice_is_listed_twice(cases: list[dict[str, object]]) -> None:
    with pytest.raises(ValueError, match="is listed twice"):
        case_list(cases)


def test_values_equal_but_shown_apart_are_two_cases() -> None:
    # 1, 1.0 and True are equal in Python; a builder may well tell them apart.
    assert len(case_list([dict(x=1), dict(x=1.0), dict(x=True), dict(x=0.0), dict(x=-0.0)])) == 5


def test_cases_whose_labels_clash_are_found_by_position() -> None:
    a, b = _Thing(), _Thing()
    assert clashing_labels([dict(m=a), dict(n=1), dict(m=b)]) == {0, 2}
    assert clashing_labels([{"a\n": 1}, {"a\\n": 1}]) == {0, 1}  # names that only show alike
    assert clashing_labels([dict(n=1), dict(n=2)]) == set()
    assert case_label(dict(m=a), 2) == "m=Thing() #2"
