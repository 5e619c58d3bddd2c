"""Work that must grow no faster than its input (issue 34): each case runs one input of the
size that took minutes before and ten inputs a tenth of its size, in interleaved rounds
(``interleave`` in conftest.py). Linear work takes about as long for both; work that grows
with the square of the input takes ten times as long for the one big input.

    python -m pytest benchmarks/test_bench_growth.py --benchmark-json=bench.json
    python benchmarks/check_budget.py bench.json

- ``test_decode_growth``: a 12 KB Inductor-style kernel name against ten of 1.2 KB (the
  fused-op splitter tried every pair of word positions: 59 s for the 12 KB name).
- ``test_diff_growth``: the diff of two calls of 14,000 kernels, half the names changed, against
  ten of 1,400 (difflib and the fusion search: 174 s for the big one).
- ``test_layer_diff_growth``: the diff of 4,000 kernels against 1,000, 5-kernel layers with one
  kernel renamed in each, against ten of 400 against 100 (difflib's search read the rest of both
  calls once per 4-kernel match: 8 to 26 s for the big one, 9 s at 2,000 against 2,000).
- ``test_teaching_line_growth``: a teaching line of 16,000 colons (``--kernels``, the
  ``kernelprof_kernels`` ini) against ten of 1,600 (a lazy regex tried each colon: 24 s).
- ``test_timeline_growth``: the timeline page of a trace of 20,000 calls against ten of 2,000
  (each event looked for in every call: 37 s for ``kernelprof show --html``).
- ``test_ops_growth``: the profile table of a trace of one call with 20,000 user ranges against
  ten of 2,000 (each op looked up by a scan of the names: 3.7 s for ``kernelprof show --ops``,
  12 s at 40,000).
- ``test_shown_name_growth``: the shown (shortened) form of a crafted name nested 20,000 deep
  against ten nested 2,000 deep (20 s and more when each template list cost a pass; a unit test
  held it under 2 s with a clock, which a loaded machine can break).
- ``test_name_list_explanation_growth``: the assertion explanation of ``a.kernels.names ==
  b.kernels.names``, 100,000 names each, half changed, against ten of 10,000 (difflib aligned
  the whole lists: 28 s at 20,000, growing with the square of the length).

Peak memory (tracemalloc, one extra call of each kind) goes to ``extra_info["peak_mb"]``.
"""

from __future__ import annotations

import gzip
import json
import random
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.diff import diff_kernels, render_diff
from pytest_kernelprof.decode import KernelName, parse_kernel_name
from pytest_kernelprof.decode.decoder import _by_name
from pytest_kernelprof.decode.inductor import inductor_origins
from pytest_kernelprof.decode.teach import parse_teaching
from pytest_kernelprof.errors import TeachingError
from pytest_kernelprof.model.explain import MAX_BODY_LINES, explain
from pytest_kernelprof.model.kernels import KernelNames
from pytest_kernelprof.reports.timeline import render_page
from pytest_kernelprof.tables import NAME_WIDTH, display_name

ROUNDS = 5
OPS = ("add", "mul", "native_layer_norm", "view", "_unsafe_view", "tanh", "clone", "sigmoid_backward")


def _peak_mb(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    finally:
        tracemalloc.stop()


def _measure(benchmark: Any, interleave: Any, kinds: dict[str, Callable[[], Any]]) -> None:
    benchmark.extra_info["peak_mb"] = {name: _peak_mb(kind) for name, kind in kinds.items()}
    interleave(kinds, rounds=ROUNDS, min_sample_s=0.1)


def _ten(fn: Callable[..., Any], *args: Any) -> None:
    for _ in range(10):
        fn(*args)


def inductor_name(chars: int) -> str:
    """``triton_poi_fused_<op>_<op>..._0`` of about ``chars`` characters."""
    ops: list[str] = []
    while sum(len(op) + 1 for op in ops) < chars:
        ops.append(OPS[len(ops) % len(OPS)])
    return "triton_poi_fused_" + "_".join(ops) + "_0"


def test_decode_growth(benchmark: Any, interleave: Any) -> None:
    decode = _by_name.__wrapped__  # type: ignore[attr-defined]  # the decoding, not its cache
    big, small = inductor_name(12_000), inductor_name(1_200)
    _measure(
        benchmark,
        interleave,
        {"decode a 12 KB name": lambda: decode(big), "decode ten 1.2 KB names": lambda: _ten(decode, small)},
    )
    # Split into every op the name joins: its views too, which fused ops leave out.
    assert len(inductor_origins(small)) > 100


def kernel_calls(count: int, seed: int = 0) -> tuple[list[KernelName], list[KernelName]]:
    """Two calls of ``count`` kernels, a model's layers (names repeat), half the names changed."""
    rng = random.Random(seed)
    names = [f"triton_red_fused_sum_{i % 400}" for i in range(count)]
    before = [parse_kernel_name(name) for name in names]
    after = list(before)
    for index in rng.sample(range(count), count // 2):
        after[index] = parse_kernel_name(f"triton_per_fused_softmax_{index}")
    return before, after


def test_diff_growth(benchmark: Any, interleave: Any) -> None:
    big, small = kernel_calls(14_000), kernel_calls(1_400)
    _measure(
        benchmark,
        interleave,
        {
            "diff 14,000 kernels": lambda: render_diff(diff_kernels(*big)),
            "ten diffs of 1,400 kernels": lambda: _ten(lambda: render_diff(diff_kernels(*small))),
        },
    )


LAYER = ("triton_poi_fused_add_0", "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT", "triton_red_fused_sum_1",
         "triton_per_fused_softmax_2", "triton_poi_fused_mul_3")  # fmt: skip


def layer_calls(before: int, after: int) -> tuple[list[KernelName], list[KernelName]]:
    """Calls of ``before`` and ``after`` kernels, 5-kernel layers; the third renamed in every layer of the second."""
    layer = [parse_kernel_name(name) for name in LAYER]
    renamed = [*layer[:2], parse_kernel_name("triton_red_fused_mean_1"), *layer[3:]]
    return layer * (before // len(layer)), renamed * (after // len(layer))


def test_layer_diff_growth(benchmark: Any, interleave: Any) -> None:
    big, small = layer_calls(4_000, 1_000), layer_calls(400, 100)
    _measure(
        benchmark,
        interleave,
        {
            "diff 4,000 kernels against 1,000": lambda: render_diff(diff_kernels(*big)),
            "ten diffs of 400 against 100": lambda: _ten(lambda: render_diff(diff_kernels(*small))),
        },
    )


def test_teaching_line_growth(benchmark: Any, interleave: Any) -> None:
    def parse(colons: int) -> None:
        with pytest.raises(TeachingError):
            parse_teaching("a" + ": k=v" * colons + " !", "growth")

    _measure(
        benchmark,
        interleave,
        {"read a line of 16,000 colons": lambda: parse(16_000), "read ten of 1,600": lambda: _ten(parse, 1_600)},
    )


def many_calls_trace(path: Path, calls: int) -> Path:
    """A Chrome trace of ``calls`` profiled calls (``ProfilerStep#N``), each an op that launches
    one kernel, with a memcpy every tenth call."""
    events: list[dict[str, Any]] = []
    for call in range(calls):
        t = 100.0 * call
        corr = 2 * call + 1
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{call}", "pid": 1, "tid": 1,
                       "ts": t, "dur": 90.0, "args": {"External id": corr}})  # fmt: skip
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": t + 1,
                       "dur": 20.0, "args": {"External id": corr + 1}})  # fmt: skip
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t + 2, "dur": 5.0, "args": {"External id": corr + 1, "correlation": corr}})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7,
                       "ts": t + 10, "dur": 8.0, "args": {"External id": corr + 1, "correlation": corr,
                       "device": 0, "stream": 7, "grid": [1, 1, 1], "block": [128, 1, 1]}})  # fmt: skip
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    return path


