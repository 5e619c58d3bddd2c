"""What the plugin adds to a test's reports: the profiles of a failing phase, its saved traces,
the kernels no evidence placed; and the line of GPU facts a session that uses the plugin shows.

Plain functions that the hooks in ``hooks.py`` hand off to; no pytest here.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..capture import device_facts, package_versions
from ..errors import BaselineMismatchError, KernelMatchError, KernelProfError, TraceNotKeptError
from ..paths import relative_or_whole, trace_file_name
from ..reports.records import Unplaced
from ..reports.summary import relative_paths
from ..tables import plural, printable

if TYPE_CHECKING:
    from ..api import Capture
    from ..model import KernelProfile
    from ..model.ops import Op, OpTable

SHOWN_PROFILES = 3  # the last profiles of a failing test, whose tables go into its report


# In place of a profile's kernel table that the failure showed whole already.
SHOWN_ABOVE = "(its kernel table is shown above, with the failure)"
# The start of the title of a failed test's report section that holds a profile's table.
PROFILE_SECTION = "kernelprof profile "


def report_sections(
    nodeid: str,
    captures: Sequence[Capture],
    *,
    failed: bool,
    trace_dir: Path | None,
    save_from: int | None,
    shown: Sequence[object] = (),
    advised: Collection[str] = frozenset(),
    rootpath: Path | None = None,
    here: Path | None = None,
    records: str | None = None,
    ops: Sequence[Op] = (),
) -> list[tuple[str, str]]:
    """(title, text) sections for the report of a test's phase (``captures``: the test's profiles
    so far): the kernel tables of its last profiles when the phase ``failed``, and the traces of
    ``captures[save_from:]`` where they are to be saved (None: none in this phase; the caller
    weighs ``--kernelprof-save``), each named by its index in the test.
    ``shown``: the kernel lists whose whole table the failure showed (a failed count's
    explanation, a failed ``one()``): a profile whose kernels those are says so in one line.
    ``advised``: the ``to fix:`` lines the failure showed (a failed count's): a profile's table
    leaves them out, so that each is printed once. ``rootpath``: a trace's path under it is shown
    relative to it, as the job summary shows it. ``here``: the folder pytest was started in, where
    a command the sections print is pasted (:func:`command_path`). ``records``: "copies" where the failure named
    them in a line (``len(prof.copies) == 0``): each table ends with the copies' table and its
    ``to fix:`` lines, as the job summary shows them (a profile's table ends with its syncs).
    ``ops``: the ``Op`` values a failed assertion named in a line (``ops["aten::mm"].count == 2``):
    the table of the profile that holds them ends with its op table, their rows marked, as the job
    summary shows it (:func:`op_lines`)."""
    sections = []
    if failed:
        first = max(1, len(captures) - SHOWN_PROFILES + 1)
        for number, capture in enumerate(captures[-SHOWN_PROFILES:], start=first):
            prof = capture.profile
            above = any(prof.call.kernels is kernels for kernels in shown)
            heading, marked = op_lines(prof, ops) if ops else ("", [])
            # A CPU profile's section is its op table: where the marked one follows, not twice (a trial).
            text = prof.table(kernels=SHOWN_ABOVE if above else None, ops=not marked)
            if records == "copies":
                text += _copies(prof, text)
            if marked:
                text += "".join(f"\n{line}" for line in [f"{heading}:", *marked])
            if advised:
                text = "\n".join(line for line in text.splitlines() if line not in advised)
            if rootpath is not None:
                head, newline, rest = text.partition("\n")
                text = relative_paths(head, rootpath) + newline + rest
            text += medians_pointer(capture, here, rootpath)
            sections.append((f"{PROFILE_SECTION}{number} of {len(captures)}", text))
    if trace_dir is not None and save_from is not None:
        lines = save_traces(trace_dir, nodeid, captures[save_from:], start=save_from)
        sections.append(("kernelprof traces", "\n".join(lines)))
    return sections


def medians_pointer(capture: Capture, here: Path | None = None, rootpath: Path | None = None) -> str:
    """The last line of the section of a profile read from a trace file, of several calls:
    ``kernelprof show --medians PATH prints this table``. Plain ``show`` gives the fastest call's
    own times (``call 1 us``) with this table's medians beside them (``median us``): a trial read
    the two as one, not knowing ``--medians``. Empty for a live profile, whose trace the
    ``kernelprof traces`` section names where it was saved."""
    from ..api.captures import TraceCapture

    prof = capture.profile
    if not isinstance(capture, TraceCapture) or len(prof.calls) < 2 or not prof.has_device_activity or prof.varied:
        return ""
    shown = printable(shlex.quote(command_path(capture.path, here, rootpath)))
    # Both commands: the plain one, run first to check a failure's figure, gave other times (a trial).
    plain = f"plain show: call {prof.fastest_call.index}'s own times beside them"
    return f"\nkernelprof show --medians {shown} prints this table ({plain})"


def command_path(path: str, here: Path | None = None, rootpath: Path | None = None) -> str:
    """``path`` (absolute) as a command pasted in ``here`` (the folder pytest was started in; None:
    the working folder) reads it: relative to ``here`` where the file is under it or under the
    rootdir (``../data/x.json.gz`` from ``tests``), else whole. Not relative to the rootdir, as the
    table's head names the trace: run from ``tests``, ``data/x.json.gz`` named the rootdir's
    ``data`` and the pasted command read ``tests/data`` (a trial)."""
    here = Path.cwd() if here is None else here
    if not any(base is not None and Path(path).is_relative_to(base) for base in (here, rootpath)):
        return path
    return relative_or_whole(path, here)


def _copies(prof: KernelProfile, text: str) -> str:
    """The copies' table of ``prof`` and the ``to fix:`` lines that ``text`` (its table, whose
    syncs' fixes may say them) does not say already, to follow it."""
    try:
        copies = prof.copies
    except KernelProfError:  # no GPU activity: the table above says so
        return ""
    said = set(text.splitlines())
    fixes = [line for line in copies.fix_lines() if line not in said]
    count = plural(len(copies), "copy")
    return "\n" + "\n".join([f"{count} per call:", copies.table(), *fixes])


# Before the rows of an op table that a failed assertion named (the kernel table marks with "*" too).
OP_MARK = "* "


def op_lines(prof: KernelProfile, ops: Sequence[Op]) -> tuple[str, list[str]]:
    """What ``prof``'s op table says of ``ops``, the ``Op`` values a failed assertion named
    (pytest shows an op as its one-line repr): the words that head it (whose ops they are:
    "the ops of the 3 calls", "the ops of call 1") and the table of the call whose ops they are, their rows marked
    ``*``, then each one's kernels. No lines where none of ``ops`` is ``prof``'s."""
    for table, whose in _op_tables(prof):
        try:
            names = table.names
            marked = [name for name in names if any(table[name] is op for op in ops)]
        except KernelProfError:
            continue
        if not marked:
            continue
        # A row a line (a name is shown printable), the header first and the note on the times last.
        text = table.table().splitlines()
        rows, note = text[: len(names) + 1], text[len(names) + 1 :]
        lines = [(OP_MARK if i and names[i - 1] in marked else " " * len(OP_MARK)) + row for i, row in enumerate(rows)]
        lines += note
        for name in marked:
            kernels = table[name].kernels
            if kernels.measured and len(kernels):
                lines += [f"{printable(name)}'s kernels:", *kernels.table().splitlines()]
        return f"{whose}, {OP_MARK.strip()} the op{'s' if len(marked) > 1 else ''} the assertion named", lines
    return "", []


def op_tables(profiles: Sequence[KernelProfile], ops: Sequence[Op]) -> list[str]:
    """The op table that holds ``ops`` (a failed assertion's ``Op`` values, which pytest shows as
    one line each: ``where 3 = Op('aten::mm', count=3, ...).count``), their rows marked, and their
    kernels, under the title of the profile whose they are; as the terminal's profile section ends."""
    lines: list[str] = []
    for number, prof in enumerate(profiles, 1):
        heading, table = op_lines(prof, ops)
        if table:
            lines += [*([""] if lines else []), f"{PROFILE_SECTION}{number} of {len(profiles)}, {heading}:", *table]
    return lines


def _op_tables(prof: KernelProfile) -> list[tuple[OpTable, str]]:
    """The op tables an ``Op`` of ``prof`` may come from, with what heads each: the profile's own
    (its representative call's, each op's times its median over the calls) and each call's."""
    tables = [prof.call.ops, *(call.ops for call in prof.calls if len(prof.calls) > 1)]
    return [(table, table.heading) for table in tables]


def tables_shown(error: BaseException | None, tabled: Sequence[tuple[Sequence[str], object]]) -> list[object]:
    """The kernel lists whose whole table a test's failure (``error``) showed: that of a failed
    ``one()``, and those of the explanations (``tabled``: the lines pytest was given, the list)
    of comparisons the failed assertion's message holds (one that failed inside ``pytest.raises``
    is not in it)."""
    shown = []
    if isinstance(error, KernelMatchError | BaselineMismatchError) and error.kernels is not None:
        shown.append(error.kernels)
    if tabled and isinstance(error, AssertionError):
        from ..model.explain import restore

        message = str(error)
        shown += [kernels for lines, kernels in tabled if restore(message, lines, lines) is not None]
    return shown


def advice_shown(
    error: BaseException | None, explained: Sequence[tuple[Sequence[str], Sequence[str]]]
) -> frozenset[str]:
    """The ``to fix:`` lines of the explanations (``explained``: the lines pytest was given,
    the whole) that a test's failed assertion (``error``) showed, its message or its
    'kernelprof assertion' section: a failed ``syncs.count(...) == 0`` says what would remove
    the syncs it counted, and the profile's table under it need not say it again."""
    if not explained or not isinstance(error, AssertionError):
        return frozenset()
    from ..model.explain import restore
    from ..model.records import FIX_PREFIX

    message = str(error)
    return frozenset(
        line
        for shown, whole in explained
        if restore(message, shown, shown) is not None
        for line in whole
        if line.startswith(FIX_PREFIX)
    )


def save_traces(directory: Path, nodeid: str, captures: Sequence[Capture], *, start: int = 0) -> list[str]:
    """Write each capture's trace, named by its index in the test (counted from ``start``); one
    line per file, saying where it is or why it is not: the path shown as any name is (a folder
    named with a newline or ``::`` starts no line), and the command to show it quoted for the
    shell, to be pasted whole."""
    written = []
    for index, capture in enumerate(captures, start=start):
        path = directory / trace_file_name(nodeid, index)
        try:
            capture.export_trace(path)
        except (OSError, TraceNotKeptError) as exc:
            written.append(printable(f"{path}: not written ({exc})"))
        else:
            written.append(f"{printable(str(path))}  (kernelprof show {printable(shlex.quote(str(path)))})")
    return written


def unplaced_kernels(captures: Sequence[Capture]) -> list[Unplaced]:
    """Each distinct kernel name of the profiles that no evidence placed, with the op that first
    launched it and how many kernels of that name the profiles hold."""
    found: dict[str, Unplaced] = {}
    for capture in captures:
        prof = capture.profile
        if not prof.has_device_activity:
            continue
        for kernel in (k for call in prof.calls for k in call.kernels) if prof.varied else prof.call.kernels:
            if kernel.unplaced:
                seen = found.get(kernel.name) or Unplaced(kernel.name, kernel.op or "", 0)
                found[kernel.name] = Unplaced(seen.name, seen.op, seen.count + 1)
    return list(found.values())


def device_line(require_gpu: bool) -> str:
    """``kernelprof: NVIDIA H200 (sm90), CUDA 12.8, torch ..., triton ...``: imports torch and
    asks CUDA, so it is made only for sessions that have tests that use the plugin."""
    versions = ", ".join(
        f"{dist} {version or 'not installed'}" for dist, version in package_versions("torch", "triton").items()
    )
    device, arch = device_facts()
    if device is None:
        mode = "error in setup (--kernelprof-require-gpu)" if require_gpu else "skip"
        return f"kernelprof: no CUDA GPU, gpu tests {mode}; {versions}"
    import torch

    return f"kernelprof: {device} ({arch}), CUDA {torch.version.cuda}, {versions}"
