"""A sweep: one profile per case of a callable, and the properties that must hold in every case.

Fusion regressions rarely break every shape: Inductor picks a persistent or a looped reduction
by size, cuBLAS another kernel when a dimension stops being a multiple of 16, a dynamic compile
another path than the static one. A :class:`ProfileSweep` holds a profile per case (a case is
the keyword arguments that built it), shows the facts that differ between cases, and checks a
property in every case (:meth:`ProfileSweep.every`) or in none (:meth:`ProfileSweep.none`),
failing with the cases that broke it, the smallest as a case to pin, and the kernel tables of
that case and of the nearest passing one side by side (``sweep_text.py`` writes them).

Pure: the cases, the profiles and the sweep's index file (``sweep.json``, beside the traces
that :meth:`ProfileSweep.export` writes). Running the cases is ``api/sweeps.py``'s.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, overload

from ..errors import NoAnswerError, SweepError, TraceError
from ..model import KernelProfile
from .staging import staging_folder
from .sweep_cases import MAX_CASES, TOO_MANY, case_label, clashing_labels, same_value, value_repr
from .sweep_text import Outcome, failure_message, sweep_table

Check = Callable[[KernelProfile], object]

INDEX_NAME = "sweep.json"
INDEX_FORMAT = 1


@dataclass(frozen=True)
class SweepCase:
    """One case of a sweep: the keyword arguments that built it (``params``), its profile, and
    the frames torch.compile compiled while it was profiled, warm-up included (``compiled``;
    None where that cannot be told: a torch without the probes)."""

    params: Mapping[str, Any]
    profile: KernelProfile
    compiled: int | None = None
    # Writes the case's trace (kept while the sweep ran, or a loaded trace's copy); None where none was kept.
    export: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    # The case's place in its sweep where another case is shown alike (two nn.Linear(4, 4)): its label says it.
    position: int | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return case_label(self.params, self.position)

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def __repr__(self) -> str:
        return f"SweepCase({self.label}: {self.profile!r})"


class ProfileSweep:
    """A profile per case of a callable: ``kernelprof.sweep(fn, cases)``.

    ``sweep.every(check)`` fails unless ``check(profile)`` holds in every case; ``sweep.none(check)``
    unless it holds in none. A check holds where it returns None or a true value; it breaks
    where it raises ``AssertionError`` (an ``assert`` in it) or returns a false value. Any other
    error propagates, and so does a ``NoAnswerError`` (``NoDeviceActivityError``,
    ``VariedProfileError``): a check that reads kernels of a sweep that ran none fails as that
    read does anywhere else.

    ``table()`` shows the facts that differ between the cases (kernels by kind, the names of each
    family, launches, syncs, what torch.compile compiled); ``sweep[i]`` is a :class:`SweepCase`,
    ``sweep.profile(batch=17)`` the profile of a case; ``export(folder)`` writes the traces and
    ``load_sweep`` reads them back.
    """

    def __init__(self, cases: Sequence[SweepCase], source: str = "live") -> None:
        if not cases:
            raise ValueError("a sweep needs at least one case")
        clashing = clashing_labels([case.params for case in cases])  # a slice's cases keep their place
        self.cases: tuple[SweepCase, ...] = tuple(
            replace(case, position=i) if i in clashing and case.position is None else case
            for i, case in enumerate(cases)
        )
        self.source = source

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[SweepCase]:
        return iter(self.cases)

    @overload
    def __getitem__(self, index: int) -> SweepCase: ...
    @overload
    def __getitem__(self, index: slice) -> ProfileSweep: ...
    def __getitem__(self, index: int | slice) -> SweepCase | ProfileSweep:
        if isinstance(index, slice):
            chosen = self.cases[index]
            if not chosen:
                shown = ":".join("" if part is None else repr(part) for part in (index.start, index.stop, index.step))
                raise IndexError(
                    f"sweep[{shown.removesuffix(':')}] selects none of the sweep's {len(self.cases)} cases: "
                    "a sweep needs at least one"
                )
            return ProfileSweep(chosen, self.source)
        return self.cases[index]

    @property
    def profiles(self) -> list[KernelProfile]:
        return [case.profile for case in self.cases]

    def profile(self, **params: Any) -> KernelProfile:
        """The profile of the one case whose arguments include ``params``: ``sweep.profile(batch=17)``."""
        __tracebackhide__ = True
        found = [
            c
            for c in self.cases
            if all(name in c.params and same_value(c.params[name], v) for name, v in params.items())
        ]
        if len(found) != 1:
            listed = "\n".join(f"  {case.label}" for case in self.cases)
            raise KeyError(f"{len(found)} cases have {case_label(params)}; the cases:\n{listed}")
        return found[0].profile

    def table(self, marked: frozenset[int] = frozenset()) -> str:
        """The cases and the facts that differ between them; rows in ``marked`` get a ``*``."""
        return sweep_table(self, marked)

    def every(self, check: Check, /) -> None:
        """Fail (``SweepError``) unless ``check(profile)`` holds in every case."""
        __tracebackhide__ = True
        self._expect(check, holds=True)

    def none(self, check: Check, /) -> None:
        """Fail (``SweepError``) unless ``check(profile)`` holds in no case."""
        __tracebackhide__ = True
        self._expect(check, holds=False)

    def _expect(self, check: Check, *, holds: bool) -> None:
        __tracebackhide__ = True
        require_check(check)
        outcomes = [run_check(check, case.profile) for case in self.cases]
        if all(outcome.held == holds for outcome in outcomes):
            return
        method = "every" if holds else "none"
        raise SweepError(failure_message(self, outcomes, f"sweep.{method}({check_name(check)})", expected=holds))

    def export(self, folder: str | os.PathLike[str]) -> Path:
        """Write each case's trace (``case-00.json.gz``, ...) and the index ``sweep.json`` into
        ``folder``; ``load_sweep(folder)`` reads the same sweep back. Returns the index's path."""
        __tracebackhide__ = True
        root = Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        for case in self.cases:
            if case.export is None:
                raise ValueError(
                    f"the case {case.label} holds no trace to export: profile the sweep with "
                    "sweep(fn, cases, keep_traces=True), which keeps each case's trace as it is profiled "
                    "(torch loses a session's GPU records once later sessions ran)"
                )
        # Every trace is written to a folder of its own first and moved in only once all are: a
        # loaded sweep exported into its own folder reads case-01 from the folder, so writing
        # case-00 in place first would replace a trace that a later case still copies from. That
        # folder is inside the export folder, on its file system (a mount point, a container's
        # volume: a rename across file systems fails), and where the user may write. And
        # the folder goes however the export ends, SIGTERM included (staging.py).
        with staging_folder(root) as staging:
            listed: list[dict[str, Any]] = []
            names: list[str] = []
            for i, case in enumerate(self.cases):
                assert case.export is not None  # checked above
                name = f"case-{i:02d}.json.gz"
                case.export(os.fspath(staging / name))
                names.append(name)
                listed.append({"params": _json_params(case.params), "trace": name, "compiled": case.compiled})
            with open(staging / INDEX_NAME, "w", encoding="utf-8") as handle:
                # Not sorted: a case's arguments keep their order, which is how failures name them.
                json.dump({"format": INDEX_FORMAT, "cases": listed}, handle, indent=1)
                handle.write("\n")
            for name in names:
                os.replace(staging / name, root / name)
            os.replace(staging / INDEX_NAME, root / INDEX_NAME)  # last: the index lists only traces in place
        return root / INDEX_NAME

    def __repr__(self) -> str:
        where = {c.profile.device for c in self.cases if c.profile.device}
        on = f" on {', '.join(sorted(where))}" if where else ""
        return f"ProfileSweep({len(self.cases)} cases{on})"

    def __str__(self) -> str:
        return self.table()  # print() gives the table, as IPython does

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))


