"""Two sequences aligned as difflib aligns them, in time linear in their lengths.

``difflib.SequenceMatcher`` looks for the longest matching block over every pair of equal
tokens: its cost grows with the product of the lengths, and more where tokens repeat (a
model's layers launch the same kernels again and again): two calls of 14,000 kernels with
half the names changed took minutes. Up to ``EXACT_PAIRS`` token pairs it aligns the whole,
which covers the diffs of everyday traces, so their results are difflib's. Longer sequences
are cut first at their common head and tail and at the tokens that occur once in each (in the
order both have them: the longest such chain); each stretch between two cuts is aligned by
difflib where it is small enough, else a window of ``WINDOW`` tokens of each side at a time.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Hashable, Sequence

Opcode = tuple[str, int, int, int, int]  # difflib's: tag, a[i1:i2], b[j1:j2]

EXACT_PAIRS = 4_000_000
WINDOW = 512


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """``difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()`` where the sequences
    are small enough (``EXACT_PAIRS``); for longer ones, opcodes of the same kind (each token of
    both told once, in order; ``equal`` stretches equal) in time linear in the lengths."""
    if len(a) * len(b) <= EXACT_PAIRS:
        return list(difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes())
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    end_a, end_b = len(a), len(b)
    while end_a > head and end_b > head and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    codes: list[Opcode] = [("equal", 0, head, 0, head)]
    i, j = head, head
    for anchor_a, anchor_b in [*_anchors(a, b, head, end_a, end_b), (end_a, end_b)]:
        codes.extend(_stretch(a, b, i, anchor_a, j, anchor_b))
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


def _stretch(a: Sequence[Hashable], b: Sequence[Hashable], i: int, end_a: int, j: int, end_b: int) -> list[Opcode]:
    """The opcodes of ``a[i:end_a]`` against ``b[j:end_b]``, in the whole sequences' indices:
    difflib's where the stretch is small enough, else a window at a time."""
    codes: list[Opcode] = []
    while True:
        last = (end_a - i) * (end_b - j) <= EXACT_PAIRS
        window_a = a[i:end_a] if last else a[i : min(i + WINDOW, end_a)]
        window_b = b[j:end_b] if last else b[j : min(j + WINDOW, end_b)]
        taken_a, taken_b, found = _window(window_a, window_b, last)
        codes.extend((tag, i + i1, i + i2, j + j1, j + j2) for tag, i1, i2, j1, j2 in found)
        if last:
            return codes
        i, j = i + taken_a, j + taken_b


def _window(a: Sequence[Hashable], b: Sequence[Hashable], last: bool) -> tuple[int, int, list[Opcode]]:
    """How much of ``a`` and ``b`` to take, and their opcodes: all of the last windows; of the
    others, up to the end of the last match that takes half a window of the two at least
    (the rest is aligned again with what follows), the last in the first three quarters of
    both where there is one; else all."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    codes: list[Opcode] = list(matcher.get_opcodes())
    if last:
        return len(a), len(b), codes
    inside = WINDOW * 3 // 4
    ends = [(m.a + m.size, m.b + m.size) for m in matcher.get_matching_blocks()[:-1]]
    ends = [end for end in ends if sum(end) >= WINDOW // 2]
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
