"""``kernelprof show TRACE`` and ``kernelprof diff A B``: read profiles without re-running them.
A trace named ``-`` is read from standard input.

Exit status: 0 success (and, for diff, the kernel sequences are the same), 1 the profiles
differ, 2 a usage or file error (a trace that lost every kernel record among them), reported
in one line without a traceback; 141 without a word when the reader of the output closed it
early (``| head``), as for a process that SIGPIPE ended.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence

from ..assemble.optree import is_inductors_range
from ..checks.diff import diff_kernels, render_diff, summary_lines, time_change, unknown_dtype_note, unplaced_lines
from ..decode import BUILT_IN, Decoder
from ..errors import KernelProfError
from ..model import CallProfile, KernelProfile, OpTable
from ..model.gpu_time import gpu_time_line
from ..model.kernel_text import kernel_table
from ..model.records import copy_table, sync_table
from ..tables import format_share, format_us, plural, printable, render_table
from .files import STDIN, load, readable, shown


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelprof", description="Read torch.profiler Chrome traces as kernel tables."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="the kernel table of a trace")
    show.add_argument("trace", help="a Chrome trace from torch.profiler (.json or .json.gz); - reads standard input")
    show.add_argument("--calls", action="store_true", help="one table per profiled call")
    show.add_argument(
        "--ops",
        action="store_true",
        help="the CPU op tree, each row the CPU and device time of its op under the ops above it",
    )
    show.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write a self-contained timeline page of the trace to OUT.html (its folder made where missing)",
    )
    kernels_help = (
        "what kernels are, for names the decoder cannot place, as the ini's kernelprof_kernels lines: "
        "'GLOB: kind=... family=...'; may be given again"
    )
    show.add_argument("--kernels", action="append", default=[], metavar="LINE", help=kernels_help)
    diff = sub.add_parser("diff", help="what changed between two traces; exit 1 when the kernels differ")
    diff.add_argument("--kernels", action="append", default=[], metavar="LINE", help=kernels_help)
    diff.add_argument("a", help="the trace before (- reads standard input)")
    diff.add_argument("b", help="the trace after (- reads standard input)")
    diff.add_argument(
        "--by",
        choices=("name", "shape"),
        default="name",
        help="align kernels by name, or by kind/family/layout/fused ops (ignores cuBLAS tile changes); default: name",
    )
    return parser


def _version() -> str:
    try:
        return importlib.metadata.version("pytest-kernelprof")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing it
        return "(not installed)"


# What a shell reports for a process that SIGPIPE ended: 128 + 13.
CLOSED_PIPE = 141


def _head(path: str, prof: KernelProfile, incomplete: str | None) -> str:
    where = f"{prof.device} ({prof.arch})" if prof.device else "no GPU named in the trace"
    varied = f", calls {_varied(incomplete)}" if prof.varied else ""
    return f"{path}: {where}, {plural(len(prof.calls), 'call')}{varied}"


def _varied(incomplete: str | None) -> str:
    """How the calls' kernel sequences differ: as launched, or as recorded where the trace lost
    records (``_load``), which a difference it makes must not be blamed on the workload for."""
    if incomplete is None:
        return "launched different kernel sequences"
    return f"recorded different kernel sequences: {incomplete} (the warning above)"


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
OP_TREE_NOTE = (
    "(each row: its op's occurrences under the ops above it in the call, its children included, so a row never "
    "exceeds the one it is under; device time: its kernels and its memory ops, memcpys and memsets; "
    "an op's totals over this call: prof.calls[i].ops[name] of this call i, and the timeline page's op table; "
    "prof.ops[name] holds each op's median over the calls)"
)


def op_tree(ops: OpTable) -> str:
    """The op tree of one call (``OpTable.tree()``), depth first from its top-level ops, each row
    the figures of its own occurrences. At most ``OP_TREE_ROWS`` rows. A loop, not a recursion: a
    trace nests ops thousands deep."""
    rows: list[tuple[str, str, str, str]] = []
    stack = [(root, 0) for root in reversed(ops.tree())]
    inductors = {name for name in ops if is_inductors_range(ops[name])}
    cut = False
    while stack:
        if len(rows) == OP_TREE_ROWS:
            cut = True
            break
        node, depth = stack.pop()
        device = "-" if node.device_time_us is None else format_us(node.device_time_us)
        shown_name = "  " * depth + node.name + (INDUCTORS_RANGE if node.name in inductors else "")
        rows.append((shown_name, str(node.count), format_us(node.cpu_time_us), device))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    table = render_table(("op", *OP_TREE_HEADERS), rows, right=(1, 2, 3))
    if cut:
        table += f"\n... the op tree goes on past {OP_TREE_ROWS:,} rows"
    note = OP_TREE_NOTE
    if any(INDUCTORS_RANGE in row[0] for row in rows):
        note += f"\n{INDUCTORS_NOTE}"
    return f"{table}\n{note}"


def host_section(view: CallProfile) -> str:
    """Launches, kernel time, host span and GPU idle share, then the host syncs and copies of a
    call: in the words of the profile's own line (``KernelProfile.host_summary``, which a failed
    assertion prints), so that a figure reads the same wherever it is shown; the tables' time
    columns name the call, as its kernel table's does (``call 1 host us``, ``call 1 gpu us``)."""
    graphs = f" ({view.graph_launches} graph)" if view.graph_launches else ""
    launches = f"{view.launches} launch{'' if view.launches == 1 else 'es'}{graphs}"
    line = f"{launches}, {format_us(view.kernels.total_us)}us in kernels, {gpu_time_line(view)}"
    syncs, copies = view.syncs, view.copies
    lines = [f"{line}, {plural(len(syncs), 'host sync')}:" if syncs else f"{line}, no host syncs"]
    if syncs:
        lines.append(sync_table(list(syncs), call=view.index))
    lines.append(f"{plural(len(copies), 'copy')}:" if copies else "no copies")
    if copies:
        lines.append(copy_table(list(copies), call=view.index))
    return "\n".join(lines)