def require_check(check: object) -> None:
    """A TypeError for what cannot be a sweep's check: a non-callable, and generator or coroutine
    functions, whose call runs nothing and returns an object that is true, so every case held."""
    __tracebackhide__ = True
    if not callable(check):
        raise TypeError(f"a sweep's check is a function of a KernelProfile, got {type(check).__name__}")
    name = check_name(check)
    if inspect.isasyncgenfunction(check):
        what = "an async generator function, and calling it runs nothing"
    elif inspect.isgeneratorfunction(check):
        what = "a generator function, and calling it runs nothing until the generator is iterated"
    elif inspect.iscoroutinefunction(check):
        what = "a coroutine function (async def), and calling it runs nothing until it is awaited"
    else:
        return
    raise TypeError(
        f"a sweep's check {name}: it is {what}. Pass a plain function of a KernelProfile that asserts "
        "or returns whether the property holds"
    )


def _refuse_deferred(check: Check, result: object) -> None:
    # A check wrapped so that the tests above cannot see it (a partial, a lambda around one)
    # returns the generator or coroutine: it is closed, so that it warns of nothing later.
    __tracebackhide__ = True
    if not (inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result)):
        return
    close = None if inspect.isasyncgen(result) else getattr(result, "close", None)
    if close is not None:
        close()
    raise TypeError(
        f"a sweep's check {check_name(check)} returned a {type(result).__name__}, so nothing ran: "
        "a check asserts or returns whether the property holds"
    )