@pytest.fixture(scope="module")
def call_traces(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, Any]]:
    folder = tmp_path_factory.mktemp("calls")
    found = {}
    for calls in (20_000, 2_000):
        path = many_calls_trace(folder / f"calls_{calls}.json.gz", calls)
        found[calls] = (path, load_trace(path))
    return found


def test_timeline_growth(benchmark: Any, interleave: Any, call_traces: dict[int, tuple[Path, Any]]) -> None:
    (big, big_prof), (small, small_prof) = call_traces[20_000], call_traces[2_000]
    assert len(big_prof.calls) == 20_000
    _measure(
        benchmark,
        interleave,
        {
            "timeline page of 20,000 calls": lambda: render_page(big_prof, title="big", trace=big),
            "ten pages of 2,000 calls": lambda: _ten(lambda: render_page(small_prof, title="small", trace=small)),
        },
    )


def ranges_trace(path: Path, ranges: int) -> Path:
    """A Chrome trace of one profiled call that opens ``ranges`` user ranges, each its own name
    (``record_function`` around each item of a loop), and launches nothing."""
    step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0.0,
            "dur": 10.0 * ranges + 100, "args": {"External id": 1}}  # fmt: skip
    events: list[dict[str, Any]] = [step]
    for index in range(ranges):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"range_{index}", "pid": 1, "tid": 1,
                       "ts": 10.0 * index + 1, "dur": 5.0, "args": {"External id": index + 2}})  # fmt: skip
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    return path


def test_ops_growth(benchmark: Any, interleave: Any, tmp_path: Path) -> None:
    big, small = ranges_trace(tmp_path / "big.json.gz", 20_000), ranges_trace(tmp_path / "small.json.gz", 2_000)
    assert len(load_trace(big).ops) == 20_000
    _measure(
        benchmark,
        interleave,
        {
            "profile table of 20,000 ranges": lambda: load_trace(big).table(),
            "ten tables of 2,000 ranges": lambda: _ten(lambda: load_trace(small).table()),
        },
    )


def nested_name(depth: int) -> str:
    """``f<a<a<...>>>``: template lists ``depth`` deep, each holding the next."""
    return "f" + "<a" * depth + ">" * depth


def test_shown_name_growth(benchmark: Any, interleave: Any) -> None:
    shown = display_name.__wrapped__  # the work, not its cache
    big, small = nested_name(20_000), nested_name(2_000)
    _measure(
        benchmark,
        interleave,
        {"show a name 20,000 deep": lambda: shown(big), "show ten names 2,000 deep": lambda: _ten(shown, small)},
    )
    assert len(display_name(big)) <= NAME_WIDTH


def name_lists(count: int, seed: int = 0) -> tuple[KernelNames, list[str]]:
    """Two name lists of ``count`` kernels, a model's layers, half the names changed."""
    before, after = kernel_calls(count, seed)
    return KernelNames(kernel.name for kernel in before), [kernel.name for kernel in after]


def test_name_list_explanation_growth(benchmark: Any, interleave: Any) -> None:
    big, small = name_lists(100_000), name_lists(10_000)
    _measure(
        benchmark,
        interleave,
        {
            "explain 100,000 names": lambda: explain("==", *big),
            "explain ten of 10,000": lambda: _ten(explain, "==", *small),
        },
    )
    explanation = explain("==", *big)
    assert explanation is not None
    assert len(explanation.body) == MAX_BODY_LINES + 1