def _median_calls(a: KernelProfile, b: KernelProfile) -> str:
    """Whose kernel time the diff compares: each side's median call, the call ``show`` and the
    JUnit ``kernel_us`` report, so that the three agree."""
    # Calls are numbered from 0, as prof.calls[i]: "call 1 of 3" would read as the first.
    calls = "; ".join(
        f"{side}: call {p.median_call.index}, the median of {len(p.calls)}" for side, p in (("a", a), ("b", b))
    )
    return f"GPU time in kernels, the median call by host span ({calls})"


def _call_times(a: CallProfile, b: CallProfile, spans: str | None = None) -> list[str]:
    """The host span and GPU work of the calls compared, which ``show`` leads with beside the kernel
    time: a compiled step whose kernels got faster can still take the host longer; ``spans``
    (:func:`_call_spans`) between them."""
    idle = f"GPU idle within it {format_share(a.gpu_idle_fraction)} -> {format_share(b.gpu_idle_fraction)}"
    return [
        f"host span, the same calls: {time_change(a.wall_us, b.wall_us)}; {idle}",
        *([spans] if spans else []),
        f"GPU work in all, the same calls: {time_change(a.gpu_work_us, b.gpu_work_us)}",
    ]


def _launches(call: CallProfile) -> str:
    """A call's launches as show counts them: ``2 (1 graph)`` where graph launches are among them."""
    return f"{call.launches} ({call.graph_launches} graph)" if call.graph_launches else str(call.launches)


def _call_spans(a: KernelProfile, b: KernelProfile) -> str:
    """Every call's host span on each side: of three calls the median is the slower of the two
    after call 0 (which holds the profiler's start-up), so a change of the median alone may be one
    call's noise (a trial read +66% where the compiled side's other call matched the eager median)."""
    spans = "; ".join(
        f"{side} {', '.join(format_us(call.wall_us) for call in p.calls)}us" for side, p in (("a", a), ("b", b))
    )
    return f"host span per call, from call 0: {spans}"


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


