"""What a failed test's failure was about: the categories of the job summary and the
annotations, worst first, each with the words that say it, and the category of each error
this package raises.

A category comes from types, never from a message's words: the error's type
(:func:`of_error`), else, for a plain ``assert``, the types of the values it compared or named
(``model/explain.py``'s ``subject``, which names "syncs", "copies", "kernels", "ops", "modules",
"compile", "memory" or "profile").
"""

from __future__ import annotations

import builtins
import importlib
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Category:
    one: str  # what one test failed on: "1 test failed on a kernel assertion"
    several: str  # what several did: "3 tests failed on kernel assertions"
    what: str  # after a test's id: "`t.py::test_x` failed on a kernel assertion"


# Worst first: the summary's order, and the order of its heading's counts.
CATEGORIES: dict[str, Category] = {
    "rule": Category("a kernelprof_forbid rule", "kernelprof_forbid rules", "broke a kernelprof_forbid rule"),
    "baseline": Category("its kernel baseline", "their kernel baselines", "differs from its kernel baseline"),
    "nodevice": Category(
        "a profile with no GPU activity", "profiles with no GPU activity", "found no GPU activity in its profile"
    ),
    "syncs": Category("host syncs", "host syncs", "failed on host syncs"),
    "copies": Category("a copy assertion", "copy assertions", "failed on a copy assertion"),
    "kernels": Category("a kernel assertion", "kernel assertions", "failed on a kernel assertion"),
    "varied": Category(
        "calls that launched different kernels",
        "calls that launched different kernels",
        "failed: its profiled calls launched different kernels",
    ),
    "ops": Category("an op assertion", "op assertions", "failed on an op assertion"),
    "op-lookup": Category("an op lookup", "op lookups", "failed on an op lookup"),
    "modules": Category("a module assertion", "module assertions", "failed on a module assertion"),
    "module-lookup": Category("a module lookup", "module lookups", "failed on a module lookup"),
    "compile": Category("a compile assertion", "compile assertions", "failed on a compile assertion"),
    "memory": Category("a memory assertion", "memory assertions", "failed on a memory assertion"),
    "profile": Category(
        "an assertion on its profile", "assertions on their profiles", "failed on an assertion on its profile"
    ),
    "undecoded": Category("undecoded kernels", "undecoded kernels", "failed on undecoded kernels"),
    "query": Category("an invalid profile query", "invalid profile queries", "failed on an invalid profile query"),
    "error": Category("a kernelprof error", "kernelprof errors", "failed on a kernelprof error"),
}
ORDER = {name: rank for rank, name in enumerate(CATEGORIES)}
# A category a record names that this version does not know (a newer worker's): its words.
UNKNOWN = Category("its profile", "their profiles", "failed on its profile")

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


def words(name: str) -> Category:
    return CATEGORIES.get(name, UNKNOWN)
