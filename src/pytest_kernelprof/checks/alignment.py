"""Two sequences aligned as difflib aligns them, in time linear in their lengths.

``difflib.SequenceMatcher`` looks for the longest matching block over every pair of equal
tokens: its cost grows with the product of the lengths, and more where tokens repeat (a
model's layers launch the same kernels again and again): two calls of 14,000 kernels with
half the names changed took minutes. Where the tokens repeat and each stretch of matches is
short (a 5-kernel layer with one kernel renamed in each), every search reads the rest of both
sequences again, once per match: cubic, 9 s for 2,000 kernels against 2,000.

So difflib runs on a budget (``WORK_PER_TOKEN`` entries of its index read per token of the
two sequences; everyday diffs read far fewer): up to ``EXACT_PAIRS`` token pairs it aligns
the whole, and where it keeps to the budget the results are difflib's. Longer sequences, and
those it gives up on, are cut first at their common head and tail and at the tokens that occur
once in each (in the order both have them: the longest such chain); each stretch between two
cuts is aligned by difflib where it is small enough and keeps to the budget, else a window of
``WINDOW`` tokens of each side at a time, a window that breaks the budget halved.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
from collections.abc import Hashable, Sequence
from typing import Any

Opcode = tuple[str, int, int, int, int]  # difflib's: tag, a[i1:i2], b[j1:j2]

EXACT_PAIRS = 4_000_000
WINDOW = 512
SMALLEST_WINDOW = 16  # at most 256 pairs: aligned whatever it reads
# What difflib may read per token (about 30 microseconds); the diffs of the alignment tests
# read at most 150, the layers above 2,000 at 500 kernels against 500 and more as they grow.
WORK_PER_TOKEN = 300


class _OverBudget(Exception):
    pass


class _Budgeted(difflib.SequenceMatcher[Hashable]):
    """difflib's matcher, which gives up (``_OverBudget``) once its searches for the longest
    match would read more than ``budget`` entries of its index of ``b``: each search reads, for
    each token of its part of ``a``, the positions of that token in ``b``."""

    def __init__(self, a: Sequence[Hashable], b: Sequence[Hashable], budget: int) -> None:
        super().__init__(a=a, b=b, autojunk=False)
        self._a = a
        b2j: dict[Hashable, list[int]] = self.b2j  # type: ignore[attr-defined]  # difflib's, set by set_seq2
        self._read = list(itertools.accumulate((1 + len(b2j.get(token, ())) for token in a), initial=0))
        self._left = budget

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None) -> Any:
        self._left -= self._read[len(self._a) if ahi is None else ahi] - self._read[alo]
        if self._left < 0:
            raise _OverBudget
        return super().find_longest_match(alo, ahi, blo, bhi)


def _exact(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode] | None:
    """difflib's opcodes, or None where finding them would break the budget."""
    try:
        return list(_Budgeted(a, b, WORK_PER_TOKEN * (len(a) + len(b))).get_opcodes())
    except _OverBudget:
        return None


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """``difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()`` where the sequences
    are small enough (``EXACT_PAIRS``); for longer ones, opcodes of the same kind (each token of
    both told once, in order; ``equal`` stretches equal) in time linear in the lengths."""
    # The most tokens a stretch may have to be tried whole: fewer than half the sequences'
    # where they broke the budget, a stretch of nearly all of them would break it again.
    tried_up_to = len(a) + len(b)
    if len(a) * len(b) <= EXACT_PAIRS:
        exact = _exact(a, b)
        if exact is not None:
            return exact
        tried_up_to //= 2
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    end_a, end_b = len(a), len(b)
    while end_a > head and end_b > head and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    codes: list[Opcode] = [("equal", 0, head, 0, head)]
    i, j = head, head
    for anchor_a, anchor_b in [*_anchors(a, b, head, end_a, end_b), (end_a, end_b)]:
        codes.extend(_stretch(a, b, i, anchor_a, j, anchor_b, tried_up_to))
        codes.append(("equal", anchor_a, anchor_a + 1, anchor_b, anchor_b + 1))
        i, j = anchor_a + 1, anchor_b + 1
    codes[-1] = ("equal", end_a, len(a), end_b, len(b))
    return _merged(codes)


