"""Large traces for benchmarks: a recorded H200 training step, repeated until the size is reached.

Each copy is shifted in time and gets fresh op and correlation ids, so the result is a
valid trace of many ``ProfilerStep#N`` calls, laid out as torch.profiler writes it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

SEED = Path(__file__).parent.parent / "tests" / "data" / "h200_train_compiled.json.gz"


def _shift(event: dict[str, Any], dt: float, did: int) -> dict[str, Any]:
    out = dict(event)
    out["ts"] = round(event["ts"] + dt, 3)
    args = event.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in ("External id", "correlation"):
            if isinstance(args.get(key), int) and args[key]:
                args[key] += did
        out["args"] = args
    if event.get("ph") == "X" and str(event.get("name", "")).startswith("ProfilerStep#"):
        out["name"] = "ProfilerStep#%d"
    return out


def write_trace(path: Path, megabytes: float) -> Path:
    """Write a Chrome trace of about ``megabytes`` MB (uncompressed; gzipped if .gz)."""
    seed = json.loads(gzip.decompress(SEED.read_bytes()))
    events = [e for e in seed["traceEvents"] if e.get("ph") == "X"]
    first = min(e["ts"] for e in events)
    span = max(e["ts"] + e.get("dur", 0) for e in events) - first + 10
    steps_in_seed = [e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    header = {k: v for k, v in seed.items() if k != "traceEvents"}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as out:  # type: ignore[operator]
        out.write("{\n")
        for key, value in header.items():
            out.write(f'  "{key}": {json.dumps(value)},\n')
        out.write('  "traceEvents": [\n')
        written = 0
        copy = 0
        steps = 0
        first_event = True
        while written < megabytes * 1e6:
            for event in events:
                shifted = _shift(event, copy * span, copy * 1_000_000)
                if shifted["name"] == "ProfilerStep#%d":
                    shifted["name"] = f"ProfilerStep#{steps}"
                    if event.get("cat") == "user_annotation":
                        steps += 1
                text = json.dumps(shifted, indent=None)
                out.write(("  " if first_event else ",\n  ") + text)
                written += len(text) + 4
                first_event = False
            copy += 1
        out.write("\n  ]\n}\n")
    assert steps_in_seed, f"{SEED} has no ProfilerStep annotations"
    return path
