"""What ``KernelList.count`` returns: an ``int`` that remembers what it counted, so that a failed
assertion on it can show the kernels."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kernel_matching import Pattern
    from .kernels import KernelList


def query_text(
    method: str, pattern: Pattern | None, kind: str | None, dtype: str | None = None, family: str | None = None
) -> str:
    """``count('triton_*')``, ``count(kind='gemm', dtype='fp32')``: how a query was written, for messages."""
    args = []
    if pattern is not None:
        args.append(f"re.compile({pattern.pattern!r})" if isinstance(pattern, re.Pattern) else repr(pattern))
    if kind is not None:
        args.append(f"kind={kind!r}")
    if family is not None:
        args.append(f"family={family!r}")
    if dtype is not None:
        args.append(f"dtype={dtype!r}")
    return f"{method}({', '.join(args)})"


def wanted_text(pattern: Pattern | None, kind: str | None, dtype: str | None, family: str | None = None) -> str:
    """``name matching 'triton_*' and kind='gemm'``: what ``one()`` looked for, for its failure."""
    name = pattern.pattern if isinstance(pattern, re.Pattern) else repr(pattern)
    parts = (
        f"name matching {name}" if pattern is not None else "",
        f"kind={kind!r}" if kind is not None else "",
        f"family={family!r}" if family is not None else "",
        f"dtype={dtype!r}" if dtype is not None else "",
    )
    return " and ".join(part for part in parts if part) or "any kernel"


class KernelCount(int):
    """What :meth:`KernelList.count` returns: an ``int`` that also holds what it counted (the
    kernels, the pattern, kind, family and dtype, the numbers in their call of the kernels that matched, as
    the kernel table numbers them), for the report of a failed
    assertion such as ``assert prof.kernels.count("triton_*gelu*") == 1``."""

    kernels: KernelList
    pattern: Pattern | None
    kind: str | None
    dtype: str | None
    family: str | None
    matched: tuple[int, ...]

    def __new__(
        cls,
        matched: tuple[int, ...],
        kernels: KernelList,
        pattern: Pattern | None,
        kind: str | None,
        dtype: str | None = None,
        family: str | None = None,
    ) -> KernelCount:
        count = super().__new__(cls, len(matched))
        count.kernels = kernels
        count.pattern = pattern
        count.kind = kind
        count.dtype = dtype
        count.family = family
        count.matched = matched
        return count

    @property
    def query(self) -> str:
        """How the count was asked for: ``count('triton_*')``, ``count(kind='gemm', dtype='fp32')``."""
        return query_text("count", self.pattern, self.kind, self.dtype, self.family)

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        return (int, (int(self),))
