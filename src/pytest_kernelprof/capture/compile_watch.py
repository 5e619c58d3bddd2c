"""Watch what torch.compile does while a profile is taken: compiles, graph breaks, recompiles.

Dynamo's state is process-wide and belongs to the user (other compiled functions, other
tests): nothing here resets or reconfigures it. The watch reads differences instead:

- primary: a handler on torch's structured trace log (``torch._logging._internal.trace_log``,
  the log behind ``TORCH_TRACE``/tlparse), attached for the profile only. Each compile
  emits ``dynamo_start`` with its compile id, each graph break a
  ``dynamo_graph_break_reason`` artifact with the reason and the user file:line.
- fallback, where that log is missing: ``torch._dynamo.utils.counters`` before and after
  (frames, and graph-break reasons without a location).
- guard failures (the reasons of recompiles) come from ``torch._dynamo.utils.guard_failures``
  before and after, in both cases.

``torch._dynamo`` is never imported here (3.5 s on a CPU machine): if it is not imported
when a profile starts, nothing compiled can run before it is, and the counters of a
dynamo imported later start at zero.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..health import CompileFacts, GraphBreak, parse_graph_break, parse_recompile_reasons, summarize_reason

WARMUP, PROFILED = "warm-up", "profiled"
STRUCTURED_TRACE = "torch's structured trace (torch._logging)"
COUNTERS = "torch._dynamo.utils.counters (graph breaks without locations)"
_DYNAMO_UTILS = "torch._dynamo.utils"


def _trace_log() -> logging.Logger | None:
    """torch's structured trace logger, where this torch has one (probed: private)."""
    internal = sys.modules.get("torch._logging._internal")
    if internal is None:
        try:
            import torch._logging._internal as internal
        except ImportError:
            return None
    log = getattr(internal, "trace_log", None)
    return log if isinstance(log, logging.Logger) else None


def keep_trace_log_private() -> None:
    """Take pytest's log-capture handlers off torch's structured trace log.

    pytest puts its capture handlers on the root logger and on every logger that does not
    propagate, torch's trace log among them. Each compile in a test then writes dozens of
    empty ``DEBUG torch.__trace`` records into the test's "Captured log" (and torch builds
    records that it builds for no one otherwise: it emits only where the log has handlers).
    A handler on the root logger is one a trace-log record was never meant to reach.
    Where torch is not imported there is no such log, and nothing is imported to find out."""
    internal = sys.modules.get("torch._logging._internal")
    log = getattr(internal, "trace_log", None)
    if not isinstance(log, logging.Logger):
        return
    on_root = set(logging.getLogger().handlers)
    for handler in [handler for handler in log.handlers if handler in on_root]:
        log.removeHandler(handler)


def _dynamo_utils() -> Any | None:
    """``torch._dynamo.utils`` if something already imported it; never imported here."""
    return sys.modules.get(_DYNAMO_UTILS)


