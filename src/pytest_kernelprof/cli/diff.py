"""``kernelprof diff A B``: what changed between two traces' kernels, and the host's side of the
calls compared; ``kernelprof diff --ops A B``: what changed between their calls' CPU op trees."""

from __future__ import annotations

import shlex

from ..checks.diff import (
    diff_kernels,
    render_diff,
    summary_lines,
    time_change,
    time_figures,
    unknown_dtype_note,
    unplaced_lines,
)
from ..checks.op_diff import OpCount, diff_op_trees
from ..decode import BUILT_IN, Decoder
from ..errors import KernelProfError
from ..model import CallProfile, KernelProfile
from ..tables import format_share, format_us, plural, render_table
from .files import STDIN, head, load, readable, shown
from .show import INDUCTORS_NOTE, INDUCTORS_RANGE, OP_TREE_ROWS, inductors_ranges, shown_op


def _fastest_calls(a: KernelProfile, b: KernelProfile) -> str:
    """Whose figures the diff's second table compares: each side's fastest call, the call ``show``
    and the JUnit ``kernel_us`` report, so that the three agree. Said once, above them: the same
    qualifier on every row, and "per call" beside "the fastest call" in one table, read as a
    puzzle (a trial)."""
    # Calls are numbered from 0, as prof.calls[i]: "call 1 of 3" alone would read as the first.
    counts = f"of {len(a.calls)} each" if len(a.calls) == len(b.calls) else f"of {len(a.calls)} and {len(b.calls)}"
    return (
        f"the fastest call by host span: a's call {a.fastest_call.index}, b's call {b.fastest_call.index} "
        f"({counts}, numbered from 0)"
    )


def _time_row(what: str, before_us: float, after_us: float) -> tuple[str, str, str, str]:
    return (what, *time_figures(before_us, after_us))


def _call_table(ma: CallProfile, mb: CallProfile) -> str:
    """The host's side of the calls compared, as show and a baseline's metrics count it (a CUDA
    graph's point is 49 launches -> 2, which kernels per call alone did not show: a trial), and
    their times: a compiled step whose kernels got faster can still take the host longer."""
    # Each row's change, in its own unit: a count's difference (+1), a time's ratio (+28.2%), the
    # idle share's difference in percentage points (-28 pt, of the shares as shown). A blank one
    # beside "launches 4 5" read as not compared (a trial).
    idle_a, idle_b = ma.gpu_idle_fraction, mb.gpu_idle_fraction
    rows = [
        *(
            (*row, f"{after - before:+d}" if after != before else "0")
            for row, before, after in zip(_host_counts(ma, mb), _host_numbers(ma), _host_numbers(mb), strict=True)
        ),
        _time_row("GPU time in kernels", ma.kernels.total_us, mb.kernels.total_us),
        _time_row("host span", ma.wall_us, mb.wall_us),
        ("GPU idle in host span", format_share(idle_a), format_share(idle_b), _points(idle_a, idle_b)),
        _time_row("GPU work in all", ma.gpu_work_us, mb.gpu_work_us),
    ]
    return render_table(("", "a", "b", "change"), rows, right=(1, 2, 3))


def _points(before: float, after: float) -> str:
    """The change of a share in percentage points, of the whole percentages (``66%`` and ``38%``:
    ``-28 pt``), so that it is the difference of the two figures beside it."""
    change = int(f"{after:.0%}"[:-1]) - int(f"{before:.0%}"[:-1])
    return f"{change:+d} pt" if change else "0 pt"


def _host_numbers(call: CallProfile) -> tuple[int, int, int]:
    """A call's launches, host syncs and DtoH copies, the rows of ``_host_counts``."""
    return call.launches, len(call.syncs), call.copies.count("DtoH")


def _host_counts(ma: CallProfile, mb: CallProfile) -> list[tuple[str, str, str]]:
    """The fastest calls' counts, as the second table shows them and a baseline fails on them."""
    return [
        ("launches", _launches(ma), _launches(mb)),
        ("host syncs", str(len(ma.syncs)), str(len(mb.syncs))),
        ("DtoH copies", str(ma.copies.count("DtoH")), str(mb.copies.count("DtoH"))),
    ]


def _per_call_counts(a: KernelProfile, b: KernelProfile) -> list[tuple[str, str, str]]:
    """Each side's kernels, memcpys and memsets per call, as the first table shows them."""
    return [
        ("kernels", str(len(a.call.kernels)), str(len(b.call.kernels))),
        # By kind, as a baseline counts them (`memcpys: 0 -> 1` among its worse lines): "memory ops
        # 2 2" read as unchanged for 2 memsets against a memset and a memcpy (a trial).
        *((f"{kind}s", _count(a, kind), _count(b, kind)) for kind in ("memcpy", "memset")),
    ]


