"""``kernelprof show TRACE``: a trace's kernel table, host figures and op tree, one call or each."""

from __future__ import annotations

import os
import re
from collections import Counter

from ..assemble.optree import is_inductors_range
from ..decode import BUILT_IN, Decoder
from ..errors import KernelProfError
from ..model import CallProfile, Kernel, KernelProfile, OpTable
from ..model.gpu_time import call_line, inductor_dtype_note, memory_ops_line
from ..model.kernel_text import kernel_table
from ..model.profiles import fastest_call_words
from ..model.records import advice, copy_table, sync_table
from ..tables import format_us, plural, printable, render_table
from .files import CPU_ONLY, head, load, readable, shown


def _counts(counter: Counter[str] | dict[str, int]) -> str:
    return ", ".join(f"{printable(name)} x{n}" for name, n in sorted(counter.items())) or "none"


# The most rows the op tree shows: a row per path of op names, so at most one per op of the call,
# which a long compiled step has by the hundred thousand.
OP_TREE_ROWS = 10_000
# After the name of a range that Inductor opens itself (see ``is_inductors_range``).
INDUCTORS_RANGE = "  (Inductor's range)"
INDUCTORS_NOTE = (
    "(Inductor's range: one Inductor opens itself; Kernel.op skips it, the timeline's op table leaves it out)"
)
# The tree's figures are each row's own: its op's occurrences under the ops above it. They were
# each op's totals over the call, repeated at every place the op appeared (aten::as_strided's two
# calls under aten::transpose and again under aten::expand, aten::fill_ 91.6us under an aten::zero_
# of 84.3us), which an indented row reads as its own. The totals by name stay where the API and
# the page give them (prof.calls[i].ops[name], the timeline page's flat op table; prof.ops[name] holds
# medians over the calls, which a trial took for this call's totals); in the tree they would be
# one more pair of columns that repeat at every place, the reading the trial got wrong.
OP_TREE_HEADERS = ("count here", "cpu us here", "device us here")
# One short line: a 430-character footer read as a wall (a trial); the rest of the reading (medians
# over the calls in prof.ops, the timeline's op table) is docs/traces.md's. No pointer to docs/
# here: a wheel has none.
_DEVICE_TIME = "device us: kernels, memcpys, memsets; "
OP_TREE_NOTE = (
    f"(a row: its op's runs under the ops above it, children included; {_DEVICE_TIME}"
    "an op's totals over the call: prof.calls[i].ops[name])"
)


# Inductor's range around a compiled graph's call, its hash shortened: 52 characters of it made the
# op column over 100 wide (a trial), and the hash changes with every torch (diff --ops matches
# without it). The whole name is in the trace, and in prof.ops.
_GRAPH_HASH = re.compile(r"^(## Call CompiledFxGraph \w{8})\w+( ##)$")


def shown_op(name: str) -> str:
    """An op's name as the op trees show it: a compiled graph's hash cut to 8 characters."""
    return _GRAPH_HASH.sub(r"\1...\2", name)


def inductors_ranges(ops: OpTable) -> set[str]:
    """The names of the call's ops that are ranges Inductor opens itself, which the op tree marks."""
    return {name for name in ops if is_inductors_range(ops[name])}


def op_tree(ops: OpTable) -> str:
    """The op tree of one call (``OpTable.tree()``), depth first from its top-level ops, each row
    the figures of its own occurrences. At most ``OP_TREE_ROWS`` rows. A loop, not a recursion: a
    trace nests ops thousands deep."""
    rows: list[tuple[str, str, str, str]] = []
    stack = [(root, 0) for root in reversed(ops.tree())]
    inductors = inductors_ranges(ops)
    cut = False
    while stack:
        if len(rows) == OP_TREE_ROWS:
            cut = True
            break
        node, depth = stack.pop()
        device = "-" if node.device_time_us is None else format_us(node.device_time_us)
        shown_name = "  " * depth + shown_op(node.name) + (INDUCTORS_RANGE if node.name in inductors else "")
        rows.append((shown_name, str(node.count), format_us(node.cpu_time_us), device))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    table = render_table(("op", *OP_TREE_HEADERS), rows, right=(1, 2, 3))
    if cut:
        table += f"\n... the op tree goes on past {OP_TREE_ROWS:,} rows"
    note = OP_TREE_NOTE
    if all(row[3] == "-" for row in rows):  # no GPU activity: no device time to explain (a trial)
        note = note.replace(_DEVICE_TIME, "device us: none recorded (-); ")
    if any(INDUCTORS_RANGE in row[0] for row in rows):
        note += f"\n{INDUCTORS_NOTE}"
    return f"{table}\n{note}"


