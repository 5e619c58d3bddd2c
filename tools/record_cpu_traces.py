"""Record the small CPU traces of tests/data/cpu_torch<VERSION>_*.json.gz with the torch at hand.

    python -m tools.record_cpu_traces OUTDIR      (from the repository root, in each torch's environment)

Each torch version exports its Chrome trace in its own layout (fields, flow events, ids,
metadata); tests/unit/traces/test_torch_layouts.py reads every recorded one to the same facts.
torch.profiler is driven directly, not through pytest_kernelprof's capture, so that torch versions
below the plugin's floor record too: ``calls`` marks each call with a ``ProfilerStep#N`` range as
the plugin's capture does (2 warm-up calls, then 3), ``step`` is a user's own profiler with a
schedule and ``prof.step()`` (torch marks the steps only under a schedule).
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))


def _call(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.profiler.record_function("my_block"):
        y = model(x)
    return torch.matmul(y, y.T).sum()


def _export(prof: torch.profiler.profile, path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(plain)
        with open(plain, "rb") as src, gzip.GzipFile(path, "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)


def record(outdir: Path) -> list[Path]:
    version = torch.__version__.split("+", 1)[0]
    model, x = _model(), torch.randn(4, 16)
    with torch.no_grad():
        for _ in range(2):
            _call(model, x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as calls:
            for i in range(3):
                with torch.profiler.record_function(f"ProfilerStep#{i}"):
                    _call(model, x)
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule) as steps:
            for _ in range(4):  # a warm-up step, then the 3 recorded ones
                _call(model, x)
                steps.step()
    paths = [outdir / f"cpu_torch{version}_{name}.json.gz" for name in ("calls", "step")]
    _export(calls, paths[0])
    _export(steps, paths[1])
    return paths


if __name__ == "__main__":
    for written in record(Path(sys.argv[1])):
        print(written)
