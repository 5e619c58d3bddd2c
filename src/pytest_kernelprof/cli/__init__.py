"""``kernelprof show TRACE`` and ``kernelprof diff A B``: read profiles without re-running them.
A trace named ``-`` is read from standard input.

Exit status (``EXIT_STATUSES``, which ``--help`` prints): 0 success (and, for diff, the same
kernel sequences and the same counts of the calls; with ``--ops``, the same op trees), 1 the
profiles differ, 2 a usage or file error (a trace that lost every kernel record among them, a
diff with nothing to compare), reported in one line without a traceback; 141 without a word when
the reader of the output closed it early (``| head``), as for a process that SIGPIPE ended.
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
from collections.abc import Iterator, Sequence

from ..decode import BUILT_IN
from ..errors import KernelProfError
from . import diff, show

# What ``--help`` ends with, each line within 80 columns (printed as written: RawDescriptionHelpFormatter).
# A new user found the statuses only in docs/traces.md, which a wheel does not ship (a trial).
EXIT_STATUSES = """exit status:
  0    success (diff: the same kernels and counts; --ops: the same ops)
  1    diff: the kernels or the counts of the calls differ (--ops: the ops)
  2    usage or file error, or a diff with nothing to compare (said on stderr)
  141  the reader closed the output early (| head), as SIGPIPE does; no message"""
EXAMPLES = """examples:
  kernelprof show trace.json.gz            the fastest call's kernel table
  kernelprof show --medians trace.json.gz  the kernel table a failure shows
  kernelprof diff a.json.gz b.json.gz      what changed from a to b"""
DIFF_EXAMPLES = """examples:
  kernelprof diff eager.json.gz compiled.json.gz
  kernelprof diff --by shape a.json.gz b.json.gz   cuBLAS tile changes ignored
  kernelprof diff --ops a.json.gz b.json.gz        the CPU op trees instead"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelprof",
        description="Read torch.profiler Chrome traces as kernel tables.",
        epilog=f"{EXAMPLES}\n\n{EXIT_STATUSES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    show_command = sub.add_parser("show", help="the kernel table of a trace")
    show_command.add_argument(
        "trace", help="a Chrome trace from torch.profiler (.json or .json.gz); - reads standard input"
    )
    show_command.add_argument("--calls", action="store_true", help="one table per profiled call")
    show_command.add_argument(
        "--medians",
        action="store_true",
        help="the profile's table as a failed assertion shows it: each kernel's median time over the calls",
    )
    show_command.add_argument(
        "--ops",
        action="store_true",
        help="the CPU op tree, each row the CPU and device time of its op under the ops above it",
    )
    show_command.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write a self-contained timeline page of the trace to OUT.html (its folder made where missing)",
    )
    kernels_help = (
        "what kernels are, for names the decoder cannot place, as the ini's kernelprof_kernels lines: "
        "'GLOB: kind=... family=...'; may be given again"
    )
    show_command.add_argument("--kernels", action="append", default=[], metavar="LINE", help=kernels_help)
    diff_help = (
        "what changed between two traces; exit 1 when the kernels or the calls' counts (with --ops, the ops) differ"
    )
    diff_command = sub.add_parser(
        "diff",
        help=diff_help,
        description=(
            "What changed between two traces: their kernels, and the counts and times of\n"
            "their calls. The last line names the counts that differ; times never decide\n"
            "(they vary from run to run)."
        ),
        epilog=f"{DIFF_EXAMPLES}\n\n{EXIT_STATUSES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    diff_command.add_argument("--kernels", action="append", default=[], metavar="LINE", help=kernels_help)
    diff_command.add_argument("a", help="the trace before (- reads standard input)")
    diff_command.add_argument("b", help="the trace after (- reads standard input)")
    diff_command.add_argument(
        "--by",
        choices=("name", "shape"),
        default=None,  # name; None tells --ops that it was not given
        help="align kernels by name, or by kind/family/layout/fused ops (ignores cuBLAS tile changes); default: name",
    )
    diff_command.add_argument(
        "--ops",
        action="store_true",
        help="compare the CPU op trees of the two fastest calls (how often each op ran at its place in the tree), "
        "not the kernels: for traces recorded without a GPU too; exit 1 when the ops differ",
    )
    return parser


def _version() -> str:
    try:
        return importlib.metadata.version("pytest-kernelprof")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing it
        return "(not installed)"


# What a shell reports for a process that SIGPIPE ended: 128 + 13.
CLOSED_PIPE = 141


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
            show.show(args.trace, args.calls, args.ops, args.html, decoder, args.medians)
            if args.command == "show"
            else diff.diff(args.a, args.b, args.by, decoder, ops=args.ops)
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
