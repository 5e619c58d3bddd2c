"""Check the plugin's cost against its budgets in one pytest-benchmark JSON file.

    python benchmarks/check_budget.py bench.json

Compares medians of the same run (ratios, not absolute times, so the machine's speed
cancels out) and exits 1 when a budget is missed, 2 when the file has none of them.
Budgets whose benchmarks did not run (a smaller size set) are listed as not run.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    what: str
    ours: str
    theirs: str
    at_least: float  # theirs / ours must be at least this: how many times faster ours is
    reader: str | None = None  # the trace reader ``ours`` must have used (its extra_info), if any
    or_within_s: float = 0.0  # also met where ours is at most this many seconds slower than theirs


# Issue 16's targets: the build at least 15x faster than prof.events() from 1k events on,
# on the activity_type path and torch 2.11's fallback (test_build is the fallback there),
# and within 3x of the floor (fetching the raw events and reading each name);
# kernelprof(fn) at most 1.25x a bare session for eager stacks of 600 and 8,000 kernels,
# 1.1x for one kernel.
BUDGETS = [
    *(
        Budget(f"{what} vs prof.events(), {n} events", f"{test}[{n}]", f"test_prof_events[{n}]", 15.0)
        for n in ("1k", "10k", "100k")
        for what, test in (("build", "test_build"), ("fallback build", "test_build_without_activity_type"))
    ),
    *(
        Budget(f"build vs the floor, {n} events (at most 3x)", f"test_build[{n}]", f"test_floor[{n}]", 1 / 3)
        for n in ("1k", "10k", "100k")
    ),
    # Reading the six fields every event needs, nothing built: where the floor of a builder is.
    *(
        Budget(
            f"build vs reading the fields, {n} events (at most 2x)",
            f"test_build[{n}]",
            f"test_floor_fields[{n}]",
            1 / 2,
        )
        for n in ("1k", "10k", "100k")
    ),
    *(
        Budget(
            f"kernelprof(fn) vs bare session, {k} kernel(s) (at most {limit}x)",
            f"test_kernelprof_call[{k}]",
            f"test_bare_session[{k}]",
            1 / limit,
        )
        for k, limit in ((1, 1.1), (600, 1.25), (8000, 1.25))
    ),
    # The load_trace target, at most 0.8x json.load, is for the 100 MB trace (README: 0.74-0.91x
    # there on the 2-core VM, before the builder grew 1.6x slower). At 10 MB json.load spends less
    # in the garbage collector, so the ratio is higher and moves more with the machine's load
    # (0.58-1.17x): CI guards 1.5x, which still catches the typed reader no longer being taken
    # (1.4-2.3x, the budget below).
    Budget(
        "load_trace vs json.load, 10 MB (at most 1.5x)",
        "test_kernelprof_load_trace[10MB]",
        "test_json_load[10MB]",
        1 / 1.5,
        reader="msgspec",
    ),
    # Issue 16's target (a 100 MB trace is not made on CI runs).
    Budget(
        "load_trace vs json.load, 100 MB (at most 0.8x)",
        "test_kernelprof_load_trace[100MB]",
        "test_json_load[100MB]",
        1 / 0.8,
        reader="msgspec",
    ),
    # The standard-library reader measured 1.4-2.3x at 10 MB on the 2-core VM, by its load.
    Budget(
        "load_trace without msgspec vs json.load, 10 MB (at most 2.5x)",
        "test_kernelprof_load_trace_json_reader[10MB]",
        "test_json_load[10MB]",
        1 / 2.5,
    ),
    # Issue 13: a session that uses neither the fixtures nor the gpu marker pays at most 10%
    # (or 0.1 s) over -p no:kernelprof; a one-test project, pytest in a fresh process each round.
    Budget(
        "pytest run with the plugin unused vs -p no:kernelprof (at most 1.1x or +0.1 s)",
        "test_pytest_run[with_plugin]",
        "test_pytest_run[without_plugin]",
        1 / 1.1,
        or_within_s=0.1,
    ),
]

# Without a GPU a session holds CPU ops only and is 5x shorter (about 0.55 ms against
# 3.8 ms on an H200 for one kernel), so the fixed cost of building the profile weighs
# more, and the 2-core VM's load moves the ratios by up to 2x between runs: CPU-only runs (CI)
# guard against large regressions with headroom over what that VM met on a quiet run (torch 2.13,
# 2026-11-26: 12.8x/18.4x prof.events(), 4.3x/3.6x the floor, 1.25x/1.72x/1.75x a bare session),
# because a budget missed by noise would block every landing; the targets are held on a GPU.
CPU_ONLY_RELAXED = {
    **{b.what: 8.0 for b in BUDGETS if b.theirs.startswith("test_prof_events[1k")},
    **{b.what: 12.0 for b in BUDGETS if b.theirs.startswith("test_prof_events[10k")},
    # 4.0-5.0x the floor in CI-like runs (2026-11-26): 1/6 left 15% for the VM's noise.
    **{b.what: 1 / 7.0 for b in BUDGETS if b.theirs.startswith("test_floor[")},
    # 1.56x-1.67x on a quiet run (2026-11-26)
    **{b.what: 1 / 3.0 for b in BUDGETS if b.theirs.startswith("test_floor_fields")},
    # Reading 120k CPU-op events through pybind dominates the 8,000-kernel case there: 0.46-0.51
    # in CI-like runs (2026-11-26), too close to 1/2.5 for the VM's noise.
    **{b.what: 1 / 3.0 for b in BUDGETS if b.ours.startswith("test_kernelprof_call")},
    # The standard-library reader: 1.3x-2.1x in CI-like runs (2026-11-26), the 2.5x target 17% away.
    "load_trace without msgspec vs json.load, 10 MB (at most 2.5x)": 1 / 3.0,
    # Whole pytest processes: quiet runs gave 0.94x-1.03x, a CI-like run 1.12x (+0.19 s).
    **{b.what: 1 / 1.25 for b in BUDGETS if b.ours.startswith("test_pytest_run")},
}


def main(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        report = json.load(handle)
    medians = {b["name"]: b["stats"]["median"] for b in report["benchmarks"]}
    readers = {b["name"]: b.get("extra_info", {}).get("reader") for b in report["benchmarks"]}
    # A GPU run by the plugin's machine_info, or by the cases' own record of their device
    # (a run without the plugin loaded has no machine_info: it must not get the CPU budgets).
    on_gpu = bool(report.get("machine_info", {}).get("kernelprof", {}).get("gpu")) or any(
        b.get("extra_info", {}).get("device") == "cuda" for b in report["benchmarks"]
    )
    failed = checked = 0
    for budget in BUDGETS:
        if budget.ours not in medians or budget.theirs not in medians:
            print(f"not run  {budget.what}")
            continue
        if budget.reader and readers[budget.ours] != budget.reader:
            print(f"not run  {budget.what}: read without {budget.reader} (not installed)")
            continue
        checked += 1
        at_least = budget.at_least if on_gpu else CPU_ONLY_RELAXED.get(budget.what, budget.at_least)
        ratio = medians[budget.theirs] / medians[budget.ours]
        slower_s = medians[budget.ours] - medians[budget.theirs]
        ok = ratio >= at_least or (budget.or_within_s > 0 and slower_s <= budget.or_within_s)
        failed += not ok
        print(f"{'ok' if ok else 'MISSED':8} {budget.what}: {ratio:.2f} (budget >= {at_least:.2f})")
    if not checked:
        print(f"no budgeted benchmark in {path}")
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
