"""The figures of each profile a test took, as JUnit XML properties (``--junitxml``).

A stable interface: dashboards that read the XML trend these names. The times are written
with fixed decimals, one for microseconds and three for the fraction (``0.920``, never
``0.92``), the counts as integers. Each profile a test takes adds one property per figure it
can tell; a figure it cannot tell (anything on the GPU for a CPU-only profile, bytes or graph
breaks for a loaded trace) is left out, never written as 0. The first profile of a test uses
the names below; its second profile ``kernelprof.2.<figure>``, and so on, so that a profile
added to a test renames none before it. ``kernelprof.profiles`` counts the profiles of the test. Figures are per
profiled call, all of one call: ``prof.fastest_call``, the fastest call by host span, as
``KernelProfile`` reports them (so ``gpu_work_us`` is never above ``kernel_us`` plus the
call's memory-op time, nor ``gpu_busy_us`` above ``gpu_work_us``).

=========================== ============================================================
``kernelprof.profiles``     profiles the test took (its call phase)
``kernelprof.device``       the card the profile ran on, its arch after it (``NVIDIA H200 (sm90)``), where it names one
``kernelprof.kernels``      kernels per call (``len(prof.kernels)``)
``kernelprof.launches``     kernel launch calls per call (a graph launch counts one)
``kernelprof.kernel_us``    GPU time in kernels of the call, microseconds (one decimal)
``kernelprof.wall_us``      host span of the call, microseconds: what the busy time and idle share are of
``kernelprof.gpu_busy_us``  GPU busy time per call within its host span (kernels and memory ops), microseconds
``kernelprof.gpu_idle_fraction`` share of the host span with no GPU work, ``1 - gpu_busy_us / wall_us`` (3 decimals)
``kernelprof.gpu_work_us``  GPU busy time per call wherever it ran: with the work that ran on after the host
                            returned, so never below ``kernel_us`` unless kernels overlapped
``kernelprof.syncs``        host syncs per call
``kernelprof.dtoh_copies``  device-to-host copies per call
``kernelprof.peak_bytes``   allocator peak above the start of a call (live GPU profiles)
``kernelprof.retained_bytes`` bytes still allocated after a call (live GPU profiles)
``kernelprof.graph_breaks`` torch.compile graph breaks while profiling (live profiles)
``kernelprof.recompiles``   torch.compile recompiles while profiling (live profiles)
=========================== ============================================================

A test's properties are bounded (:func:`bounded`): the figures of its first ``MAX_PROFILES``
profiles, ``MAX_PROPERTIES`` properties in all (``kernelprof.properties_left_out`` counts the rest,
what ``pytest_kernelprof_junit_properties`` added included: of an implementation that returned an
iterator, which is read no further than the bound, 1 for all it had past it), each name and text
value cut to ``MAX_NAME`` and ``MAX_VALUE`` characters.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence

from ..checks.metrics import read_metric
from ..errors import CannotTellError, NoDeviceActivityError
from ..model import CallProfile, KernelProfile
from ..tables import clip, plural

PREFIX = "kernelprof."
PROFILES = f"{PREFIX}profiles"
# Bounds on what one test adds to the XML, whatever its loop or a hook's implementation adds: the
# figures of this many profiles, this many properties, and names and values of this many characters.
MAX_PROFILES = 100
MAX_PROPERTIES = 2_000
MAX_NAME = 200
MAX_VALUE = 2_000
LEFT_OUT = f"{PREFIX}properties_left_out"
# The card, first among a profile's properties: an H100's figures and an H200's looked alike on a
# dashboard (a trial). Text, not a figure: written only where the profile names a device.
DEVICE = "device"


# Of one call, the fastest call by host span, so that no two of them contradict each other:
# what every text output leads with (``host 223.3us, GPU busy 139.4us within it (idle 38%)``).
_TIMES: dict[str, Callable[[CallProfile], float]] = {
    "kernel_us": lambda call: round(call.kernels.total_us, 1),
    "wall_us": lambda call: round(call.wall_us, 1),
    "gpu_busy_us": lambda call: round(call.gpu_busy_us, 1),
    "gpu_idle_fraction": lambda call: round(call.gpu_idle_fraction, 3),
    "gpu_work_us": lambda call: round(call.gpu_work_us, 1),
}

# The times' decimals, written as text with this many (``0.920``, ``34.0``): str() of the rounded float
# dropped a trailing zero (a trial read ``0.92`` in one test and ``0.657`` in the next).
_DECIMALS = {"gpu_idle_fraction": 3}  # the others, microseconds: 1

# In the order they are written: the times here, the others metrics of checks/metrics.py by the same name.
FIGURES = (
    "kernels",
    "launches",
    "kernel_us",
    "wall_us",
    "gpu_busy_us",
    "gpu_idle_fraction",
    "gpu_work_us",
    "syncs",
    "dtoh_copies",
    "peak_bytes",
    "retained_bytes",
    "graph_breaks",
    "recompiles",
)


def figures(prof: KernelProfile) -> dict[str, int | float]:
    """The figures ``prof`` can tell, by name (without the prefix)."""
    found: dict[str, int | float] = {}
    # Read once: each time is of this call (a profile without GPU activity has none to tell).
    call = prof.fastest_call if prof.has_device_activity else None
    for name in FIGURES:
        if name in _TIMES:
            if call is not None:
                with contextlib.suppress(NoDeviceActivityError, CannotTellError):
                    found[name] = _TIMES[name](call)
            continue
        value = read_metric(prof, name)
        if value is not None:
            found[name] = value
    return found


def properties(profiles: Sequence[KernelProfile]) -> list[tuple[str, object]]:
    """``(name, value)`` pairs for ``report.user_properties`` (what ``record_property`` adds): of
    the first ``MAX_PROFILES`` profiles (``kernelprof.profiles`` counts them all)."""
    if not profiles:
        return []
    pairs: list[tuple[str, object]] = [(PROFILES, len(profiles))]
    for number, prof in enumerate(profiles[:MAX_PROFILES], start=1):
        prefix = PREFIX if number == 1 else f"{PREFIX}{number}."
        if prof.device_label:
            pairs.append((f"{prefix}{DEVICE}", prof.device_label))
        pairs.extend((prefix + name, _written(name, value)) for name, value in figures(prof).items())
    return pairs


def _written(name: str, value: int | float) -> int | float | str:
    """A figure as the XML has it: a time as text with its fixed decimals, a count as it is."""
    return f"{value:.{_DECIMALS.get(name, 1)}f}" if name in _TIMES else value


def bounded(pairs: Sequence[tuple[str, object]], more: int = 0) -> list[tuple[str, object]]:
    """``pairs`` within the bounds above: the first ``MAX_PROPERTIES`` (then ``kernelprof.properties_left_out``
    counts the rest, and ``more`` that were not gathered), a name or a value's text past its bound cut, with
    ``...`` (a number is kept as it is)."""
    kept: list[tuple[str, object]] = []
    for name, value in pairs[:MAX_PROPERTIES]:
        shown = str(name)
        if len(shown) > MAX_NAME:
            shown = shown[:MAX_NAME] + "..."
        if not isinstance(value, int | float):
            text = str(value)
            value = text[:MAX_VALUE] + "..." if len(text) > MAX_VALUE else text
        kept.append((shown, value))
    left_out = max(len(pairs) - MAX_PROPERTIES, 0) + more
    if left_out:
        kept.append((LEFT_OUT, left_out))
    return kept


# pytest (9.x) cuts a failure's ``message`` attribute longer than 500 characters to its first
# lines that fit: a baseline's diff lost its last line, the update command.
MESSAGE_CHARS = 499


def short_message(message: str, most: int = MESSAGE_CHARS) -> str:
    """A failure's JUnit ``message`` within ``most`` characters, where it is longer and has lines
    past its first that say what to do (``summary.acting_lines``: a baseline's update command,
    ``to fix: ...``): its first lines, those lines, then how many lines the element's text has
    besides: a diff's lines (from its ``--- `` line) are all there. An acting line is kept whole
    or left out (a command or a fix cut in its middle cannot be followed), and a table is kept
    with a row at least or not at all (its header alone reads as an empty table). Otherwise the
    message as it is, for pytest to cut as it does, unless pytest's cut would end at a table's
    header: then its first lines that fit, without that header."""
    from .summary import acting_lines

    lines = message.splitlines()
    if len(message) <= most or len(lines) < 2:
        return message
    picked = acting_lines(lines, 1, len(lines))
    actions: list[str] = []
    for index in picked:  # half the room at most, the lines it ends with first to go
        if sum(len(kept) + 1 for kept in actions) + len(lines[index]) + 1 <= most // 2:
            actions.append(lines[index])
    if not actions and not _ends_at_header(_pytests_cut(lines, most + 1)):
        return message
    pointer = f"(the rest, {len(lines)} lines, is in this failure's text)"
    room = most - sum(len(line) + 1 for line in actions) - len(pointer)
    head = [clip(lines[0], room - 1)]
    room -= len(head[0]) + 1
    for line in lines[1 : picked[0] if picked else len(lines)]:
        # A diff (``--- baseline``) comes whole or not at all: its first kernels alone read as all of it.
        if len(line) + 1 > room or line.startswith("--- "):
            break
        head.append(line)
        room -= len(line) + 1
    if _ends_at_header(head + lines[len(head) : len(head) + 1]):
        head.pop()
    pointer = f"(the rest, {plural(len(lines) - len(head) - len(actions), 'line')}, is in this failure's text)"
    return "\n".join([*head, *actions, pointer])


# A table's header and its first row, as tables.render_table writes a table of kernels, copies or
# syncs: its index column first.
_HEADER = re.compile(r"\s*#  \S")
_FIRST_ROW = re.compile(r"\s*0  \S")


def _ends_at_header(lines: Sequence[str]) -> bool:
    """Whether ``lines``, the kept lines and the first line after them, end a table at its header:
    the last kept line is a header, and the line after it, left out, its first row."""
    return len(lines) >= 3 and bool(_HEADER.match(lines[-2])) and bool(_FIRST_ROW.match(lines[-1]))


def _pytests_cut(lines: Sequence[str], budget: int) -> list[str]:
    """The lines pytest keeps of a message past its bound (junitxml's whole lines that fit), and
    the first line it leaves out."""
    size = 0
    for count, line in enumerate(lines):
        if count and size + len(line) + 1 > budget:
            return list(lines[: count + 1])
        size += len(line) + 1
    return list(lines)