def show(path: str, calls: bool, ops: bool, html: str | None = None, decoder: Decoder = BUILT_IN) -> int:
    with readable(path) as copy:
        return _show(copy, shown(path), calls, ops, html, decoder)


def _say_inductor_dtypes(prof: KernelProfile) -> None:
    """Why an Inductor kernel's dtype reads ``?``: a trace recorded before the plugin read them, or
    without it (a newcomer read the recorded samples' ``?`` as dtype questions failing on compiled code)."""
    if not prof.has_device_activity:
        return
    undated = {k.name for k in prof.call.kernels if k.family == "inductor" and k.dtype is None}
    if undated:
        print(
            f"dtype ?: this trace has no dtype for {plural(len(undated), 'Inductor kernel')}: the plugin reads them "
            "from Inductor's compiled signatures when it profiles live, and keeps them in the traces it saves; "
            "a trace recorded without it (or before it read them) has none (docs/decoding.md)"
        )


def _show(path: str, name: str, calls: bool, ops: bool, html: str | None, decoder: Decoder) -> int:
    if html is not None and not html.strip():  # argparse passes `--html ""` on: no page, not a word
        raise KernelProfError(f"--html {html!r}: an empty file name; name the page's file (--html timeline.html)")
    if html and os.path.exists(html) and os.path.exists(path) and os.path.samefile(html, path):  # or a link to it
        raise KernelProfError(f"--html {html}: that is the trace being read; name another file for the page")
    if html and os.path.isdir(html):  # said before the report, not after it (the page is written last)
        raise KernelProfError(f"--html {html} is a folder; name a file, such as {os.path.join(html, 'timeline.html')}")
    prof, incomplete = load(path, name, decoder)
    print(_head(name, prof, incomplete))
    # One call whole, every figure and table of it its own: the median call by host span, whose
    # figures the profile's table and the JUnit properties give too (``prof.median_call``).
    median = prof.median_call
    if not calls and len(prof.calls) > 1:
        print(f"call {median.index}, the median of {len(prof.calls)} by host span (--calls shows each):")
    views = prof.calls if calls else (median,)
    for view in views:
        if calls:
            print(f"\ncall {view.index}{' (the median call by host span)' if view is median else ''}:")
        if prof.has_device_activity:
            # The call's own times, not each kernel's median over the calls that a failure's table
            # shows (``median us``): every figure here is this one call's, its time in kernels the
            # sum of the column, which medians (no one call need have them) would not add up to.
            # The column says whose they are, so that 59.2 here and 60.1 there read as two calls'.
            print(kernel_table(list(view.kernels), call=view.index))
            print(f"memory ops: {_counts(Counter(m.name for m in view.memory_ops))}")
            print(host_section(view))
        else:
            # The host span is measured without a GPU: a CPU trace's one figure (a trial found none shown).
            print(
                f"host span {format_us(view.wall_us)}us; no GPU activity in this trace"
                + ("" if ops else "; --ops shows its CPU side, the op tree")
            )
        if view.runtime.measured:
            print(f"runtime calls: {_counts(dict(view.runtime))}")
        if ops:
            print(op_tree(view.ops))
    if prof.has_device_activity and prof.call.kernels.unplaced():
        import shlex

        from ..model.unknowns import how_to_teach, teaching_values

        unplaced = list({k.name: k for k in prof.call.kernels.unplaced()}.values())
        print(
            f"{plural(len(unplaced), 'kernel name')} no evidence could place (kind 'other'); teach them with --kernels:"
        )
        for line in how_to_teach(unplaced)[1:]:  # a glob from a kernel name: quoted for the shell
            print(f"  --kernels {shlex.quote(line.strip())}")
        print(f"  ({teaching_values(unplaced)})")
    _say_inductor_dtypes(prof)
    if html:
        from ..reports.timeline import write_page

        made = _missing_folder(html)
        write_page(html, prof, title=name, trace=path)
        # Made as the plugin's writers make theirs (trace dir, job summary), and said, so that a
        # mistyped folder does not go unseen.
        print(f"timeline page: {html}" + (f" (made the folder {made})" if made else ""))
    return 0


