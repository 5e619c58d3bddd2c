"""Check the plugin's cost against its budgets in one pytest-benchmark JSON file.

    python benchmarks/check_budget.py bench.json [--retries N]

Each budget compares two kinds that one benchmark case ran in interleaved rounds (``interleave``
in conftest.py): its ratio is the median of the per-round ratios, so the machine's speed and
its slower stretches cancel out. On a GPU run the budgets are the targets; on a CPU-only run
(CI) they are regression guards (``cpu_guard``: a clear regression from what the 2-core VM
measures), and a missed one is measured again: its case is rerun alone, up to ``--retries``
more times (2 on CPU, 0 on GPU), and the budget fails only where every attempt missed it.
Every figure of every attempt is printed. Exits 1 when a budget failed, 2 when the file has
none of them; budgets whose benchmarks did not run (a smaller size set) are listed as not run.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# A CPU guard fails where a ratio is 1.5x worse than what the 2-core VM measures (its
# reference): a 2x regression misses it by a third, and noise must cost 1.5x in every attempt
# to fail it. Never stricter than the target; without a reference, half the target.
REGRESSION = 1.5
CPU_RETRIES = 2


@dataclass(frozen=True)
class Budget:
    what: str
    case: str  # the benchmark (pytest-benchmark's name) that ran both kinds in turns
    ours: str
    theirs: str
    at_least: float  # the target: theirs / ours at least this (how many times faster ours is)
    cpu_reference: float | None = None  # theirs / ours on the 2-core VM, CI-like runs (README.md)
    reader: str | None = None  # the trace reader ``ours`` must have used (the case's extra_info), if any
    or_within_s: float = 0.0  # also met where ours is at most this many seconds slower than theirs

    @property
    def cpu_guard(self) -> float:
        if self.cpu_reference is None:
            return self.at_least / 2
        return min(self.at_least, self.cpu_reference / REGRESSION)


# Issue 16's targets: the build at least 15x faster than prof.events() from 1k events on,
# on the activity_type path and torch 2.11's fallback (the build is the fallback there),
# and within 3x of the floor (fetching the raw events and reading each name);
# kernelprof(fn) at most 1.25x a bare session for eager stacks of 600 and 8,000 kernels,
# 1.1x for one kernel.
# CPU references (theirs / ours): this harness on the shared 2-core VM, torch 2.13, 2026-11-26,
# two runs under a load average of 5-7 (the CI VM is quieter), each reference at or below the
# lower of the two: 1k build vs prof.events() 9.3 and 12.9 (15.9 on a quieter run, before the
# rounds were interleaved), fallback 9.2 and 12.4; 10k 22.4 and 25.8, fallback 21.3 and 24.4;
# vs the floor 0.27/0.28 (1k), 0.38/0.37 (10k); vs floor_fields 0.75/0.71, 0.83/0.76.
_EVENTS_REFERENCES = {
    # size: (build, fallback build) vs prof.events(), build vs floor, build vs floor_fields
    "1k": ((12.0, 11.0), 0.27, 0.70),
    "10k": ((22.0, 20.0), 0.35, 0.72),
    "100k": ((None, None), None, None),
}
BUDGETS = [
    *(
        Budget(
            f"{what} vs prof.events(), {n} events",
            f"test_session_cost[{n}]",
            ours,
            "prof.events()",
            15.0,
            _EVENTS_REFERENCES[n][0][i],
        )
        for n in ("1k", "10k", "100k")
        for i, (what, ours) in enumerate((("build", "build"), ("fallback build", "fallback build")))
    ),
    *(
        Budget(
            f"build vs the floor, {n} events (at most 3x)",
            f"test_session_cost[{n}]",
            "build",
            "floor",
            1 / 3,
            _EVENTS_REFERENCES[n][1],
        )
        for n in ("1k", "10k", "100k")
    ),
    # Reading the six fields every event needs, nothing built: where the floor of a builder is.
    *(
        Budget(
            f"build vs reading the fields, {n} events (at most 2x)",
            f"test_session_cost[{n}]",
            "build",
            "floor_fields",
            1 / 2,
            _EVENTS_REFERENCES[n][2],
        )
        for n in ("1k", "10k", "100k")
    ),
    *(
        Budget(
            f"kernelprof(fn) vs bare session, {k} kernel(s) (at most {limit}x)",
            f"test_kernelprof_cost[{k}]",
            "kernelprof(fn)",
            "torch.profiler.profile",
            1 / limit,
            reference,
        )
        # The same runs: 0.77/0.80 (1 kernel), 0.54/0.55 (600), 0.49/0.60 (8,000; README.md's
        # interleaved_cost gave 1.33x, 1.63x and 1.74x on the VM, 0.75, 0.61 and 0.57).
        for k, limit, reference in ((1, 1.1, 0.75), (600, 1.25, 0.55), (8000, 1.25, 0.55))
    ),
    # The load_trace target, at most 0.8x json.load, is for the 100 MB trace. At 10 MB json.load
    # spends less in the garbage collector, so the ratio is higher: 1.5x there.
    Budget(
        "load_trace vs json.load, 10 MB (at most 1.5x)",
        "test_load_trace_cost[10MB]",
        "load_trace",
        "json.load",
        1 / 1.5,
        0.8,  # 0.87 and 0.78 in the same runs (0.96 before interleaving)
        reader="msgspec",
    ),
    # Issue 16's target (a 100 MB trace is not made on CI runs).
    Budget(
        "load_trace vs json.load, 100 MB (at most 0.8x)",
        "test_load_trace_cost[100MB]",
        "load_trace",
        "json.load",
        1 / 0.8,
        reader="msgspec",
    ),
    Budget(
        "load_trace without msgspec vs json.load, 10 MB (at most 2.5x)",
        "test_load_trace_cost[10MB]",
        "load_trace, standard-library reader",
        "json.load",
        1 / 2.5,
        0.42,  # 0.48 and 0.42 (README.md: 1.4-2.3x, 0.43-0.71, before)
    ),
    # Issue 34: work that grows no faster than its input. One input of the size that took
    # minutes against ten of a tenth of it: the diff, the page and the op table at most 2x (work that grows
    # with the square of the input is 10x), the decoder at most 1x (it reads a name's first
    # 8 KB). References: 1.96, 0.93 and 0.96 on the 2-core VM, 2026-11-27.
    *(
        Budget(f"{what}: one input against ten of a tenth (at most {limit}x)", case, what, tenth, 1 / limit, reference)
        for case, what, tenth, limit, reference in (
            ("test_decode_growth", "decode a 12 KB name", "decode ten 1.2 KB names", 1, 1.8),
            ("test_diff_growth", "diff 14,000 kernels", "ten diffs of 1,400 kernels", 2, 0.85),
            # 0.45 on the 2-core VM, 2026-11-27 (0.02 before: difflib's search was cubic in such layers).
            # At most 2.5x: the big diff first runs difflib whole until it breaks its budget, a cost per
            # kernel the small ones, which difflib aligns within it, do not pay.
            ("test_layer_diff_growth", "diff 4,000 kernels against 1,000", "ten diffs of 400 against 100", 2.5, 0.45),
            # 0.88 on the 2-core VM, 2026-11-27 (about 0.1 while a lazy regex tried each colon).
            ("test_teaching_line_growth", "read a line of 16,000 colons", "read ten of 1,600", 2, 0.85),
            ("test_timeline_growth", "timeline page of 20,000 calls", "ten pages of 2,000 calls", 2, 0.85),
            # 1.16 on the 2-core VM (0.97 at 40,000 ranges); 0.20 while each op lookup scanned the names.
            ("test_ops_growth", "profile table of 20,000 ranges", "ten tables of 2,000 ranges", 2, 0.95),
            # 1.00 on the 2-core VM, 2026-11-27 (a unit test held it under 2 s by the clock before).
            ("test_shown_name_growth", "show a name 20,000 deep", "show ten names 2,000 deep", 1.5, 1.0),
            # 0.94 on the 2-core VM, 2026-11-27 (difflib aligned the whole lists: 28 s at 20,000 names).
            ("test_name_list_explanation_growth", "explain 100,000 names", "explain ten of 10,000", 2, 0.94),
        )
    ),
    # Issue 13: a session that uses neither the fixtures nor the gpu marker pays at most 10%
    # (or 0.1 s) over -p no:kernelprof; a one-test project, pytest in a fresh process each round.
    Budget(
        "pytest run with the plugin unused vs -p no:kernelprof (at most 1.1x or +0.1 s)",
        "test_pytest_run_cost",
        "with the plugin",
        "-p no:kernelprof",
        1 / 1.1,
        1.0,  # 0.99 with bytecode cached (README.md: 0.94-1.03 on quiet runs)
        or_within_s=0.1,
    ),
]


@dataclass(frozen=True)
class Figure:
    """One attempt at one budget: the median per-round ratio, and what it came from."""

    ratio: float  # theirs / ours: the median of the per-round ratios
    ours_s: float  # median seconds per call
    theirs_s: float
    per_round: tuple[float, ...]  # theirs / ours in each round
    inner: tuple[int, int]  # calls per sample (ours, theirs)

    def met(self, at_least: float, or_within_s: float) -> bool:
        return self.ratio >= at_least or (or_within_s > 0 and self.ours_s - self.theirs_s <= or_within_s)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"


def measure(report: dict[str, Any], budget: Budget) -> Figure | str:
    """The budget's figure in ``report``, or why it was not measured there ("": its case did not run)."""
    case = next((b for b in report.get("benchmarks", []) if b["name"] == budget.case), None)
    if case is None:
        return ""
    extra = case.get("extra_info", {})
    kinds = extra.get("interleaved", {})
    if budget.ours not in kinds or budget.theirs not in kinds:
        return "no such kind in this run"
    if budget.reader and extra.get("reader") != budget.reader:
        return f"read without {budget.reader} (not installed)"
    ours, theirs = kinds[budget.ours]["samples"], kinds[budget.theirs]["samples"]
    per_round = tuple(t / o for o, t in zip(ours, theirs, strict=True))
    return Figure(
        ratio=statistics.median(per_round),
        ours_s=statistics.median(ours),
        theirs_s=statistics.median(theirs),
        per_round=per_round,
        inner=(kinds[budget.ours]["inner"], kinds[budget.theirs]["inner"]),
    )


