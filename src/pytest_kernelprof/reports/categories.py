"""What a failed test's failure was about: the categories of the job summary and the
annotations, worst first, each with the one noun that names it in both, and the category of each error
this package raises.

A category comes from types, never from a message's words: the error's type
(:func:`of_error`), else, for a plain ``assert``, the types of the values it compared or named
(``model/explain.py``'s ``subject``, which names "syncs", "copies", "kernels", "ops", "modules",
"compile", "memory" or "profile").
"""

from __future__ import annotations

import builtins
import importlib

from ..errors import (
    BaselineMismatchError,
    ForbiddenError,
    KernelMatchError,
    KernelProfError,
    KernelSequenceMismatchError,
    ModuleNotRecordedError,
    NoDeviceActivityError,
    OpNotFoundError,
    QueryError,
    UndecodedKernelWarning,
)

# Worst first: the summary's order, and the order of its heading's counts. Each category's noun
# is its one name in every output: an annotation's title (``kernelprof: kernel baseline``), the
# summary's heading (``3 tests failed: kernel baseline (1), kernel assertion (2)``) and its entries
# (``t.py::test_x failed (kernel baseline) at t.py:12``).
CATEGORIES: dict[str, str] = {
    "rule": "kernelprof_forbid rule",
    "baseline": "kernel baseline",
    "nodevice": "no GPU activity",
    "syncs": "host syncs",
    "copies": "copies",
    "kernels": "kernel assertion",
    "varied": "different kernels per call",
    "ops": "op assertion",
    "op-lookup": "op lookup",
    "modules": "module assertion",
    "module-lookup": "module lookup",
    "compile": "compile assertion",
    "memory": "memory assertion",
    "profile": "profile assertion",
    "undecoded": "undecoded kernels",
    "query": "invalid profile query",
    "error": "kernelprof error",
}
ORDER = {name: rank for rank, name in enumerate(CATEGORIES)}
# A category a record names that this version does not know (a newer worker's): its noun.
UNKNOWN = "profile"

# The category of each error type, the most derived first; any other KernelProfError is "error".
_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (ForbiddenError, "rule"),
    (BaselineMismatchError, "baseline"),
    (NoDeviceActivityError, "nodevice"),
    (KernelMatchError, "kernels"),
    (KernelSequenceMismatchError, "varied"),
    (OpNotFoundError, "op-lookup"),
    (ModuleNotRecordedError, "module-lookup"),
    (UndecodedKernelWarning, "undecoded"),
    (QueryError, "query"),
    (KernelProfError, "error"),
)


def _group_types() -> tuple[type[BaseException], ...]:
    found = getattr(builtins, "BaseExceptionGroup", None)
    if found is None:  # Python 3.10: pytest's backport, which anyio and trio raise too
        try:
            found = getattr(importlib.import_module("exceptiongroup"), "BaseExceptionGroup", None)
        except ImportError:
            return ()
    return (found,) if isinstance(found, type) and issubclass(found, BaseException) else ()


_GROUPS = _group_types()

# The most errors read inside one exception group, and how deep (a group is any user's value).
MAX_LEAVES = 100
MAX_DEPTH = 50


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside an exception group, in order, those of the groups inside it too (an
    ``asyncio.TaskGroup``'s, pytest's of several fixtures' teardowns); an error that is no group,
    itself. At most ``MAX_LEAVES`` of them, ``MAX_DEPTH`` groups deep."""
    found: list[BaseException] = []
    stack: list[tuple[BaseException, int]] = [(error, 0)]
    while stack and len(found) < MAX_LEAVES:
        current, depth = stack.pop()
        inner = getattr(current, "exceptions", None) if isinstance(current, _GROUPS) else None
        if isinstance(inner, tuple | list) and depth < MAX_DEPTH:
            stack.extend((e, depth + 1) for e in reversed(inner[:MAX_LEAVES]) if isinstance(e, BaseException))
        else:
            found.append(current)
    return found


def worst(names: list[str]) -> str:
    """Of categories, the one the summary puts first."""
    return min(names, key=lambda name: ORDER.get(name, len(ORDER)))


def of_error(error: BaseException) -> str | None:
    """The category of an error this package raised, by its type; None for any other error."""
    for error_type, name in _ERRORS:
        if isinstance(error, error_type):
            return name
    return None


def noun(name: str) -> str:
    """A category's name in every output (``CATEGORIES``)."""
    return CATEGORIES.get(name, UNKNOWN)
