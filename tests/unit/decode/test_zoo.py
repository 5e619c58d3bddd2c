"""The kernel zoo: ATen ops swept across dtypes, shapes and libraries on an H100 and an H200.

Each trace (``tests/data/zoo/<card>/<case>.json.gz``, recorded by ``tools/kernel_zoo.py``) is
read through ``load_trace``, the same build a live profile goes through: the launching op and
its input dtypes are evidence here exactly as they are live.
"""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.model import Kernel
from tests.helpers import DATA

ZOO = DATA / "zoo"
CARDS = ("h100", "h200")
GEMM_OPS = frozenset(
    (
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::_scaled_mm",
        "aten::_int_mm",
        "aten::addmv",
        "aten::mv",
        "aten::dot",
        "aten::vdot",
    )
)
# torch.cuda._sleep's kernel waits: it is placed, as "other", by its name.
SLEEP = "spin_kernel"


def _kernels(card: str) -> list[tuple[str, Kernel]]:
    traces = sorted((ZOO / card).glob("*.json.gz"))
    assert len(traces) >= 400, f"{card}: the zoo has {len(traces)} traces"
    return [(trace.name, kernel) for trace in traces for kernel in load_trace(trace).kernels]


@pytest.fixture(scope="module", params=CARDS)
def zoo(request: pytest.FixtureRequest) -> list[tuple[str, Kernel]]:
    return _kernels(request.param)


def test_no_library_kernel_is_other(zoo: list[tuple[str, Kernel]]) -> None:
    other = sorted({(k.name[:120], k.op) for case, k in zoo if k.kind == "other" and SLEEP not in k.name})
    assert other == []
    assert not [k for _, k in zoo if k.unplaced]


def test_every_kernel_under_a_gemm_op_has_a_kind_and_a_dtype(zoo: list[tuple[str, Kernel]]) -> None:
    under_gemm = [(case, k) for case, k in zoo if k.op in GEMM_OPS]
    assert len(under_gemm) > 100
    missing = sorted(
        {(case, k.name[:100], k.kind, k.dtype) for case, k in under_gemm if k.kind == "other" or not k.dtype}
    )
    assert missing == []


def test_gemm_helpers_are_not_gemms(zoo: list[tuple[str, Kernel]]) -> None:
    # fp32 nn.Linear(256, 8) at batch 64: one GEMM, with cuBLAS's beta scaling and bias epilogue beside it.
    linear = [k for case, k in zoo if case.startswith("gemm_linear_256_8_b64_fp32.")]
    assert linear, "the zoo lost the fp32 nn.Linear(256, 8) case"
    assert [k.kind for k in linear].count("gemm") == 1
    assert all(k.dtype == "fp32" for k in linear)
    assert {k.part_of for k in linear if k.kind != "gemm"} <= {"gemm"}


def test_the_zoo_spans_the_kinds(zoo: list[tuple[str, Kernel]]) -> None:
    kinds = Counter(k.kind for _, k in zoo)
    assert {"gemm", "convolution", "attention", "fft", "rnn", "linalg", "sort", "scan"} <= set(kinds)


def test_facts_not_from_the_name_say_where_they_came_from(zoo: list[tuple[str, Kernel]]) -> None:
    by_op = [k for _, k in zoo if k.evidence.kind == "op"]
    assert by_op, "no kernel in the zoo was placed by its op"
    assert all(k.kind != "other" for k in by_op)
    assert {k.op for k in by_op} <= {k.op for _, k in zoo}
