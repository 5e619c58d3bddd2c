"""A name copied from a failure, pasted into a test, matches its kernel (trial report A): the
names of a failure's table and its "nearest names", as pytest printed them, asked back with
``in``, ``count``, ``one``, ``==`` and a ``kernelprof_forbid`` rule."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import DATA, section

TRACE = DATA / "h200_geglu_eager.json.gz"
# What the user wrote, from an older table: the functor no longer shows as <...>.
WRITTEN = "at::native::vectorized_elementwise_kernel<8, BinaryFunctor<...>, array<char*, 3ul> >"

FAILING = f"""
from pytest_kernelprof import load_trace

kernels = load_trace({str(TRACE)!r}).kernels

def test_in():
    assert {WRITTEN!r} in kernels

def test_count():
    assert kernels.count("triton_poi_fused_*gelu*mul*") == 1
"""

COPIED = """
from pytest_kernelprof import load_trace

kernels = load_trace({trace!r}).kernels
NAMES = {names!r}
OFFERED = {offered!r}
MUL = {mul!r}

def test_every_copied_name_is_its_kernels():
    for name in NAMES + OFFERED:
        assert name in kernels
        assert kernels.count(name) >= 1
    assert kernels == NAMES
    assert kernels.one(MUL).op == "aten::mul"

def test_a_rule_on_a_copied_name(kernelprof):
    kernelprof.load_trace({trace!r})
"""


def test_names_copied_from_a_failure_match_their_kernels(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_failing=FAILING)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    nearest = [line for line in section(result, "test_in").lines if "nearest names: " in line]
    assert nearest, result.stdout.str()
    offered = ast.literal_eval("[" + nearest[0].split("nearest names: ", 1)[1] + "]")
    assert WRITTEN not in offered  # never the string written, nor one it matches
    (mul,) = [
        name for name in offered if name.startswith("at::native::vectorized_elementwise_kernel<8, BinaryFunctor<")
    ]
    # The table of the count's failure (its report section): the name column, as printed.
    lines = result.outlines
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  kind"))
    column = lines[header].index("name")
    names = [line[column:].strip() for line in lines[header + 1 : header + 6]]
    assert names[3] == mul
    pytester.makepyfile(test_copied=COPIED.format(trace=str(TRACE), names=names, offered=offered, mul=mul))
    pytester.makeini(f'[pytest]\nkernelprof_forbid =\n    no-mul: name="{mul}"  | no mul kernel here\n')
    result = pytester.runpytest("test_copied.py", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    section(result, "test_a_rule_on_a_copied_name").fnmatch_lines(["*no-mul*no mul kernel here*"])
