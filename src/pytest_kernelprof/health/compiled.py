"""Compile health: graph breaks and recompiles as dynamo reports them, and ``prof.compile``.

:class:`CompileReport` is made from what the events hold (the ``Torch-Compiled Region: N/M``
range of each compiled frame a call entered, so a loaded trace has it too) and from the
:class:`CompileFacts` that ``capture/compile_watch.py`` saw live. Pure: no torch import.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import CannotTellError
from ..paths import short_path as _short_path
from ..tables import plural, render_table

REGION_PREFIX = "Torch-Compiled Region"


def hide_cannot_tell(excinfo: Any) -> bool:
    """A ``__tracebackhide__`` for pytest: a CannotTellError says what the test asked for and
    why the profile cannot answer, so it fails at the test's line; any other error shows here."""
    return bool(excinfo.errisinstance(CannotTellError))


@dataclass(frozen=True)
class GraphBreak:
    """One graph break: why dynamo stopped tracing, and the user code where it did."""

    reason: str  # one line: what dynamo could not trace
    file: str | None = None
    line: int | None = None
    compile_id: str | None = None  # the compile ("0/0") that hit it
    detail: str = ""  # dynamo's whole message (hints, developer context)

    @property
    def location(self) -> str | None:
        """``file:line`` of the user code that broke the graph, or None where torch did not say."""
        if self.file is None:
            return None
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def __str__(self) -> str:
        return f"{_short_path(self.location) if self.location else '(location unknown)'}: {self.reason}"

    def __repr__(self) -> str:
        return f"GraphBreak({self})"


_NEW_LOCATION = re.compile(r"Graph break in user code at (.+):(\d+)\s*$", re.MULTILINE)
_FRAME_LINE = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
_PREAMBLE = re.compile(r"^Encountered graph break when attempting to trace")


def summarize_reason(text: str) -> str:
    """One line out of dynamo's graph-break message: what failed, and its explanation."""
    lines = [line.strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line and not _PREAMBLE.match(line)]
    if not lines:
        return "unknown reason"
    head = lines[0]
    for prefix in ("torch._dynamo.exc.Unsupported: ", "Unsupported: "):
        head = head.removeprefix(prefix)
    explanation = next((line for line in lines[1:] if line.startswith("Explanation:")), None)
    if explanation is not None:
        head = f"{head.rstrip('.:')}: {explanation.removeprefix('Explanation:').strip()}"
    return head


def parse_graph_break(payload: str, compile_id: str | None = None) -> GraphBreak:
    """A ``dynamo_graph_break_reason`` structured-trace payload as a GraphBreak.

    Two layouts exist. torch 2.6 and newer: ``Graph break in user code at FILE:LINE``,
    ``Graph Break Reason: ...`` (2.6: ``Reason: ...``), ``User code traceback: ...``. Older:
    ``Graph break: from user code at:`` with the user frames (innermost last), then the
    exception's traceback, whose last line is the reason.
    """
    found = _NEW_LOCATION.search(payload)
    if found is not None:
        reason_text = payload[found.end() :]
        reason_text = reason_text.split("User code traceback:", 1)[0].strip()
        reason_text = reason_text.removeprefix("Graph Break Reason:").removeprefix("Reason:")
        return GraphBreak(
            summarize_reason(reason_text), found.group(1), int(found.group(2)), compile_id, reason_text.strip()
        )
    user, _, traceback = payload.partition("Traceback (most recent call last):")
    frames = _FRAME_LINE.findall(user)
    file, line = (frames[-1][0], int(frames[-1][1])) if frames else (None, None)
    exception_lines = [text for text in traceback.splitlines() if text and not text[0].isspace()]
    reason_text = exception_lines[0] if exception_lines else ""
    return GraphBreak(summarize_reason(reason_text), file, line, compile_id, traceback.strip())


def parse_recompile_reasons(payload: str) -> list[str]:
    """A ``recompile_reasons`` payload: one guard failure, or a JSON list of them."""
    text = payload.strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            return [text]
        if isinstance(items, list):
            return [str(item) for item in items]
    return [text] if text else []


@dataclass(frozen=True)
class CompileFacts:
    """What the capture saw torch.compile do while the profile was taken (live only).

    ``frames`` counts the compiles of the whole profile, warm-up included; ``recompiles``
    and ``recompile_reasons`` those that started during the profiled calls. ``compile_ids``
    are the ids ("0/0") of the compiles, where the source tells them. ``unavailable`` says
    why nothing could be told (then the other fields mean nothing).
    """

    source: str
    frames: int = 0
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompiles: int = 0
    recompile_reasons: tuple[str, ...] = ()
    compile_ids: frozenset[str] | None = None
    unavailable: str | None = None


def region_ids(op_names: Iterable[str], count: Mapping[str, int]) -> list[str]:
    """The compile id of each compiled region a call entered, once per entry, in op-table
    order. A torch that names its ranges without the id gives ``""``."""
    ids: list[str] = []
    for name in op_names:
        if name.startswith(REGION_PREFIX):
            ids.extend([name[len(REGION_PREFIX) :].lstrip(":").strip()] * count[name])
    return ids