def diff(path_a: str, path_b: str, by: str, decoder: Decoder = BUILT_IN) -> int:
    if path_a == path_b == STDIN:
        raise KernelProfError(f"only one of the traces can be standard input ('{STDIN}')")
    with readable(path_a) as readable_a, readable(path_b) as readable_b:
        (a, lost_a), (b, lost_b) = load(readable_a, shown(path_a), decoder), load(readable_b, shown(path_b), decoder)
    path_a, path_b = shown(path_a), shown(path_b)
    print(f"a = {_head(path_a, a, lost_a)}")
    print(f"b = {_head(path_b, b, lost_b)}")
    if not a.has_device_activity or not b.has_device_activity:
        # Said once, by the error (on stderr, with exit status 2): a line on stdout as well told it twice.
        if a.has_device_activity != b.has_device_activity:
            # One side's kernels against none measured: no comparison, so no "the kernels differ".
            cpu = path_a if b.has_device_activity else path_b
            raise KernelProfError(
                f"{cpu} recorded no GPU activity: no kernels to compare with the other trace's "
                f"(kernelprof show --ops {cpu} shows its CPU side)"
            )
        # Neither recorded a kernel: nothing was compared, which is no "same" (a CI gate on two
        # traces both recorded without a GPU must not pass).
        raise KernelProfError("neither trace recorded GPU activity: no kernels to compare")
    ka, kb = a.call.kernels, b.call.kernels
    result = diff_kernels(list(ka), list(kb), by=by)
    ma, mb = a.median_call, b.median_call
    # The host's side of the calls compared too, as show and a baseline's metrics count it: a CUDA
    # graph's point is 49 launches -> 2, which kernels per call alone did not show (a trial).
    rows = [
        ("kernels per call", str(len(ka)), str(len(kb))),
        ("memory ops per call", str(len(a.memory_ops)), str(len(b.memory_ops))),
        ("launches, the median call", _launches(ma), _launches(mb)),
        ("host syncs, the median call", str(len(ma.syncs)), str(len(mb.syncs))),
        ("DtoH copies, the median call", str(ma.copies.count("DtoH")), str(mb.copies.count("DtoH"))),
    ]
    print(render_table(("", "a", "b"), rows, right=(1, 2)))
    print(f"{_median_calls(a, b)}: {time_change(a.median_call.kernels.total_us, b.median_call.kernels.total_us)}")
    print("\n".join(_call_times(a.median_call, b.median_call, _call_spans(a, b))))
    for line in summary_lines(list(ka), list(kb)):
        print(line)
    for line in unplaced_lines(list(ka), list(kb), "a", "b", "--kernels"):
        print(line)
    # Aligned by name or shape, not by launching op: an op line under a ~ is told, not compared.
    print("\n".join(render_diff(result, "a", "b", ops_compared=False)))
    for line in unknown_dtype_note(list(ka), list(kb)):
        print(line)
    same = _calls_compared(a, b, by, lossy=bool(lost_a or lost_b)) and result.same
    print("same kernels" if same else "the kernels differ")
    return 0 if same else 1


