"""Compile small ``@triton.jit`` kernels of each kind to TTIR for the offline tests of
``decode/triton_ir.py`` (``tests/data/triton_ir/*.ttir.gz``). Needs Triton, not a GPU: the
kernels are compiled for a target named here (sm90), and only the TTIR is kept.

    python tools/record_triton_ir.py tests/data/triton_ir

Each file is named ``<kind>_<dtype>_<kernel>.ttir.gz``: the facts the decoder must read from it.
Location attributes are dropped; the operations are Triton's own.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):  # noqa: N803 (Triton's constexpr spelling)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def gelu_mul(x, y, out, BLOCK: tl.constexpr):  # noqa: N803
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + offs).to(tl.float32)
    g = 0.5 * a * (1 + tl.erf(a * 0.7071067811865476))
    tl.store(out + offs, (g * tl.load(y + offs).to(tl.float32)).to(tl.bfloat16))


@triton.jit
def row_sum(x, out, N: tl.constexpr):  # noqa: N803
    row = tl.program_id(0)
    tl.store(out + row, tl.sum(tl.load(x + row * N + tl.arange(0, N)).to(tl.float32), axis=0))


@triton.jit
def row_argmax(x, out, N: tl.constexpr):  # noqa: N803
    row = tl.program_id(0)
    tl.store(out + row, tl.argmax(tl.load(x + row * N + tl.arange(0, N)), axis=0))


@triton.jit
def row_cumsum(x, out, N: tl.constexpr):  # noqa: N803
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out + offs, tl.cumsum(tl.load(x + offs), axis=0))


@triton.jit
def row_sort(x, out, N: tl.constexpr):  # noqa: N803
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out + offs, tl.sort(tl.load(x + offs)))


@triton.jit
def matmul(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):  # noqa: N803
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.dot(tl.load(a + m[:, None] * K + k[None, :]), tl.load(b + k[:, None] * N + n[None, :]))
    tl.store(c + m[:, None] * N + n[None, :], acc.to(c.dtype.element_ty))


@triton.jit
def histogram(x, out, N: tl.constexpr, BINS: tl.constexpr):  # noqa: N803
    tl.store(out + tl.arange(0, BINS), tl.histogram(tl.load(x + tl.arange(0, N)), BINS))


GEMM = {"M": "constexpr", "N": "constexpr", "K": "constexpr"}
SQUARE = {"M": 64, "N": 64, "K": 64}
# (file name, kernel, signature, constexprs)
KERNELS = (
    ("pointwise_fp32_add", add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 1024}),
    ("pointwise_bf16_gelu_mul", gelu_mul, {"x": "*bf16", "y": "*bf16", "out": "*bf16"}, {"BLOCK": 1024}),
    ("reduction_fp32_bf16_row_sum", row_sum, {"x": "*bf16", "out": "*fp32"}, {"N": 1024}),
    ("reduction_fp16_row_argmax", row_argmax, {"x": "*fp16", "out": "*i32"}, {"N": 1024}),
    ("reduction_int32_histogram", histogram, {"x": "*i32", "out": "*i32"}, {"N": 1024, "BINS": 64}),
    ("scan_fp32_row_cumsum", row_cumsum, {"x": "*fp32", "out": "*fp32"}, {"N": 1024}),
    ("sort_fp16_row_sort", row_sort, {"x": "*fp16", "out": "*fp16"}, {"N": 256}),
    ("gemm_bf16_matmul", matmul, {"a": "*bf16", "b": "*bf16", "c": "*bf16", **GEMM}, SQUARE),
    ("gemm_fp8_matmul", matmul, {"a": "*fp8e4nv", "b": "*fp8e4nv", "c": "*fp16", **GEMM}, SQUARE),
    ("gemm_tf32_matmul", matmul, {"a": "*fp32", "b": "*fp32", "c": "*fp32", **GEMM}, SQUARE),
)
_LOCATION = re.compile(r" loc\([^\n]*\)$", re.M)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    target = GPUTarget("cuda", 90, 32)
    for name, kernel, signature, constexprs in KERNELS:
        for key in constexprs:
            signature = {**signature, key: "constexpr"}
        source = triton.compiler.ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
        ttir = triton.compile(source, target=target).asm["ttir"]
        text = "\n".join(line for line in _LOCATION.sub("", ttir).splitlines() if not line.startswith("#loc"))
        (out / f"{name}.ttir.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        print(f"{name}: {len(text)} characters (Triton {triton.__version__})")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/triton_ir"))
