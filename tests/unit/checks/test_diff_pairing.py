"""The diff's fusion search and its pairing of same-shape kernels, which look at one candidate
per set of ops and per shape instead of at every removed or added kernel: the same answers as
trying every pair (the first versions, kept here as the reference)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from pytest_kernelprof.checks.diff import Change, _fusions, _ops, _paired, diff_kernels, shape_key
from pytest_kernelprof.decode import KernelName

OPS = ("add", "mul", "tanh", "_softmax", "softmax", "gelu", "view", "sum")


def _kernel(rng: random.Random, index: int) -> KernelName:
    ops = tuple(rng.sample(OPS, rng.randrange(0, 4)))
    kind = rng.choice(("pointwise", "reduction", "other"))  # other: unplaced (no evidence), never paired
    return KernelName(f"k{index}", kind, rng.choice(("aten", "inductor")), fused_ops=ops)


def _reference_fusions(
    removed: Sequence[KernelName], added: Sequence[KernelName]
) -> tuple[tuple[tuple[KernelName, ...], KernelName], ...]:
    taken: set[int] = set()
    fusions = []
    for new in added:
        ops = _ops(new)
        covered: list[tuple[int, KernelName]] = []
        done: set[str] = set()
        for index, old in enumerate(removed):
            mine = _ops(old)
            if index not in taken and mine and mine <= ops and not mine <= done:
                covered.append((index, old))
                done.update(mine)
        if len(covered) > 1:
            taken.update(index for index, _ in covered)
            fusions.append((tuple(old for _, old in covered), new))
    return tuple(fusions)


def _reference_paired(olds: list[KernelName], news: list[KernelName]) -> tuple[list[Change], list, list]:
    olds, news, changes = list(olds), list(news), []
    for old in list(olds):
        twin = next(
            (new for new in news if shape_key(new) == shape_key(old) and not (new.unplaced or old.unplaced)), None
        )
        if twin is not None:
            changes.append(Change("~", old, twin))
            olds.remove(old)
            news.remove(twin)
    return changes, olds, news


@pytest.mark.parametrize("seed", range(40))
def test_fusions_are_the_pairwise_searchs(seed: int) -> None:
    rng = random.Random(seed)
    removed = [_kernel(rng, i) for i in range(rng.randrange(60))]
    added = [_kernel(rng, 1000 + i) for i in range(rng.randrange(60))]
    assert _fusions(removed, added) == _reference_fusions(removed, added)


@pytest.mark.parametrize("seed", range(40))
def test_pairing_is_the_pairwise_searchs(seed: int) -> None:
    rng = random.Random(seed)
    olds = [_kernel(rng, i) for i in range(rng.randrange(40))]
    news = [_kernel(rng, 1000 + i) for i in range(rng.randrange(40))]
    changes: list[Change] = []
    left_old, left_new = _paired(olds, news, changes)
    assert (changes, left_old, left_new) == _reference_paired(olds, news)


@pytest.mark.parametrize("seed", range(40))
def test_a_diff_keeps_each_sides_launch_order(seed: int) -> None:
    """The old side in launch order always; the new side too, but where two renamed pairs cross
    (a reduction then a pointwise kernel, renamed to a pointwise then a reduction one): the added
    kernels then keep their order among themselves."""
    rng = random.Random(seed)

    # Few shapes, so that replaced stretches hold renamed pairs among kernels removed and added.
    def kernel(index: int) -> KernelName:
        return KernelName(f"k{index}", rng.choice(("pointwise", "reduction", "other")), "aten", fused_ops=("add",))

    before = [kernel(i) for i in range(rng.randrange(40))]
    # Each a kernel of its own (a copy where it has a name of the old side), told apart by identity.
    after = [
        dataclasses.replace(rng.choice(before)) if before and rng.random() < 0.3 else kernel(1000 + i)
        for i in range(40)
    ]
    place = {id(kernel): i for i, kernel in enumerate(after)}
    changes = diff_kernels(before, after).changes  # by name: same-shape renames pair as ~
    assert [id(c.before) for c in changes if c.before is not None] == [id(kernel) for kernel in before]
    shown_after = [place[id(c.after)] for c in changes if c.after is not None]
    renamed = [place[id(c.after)] for c in changes if c.mark == "~"]
    if renamed == sorted(renamed):
        assert shown_after == list(range(len(after)))
    added = [place[id(c.after)] for c in changes if c.mark == "+"]
    assert added == sorted(added)
