"""Running sweeps: a profile per case (``Profiler.sweep``), and a search for the smallest case
that breaks a property (``Profiler.explore``, driven by Hypothesis).

A case is the keyword arguments of ``fn``, which builds the case's inputs and returns the
callable to profile: the building (allocations, a model of the case's size) stays outside the
profile, and the profiler's warm-up calls run torch.compile's compile or recompile for the
case's shapes, so the profiled calls are the steady state. Each case is one profile of the
profiler (its options, its forbid rules, its captures, so the test's reports show the last ones).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Protocol

from ..checks.sweep import Check, ProfileSweep, SweepCase, check_name, require_check, run_check
from ..checks.sweep_cases import Cases, case_label, case_list, clashing_labels, value_repr
from ..checks.sweep_text import Outcome, failure_message
from ..errors import CannotTellError, MissingHypothesisError, SweepError
from ..model import KernelProfile
from ..options import MAX_CALLS
from ..tables import plural
from .captures import Capture

DEFAULT_MAX_CASES = 20  # explore's budget of profiled cases, shrinking included


class _Profiles(Protocol):
    captures: list[Capture]

    def profile(self, fn: Callable[..., Any], *, keep_traces: bool | None = None) -> KernelProfile: ...


def profile_case(
    profiler: _Profiles,
    fn: Callable[..., Any],
    params: Mapping[str, Any],
    *,
    keep_trace: bool = False,
    position: int | None = None,
) -> SweepCase:
    """Build the case ``params`` with ``fn`` and profile what it returns; ``keep_trace``: keep
    its trace as its session ends, for ``ProfileSweep.export`` after the later cases;
    ``position``: its place in the sweep, where another case is shown alike."""
    __tracebackhide__ = True
    label = case_label(params, position)
    try:
        target = fn(**params)
    except Exception as exc:
        note(exc, f"raised while fn built the sweep's case {label}")
        raise
    if not callable(target):
        raise TypeError(
            f"a sweep's fn builds a case's inputs and returns the callable to profile (return lambda: model(x)); "
            f"for the case {label} it returned {type(target).__name__}"
        )
    try:
        prof = profiler.profile(target, keep_traces=True if keep_trace else None)
    except Exception as exc:
        note(exc, f"raised while the sweep's case {label} was profiled")
        raise
    export = profiler.captures[-1].export_trace if keep_trace else None
    return SweepCase(dict(params), prof, _compiled(prof), export=export, position=position)


def _compiled(prof: KernelProfile) -> int | None:
    try:
        return prof.compile.frames
    except CannotTellError:
        return None


def note(exc: BaseException, text: str) -> None:
    """Add ``text`` to ``exc``'s report where Python can (3.11 and newer)."""
    add_note = getattr(exc, "add_note", None)  # Python 3.11 and newer
    if add_note is not None:
        add_note(text)


def run_sweep(profiler: _Profiles, fn: Callable[..., Any], cases: Cases, *, keep_traces: bool = False) -> ProfileSweep:
    """A profile of ``fn(**case)()`` for each case, in order; ``keep_traces``: each case's
    trace too, for ``ProfileSweep.export``."""
    __tracebackhide__ = True
    if not callable(fn):
        raise TypeError(f"sweep(fn, cases) takes the function that builds a case, got {type(fn).__name__}")
    listed = case_list(cases)
    clashing = clashing_labels(listed)
    return ProfileSweep(
        [
            profile_case(profiler, fn, params, keep_trace=keep_traces, position=i if i in clashing else None)
            for i, params in enumerate(listed)
        ]
    )


def explore_cases(
    profiler: _Profiles,
    fn: Callable[..., Any],
    cases: Any,
    check: Check,
    *,
    max_cases: int = DEFAULT_MAX_CASES,
    deadline: float | None = None,
    seed: int | None = 0,
) -> ProfileSweep:
    """Search the cases Hypothesis draws from ``cases`` for one where ``check`` breaks; raise
    ``SweepError`` with the smallest such case Hypothesis shrinks to, or return the sweep of
    the cases profiled where none broke it. ``max_cases`` and ``deadline`` (seconds) bound the
    cases profiled, shrinking included; ``seed`` makes the search the same run to run (None:
    another each run)."""
    __tracebackhide__ = True
    hypothesis, strategies = _hypothesis()
    if not callable(fn) or not callable(check):
        raise TypeError("explore(fn, cases, check) takes the function that builds a case and the check")
    require_check(check)
    if isinstance(max_cases, bool) or not isinstance(max_cases, int) or not 1 <= max_cases <= MAX_CALLS:
        raise ValueError(f"max_cases must be an int from 1 to {MAX_CALLS}, got {max_cases!r}")
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, int | float) or not 0 < deadline < math.inf
    ):
        raise ValueError(f"deadline is a number of seconds above 0 (or None), got {deadline!r}")
    if isinstance(cases, Mapping):
        strategy = strategies.fixed_dictionaries(dict(cases))
    elif isinstance(cases, strategies.SearchStrategy):
        strategy = cases
    else:
        raise TypeError(
            "explore's cases is a Hypothesis strategy of dicts, or a dict of each argument to its strategy "
            f"(dict(batch=st.integers(1, 64))); got {type(cases).__name__}"
        )
    search = _Search(profiler, fn, check, max_cases, deadline, order=list(cases) if isinstance(cases, Mapping) else [])
    settings = hypothesis.settings(
        max_examples=max_cases,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=(hypothesis.Phase.generate, hypothesis.Phase.shrink),
        report_multiple_bugs=False,
        verbosity=hypothesis.Verbosity.quiet,
    )

    def explore_case(params: Any) -> None:
        __tracebackhide__ = True
        search.probe(params)

    probe = hypothesis.given(strategy)(settings(explore_case))
    if seed is not None:
        probe = hypothesis.seed(seed)(probe)
    try:
        probe()
    except SweepError:
        if search.error is not None:
            raise search.error from None
        raise SweepError(search.message(max_cases, deadline)) from None
    if search.error is not None:
        raise search.error
    return search.sweep()