def run_check(check: Check, profile: KernelProfile) -> Outcome:
    """Whether ``check`` holds for ``profile``, and what it said where it did not. A question the
    profile has no answer to (a ``NoAnswerError``: a read of what was not measured, of a profile
    whose calls differ in what was asked) propagates: it is an ``AssertionError``, which would read
    as "does not hold", and ``none(...)`` would pass."""
    __tracebackhide__ = True
    try:
        result = check(profile)
    except NoAnswerError:
        raise
    except AssertionError as exc:
        text = str(exc).strip()
        return Outcome(
            False, f"{type(exc).__name__}: {text}" if text else f"{type(exc).__name__} (an assert without a message)"
        )
    _refuse_deferred(check, result)
    if result is None or result:
        return Outcome(True, "")
    return Outcome(False, f"returned {result!r}")


def check_name(check: Check) -> str:
    name = getattr(check, "__name__", None) or type(check).__name__
    return "<lambda>" if name == "<lambda>" else name


def _json_params(params: Mapping[str, Any]) -> dict[str, Any]:
    # What JSON holds as it is stays so; anything else (a torch.dtype, an int too long for
    # Python's JSON writer) is kept as its repr.
    return {name: value if _json_value(value) else value_repr(value) for name, value in params.items()}


def _json_value(value: Any) -> bool:
    if value is None or isinstance(value, bool | float | str):
        return True
    return isinstance(value, int) and not value_repr(value).startswith(("0x", "-0x"))  # hex: past the limit


@dataclass(frozen=True)
class IndexedCase:
    params: dict[str, Any]
    trace: Path
    compiled: int | None


def read_index(path: str | os.PathLike[str]) -> list[IndexedCase]:
    """The cases of a sweep's index (``sweep.json``, or the folder that holds it)."""
    __tracebackhide__ = True
    index = Path(path)
    if index.is_dir():
        index = index / INDEX_NAME
    fix = f"write it with ProfileSweep.export(folder), which writes {INDEX_NAME} beside the traces"
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TraceError(f"{index}: no such sweep index; {fix}") from None
    except (OSError, ValueError) as exc:
        raise TraceError(f"{index}: not a sweep index ({exc}); {fix}") from None
    except RecursionError:
        raise TraceError(f"{index}: not a sweep index (nested too deeply to read); {fix}") from None
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or not isinstance(cases, list) or not cases:
        raise TraceError(f"{index}: not a sweep index (format {INDEX_FORMAT} with a list of cases); {fix}")
    if len(cases) > MAX_CASES:  # before a trace is read: each is a profile held until the sweep ends
        raise TraceError(f"{index}: lists {len(cases):,} cases; " + TOO_MANY.format(cap=MAX_CASES))
    listed = []
    for i, case in enumerate(cases):
        params, trace, compiled = (
            (case.get(k) for k in ("params", "trace", "compiled")) if isinstance(case, dict) else (None,) * 3
        )
        if (
            not isinstance(params, dict)
            or not isinstance(trace, str)
            or not _file_name(trace)
            or not (compiled is None or (type(compiled) is int and compiled >= 0))
        ):
            raise TraceError(
                f"{index}: cases[{i}] is not a case (params: an object, trace: a file name beside the index, "
                f"printable and without a path separator, compiled: a count or null); {fix}"
            )
        listed.append(IndexedCase(params, index.parent / trace, compiled))
    # Cases listed alike stay: an export writes a value JSON cannot hold as its repr, so two
    # distinct nn.Linear(4, 4) are the same text; the sweep names them with their places.
    return listed


def _file_name(name: str) -> bool:
    # A name with a NUL cannot be opened, and one with other control characters would be written
    # to the terminal by every error that names the file.
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and name.isprintable()
