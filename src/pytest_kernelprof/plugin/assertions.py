"""What a failed assertion on a profile shows, and when an undecided question fails: the
explanations pytest is given for kernelprof values (model/explain.py), the parts too long for
its budget, kept for the test's report (hooks.py adds them), and strict decode's switch."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Generator, Iterator
from contextlib import contextmanager

import pytest

from .settings import assertion_budget


class DecodeStrictness:
    """Under --kernelprof-strict-decode an undecided kind or dtype question raises, at the line
    that asked, rather than warns: no warning filter, the run's (``-W ignore``, ``-p no:warnings``)
    or the test's own (``recwarn``, ``pytest.warns``, ``catch_warnings``), can let it pass.

    Set for the collection and each test, and set back after, in every session, strict or
    not: a pytest run inside a test (pytester's in-process runs) has its own session's
    strictness, and leaves the outer one's as it was."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        with self._set():
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        with self._set():
            return (yield)

    @contextmanager
    def _set(self) -> Iterator[None]:
        if not self.strict and _UNKNOWNS not in sys.modules:
            yield  # nothing imported the switch, so nothing made it strict
            return
        from ..errors import UndecodedKernelWarning
        from ..model.unknowns import decode_strictness

        with decode_strictness(self.strict), warnings.catch_warnings():
            if self.strict:
                # A thread the test starts does not inherit the context's switch; the warning
                # filters are the process's, so a question asked there fails by this one (unless
                # that thread sets filters of its own).
                warnings.filterwarnings("error", category=UndecodedKernelWarning)
            yield


# Named, not imported: a session that meets no test using the plugin does not import the model.
_UNKNOWNS = "pytest_kernelprof.model.unknowns"


# The explanations too long for pytest to show whole, for the report of the test that failed.
ASSERTION_SECTIONS_KEY = pytest.StashKey[list[str]]()
# The kernel lists whose whole table an explanation of this phase showed, with the lines pytest
# was given (hooks below); the profile sections of the failed test's report leave those out.
TABLING_KEY = pytest.StashKey[list[tuple[tuple[str, ...], object]]]()
# What the failed comparisons of a phase were about ("syncs", "kernels", "baseline"), and their
# explanations (the lines pytest was given, the whole), in order, while the phase runs (the hook
# below is given no item); then on its item (COMPARED_KEY, EXPLAINED_KEY).
COMPARING_KEY = pytest.StashKey[list[str]]()
EXPLAINING_KEY = pytest.StashKey[list[tuple[tuple[str, ...], tuple[str, ...]]]]()


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> list[str] | None:
    if "pytest_kernelprof.model" not in sys.modules:
        return None  # no profile value can exist: leave the comparison to pytest, without importing one
    from ..checks.baseline import KernelBaseline
    from ..model.explain import explain, subject

    baseline = any(isinstance(side, KernelBaseline) for side in (left, right))
    about = "baseline" if baseline else subject(left, right)
    if about is not None:  # for the CI outputs' category of the failure (ci.py)
        config.stash.setdefault(COMPARING_KEY, []).append(about)
    explanation = None
    for side in (left, right):
        if isinstance(side, KernelBaseline) and op == "==":
            explanation = side.explanation()
    if explanation is None:
        explanation = explain(op, left, right)
    if explanation is None:
        return None
    shown, section = explanation.shown(*assertion_budget(config))
    # For the CI outputs (ci.py): the message pytest makes holds only what the terminal shows.
    config.stash.setdefault(EXPLAINING_KEY, []).append((tuple(shown), (*explanation.head, *explanation.body)))
    if explanation.table_of is not None:
        config.stash.setdefault(TABLING_KEY, []).append((tuple(shown), explanation.table_of))
    if section:
        config.stash.setdefault(ASSERTION_SECTIONS_KEY, []).append("\n".join(section))
    return shown