def _hypothesis() -> tuple[Any, Any]:
    try:
        import hypothesis
        from hypothesis import strategies
    except ImportError:
        raise MissingHypothesisError(
            "explore() draws its cases with Hypothesis, which is not installed: pip install hypothesis "
            "(sweep() over a list of cases needs nothing)"
        ) from None
    return hypothesis, strategies


class _Search:
    """What explore's Hypothesis test does with each case it draws: profile it once (a case
    drawn again reads its first outcome, so shrinking replays cost nothing), check it, and tell
    Hypothesis that it broke by raising. Past the budget, a new case is not profiled and reads
    as holding: the search then stops at the smallest case found so far."""

    def __init__(
        self,
        profiler: _Profiles,
        fn: Callable[..., Any],
        check: Check,
        max_cases: int,
        deadline: float | None,
        order: list[str],
    ) -> None:
        self.profiler, self.fn, self.check = profiler, fn, check
        self.order = order  # the arguments in the order the cases name them
        self.max_cases, self.deadline = max_cases, deadline
        self.start = time.monotonic()
        self.cases: dict[Hashable, tuple[SweepCase, Outcome]] = {}
        self.first_broke: int | None = None  # how many cases were profiled when the first broke
        self.last_broke: Hashable | None = None
        self.spent = False
        self.error: BaseException | None = None

    def probe(self, params: Any) -> None:
        __tracebackhide__ = True
        if self.error is not None:
            return
        if not isinstance(params, Mapping):
            self.error = TypeError(f"explore's strategy drew {params!r}, not a dict of keyword arguments")
            return
        params = {**{name: params[name] for name in self.order if name in params}, **params}
        key = _key(params)
        known = self.cases.get(key)
        if known is None:
            # The first case is always profiled: a search of nothing says nothing.
            if self.cases and (
                len(self.cases) >= self.max_cases
                or (self.deadline is not None and time.monotonic() - self.start > self.deadline)
            ):
                self.spent = True
                return
            try:
                case = profile_case(self.profiler, self.fn, params)
                known = (case, run_check(self.check, case.profile))
            except Exception as exc:  # the user's error, or nothing measured: told once, after the search
                self.error = exc
                return
            self.cases[key] = known
        if not known[1].held:
            if self.first_broke is None:
                self.first_broke = len(self.cases)
            self.last_broke = key
            raise SweepError(f"the check broke at {known[0].label}")

    def sweep(self) -> ProfileSweep:
        return ProfileSweep([case for case, _ in self.cases.values()])

    def message(self, max_cases: int, deadline: float | None) -> str:
        keys = list(self.cases)
        sweep = self.sweep()
        outcomes = [outcome for _, outcome in self.cases.values()]
        assert self.last_broke is not None  # Hypothesis raised our SweepError
        pinned = keys.index(self.last_broke)
        case = sweep.cases[pinned]
        shrinking = len(keys) - (self.first_broke or len(keys))
        budget = f"max_cases={max_cases}" + (f", deadline={deadline}s" if deadline is not None else "")
        head = [
            f"explore({check_name(self.check)}) broke at {case.label}: the smallest case Hypothesis found "
            f"({plural(len(keys), 'case')} profiled, {shrinking} of them while shrinking; budget {budget})"
        ]
        if self.spent:
            head.append("the budget ran out: a smaller case may break it too (raise max_cases or deadline)")
        return failure_message(sweep, outcomes, "explore", expected=True, pinned=pinned, head=head)


def _key(params: Mapping[str, Any]) -> Hashable:
    # Hypothesis may draw a dict's keys in another order while it shrinks: the same case.
    return tuple(sorted((name, value_repr(value)) for name, value in params.items()))