def _calls_compared(a: KernelProfile, b: KernelProfile, by: str, lossy: bool = False) -> bool:
    """Where a side's calls launched different kernels, the diff above (each side's first call)
    does not tell them: each call of a against the call of b of its index, the first that
    differs shown. Whether they are all the same (True where no side's calls varied).
    ``lossy``: a trace lost records, so the calls' kernels differ as recorded, maybe not as launched."""
    if not (a.varied or b.varied):
        return True
    whose = " and ".join(f"{side}'s" for side, p in (("a", a), ("b", b)) if p.varied)
    verb = "recorded" if lossy else "launched"
    head = f"{whose} calls {verb} different kernels: each call of a against the call of b of its index"
    differ = [
        (call_a.index, found)
        for call_a, call_b in zip(a.calls[1:], b.calls[1:], strict=False)
        if not (found := diff_kernels(list(call_a.kernels), list(call_b.kernels), by=by)).same
    ]
    if len(a.calls) != len(b.calls):
        fewer, more = sorted(((len(p.calls), side) for side, p in (("a", a), ("b", b))))
        extra = f"call {fewer[0]}" if more[0] == fewer[0] + 1 else f"calls {fewer[0]} to {more[0] - 1}"
        print(
            f"{head}; a has {len(a.calls)} calls and b {len(b.calls)}: {extra} of {more[1]} has no call to compare with"
        )
        head = ""
    if not differ:
        if head:
            print(f"{head}: each the same")
        return len(a.calls) == len(b.calls)
    if head:
        print(head)
    (index, found), rest = differ[0], [str(i) for i, _ in differ[1:]]
    also = (
        f" (call {rest[0]} differs too)" if len(rest) == 1 else f" (calls {', '.join(rest)} differ too)" if rest else ""
    )
    print(f"call {index} of a against call {index} of b{also}:")
    print("\n".join(f"  {line}" for line in render_diff(found, "a", "b", ops_compared=False)))
    return False


def _terminated(signum: int, frame: object) -> None:
    """A signal that ends the command (SIGTERM, SIGHUP, SIGINT) ends it as an exception would,
    with the status a shell gives a process the signal ended: the copy of standard input is
    removed."""
    raise SystemExit(128 + signum)


# The signals that end the command: SIGHUP, that a closed terminal or an ended ssh session sends
# a job, and SIGINT (^C), that Python would end with a traceback, as SIGTERM. One ignored as the
# command started (nohup, a background job of a script) stays ignored.
_ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with _escaping_output():
        if threading.current_thread() is not threading.main_thread():  # signals go to the main thread
            return _run(args)
        previous = {signum: signal.getsignal(signum) for signum in _ENDING}
        for signum, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(signum, _terminated)
        try:
            return _run(args)
        finally:
            for signum, handler in previous.items():
                if handler is not None:  # None: set outside Python, not restorable from here
                    signal.signal(signum, handler)


@contextlib.contextmanager
def _escaping_output() -> Iterator[None]:
    """Standard output that writes each character its encoding cannot hold as its escape: a
    name in Greek on an ASCII or cp1252 console, a path's undecodable byte (a lone surrogate)
    under a strict UTF-8 one. Python raises UnicodeEncodeError there; standard error escapes."""
    stream = sys.stdout
    errors = getattr(stream, "errors", None)
    if not isinstance(stream, io.TextIOWrapper) or errors is None:
        yield
        return
    try:
        stream.reconfigure(errors="backslashreplace")
    except OSError:  # a stream that says it seeks and cannot (a pipe handed over as a file): as it is
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(ValueError, OSError):  # closed, or a reader gone
            stream.reconfigure(errors=errors)


def _run(args: argparse.Namespace) -> int:
    try:
        decoder = BUILT_IN.teach_lines(args.kernels, "--kernels") if args.kernels else BUILT_IN
        status = (
            show(args.trace, args.calls, args.ops, args.html, decoder)
            if args.command == "show"
            else diff(args.a, args.b, args.by, decoder)
        )
        sys.stdout.flush()  # a reader gone early shows here, not in the flush at exit
        return status
    except BrokenPipeError:  # `kernelprof show big.json.gz | head`: the reader has what it wanted
        # Point stdout at /dev/null so that the flush at exit does not report the pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE
    except (KernelProfError, OSError) as exc:
        print(f"kernelprof: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
