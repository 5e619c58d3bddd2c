"""The diff's fusion search and its pairing of same-shape kernels, which look at one candidate
per set of ops and per shape instead of at every removed or added kernel: the same answers as
trying every pair (the first versions, kept here as the reference)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from pytest_kernelprof.checks.diff import Change, _fusions, _ops, _paired, shape_key
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