def _anchors(a: Sequence[Hashable], b: Sequence[Hashable], head: int, end_a: int, end_b: int) -> list[tuple[int, int]]:
    """(i, j) of the tokens that occur once in ``a[head:end_a]`` and once in ``b[head:end_b]``,
    the longest chain of them that is in the same order in both (patience sorting)."""
    seen_a: dict[Hashable, int] = {}
    for i in range(head, end_a):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[Hashable, int] = {}
    for j in range(head, end_b):
        if seen_a.get(b[j], -1) >= 0:
            seen_b[b[j]] = -1 if b[j] in seen_b else j
    pairs = sorted((seen_a[token], j) for token, j in seen_b.items() if j >= 0)
    # The longest increasing run of j over pairs in order of i.
    tails: list[int] = []  # the smallest j that ends a chain of each length
    ends: list[int] = []  # the pair that ends it
    before = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[length], ends[length] = j, index
        before[index] = ends[length - 1] if length else -1
    chain = []
    index = ends[-1] if ends else -1
    while index >= 0:
        chain.append(pairs[index])
        index = before[index]
    return chain[::-1]


def _stretch(
    a: Sequence[Hashable], b: Sequence[Hashable], i: int, end_a: int, j: int, end_b: int, tried_up_to: int
) -> list[Opcode]:
    """The opcodes of ``a[i:end_a]`` against ``b[j:end_b]``, in the whole sequences' indices:
    difflib's where the stretch is small enough and keeps to the budget (tried once: a stretch
    that broke it would break it again), else a window at a time."""
    codes: list[Opcode] = []
    tried = (end_a - i) + (end_b - j) > tried_up_to
    window = WINDOW
    while True:
        if not tried and (end_a - i) * (end_b - j) <= EXACT_PAIRS:
            tried = True
            found = _exact(a[i:end_a], b[j:end_b])
            if found is not None:
                codes.extend((tag, i + i1, i + i2, j + j1, j + j2) for tag, i1, i2, j1, j2 in found)
                return codes
        last = end_a - i <= window and end_b - j <= window
        taken = _window(a[i : min(i + window, end_a)], b[j : min(j + window, end_b)], window, last)
        if taken is None:
            window //= 2
            continue
        taken_a, taken_b, found = taken
        codes.extend((tag, i + i1, i + i2, j + j1, j + j2) for tag, i1, i2, j1, j2 in found)
        if last:
            return codes
        i, j = i + taken_a, j + taken_b


def _window(
    a: Sequence[Hashable], b: Sequence[Hashable], window: int, last: bool
) -> tuple[int, int, list[Opcode]] | None:
    """How much of ``a`` and ``b`` to take, and their opcodes: all of the last windows; of the
    others, up to the end of the last match that takes half a window of the two at least
    (the rest is aligned again with what follows), the last in the first three quarters of
    both where there is one; else all. None where the window breaks the budget (the smallest
    window never does)."""
    budget = WORK_PER_TOKEN * (len(a) + len(b)) if window > SMALLEST_WINDOW else len(a) * len(b) * 2 + 2
    matcher = _Budgeted(a, b, budget)
    try:
        codes: list[Opcode] = list(matcher.get_opcodes())
    except _OverBudget:
        return None
    if last:
        return len(a), len(b), codes
    inside = window * 3 // 4
    ends = [(m.a + m.size, m.b + m.size) for m in matcher.get_matching_blocks()[:-1]]
    ends = [end for end in ends if sum(end) >= window // 2]
    early = [end for end in ends if end[0] <= inside and end[1] <= inside]
    if not ends:
        return len(a), len(b), codes
    cut_a, cut_b = (early or ends)[-1]
    return cut_a, cut_b, [code for code in codes if code[2] <= cut_a and code[4] <= cut_b]


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """Adjacent opcodes both ``equal`` or both not made one, empty ones left out, as difflib gives them."""
    merged: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if i1 == i2 and j1 == j2:
            continue
        if merged and (merged[-1][0] == "equal") == (tag == "equal"):
            _, i1, _, j1, _ = merged.pop()
            if tag != "equal":
                tag = "replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert"
        merged.append((tag, i1, i2, j1, j2))
    return merged
