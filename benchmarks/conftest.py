from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytest imports a conftest with its own folder first on the import path ("prepend" mode).
from synthetic import write_trace

# KERNELPROF_BENCH_TRACE_MB=10 for a quicker run (CI).
SIZES_MB = tuple(int(mb) for mb in os.environ.get("KERNELPROF_BENCH_TRACE_MB", "10,100").split(","))


@pytest.fixture(scope="session", params=SIZES_MB, ids=lambda mb: f"{mb}MB")
def big_trace(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uncompressed trace of the given size, made from a recorded H200 training step."""
    return write_trace(tmp_path_factory.mktemp("traces") / f"trace_{request.param}MB.json", request.param)