def _verdict(same_kernels: bool, counts: list[tuple[str, str, str]]) -> tuple[str, int]:
    """The diff's last line and exit status. The counts the tables show decide too, as a
    baseline's would (a diff gating CI said "same kernels", exit 0, for an added ``.item()``'s
    DtoH copy and sync: a trial); times never do, being noise."""
    changed = ", ".join(f"{what} {before} -> {after}" for what, before, after in counts if before != after)
    if same_kernels:
        return (f"same kernels, but the calls differ: {changed}", 1) if changed else ("same kernels", 0)
    return f"the kernels differ{f'; the calls differ too: {changed}' if changed else ''}", 1


def _count(prof: KernelProfile, kind: str) -> str:
    """How many memory ops of ``kind`` (``memcpy``, ``memset``) a call of ``prof`` ran."""
    return str(sum(op.kind == kind for op in prof.memory_ops))


def _launches(call: CallProfile) -> str:
    """A call's launches as show counts them: ``2 (1 graph)`` where graph launches are among them."""
    return f"{call.launches} ({call.graph_launches} graph)" if call.graph_launches else str(call.launches)


def _call_spans(a: KernelProfile, b: KernelProfile) -> str:
    """Every call's host span on each side, so that a change of the fastest call's span can be told
    from one call's noise: call 0 holds the profiler's start-up, and the others differ too."""
    spans = "; ".join(
        f"{side} {', '.join(format_us(call.wall_us) for call in p.calls)}us" for side, p in (("a", a), ("b", b))
    )
    return f"host span of each call, from call 0: {spans}"


def diff(path_a: str, path_b: str, by: str | None, decoder: Decoder = BUILT_IN, ops: bool = False) -> int:
    """``by``: None where not given (``name``), so that ``--ops`` can refuse one given."""
    if ops and by is not None:
        raise KernelProfError(
            f"--ops with --by {by}: --by says how to align kernels, and --ops compares the CPU op trees, "
            "not the kernels; drop --by (or --ops to compare the kernels)"
        )
    if path_a == path_b == STDIN:
        raise KernelProfError(f"only one of the traces can be standard input ('{STDIN}')")
    # The command that compares what two traces without kernels have: their op trees, the traces
    # named as given (- for standard input), quoted for the shell.
    arguments = shlex.join(path if path == STDIN else shown(path) for path in (path_a, path_b))
    compare_ops = f"kernelprof diff --ops {arguments} compares their CPU op trees"
    with readable(path_a) as readable_a, readable(path_b) as readable_b:
        (a, lost_a), (b, lost_b) = load(readable_a, shown(path_a), decoder), load(readable_b, shown(path_b), decoder)
    path_a, path_b = shown(path_a), shown(path_b)
    print(f"a = {head(path_a, a, lost_a)}")
    print(f"b = {head(path_b, b, lost_b)}")
    if a.device and b.device and a.device != b.device:
        # Said where the traces are named: an H100 trace against an H200 one read as a change of
        # the code alone (a trial).
        print(f"note: a ran on {a.device}, b on {b.device}: kernels and times may differ by card")
    if ops:
        return _diff_ops(a, b)
    if not a.has_device_activity or not b.has_device_activity:
        # Said once, by the error (on stderr, with exit status 2): a line on stdout as well told it twice.
        if a.has_device_activity != b.has_device_activity:
            # One side's kernels against none measured: no comparison, so no "the kernels differ".
            cpu = path_a if b.has_device_activity else path_b
            raise KernelProfError(
                f"{cpu} recorded no GPU activity: no kernels to compare with the other trace's "
                f"(kernelprof show --ops {cpu} shows its CPU side; {compare_ops})"
            )
        # Neither recorded a kernel: nothing was compared, which is no "same" (a CI gate on two
        # traces both recorded without a GPU must not pass).
        raise KernelProfError(f"neither trace recorded GPU activity: no kernels to compare ({compare_ops})")
    ka, kb = a.call.kernels, b.call.kernels
    result = diff_kernels(list(ka), list(kb), by=by or "name")
    per_call = _per_call_counts(a, b)
    print(render_table(("per call", "a", "b"), per_call, right=(1, 2)))
    print(_fastest_calls(a, b))
    print(_call_table(a.fastest_call, b.fastest_call))
    print(_call_spans(a, b))
    for line in summary_lines(list(ka), list(kb)):
        print(line)
    for line in unplaced_lines(list(ka), list(kb), "a", "b", "--kernels"):
        print(line)
    # Aligned by name or shape, not by launching op: an op line under a ~ is told, not compared.
    print("\n".join(render_diff(result, "a", "b", ops_compared=False)))
    for line in unknown_dtype_note(list(ka), list(kb)):
        print(line)
    same = _calls_compared(a, b, by or "name", lossy=bool(lost_a or lost_b)) and result.same
    line, status = _verdict(same, [*per_call, *_host_counts(a.fastest_call, b.fastest_call)])
    print(line)
    return status


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


