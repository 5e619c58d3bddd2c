"""A kernel's number is its place in its call: a selection of a call's kernels (``of_kind``,
``matching``, a slice, an op's or a module's kernels) numbers its table, its counts' matches and
its failures as the call's table does, so that ``#6`` is one kernel everywhere in a report. A
trial's suite numbered the GEMMs of an MLP #0/#1/#2 in one table and #0/#3/#6 in the profile's
table below it, where #2 is an fp32 copy."""

from __future__ import annotations

import pickle
import re

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.model.explain import explain
from pytest_kernelprof.model.kernel_matching import nearest_lines
from pytest_kernelprof.types import KernelList
from tests.helpers import DATA

MEDIANS = " (times: each kernel's median over the 3 calls)"
# The call: gemm nvjet bf16, pointwise bf16, copy to fp32, gemm cutlass fp32, its split-K
# reduction, copy to bf16, gemm nvjet bf16.
MLP = DATA / "h200_bf16_mlp_fp32_linear.json.gz"


@pytest.fixture
def kernels() -> KernelList:
    return load_trace(MLP).kernels


def _numbers(table: str) -> list[str]:
    """The ``#`` column of a kernel table, its ``*`` marks kept (not the key of its evidence marks)."""
    return [line.split()[0] for line in table.splitlines()[1:] if not line.startswith("(")]


def test_a_count_on_a_selection_names_and_marks_the_calls_numbers(kernels: KernelList) -> None:
    gemms = kernels.of_kind("gemm")
    bf16 = gemms.count(dtype="bf16")
    assert bf16.matched == (0, 6)
    failed = explain("==", bf16, len(gemms))
    assert failed is not None
    assert failed.head == ["2 == 3", f"kernels.count(dtype='bf16') matched 2 of 3 kernels: #0, #6{MEDIANS}"]
    assert _numbers("\n".join(failed.body)) == ["*0", "3", "*6"]
    # The profile's table numbers them so: #6 is the same GEMM there, and #2 a copy.
    whole = kernels.table().splitlines()
    assert [line.split()[:2] for line in whole[1:] if line.split()[0] in ("0", "2", "3", "6")] == [
        ["0", "gemm"],
        ["2", "pointwise"],
        ["3", "gemm"],
        ["6", "gemm"],
    ]


def test_every_selection_keeps_the_numbers_and_a_list_made_by_hand_counts_from_zero(kernels: KernelList) -> None:
    assert _numbers(kernels.of_kind("gemm").table()) == ["0", "3", "6"]
    assert _numbers(kernels.matching("nvjet_*").table()) == ["0", "6"]
    assert _numbers(kernels.matching(re.compile("copy")).table()) == ["2", "5"]
    assert _numbers(kernels[2:5].table()) == ["2", "3", "4"]
    assert _numbers(kernels[::3].table()) == ["0", "3", "6"]
    # A selection of a selection keeps the call's numbers too, and its times.
    assert _numbers(kernels.of_kind("gemm")[1:].table()) == ["3", "6"]
    assert kernels.of_kind("gemm")[1:].times == kernels.times
    assert kernels[3:].count(kind="gemm").matched == (3, 6)
    assert _numbers(kernels[3:].table(marked=frozenset({6}))) == ["3", "4", "5", "*6"]
    # An op's kernels are numbered in its call, in the representative call as in each call.
    assert _numbers(load_trace(MLP).ops["aten::copy_"].kernels.table()) == ["2", "5"]
    assert _numbers(load_trace(MLP).calls[1].ops["aten::copy_"].kernels.table()) == ["2", "5"]
    # A list the user made of kernels, though they came from a call, is a new list.
    assert _numbers(KernelList(list(kernels.of_kind("gemm"))).table()) == ["0", "1", "2"]
    assert KernelList(list(kernels.of_kind("gemm"))).count(dtype="bf16").matched == (0, 2)
    # Pickled (an xdist worker's record), a selection keeps them.
    assert _numbers(pickle.loads(pickle.dumps(kernels.of_kind("gemm"))).table()) == ["0", "3", "6"]


def test_one_and_the_lines_of_a_failed_query_name_the_calls_numbers(kernels: KernelList) -> None:
    gemms = kernels[3:]
    with pytest.raises(AssertionError) as failed:
        gemms.one(kind="gemm")
    assert _numbers("\n".join(str(failed.value).splitlines()[1:6])) == ["*3", "4", "5", "*6"]
    # Ruled out by dtype: the kernel that the name matched is named by its number in the call.
    assert nearest_lines(gemms, "nvjet_*", dtype="fp32") == ["'nvjet_*' matches #6 by name: its dtype ruled it out"]
    # `in` marks the kernel of that name by its number.
    named = explain("in", kernels[6].name + "x", kernels[5:])
    assert named is not None
    assert _numbers("\n".join(named.body)) == ["5", "6"]
    exact = explain("not in", kernels[6].name, kernels[5:])
    assert exact is not None
    assert _numbers("\n".join(exact.body)) == ["5", "*6"]


def test_two_counts_of_selections_with_the_same_kernels_are_one_table_only_with_the_same_numbers(
    kernels: KernelList,
) -> None:
    # The same kernels by hand and as the call's: their matches' numbers name different rows.
    by_hand = KernelList(list(kernels.of_kind("gemm")), times=kernels.times)
    apart = explain("==", kernels.of_kind("gemm").count(dtype="bf16"), by_hand.count(dtype="fp32"))
    assert apart is not None
    assert apart.body[0] == "the left's kernels (* marks its matches):"
    right = next(i for i, line in enumerate(apart.body) if line.startswith("the right's kernels"))
    assert _numbers("\n".join(apart.body[1:right])) == ["*0", "3", "*6"]
    assert _numbers("\n".join(apart.body[right + 1 :])) == ["0", "*1", "2"]
    same = explain("==", kernels.of_kind("gemm").count(dtype="bf16"), kernels.of_kind("gemm").count())
    assert same is not None
    assert same.head[-1] == "* marks the kernels one count matched and the other did not: #3"
    assert _numbers("\n".join(same.body)) == ["0", "*3", "6"]


def test_a_modules_kernels_are_numbered_in_the_call() -> None:
    prof = load_trace(DATA / "h200_liger_llama_forward_modules.json.gz")
    layer = prof.modules["model.layers.0"]
    assert _numbers(layer.self_kernels.table()) == ["22", "28"]
    for name in prof.modules:
        for listed in (prof.modules[name].kernels, prof.modules[name].self_kernels):
            numbers = [int(number) for number in _numbers(listed.table())]
            assert list(listed) == [prof.kernels[number] for number in numbers]
