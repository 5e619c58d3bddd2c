"""A sweep's cases: a list or a product, how they are named and pinned, the smallest, the nearest."""

from __future__ import annotations

import pytest

from pytest_kernelprof.checks.sweep_cases import case_code, case_distance, case_label, case_list, case_size


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