OP_DIFF_HEADERS = ("op", "count a", "count b")
OP_DIFF_ROWS_NOTE = (
    "each row: an op at its place in the op tree, under the ops above it as show --ops indents them, and how "
    "often it ran there in each side's fastest call; - an op only a has there, + one only b has, ~ a count "
    "that changed, = an op above a changed one, the same in both"
)
OP_DIFF_TIME_NOTE = (
    "CPU time per op is left out, not compared: it varies from run to run; kernelprof show --ops shows each side's"
)


def _diff_ops(a: KernelProfile, b: KernelProfile) -> int:
    """The op trees of each side's fastest call compared (``diff_op_trees``): 0 where every op ran
    as often at its place, 1 where not. Counts only (the note says why)."""
    tree_a, tree_b = a.fastest_call.ops.tree(), b.fastest_call.ops.tree()
    if not tree_a and not tree_b:
        # Nothing compared is no "same ops", as for kernels.
        raise KernelProfError("neither trace recorded CPU ops: no op trees to compare")
    found = diff_op_trees(tree_a, tree_b)
    changed = len(found.changed)
    print(_fastest_calls(a, b))
    print(f"op counts: {_op_tally(found.compared, found.changed)}")
    print(f"host span: {time_change(a.fastest_call.wall_us, b.fastest_call.wall_us)}")
    if changed:
        print(_op_rows(found.rows, inductors_ranges(a.fastest_call.ops) | inductors_ranges(b.fastest_call.ops)))
    print(f"({OP_DIFF_ROWS_NOTE}; {OP_DIFF_TIME_NOTE})" if changed else f"({OP_DIFF_TIME_NOTE})")
    if a.has_device_activity and b.has_device_activity:
        print("kernels: not compared (kernelprof diff without --ops compares them)")
    print("the ops differ" if changed else "same ops")
    return 1 if changed else 0


def _op_tally(compared: int, changed: tuple[OpCount, ...]) -> str:
    """How the places compared split: ``8 ops at their places in the trees: 5 the same, 1 count
    changed, 1 only in a, 1 only in b`` (a trial read "18 compared, 18 changed" for two trees that
    shared no op as counts that moved)."""
    head = f"{plural(compared, 'op')} at their places in the trees"
    if not changed:
        return f"{head}, each run as often in both"
    only_a = sum(row.count_b is None for row in changed)
    only_b = sum(row.count_a is None for row in changed)
    parts = [
        f"{compared - len(changed)} the same",
        *([f"{len(changed) - only_a - only_b} count changed"] if len(changed) > only_a + only_b else []),
        *([f"{only_a} only in a"] if only_a else []),
        *([f"{only_b} only in b"] if only_b else []),
    ]
    return f"{head}: {', '.join(parts)}"


def _mark(row: OpCount) -> str:
    """Before a row's op, as the kernel diff marks its lines: an op only a (-) or only b (+) has at
    its place, one whose count changed (~), or one above those, the same in both (=)."""
    if not row.changed:
        return "="
    return "+" if row.count_a is None else "-" if row.count_b is None else "~"


def _op_rows(rows: tuple[OpCount, ...], inductors: set[str]) -> str:
    """The rows as show --ops indents its tree, at most ``OP_TREE_ROWS`` of them."""

    def count(n: int | None) -> str:
        return "-" if n is None else str(n)

    shown_rows = [
        (
            f"{_mark(row)} "
            + "  " * row.depth
            + shown_op(row.name)
            + (INDUCTORS_RANGE if row.name in inductors else ""),
            count(row.count_a),
            count(row.count_b),
        )
        for row in rows[:OP_TREE_ROWS]
    ]
    table = render_table(OP_DIFF_HEADERS, shown_rows, right=(1, 2))
    if len(rows) > OP_TREE_ROWS:
        table += f"\n... the rows go on past {OP_TREE_ROWS:,}"
    if any(row.name in inductors for row in rows[:OP_TREE_ROWS]):
        table += f"\n{INDUCTORS_NOTE}"
    return table
