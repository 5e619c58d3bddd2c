"""load_trace against a bare json.load and HolisticTraceAnalysis's loader on the same file.

    pip install -e ".[bench]"
    python -m pytest benchmarks/test_bench_load_trace.py --benchmark-group-by=param:big_trace

``test_load_trace_cost`` runs ``json.load``, ``load_trace`` (with msgspec where it is
installed, the ``[fast]`` extra) and ``load_trace`` with the standard library's reader that
serves without it, in interleaved rounds (``interleave`` in conftest.py; their times per
round go to extra_info["interleaved"]). Peak memory (tracemalloc, one extra call) goes to
extra_info as a multiple of the file's size, by kind, and the reader ``load_trace`` used
to ``reader``.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.traces import chrome

ROUNDS = 3
SMALL_ROUNDS = 7  # a trace of 20 MB or less: more rounds against the noise of a shared machine


def _rounds(path: Path) -> int:
    return SMALL_ROUNDS if path.stat().st_size <= 20e6 else ROUNDS


def _peak_ratio(fn: Callable[[], Any], path: Path) -> float:
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return round(peak / path.stat().st_size, 2)


def _json_load(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _with_json_reader(path: Path) -> Any:
    """load_trace with the standard library's reader, as where msgspec is not installed."""
    typed_reader = chrome.typed_reader
    chrome.typed_reader = lambda: None  # type: ignore[assignment]
    try:
        return load_trace(path)
    finally:
        chrome.typed_reader = typed_reader


def test_load_trace_cost(benchmark: Any, interleave: Any, big_trace: Path) -> None:
    kinds: dict[str, Callable[[], Any]] = {
        "json.load": lambda: _json_load(big_trace),
        "load_trace": lambda: load_trace(big_trace),
        "load_trace, standard-library reader": lambda: _with_json_reader(big_trace),
    }
    benchmark.extra_info["reader"] = "json" if chrome.typed_reader() is None else "msgspec"
    benchmark.extra_info["peak_x_file"] = {name: _peak_ratio(kind, big_trace) for name, kind in kinds.items()}
    interleave(kinds, rounds=_rounds(big_trace))
    for read in (load_trace, _with_json_reader):
        prof = read(big_trace)
        assert len(prof.calls) > 1
        assert prof.kernels.count(kind="gemm") == 9


@pytest.mark.filterwarnings("ignore")  # pandas deprecations inside HTA
def test_hta_parse_trace_dataframe(benchmark: Any, big_trace: Path) -> None:
    """HTA's internal parse step: JSON to a pandas DataFrame, nothing else."""
    trace_parser = pytest.importorskip("hta.common.trace_parser")
    cfg = trace_parser.ParserConfig()

    def parse() -> Any:
        return trace_parser.parse_trace_dataframe(str(big_trace), cfg)

    benchmark.extra_info["peak_x_file"] = _peak_ratio(parse, big_trace)
    benchmark.pedantic(parse, rounds=ROUNDS, iterations=1)


@pytest.mark.filterwarnings("ignore")
def test_hta_trace_analysis(benchmark: Any, big_trace: Path, tmp_path: Path) -> None:
    """HTA's public loader, ``TraceAnalysis(trace_dir=...)``: parse plus its preprocessing.

    Only on the small trace: it took 263 s for the 100 MB one on a 2-core machine.
    """
    if big_trace.stat().st_size > 20e6:
        pytest.skip("TraceAnalysis takes minutes on this size")
    trace_analysis = pytest.importorskip("hta.trace_analysis")
    (tmp_path / "rank0.json").symlink_to(big_trace)
    benchmark.pedantic(trace_analysis.TraceAnalysis, kwargs={"trace_dir": str(tmp_path)}, rounds=1, iterations=1)