def host_section(view: CallProfile, said: set[str] | None = None) -> str:
    """Launches, kernel time, host span and GPU idle share, then the host syncs and copies of a
    call: in the words of the profile's own line (``KernelProfile.host_summary``, which a failed
    assertion prints), so that a figure reads the same wherever it is shown; the tables' time
    columns name the call, as its kernel table's does (``call 1 host us``, ``call 1 gpu us``).
    Then the ``to fix:`` lines of the syncs and copies, as the profile's table ends with them
    (``advice``): a trial found them under ``--medians`` only. ``said``: the ``to fix:`` lines
    shown already (under ``--calls``, an earlier call's), left out; those shown here are added."""
    line = call_line(view)
    syncs, copies = view.syncs, view.copies
    lines = [f"{line}, {plural(len(syncs), 'host sync')}:" if syncs else f"{line}, no host syncs"]
    if syncs:
        lines.append(sync_table(list(syncs), call=view.index))
    lines.append(f"{plural(len(copies), 'copy')}:" if copies else "no copies")
    if copies:
        lines.append(copy_table(list(copies), call=view.index))
    fixes = [fix for fix in advice(syncs, copies) if said is None or fix not in said]
    lines.extend(fixes)
    if said is not None:
        said.update(fixes)
    return "\n".join(lines)


def _missing_folder(path: str) -> str | None:
    """The outermost folder on the way to ``path`` that does not exist yet, named as ``path``
    is (relative where it is), or None."""
    missing = None
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        missing, folder = folder, os.path.dirname(folder)
    if missing is None or os.path.isabs(path):
        return missing
    return os.path.relpath(missing)


def show(
    path: str, calls: bool, ops: bool, html: str | None = None, decoder: Decoder = BUILT_IN, medians: bool = False
) -> int:
    with readable(path) as copy:
        return _show(copy, shown(path), calls, ops, html, decoder, medians)


def _say_how_to_teach(kernels: list[Kernel], what: str) -> None:
    """``what``, then the ``--kernels`` lines that would teach the decoder what it lacks of them."""
    if not kernels:
        return
    import shlex

    from ..model.unknowns import how_to_teach, teaching_values

    print(f"{what}; teach {'it' if len(kernels) == 1 else 'them'} with --kernels:")
    for line in how_to_teach(kernels)[1:]:  # a glob from a kernel name: quoted for the shell
        print(f"  --kernels {shlex.quote(line.strip())}")
    print(f"  ({teaching_values(kernels)})")


def _say_inductor_dtypes(prof: KernelProfile) -> None:
    if prof.has_device_activity and (note := inductor_dtype_note(list(prof.call.kernels))):
        print(note)