@dataclass(frozen=True, repr=False)
class CompileReport:
    """What torch.compile did in a profile: ``prof.compile``.

    ``regions`` (compiled frames entered per call, the median over calls) comes from the
    trace's ``Torch-Compiled Region`` ranges, so a loaded trace has it. ``frames``,
    ``graph_breaks``, ``recompiles`` and ``recompile_reasons`` come from dynamo, live; where
    they cannot be told (a loaded trace, a torch without the probes, code compiled before
    the profile) reading them raises :class:`CannotTellError` that says why.
    """

    regions: int
    regions_per_call: tuple[int, ...]
    region_ids: tuple[str, ...]  # compile ids entered in the first call, in order
    facts: CompileFacts | None
    unknown: str | None = None  # why facts is None
    stale_ids: tuple[str, ...] = ()  # entered, but compiled before the profile started

    def _facts(self, what: str) -> CompileFacts:
        __tracebackhide__ = hide_cannot_tell
        if self.facts is None:
            raise CannotTellError(f"{what}: {self.unknown}")
        if self.facts.unavailable is not None:
            raise CannotTellError(f"{what}: {self.facts.unavailable}")
        return self.facts

    @property
    def frames(self) -> int:
        """Frames dynamo compiled during the whole profile, warm-up included (recompiles too)."""
        __tracebackhide__ = hide_cannot_tell
        return self._facts("prof.compile.frames").frames

    @property
    def graph_breaks(self) -> list[GraphBreak]:
        """Each distinct graph break met while compiling during the profile."""
        __tracebackhide__ = hide_cannot_tell
        facts = self._facts("prof.compile.graph_breaks")
        if self.stale_ids:
            ids = ", ".join(sorted(set(self.stale_ids)))
            raise CannotTellError(
                f"prof.compile.graph_breaks: the profiled calls ran compiled code ({ids}) that was compiled "
                "before this profile started, and graph breaks are seen only while compiling. Profile a "
                "fresh torch.compile(...) of code this process has not compiled yet, or call "
                "torch._dynamo.reset() before profiling."
            )
        return list(facts.graph_breaks)

    @property
    def recompiles(self) -> int:
        """Compiles that started during the profiled (steady-state) calls."""
        __tracebackhide__ = hide_cannot_tell
        return self._facts("prof.compile.recompiles").recompiles

    @property
    def recompile_reasons(self) -> list[str]:
        """Why each compile of the profiled calls happened: dynamo's guard failures
        (``"0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"``)."""
        __tracebackhide__ = hide_cannot_tell
        return list(self._facts("prof.compile.recompile_reasons").recompile_reasons)

    def table(self) -> str:
        per_call = ", ".join(map(str, self.regions_per_call))
        ids = f" ({', '.join(i for i in self.region_ids if i)})" if any(self.region_ids) else ""
        lines = [
            f"CompileReport: {plural(self.regions, 'compiled region')} entered per call{ids}; per call: {per_call}"
        ]
        facts = self.facts
        if facts is None or facts.unavailable is not None:
            reason = self.unknown if facts is None else facts.unavailable
            lines.append(f"frames, graph breaks, recompiles: cannot tell ({reason})")
            return "\n".join(lines)
        lines.append(f"frames compiled during the profile (warm-up included): {facts.frames}")
        if self.stale_ids:
            lines.append(f"graph breaks: cannot tell ({', '.join(sorted(set(self.stale_ids)))} compiled before)")
        elif facts.graph_breaks:
            lines.append(f"graph breaks: {len(facts.graph_breaks)}")
            rows = [
                (g.compile_id or "-", _short_path(g.location) if g.location else "-", g.reason)
                for g in facts.graph_breaks
            ]
            lines.append(_indent(render_table(("compile", "where", "reason"), rows)))
        else:
            lines.append("graph breaks: none")
        lines.append(f"recompiles during the profiled calls: {facts.recompiles}")
        lines.extend(f"  {reason}" for reason in facts.recompile_reasons)
        lines.append(f"(from {facts.source})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        # One short line: pytest shows a repr in an assertion's "where" line, escaping
        # newlines and cutting it at 240 characters; print() gives the table.
        shown = ", ".join(map(str, self.regions_per_call[:_SHOWN_CALLS]))
        more = ", ..." if len(self.regions_per_call) > _SHOWN_CALLS else ""
        per_call = "" if len(set(self.regions_per_call)) <= 1 else f" (per call: {shown}{more})"
        fields = [f"regions={self.regions}{per_call}"]
        facts = self.facts
        if facts is None or facts.unavailable is not None:
            fields.append("frames, graph_breaks, recompiles: cannot tell, see .table()")
        else:
            breaks = "cannot tell" if self.stale_ids else str(len(facts.graph_breaks))
            fields.extend((f"frames={facts.frames}", f"graph_breaks={breaks}", f"recompiles={facts.recompiles}"))
        return f"CompileReport({', '.join(fields)})"


_SHOWN_CALLS = 5


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def compile_report(calls_regions: Sequence[Sequence[str]], facts: CompileFacts | None, unknown: str) -> CompileReport:
    """The report of a profile whose calls entered ``calls_regions`` (compile ids, see
    :func:`region_ids`); ``facts`` None where the profile was not taken live."""
    per_call = tuple(len(ids) for ids in calls_regions)
    entered = {i for ids in calls_regions for i in ids}
    stale: tuple[str, ...] = ()
    if facts is not None and facts.unavailable is None and entered:
        if facts.compile_ids is not None and "" not in entered:
            stale = tuple(sorted(entered - facts.compile_ids))
        elif facts.frames == 0:
            stale = tuple(sorted(entered))
    return CompileReport(
        regions=int(statistics.median_low(per_call)) if per_call else 0,
        regions_per_call=per_call,
        region_ids=tuple(calls_regions[0]) if calls_regions else (),
        facts=facts,
        unknown=None if facts is not None else unknown,
        stale_ids=stale,
    )


TRACE_CANNOT_TELL_COMPILE = (
    "this profile was loaded from a trace, and a trace records the compiled regions each call entered "
    "(prof.compile.regions), not what torch.compile did while it was taken; assert this on a live profile"
)