def on_gpu(report: dict[str, Any]) -> bool:
    """A GPU run by the plugin's machine_info, or by the cases' own record of their device
    (a run without the plugin loaded has no machine_info: it must not get the CPU guards)."""
    return bool(report.get("machine_info", {}).get("kernelprof", {}).get("gpu")) or any(
        b.get("extra_info", {}).get("device") == "cuda" for b in report.get("benchmarks", [])
    )


def _describe(budget: Budget, figure: Figure, attempt: int, attempts: int) -> str:
    rounds = " ".join(f"{r:.2f}" for r in figure.per_round)
    inner = "" if figure.inner == (1, 1) else f", {figure.inner[0]} and {figure.inner[1]} calls a sample"
    slower = f", {figure.ours_s - figure.theirs_s:+.3f} s" if budget.or_within_s else ""
    return (
        f"         attempt {attempt} of at most {attempts}: {budget.ours} {_ms(figure.ours_s)}, "
        f"{budget.theirs} {_ms(figure.theirs_s)} (medians of {len(figure.per_round)} interleaved rounds{inner}"
        f"{slower}); per round: {rounds}"
    )


Rerun = Callable[[Sequence[str], int], "dict[str, Any] | None"]


def rerun_cases(nodeids: Sequence[str], attempt: int) -> dict[str, Any] | None:
    """Run these benchmark cases alone with pytest-benchmark; their report, or None if the run failed."""
    out = REPO / ".benchmarks" / f"check_budget_attempt{attempt}.json"
    out.parent.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *nodeids, f"--benchmark-json={out}"]
    print(f"         $ {shlex.join(['python', *command[1:]])}", flush=True)
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    print(f"         {lines[-1] if lines else '(no output)'}", flush=True)
    if done.returncode != 0 or not out.exists():
        print(done.stdout[-4000:] + done.stderr[-4000:])
        return None
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def check(report: dict[str, Any], *, retries: int | None = None, rerun: Rerun = rerun_cases) -> int:
    gpu = on_gpu(report)
    retries = (0 if gpu else CPU_RETRIES) if retries is None else retries
    attempts = retries + 1
    fullnames = {b["name"]: b.get("fullname", b["name"]) for b in report.get("benchmarks", [])}
    print(
        "GPU run: the budgets are the targets"
        if gpu
        else f"CPU-only run: the budgets are regression guards (a {REGRESSION}x regression from the 2-core VM's "
        f"reference, never above the target); a missed one is measured again, up to {retries} more times"
    )
    figures: dict[str, list[float]] = {}
    pending: list[Budget] = []
    checked = 0

    def judge(budget: Budget, figure: Figure | str, attempt: int) -> bool:
        at_least = budget.at_least if gpu else budget.cpu_guard
        target = "" if gpu or at_least == budget.at_least else f"; target {budget.at_least:.2f}"
        if isinstance(figure, str):
            print(f"{'missed':8} {budget.what}: not measured at attempt {attempt} ({figure or 'its case did not run'})")
            figures[budget.what].append(float("nan"))
            return False
        figures[budget.what].append(figure.ratio)
        met = figure.met(at_least, budget.or_within_s)
        print(f"{'ok' if met else 'missed':8} {budget.what}: {figure.ratio:.2f} (budget >= {at_least:.2f}{target})")
        print(_describe(budget, figure, attempt, attempts))
        return met

    for budget in BUDGETS:
        figure = measure(report, budget)
        if isinstance(figure, str):
            print(f"{'not run':8} {budget.what}" + (f": {figure}" if figure else ""))
            continue
        checked += 1
        figures[budget.what] = []
        if not judge(budget, figure, 1):
            pending.append(budget)
    if not checked:
        print("no budgeted benchmark in this file")
        return 2
    for attempt in range(2, attempts + 1):
        if not pending:
            break
        cases = sorted({fullnames[b.case] for b in pending})
        print(f"attempt {attempt} of {attempts}: measuring {len(pending)} missed budget(s) again, {len(cases)} case(s)")
        again = rerun(cases, attempt) or {}
        pending = [b for b in pending if not judge(b, measure(again, b), attempt)]
    noise = [what for what, ratios in figures.items() if len(ratios) > 1 and what not in {b.what for b in pending}]
    for what in noise:
        print(f"noise    {what}: met at attempt {len(figures[what])} ({_ratios(figures[what])})")
    for budget in pending:
        at_least = budget.at_least if gpu else budget.cpu_guard
        print(
            f"FAILED   {budget.what}: missed in all {len(figures[budget.what])} attempt(s) "
            f"({_ratios(figures[budget.what])}; budget >= {at_least:.2f})"
        )
    print(f"{checked} budget(s) checked, {len(noise)} met only when measured again, {len(pending)} failed")
    return 1 if pending else 0


def _ratios(ratios: list[float]) -> str:
    return ", ".join(f"{r:.2f}" for r in ratios)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path, help="pytest-benchmark's --benchmark-json file")
    parser.add_argument(
        "--retries", type=int, default=None, help=f"reruns of a missed budget's case ({CPU_RETRIES} on CPU, 0 on GPU)"
    )
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    return check(report, retries=args.retries)


if __name__ == "__main__":
    sys.exit(main())