def _show(
    path: str, name: str, calls: bool, ops: bool, html: str | None, decoder: Decoder, medians: bool = False
) -> int:
    if medians and calls:
        raise KernelProfError(
            "--medians with --calls: --medians shows each kernel's median over the calls, --calls each call's "
            "own times; give one"
        )
    if html is not None and not html.strip():  # argparse passes `--html ""` on: no page, not a word
        raise KernelProfError(f"--html {html!r}: an empty file name; name the page's file (--html timeline.html)")
    if html and os.path.exists(html) and os.path.exists(path) and os.path.samefile(html, path):  # or a link to it
        raise KernelProfError(f"--html {html}: that is the trace being read; name another file for the page")
    if html and os.path.isdir(html):  # said before the report, not after it (the page is written last)
        raise KernelProfError(f"--html {html} is a folder; name a file, such as {os.path.join(html, 'timeline.html')}")
    prof, incomplete = load(path, name, decoder)
    if not medians:  # the profile's table names the trace itself (a trial read two head lines)
        print(head(name, prof, incomplete))
    # One call whole, every figure and table of it its own: the fastest call by host span, whose
    # figures the profile's table and the JUnit properties give too (``prof.fastest_call``).
    fastest = prof.fastest_call
    if medians:
        # The profile's table as a failure shows it (each kernel's median over the calls, "median
        # us"): a trial read 56.5 in a failure and 57.2 here, one call's own, for one kernel.
        print(prof.table())
        if prof.has_device_activity and prof.copies:
            # The copies' table, as plain show prints it (a trial found it there only), after the
            # profile's table as a failure on the copies adds it; its fixes said there already.
            print(f"{plural(len(prof.copies), 'copy')} per call:\n{prof.copies.table()}")
        if ops:
            # The tree holds one call's own times, under a table of medians: a trial read them as one.
            print(f"op tree of call {fastest.index} (numbered from 0), its own times; prof.ops holds each op's median:")
            print(op_tree(fastest.ops))
        _say_inductor_dtypes(prof)
        return _page(prof, path, name, html)
    if not calls and len(prof.calls) > 1:
        print(f"{fastest_call_words(prof)} (--calls shows each):")
    views = prof.calls if calls else (fastest,)
    medians_beside = None
    if not calls and prof.has_device_activity and prof.call.kernels.times is not None:  # not varied, several calls
        # Beside the call's own times, each kernel's median over the calls: the figures of a
        # failure's table (`median us`), which a trial looked for in plain show first and found
        # one call's own there (59.2 in the failure, 60.1 in show, for one kernel).
        medians_beside = [k.duration_us for k in prof.call.kernels]
    said: set[str] = set()
    for view in views:
        if calls:
            print(f"\ncall {view.index}{' (the fastest call by host span)' if view is fastest else ''}:")
        if prof.has_device_activity:
            # The call's own times first: its time in kernels is their sum, which the medians (no
            # one call need have them) would not add up to. Each column says whose times it holds.
            print(kernel_table(list(view.kernels), call=view.index, medians_beside=medians_beside))
            print(memory_ops_line(view, call=view.index))
            print(host_section(view, said))
        else:
            # The host span is measured without a GPU: a CPU trace's one figure (a trial found none shown).
            print(
                f"host span {format_us(view.wall_us)}us; {CPU_ONLY}"
                + ("" if ops else "; --ops shows its CPU side, the op tree")
            )
        if view.runtime.measured:
            print(f"runtime calls: {_counts(dict(view.runtime))}")
        if ops:
            print(op_tree(view.ops))
    if prof.has_device_activity:
        kernels = list(prof.call.kernels)
        unplaced = list({k.name: k for k in kernels if k.unplaced}.values())
        _say_how_to_teach(unplaced, f"{plural(len(unplaced), 'kernel name')} no evidence could place (kind 'other')")
        # A kernel placed but of no known dtype, other than Inductor's (whose line says why): a
        # trial met the cuDNN attention kernel's "?" with no word on it in show.
        undated = [k for k in kernels if not k.unplaced and k.dtype is None and k.family != "inductor"]
        undated = list({k.name: k for k in undated}.values())
        _say_how_to_teach(undated, f"dtype ?: no evidence gave the dtype of {plural(len(undated), 'kernel name')}")
    _say_inductor_dtypes(prof)
    return _page(prof, path, name, html)


def _page(prof: KernelProfile, path: str, name: str, html: str | None) -> int:
    """Write the timeline page where ``--html`` asked for one, and say where."""
    if html:
        from ..reports.timeline import write_page

        made = _missing_folder(html)
        # Named as show names it: a trace read from a pipe is <stdin>, not the temporary copy it was
        # read from, which is gone when the command ends.
        write_page(html, prof, title=name, trace=path, shown=lambda _source: name)
        # Made as the plugin's writers make theirs (trace dir, job summary), and said, so that a
        # mistyped folder does not go unseen.
        print(f"timeline page: {html}" + (f" (made the folder {made})" if made else ""))
    return 0