class _StructuredRecords(logging.Handler):
    """Keeps the structured-trace records that tell compiles, graph breaks and recompiles."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.phase = WARMUP
        self.compiles: dict[str, str] = {}  # compile id -> phase it started in
        self.breaks: list[GraphBreak] = []
        self.recompile_reasons: dict[str, list[str]] = {}
        self.failure: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict):
            return
        try:
            frame, attempt = metadata.get("frame_id"), metadata.get("frame_compile_id")
            compile_id = f"{frame}/{attempt}" if frame is not None and attempt is not None else None
            if "dynamo_start" in metadata and compile_id is not None:
                self.compiles.setdefault(compile_id, self.phase)
            artifact = metadata.get("artifact")
            if not isinstance(artifact, dict):
                return
            payload = getattr(record, "payload", None)
            if not isinstance(payload, str):
                return
            if artifact.get("name") == "dynamo_graph_break_reason":
                self.breaks.append(parse_graph_break(payload, compile_id))
            elif artifact.get("name") == "recompile_reasons" and compile_id is not None:
                self.recompile_reasons[compile_id] = parse_recompile_reasons(payload)
        except Exception as exc:  # noqa: BLE001 - a handler must never break the user's compile
            self.failure = f"{type(exc).__name__}: {exc}"


_GROUPS = ("frames", "graph_break")
# What a process without Dynamo has counted; shared, so never modified.
_NOTHING_COUNTED: dict[str, Counter[str]] = {group: Counter() for group in _GROUPS}


def _counter_snapshot(utils: Any | None) -> dict[str, Counter[str]] | None:
    if utils is None:
        return _NOTHING_COUNTED
    counters = getattr(utils, "counters", None)
    if not isinstance(counters, dict):
        return None
    return {group: Counter({str(k): int(v) for k, v in counters.get(group, {}).items()}) for group in _GROUPS}


def _guard_failure_snapshot(utils: Any | None) -> dict[int, tuple[str, int]] | None:
    failures = getattr(utils, "guard_failures", None) if utils is not None else {}
    if not isinstance(failures, dict):
        return None
    return {id(code): (getattr(code, "co_name", "?"), len(reasons)) for code, reasons in failures.items()}


class CompileWatch:
    """``with watch_compiles() as watch:`` around warm-up and profiled calls;
    ``watch.profiled()`` where the profiled calls begin; ``watch.facts()`` after the block."""

    def __init__(self) -> None:
        self._log = _trace_log()
        self._handler = _StructuredRecords() if self._log is not None else None
        self._saved_level: int | None = None
        self._saved_propagate = True
        utils = _dynamo_utils()
        self._counters_start = _counter_snapshot(utils)
        self._counters_profiled = self._counters_start
        self._guards_start = _guard_failure_snapshot(utils)
        self._guards_profiled = self._guards_start

    def _attach(self) -> None:
        if self._log is None or self._handler is None:
            return
        self._log.addHandler(self._handler)
        # torch means this log never to propagate (its logging set-up says so); where that
        # has not run, the records this handler enables must not reach the user's root handlers.
        self._saved_propagate = self._log.propagate
        self._log.propagate = False
        if self._log.getEffectiveLevel() > logging.DEBUG:
            # Older torch checks the level before emitting; 2.6+ checks for handlers.
            self._saved_level = self._log.level
            self._log.setLevel(logging.DEBUG)

    def _detach(self) -> None:
        if self._log is None or self._handler is None:
            return
        self._log.removeHandler(self._handler)
        self._log.propagate = self._saved_propagate
        if self._saved_level is not None:
            self._log.setLevel(self._saved_level)

    def profiled(self) -> None:
        """Mark the end of the warm-up: compiles from here on are recompiles."""
        if self._handler is not None:
            self._handler.phase = PROFILED
        utils = _dynamo_utils()
        self._counters_profiled = _counter_snapshot(utils)
        self._guards_profiled = _guard_failure_snapshot(utils)

    def facts(self) -> CompileFacts:
        """What was compiled from the start of the block until now (read it after the block)."""
        utils = _dynamo_utils()
        guard_reasons = _new_guard_failures(utils, self._guards_profiled)
        handler = self._handler
        if handler is not None and handler.failure is None:
            profiled = [cid for cid, phase in handler.compiles.items() if phase == PROFILED]
            reasons: list[str] = []
            for cid in profiled:
                if cid in handler.recompile_reasons:
                    reasons.extend(handler.recompile_reasons[cid])
                elif cid.endswith("/0"):
                    reasons.append(f"{cid}: first compile of this frame, in a profiled call")
            for reason in guard_reasons or ():
                if reason not in reasons:
                    reasons.append(reason)
            return CompileFacts(
                source=STRUCTURED_TRACE,
                frames=len(handler.compiles),
                graph_breaks=_distinct(handler.breaks),
                recompiles=len(profiled),
                recompile_reasons=tuple(reasons),
                compile_ids=frozenset(handler.compiles),
            )
        end = _counter_snapshot(utils)
        start, middle = self._counters_start, self._counters_profiled
        if end is None or start is None or middle is None:
            why = (
                f"the structured-trace handler failed ({handler.failure})"
                if handler is not None
                else ("this torch has neither torch._logging's structured trace log nor torch._dynamo.utils.counters")
            )
            return CompileFacts(source="none", unavailable=f"cannot tell what torch.compile did: {why}")
        breaks = end["graph_break"] - start["graph_break"]
        return CompileFacts(
            source=COUNTERS,
            frames=max(0, end["frames"]["ok"] - start["frames"]["ok"]),
            graph_breaks=tuple(GraphBreak(summarize_reason(reason), detail=reason) for reason in breaks.elements()),
            recompiles=max(0, end["frames"]["ok"] - middle["frames"]["ok"]),
            recompile_reasons=tuple(guard_reasons or ()),
        )


def _new_guard_failures(utils: Any | None, before: dict[int, tuple[str, int]] | None) -> list[str] | None:
    failures = getattr(utils, "guard_failures", None) if utils is not None else None
    if not isinstance(failures, dict) or before is None:
        return None
    new: list[str] = []
    for code, reasons in failures.items():
        _, seen = before.get(id(code), ("", 0))
        new.extend(str(reason) for reason in list(reasons)[seen:])
    return new


def _distinct(breaks: list[GraphBreak]) -> tuple[GraphBreak, ...]:
    """Each break once: a recompile of a frame meets its breaks again."""
    seen: set[tuple[str | None, int | None, str]] = set()
    distinct = []
    for item in breaks:
        key = (item.file, item.line, item.reason)
        if key not in seen:
            seen.add(key)
            distinct.append(item)
    return tuple(distinct)


@contextmanager
def watch_compiles() -> Iterator[CompileWatch]:
    """Watch compiles in the block; the handler is removed on every path out."""
    watch = CompileWatch()
    watch._attach()
    try:
        yield watch
    finally:
        watch._detach()
