"""Sequences aligned as difflib aligns them (alignment.py): difflib's own opcodes where the
sequences are small, and for long ones opcodes that tell every token once, in order."""

from __future__ import annotations

import difflib
import random
from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from pytest_kernelprof.checks.alignment import EXACT_PAIRS, WINDOW, Opcode, align


def _check(a: Sequence[Hashable], b: Sequence[Hashable], codes: list[Opcode]) -> int:
    """That ``codes`` tell a and b whole, in order, as difflib would word them; the tokens kept."""
    i = j = kept = 0
    previous = None
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j)
        assert (i1, j1) != (i2, j2)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            kept += i2 - i1
        else:
            assert tag == ("replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert")
        assert previous is None or (previous == "equal") != (tag == "equal")
        previous, i, j = tag, i2, j2
    assert (i, j) == (len(a), len(b))
    return kept


def _edited(rng: random.Random, a: list[int], edits: int, alphabet: int, block: int) -> list[int]:
    b = list(a)
    for _ in range(edits):
        at = rng.randrange(len(b) + 1)
        what = rng.random()
        if what < 0.3:
            b[at:at] = [rng.randrange(alphabet) for _ in range(rng.randrange(1, block + 1))]
        elif what < 0.6:
            del b[at : at + rng.randrange(1, block + 1)]
        elif at < len(b):
            b[at] = -1 - rng.randrange(alphabet)
    return b


@pytest.mark.parametrize("seed", range(20))
def test_small_sequences_are_difflibs(seed: int) -> None:
    rng = random.Random(seed)
    a = [rng.randrange(rng.choice((3, 30, 10**6))) for _ in range(rng.randrange(0, 1500))]
    b = _edited(rng, a, rng.randrange(50), 30, 20) if a else [1, 2]
    assert len(a) * len(b) <= EXACT_PAIRS
    assert align(a, b) == difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()


@pytest.mark.parametrize("seed", range(30))
def test_long_sequences_are_told_whole_and_in_order(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = rng.choice((3, 20, 400, 10**9))
    a = [rng.randrange(alphabet) for _ in range(rng.choice((2100, 3000, 5000)))]
    b = _edited(rng, a, rng.randrange(len(a)), alphabet, rng.choice((2, 300)))
    if seed % 3 == 0:
        b = b[: rng.randrange(len(b))]
    if seed % 5 == 0:
        a, b = b, a
    _check(a, b, align(a, b))


def test_a_few_changes_in_a_long_sequence_keep_everything_else() -> None:
    rng = random.Random(7)
    a = list(range(6000))
    b = list(a)
    for at in rng.sample(range(6000), 10):
        b[at] = -at - 1
    b[3000:3000] = [-1] * (WINDOW + 100)  # an insertion longer than a window
    assert _check(a, b, align(a, b)) == 5990


def test_layers_of_repeated_names_half_changed_keep_as_much_as_difflib() -> None:
    """A model's layers: names repeat every 400 kernels; half of them changed."""
    rng = random.Random(3)
    a = [i % 400 for i in range(3000)]
    b = list(a)
    for at in rng.sample(range(3000), 1500):
        b[at] = -at - 1
    exact = sum(c[2] - c[1] for c in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if c[0] == "equal")
    assert _check(a, b, align(a, b)) >= exact


def _layers(count: int, renamed: bool) -> list[str]:
    layer = ["add", "gemm", "mean" if renamed else "sum", "softmax", "mul"]
    return layer * (count // len(layer))


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The entries of difflib's index of ``b`` that its searches for the longest match read
    (each token of the part of ``a`` searched, its positions in ``b``): its work, without a clock."""
    reads = [0]
    search = difflib.SequenceMatcher.find_longest_match

    def counted(self: Any, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None) -> Any:
        ahi = len(self.a) if ahi is None else ahi
        reads[0] += sum(1 + len(self.b2j.get(self.a[i], ())) for i in range(alo, ahi))
        return search(self, alo, ahi, blo, bhi)

    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", counted)
    return reads


@pytest.mark.parametrize(("before", "after"), [(2_000, 2_000), (4_000, 1_000), (1_000, 4_000)])
def test_layers_with_a_kernel_renamed_in_each_are_aligned_in_linear_work(
    monkeypatch: pytest.MonkeyPatch, before: int, after: int
) -> None:
    """5-kernel layers, one renamed in each: every 4-kernel match made difflib read the rest of
    both again (9 s at 2,000 against 2,000, 26 s at 4,000 against 1,000)."""
    a, b = _layers(before, False), _layers(after, True)
    reads = _reads(monkeypatch)
    kept = _check(a, b, align(a, b))
    assert reads[0] <= 1_000 * (len(a) + len(b)), f"{reads[0]:,} reads"
    assert kept == 4 * min(len(a), len(b)) // 5  # every kernel but the renamed one of each layer


def test_small_layers_stay_difflibs() -> None:
    a, b = _layers(400, False), _layers(100, True)
    assert align(a, b) == difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
