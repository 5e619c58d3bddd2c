"""A teaching line's glob and facts, read in one pass: the same split as the regex it replaced
(the first colon that ends a word with only ``field=value`` words after it), without its
backtracking over every colon."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_kernelprof.decode.teach import _split, parse_teaching
from pytest_kernelprof.errors import TeachingError

# The regex parse_teaching used: right, and quadratic in a line's colons.
_OLD = re.compile(r"^(?P<glob>\S.*?):\s+(?P<facts>\w+=\S+(?:\s+\w+=\S+)*)\s*$")


def _old(text: str) -> tuple[str, str] | None:
    found = _OLD.match(text)
    return None if found is None else (found.group("glob"), found.group("facts"))


@pytest.mark.parametrize(
    "line",
    [
        "flash_fwd_*: kind=attention family=flash-attn",
        "*::fwd*: kind=attention",
        "a: b: kind=gemm",
        "a: k=v: kind=gemm",
        "::: kind=gemm",
        ": kind=gemm",
        "a:kind=gemm",
        "a\nb: kind=gemm",
        "a: kind=gemm\nfamily=x",
        "a :  kind=gemm   dtype=bf16",
        '"f<8, g>": kind=gemm',
        "a: kind=gemm !",
        "",
    ],
)
def test_a_line_splits_as_the_regex_split_it(line: str) -> None:
    assert _split(line.strip()) == _old(line.strip())


@given(st.text(alphabet=st.sampled_from(list("ab:= \n\t\u2028_*")), max_size=40))
def test_any_line_splits_as_the_regex_split_it(line: str) -> None:
    assert _split(line.strip()) == _old(line.strip())


def test_a_line_of_many_colons_is_read_in_one_pass() -> None:
    """16,000 colons took 24 s with the regex; the growth itself is a benchmark budget
    (``test_teaching_line_growth``): this holds the answer."""
    with pytest.raises(TeachingError, match="cannot read"):
        parse_teaching("a" + ": k=v" * 16_000 + " !", "x")
    taught = parse_teaching("a" + ": b" * 4 + ": kind=gemm", "x")
    assert taught.pattern == "a" + ": b" * 4
    assert taught.kind == "gemm"
