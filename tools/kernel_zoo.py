"""The kernel zoo: one small, trimmed Chrome trace per ATen case, on the card it runs on.

    python -m tools.kernel_zoo OUTDIR [--only GLOB[,GLOB...]] [--card NAME] [--list]
    python tools/kernel_zoo.py OUTDIR ...                  (also runnable as a plain script)
    python -m tools.kernel_zoo --summary CARD_DIR [--tsv FILE] [--out FILE]

Each case is one small callable: it is warmed up (once, twice for torch.compile), then
called once under ``torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True)``
inside a ``ProfilerStep#1`` range, so ``pytest_kernelprof.load_trace`` reads each trace as
one call. The exported trace keeps only what the tests read: complete ("X") events of CPU
ops, annotations, CUDA runtime/driver calls, kernels, memcpys and memsets, with their
arguments cut to the fields ``load_trace`` and the decoder's evidence need (the op's
``Input type`` and ``Input Dims`` among them), and the header's ``deviceProperties``.

A case the card or build cannot run (fp8 on an older card, a backend that refuses the
inputs) is skipped with its reason printed, never fatal. ``OUTDIR/<card>/<case>.json.gz``
holds the traces and ``OUTDIR/<card>_cases.json`` what ran, what was skipped and why.

``--summary`` loads every trace with ``pytest_kernelprof.load_trace`` and prints the decode
summary: counts by kind, every distinct name decoded as kind ``other`` (or family
``unknown``) with its launching op and that op's input dtypes, and every kernel under a GEMM
op whose kind is not ``gemm`` or whose dtype is None. ``--tsv`` writes every distinct
(kernel name, op, input dtypes) with the decoded fields.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import gzip
import json
import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    setup: Callable[[], Callable[[], Any]]  # builds inputs (not profiled), returns the call
    tf32: bool = False
    benchmark: bool | None = None  # cudnn.benchmark for this case; None leaves it off
    deterministic: bool = False  # cudnn.deterministic for this case
    compiled: bool = False
    note: str = ""


CASES: dict[str, Case] = {}


def case(name: str, setup: Callable[[], Callable[[], Any]], **kw: Any) -> None:
    if name in CASES:
        raise ValueError(f"duplicate case {name}")
    CASES[name] = Case(name, setup, **kw)


def build_cases() -> None:  # noqa: C901, PLR0915 - a table in code
    import torch
    import torch.nn.functional as F
    from torch import nn

    dev = DEVICE
    f32, bf16, f16, f64 = torch.float32, torch.bfloat16, torch.float16, torch.float64
    dtypes = {"fp32": (f32, False), "tf32": (f32, True), "bf16": (bf16, False), "fp16": (f16, False)}

    def T(*shape: int, dtype: Any = f32, grad: bool = False, cl: bool = False) -> torch.Tensor:
        x = torch.randn(*shape, device=dev, dtype=dtype)
        if cl:
            x = x.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
        return x.requires_grad_(grad)

    def fwd(f: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            with torch.no_grad():
                return f()

        return call

    def bwd(f: Callable[[], Any], leaves: list[torch.Tensor]) -> Callable[[], Any]:
        """Forward and backward, with a fixed output gradient and the leaves' grads cleared."""
        state: dict[str, torch.Tensor] = {}

        def call() -> None:
            for p in leaves:
                p.grad = None
            out = f()
            if isinstance(out, tuple):
                out = out[0]
            g = state.get("g")
            if g is None:
                g = state["g"] = torch.ones_like(out)
            out.backward(g)

        return call

    def leaves_of(*things: Any) -> list[torch.Tensor]:
        out: list[torch.Tensor] = []
        for t in things:
            if isinstance(t, nn.Module):
                out.extend(p for p in t.parameters() if p.requires_grad)
            elif isinstance(t, torch.Tensor) and t.requires_grad:
                out.append(t)
        return out

    # ---- GEMM: dtypes x shapes ------------------------------------------------------
    def mm(m: int, k: int, n: int, ta: bool = False, tb: bool = False) -> Callable[[Any], Callable[[], Any]]:
        def make(dt: Any) -> Callable[[], Any]:
            a = T(k, m, dtype=dt).t() if ta else T(m, k, dtype=dt)
            b = T(n, k, dtype=dt).t() if tb else T(k, n, dtype=dt)
            return fwd(lambda: torch.mm(a, b))

        return make

    def mv(make_add: bool) -> Callable[[Any], Callable[[], Any]]:
        def make(dt: Any) -> Callable[[], Any]:
            a, x, y = T(4096, 4096, dtype=dt), T(4096, dtype=dt), T(4096, dtype=dt)
            return fwd(lambda: torch.addmv(y, a, x, beta=0.5) if make_add else torch.mv(a, x))

        return make

    def dot(dt: Any) -> Callable[[], Any]:
        a, b = T(1 << 16, dtype=dt), T(1 << 16, dtype=dt)
        return fwd(lambda: torch.dot(a, b))

    def addmm(beta: float) -> Callable[[Any], Callable[[], Any]]:
        def make(dt: Any) -> Callable[[], Any]:
            a, b = T(1024, 1024, dtype=dt), T(1024, 1024, dtype=dt)
            c = T(1024, dtype=dt) if beta == 1.0 else T(1024, 1024, dtype=dt)
            return fwd(lambda: torch.addmm(c, a, b, beta=beta, alpha=1.0 if beta == 1.0 else 2.0))

        return make

    def bmm(b: int, m: int, k: int, n: int, add: bool = False) -> Callable[[Any], Callable[[], Any]]:
        def make(dt: Any) -> Callable[[], Any]:
            x, y, c = T(b, m, k, dtype=dt), T(b, k, n, dtype=dt), T(b, m, n, dtype=dt)
            return fwd(lambda: torch.baddbmm(c, x, y, beta=0.5) if add else torch.bmm(x, y))

        return make

    def linear(i: int, o: int, shape: tuple[int, ...], backward: bool = False) -> Callable[[Any], Callable[[], Any]]:
        def make(dt: Any) -> Callable[[], Any]:
            lin = nn.Linear(i, o, device=dev, dtype=dt)
            x = T(*shape, dtype=dt, grad=backward)
            return bwd(lambda: lin(x), leaves_of(lin, x)) if backward else fwd(lambda: lin(x))

        return make

    def matmul3d(dt: Any) -> Callable[[], Any]:
        x, w = T(8, 128, 1024, dtype=dt), T(1024, 1024, dtype=dt)
        return fwd(lambda: torch.matmul(x, w))

    def einsum(dt: Any) -> Callable[[], Any]:
        q, k = T(4, 8, 128, 64, dtype=dt), T(4, 8, 128, 64, dtype=dt)
        return fwd(lambda: torch.einsum("bhqd,bhkd->bhqk", q, k))

    gemms: dict[str, tuple[Callable[[Any], Callable[[], Any]], tuple[str, ...]]] = {
        "mm_gemv_m1": (mm(1, 4096, 4096), ("fp32", "bf16", "fp16")),
        "mm_gemv_n1": (mm(4096, 4096, 1), ("fp32", "bf16", "fp16")),
        "mv": (mv(False), ("fp32", "bf16", "fp16")),
        "addmv": (mv(True), ("fp32", "bf16", "fp16")),
        "dot": (dot, ("fp32", "bf16", "fp16")),
        "mm_tiny_16": (mm(16, 16, 16), ("fp32", "bf16")),
        "mm_small_64": (mm(64, 64, 64), ("fp32", "tf32", "bf16")),
        "mm_skinny_n16": (mm(8192, 1024, 16), ("fp32", "tf32", "bf16", "fp16")),
        "mm_skinny_m16": (mm(16, 1024, 8192), ("fp32", "bf16")),
        "mm_splitk_64x64x65536": (mm(64, 65536, 64), ("fp32", "tf32", "bf16", "fp16")),
        "mm_largek_512x16384": (mm(512, 16384, 512), ("fp32", "tf32", "bf16", "fp16")),
        "mm_square_2048": (mm(2048, 2048, 2048), ("fp32", "tf32", "bf16", "fp16")),
        "mm_odd_1000x999x1001": (mm(1000, 999, 1001), ("fp32", "bf16")),
        "mm_nt_1024": (mm(1024, 1024, 1024, tb=True), ("fp32", "bf16")),
        "mm_tn_1024": (mm(1024, 1024, 1024, ta=True), ("fp32", "bf16")),
        "addmm_bias_1024": (addmm(1.0), ("fp32", "tf32", "bf16")),
        "addmm_beta_1024": (addmm(0.5), ("fp32", "bf16")),
        "bmm_32x128x64x128": (bmm(32, 128, 64, 128), ("fp32", "tf32", "bf16")),
        "bmm_8x1024": (bmm(8, 1024, 1024, 1024), ("fp32", "bf16")),
        "baddbmm_32x128x64x128": (bmm(32, 128, 64, 128, add=True), ("fp32", "bf16")),
        "matmul_3d": (matmul3d, ("fp32", "bf16")),
        "einsum_qk": (einsum, ("fp32", "bf16")),
        "linear_256_8_b64": (linear(256, 8, (64, 256)), ("fp32", "tf32", "bf16", "fp16")),
        "linear_1024_4096_3d": (linear(1024, 4096, (8, 128, 1024)), ("fp32", "bf16")),
        "linear_1024_bwd": (linear(1024, 1024, (512, 1024), backward=True), ("fp32", "tf32", "bf16")),
        "linear_256_8_b64_bwd": (linear(256, 8, (64, 256), backward=True), ("fp32", "bf16")),
    }
    for shape, (make, names) in gemms.items():
        for dn in names:
            dt, tf32 = dtypes[dn]
            case(f"gemm_{shape}_{dn}", (lambda make=make, dt=dt: make(dt)), tf32=tf32)
    for shape, make in {
        "mm_512": mm(512, 512, 512),
        "bmm_16x64": bmm(16, 64, 64, 64),
        "mv": mv(False),
        "dot": dot,
    }.items():
        case(f"gemm_{shape}_fp64", (lambda make=make: make(f64)))

    def int_mm() -> Callable[[], Any]:
        a = torch.randint(-8, 8, (64, 128), device=dev, dtype=torch.int8)
        b = torch.randint(-8, 8, (128, 64), device=dev, dtype=torch.int8)
        return fwd(lambda: torch._int_mm(a, b))

    case("gemm_int_mm_int8", int_mm)

    def vec2(f: Callable[[torch.Tensor, torch.Tensor], Any], n: int, dt: Any) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            a, b = T(n, dtype=dt), T(n, dtype=dt)
            return fwd(lambda: f(a, b))

        return make

    case("gemm_outer_fp32", vec2(torch.outer, 2048, f32))
    case(
        "gemm_addr_fp32",
        lambda: fwd((lambda m, a, b: lambda: torch.addr(m, a, b, beta=0.5))(T(1024, 1024), T(1024), T(1024))),
    )
    case(
        "gemm_vdot_complex64",
        lambda: fwd(
            (lambda a, b: lambda: torch.vdot(a, b))(
                torch.randn(4096, dtype=torch.complex64, device=dev),
                torch.randn(4096, dtype=torch.complex64, device=dev),
            )
        ),
    )
    case(
        "gemm_mm_complex64",
        lambda: fwd(
            (lambda a, b: lambda: a @ b)(
                torch.randn(256, 256, dtype=torch.complex64, device=dev),
                torch.randn(256, 256, dtype=torch.complex64, device=dev),
            )
        ),
    )
    case(
        "gemm_matmul_1d_2d_bf16",
        lambda: fwd((lambda a, b: lambda: torch.matmul(a, b))(T(1024, dtype=bf16), T(1024, 4096, dtype=bf16))),
    )
    case(
        "gemm_addbmm_fp32",
        lambda: fwd((lambda c, a, b: lambda: torch.addbmm(c, a, b))(T(128, 128), T(16, 128, 64), T(16, 64, 128))),
    )
    case("gemm_linear_m1_fp16", lambda: linear(4096, 4096, (1, 4096))(f16))
    case("gemm_linear_m1_bf16", lambda: linear(4096, 4096, (1, 4096))(bf16))
    case(
        "gemm_bilinear_fp32",
        lambda: fwd((lambda m, a, b: lambda: m(a, b))(nn.Bilinear(64, 64, 32, device=dev), T(256, 64), T(256, 64))),
    )
    case(
        "gemm_mm_noncontig_fp32",
        lambda: fwd((lambda a, b: lambda: torch.mm(a, b))(T(1024, 2048)[:, ::2], T(1024, 1024))),
    )
    case("misc_cuda_sleep_spin", lambda: lambda: torch.cuda._sleep(1000))

    def scaled_mm(
        m: int, k: int, n: int, out: Any = bf16, rowwise: bool = False, bias: bool = False, e5m2: bool = False
    ) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            e4 = torch.float8_e4m3fn
            a = T(m, k).to(torch.float8_e5m2 if e5m2 else e4)
            b = T(n, k).to(e4).t()  # column-major, as _scaled_mm wants
            if rowwise:
                sa = torch.rand(m, 1, device=dev) + 0.5
                sb = torch.rand(1, n, device=dev) + 0.5
            else:
                sa = torch.tensor(1.0, device=dev)
                sb = torch.tensor(1.0, device=dev)
            bb = T(n, dtype=bf16) if bias else None
            return fwd(lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bb, out_dtype=out))

        return make

    case("gemm_scaled_mm_fp8_e4m3_1024_bf16", scaled_mm(1024, 1024, 1024))
    case("gemm_scaled_mm_fp8_e4m3_1024_fp32out", scaled_mm(1024, 1024, 1024, out=f32))
    case("gemm_scaled_mm_fp8_e4m3_1024_bias", scaled_mm(1024, 1024, 1024, bias=True))
    case("gemm_scaled_mm_fp8_e4m3_rowwise", scaled_mm(1024, 1024, 1024, rowwise=True))
    case("gemm_scaled_mm_fp8_e5m2xe4m3", scaled_mm(1024, 1024, 1024, e5m2=True))
    case("gemm_scaled_mm_fp8_e4m3_m16", scaled_mm(16, 4096, 4096))
    case("gemm_scaled_mm_fp8_e4m3_splitk", scaled_mm(64, 32768, 64))

    # ---- Convolutions ---------------------------------------------------------------
    convs: dict[str, tuple[Callable[..., nn.Module], tuple[int, ...]]] = {
        "2d_1x1": (lambda **k: nn.Conv2d(64, 128, 1, **k), (8, 64, 56, 56)),
        "2d_3x3": (lambda **k: nn.Conv2d(64, 64, 3, padding=1, **k), (8, 64, 56, 56)),
        "2d_5x5": (lambda **k: nn.Conv2d(32, 32, 5, padding=2, **k), (8, 32, 64, 64)),
        "2d_7x7s2": (lambda **k: nn.Conv2d(3, 64, 7, stride=2, padding=3, **k), (8, 3, 224, 224)),
        "2d_depthwise": (lambda **k: nn.Conv2d(128, 128, 3, padding=1, groups=128, **k), (8, 128, 56, 56)),
        "2d_grouped4": (lambda **k: nn.Conv2d(128, 128, 3, padding=1, groups=4, **k), (8, 128, 28, 28)),
        "2d_dilated": (lambda **k: nn.Conv2d(64, 64, 3, padding=2, dilation=2, **k), (8, 64, 56, 56)),
        "2d_transposed": (lambda **k: nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1, **k), (8, 64, 28, 28)),
        "1d_k3": (lambda **k: nn.Conv1d(64, 128, 3, padding=1, **k), (16, 64, 1024)),
        "3d_3x3x3": (lambda **k: nn.Conv3d(16, 32, 3, padding=1, **k), (2, 16, 16, 32, 32)),
        "3d_transposed": (lambda **k: nn.ConvTranspose3d(16, 8, 2, stride=2, **k), (2, 16, 8, 16, 16)),
    }

    def conv(kind: str, dt: Any, backward: bool, cl: bool = False) -> Callable[[], Callable[[], Any]]:
        ctor, shape = convs[kind]

        def make() -> Callable[[], Any]:
            mod = ctor(device=dev, dtype=dt)
            if cl:
                mod = mod.to(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
            x = T(*shape, dtype=dt, grad=backward, cl=cl)
            return bwd(lambda: mod(x), leaves_of(mod, x)) if backward else fwd(lambda: mod(x))

        return make

    for kind, (_, shape) in convs.items():
        minor = kind in ("2d_5x5", "2d_grouped4", "2d_dilated", "3d_transposed")
        core = kind in ("2d_1x1", "2d_3x3", "2d_7x7s2")
        for dn in ("fp32", "bf16") if minor else ("fp32", "tf32", "bf16", "fp16") if core else ("fp32", "tf32", "bf16"):
            dt, tf32 = dtypes[dn]
            case(f"conv{kind}_fwd_{dn}", conv(kind, dt, False), tf32=tf32)
        for dn in ("fp32", "bf16"):
            dt, tf32 = dtypes[dn]
            case(f"conv{kind}_bwd_{dn}", conv(kind, dt, True), tf32=tf32)
        if len(shape) in (4, 5) and kind in (
            "2d_1x1",
            "2d_3x3",
            "2d_7x7s2",
            "2d_depthwise",
            "2d_transposed",
            "3d_3x3x3",
        ):
            case(f"conv{kind}_fwd_bf16_cl", conv(kind, bf16, False, cl=True))
            case(f"conv{kind}_bwd_bf16_cl", conv(kind, bf16, True, cl=True))
    case("conv2d_3x3_bwd_tf32", conv("2d_3x3", f32, True), tf32=True)
    case("conv2d_3x3_bwd_fp16", conv("2d_3x3", f16, True))
    case("conv2d_3x3_fwd_fp32_cl", conv("2d_3x3", f32, False, cl=True))
    case("conv2d_3x3_fwd_fp64", conv("2d_3x3", f64, False))
    for kind, dn, backward in (
        ("2d_3x3", "fp32", False),
        ("2d_3x3", "fp32", True),
        ("2d_5x5", "fp32", True),
        ("2d_7x7s2", "fp32", True),
        ("2d_3x3", "bf16", True),
        ("2d_7x7s2", "fp16", True),
        ("2d_transposed", "fp32", True),
        ("1d_k3", "fp32", True),
        ("3d_3x3x3", "fp32", True),
    ):
        dt, tf32 = dtypes[dn]
        case(f"conv{kind}_{'bwd' if backward else 'fwd'}_{dn}_benchmark", conv(kind, dt, backward), benchmark=True)
    for kind, dn, cl in (
        ("2d_1x1", "bf16", True),
        ("2d_depthwise", "bf16", True),
        ("2d_grouped4", "fp16", False),
        ("2d_dilated", "fp32", False),
        ("3d_transposed", "fp32", False),
    ):
        dt, tf32 = dtypes[dn]
        case(f"conv{kind}_bwd_{dn}{'_cl' if cl else ''}_benchmark", conv(kind, dt, True, cl=cl), benchmark=True)
    for kind, dn in (("2d_3x3", "fp32"), ("2d_7x7s2", "bf16"), ("2d_transposed", "fp32")):
        dt, tf32 = dtypes[dn]
        case(f"conv{kind}_bwd_{dn}_deterministic", conv(kind, dt, True), deterministic=True)
    case("conv2d_1x1_bwd_fp64", conv("2d_1x1", f64, True))

    # ---- RNN ---------------------------------------------------------------------------
    def rnn(cls: type, dt: Any, backward: bool, **kw: Any) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            rest = {key: val for key, val in kw.items() if key != "num_layers"}
            mod = cls(256, 256, num_layers=kw.get("num_layers", 2), device=dev, dtype=dt, **rest)
            x = T(64, 32, 256, dtype=dt, grad=backward)
            return bwd(lambda: mod(x), leaves_of(mod, x)) if backward else fwd(lambda: mod(x))

        return make

    for cname, cls in (("lstm", nn.LSTM), ("gru", nn.GRU), ("rnn_tanh", nn.RNN)):
        for dn in ("fp32", "bf16", "fp16") if cname == "lstm" else ("fp32", "bf16"):
            dt = dtypes[dn][0]
            case(f"rnn_{cname}_fwd_{dn}", rnn(cls, dt, False))
            case(f"rnn_{cname}_bwd_{dn}", rnn(cls, dt, True))
    case("rnn_lstm_bidir_bwd_fp32", rnn(nn.LSTM, f32, True, bidirectional=True))
    case("rnn_lstm_proj_fwd_fp32", rnn(nn.LSTM, f32, False, proj_size=64, num_layers=1))
    case("rnn_rnn_relu_fwd_fp32", rnn(nn.RNN, f32, False, nonlinearity="relu", num_layers=1))

    def cell(cls: type) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            mod = cls(256, 256, device=dev)
            x = T(32, 256, grad=True)
            return bwd(lambda: mod(x), leaves_of(mod, x))

        return make

    case("rnn_lstmcell_bwd_fp32", cell(nn.LSTMCell))
    case("rnn_grucell_bwd_fp32", cell(nn.GRUCell))

    # ---- SDPA --------------------------------------------------------------------------
    def sdpa(backend: str | None, dt: Any, backward: bool, causal: bool = False, mask: bool = False):
        def make() -> Callable[[], Any]:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            q, k, v = (T(4, 8, 512, 64, dtype=dt, grad=backward) for _ in range(3))
            m = T(1, 1, 512, 512, dtype=dt) if mask else None
            ctx = (lambda: sdpa_kernel([getattr(SDPBackend, backend)])) if backend else contextlib.nullcontext

            def f() -> torch.Tensor:
                with ctx():
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)

            return bwd(f, [q, k, v]) if backward else fwd(f)

        return make

    backends = {
        "math": "MATH",
        "efficient": "EFFICIENT_ATTENTION",
        "flash": "FLASH_ATTENTION",
        "cudnn": "CUDNN_ATTENTION",
    }
    for bn, backend in backends.items():
        for dn in ("bf16", "fp16"):
            dt = dtypes[dn][0]
            case(f"sdpa_{bn}_fwd_{dn}", sdpa(backend, dt, False))
            case(f"sdpa_{bn}_bwd_{dn}", sdpa(backend, dt, True))
        case(f"sdpa_{bn}_causal_bwd_bf16", sdpa(backend, bf16, True, causal=True))
        case(f"sdpa_{bn}_bwd_fp32", sdpa(backend, f32, True))
    case("sdpa_efficient_mask_bwd_bf16", sdpa("EFFICIENT_ATTENTION", bf16, True, mask=True))
    case("sdpa_default_bwd_bf16", sdpa(None, bf16, True))

    def mha() -> Callable[[], Any]:
        m = nn.MultiheadAttention(256, 8, batch_first=True, device=dev)
        x = T(8, 128, 256)
        return fwd(lambda: m(x, x, x, need_weights=True))

    def encoder_fastpath() -> Callable[[], Any]:
        layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True, device=dev, dtype=bf16).eval()
        x = T(8, 128, 256, dtype=bf16)
        return fwd(lambda: layer(x))

    case("attn_multihead_fwd_fp32", mha)
    case("attn_transformer_encoder_fastpath_bf16", encoder_fastpath)

    # ---- FFT ---------------------------------------------------------------------------
    def fft(f: Callable[[torch.Tensor], Any], shape: tuple[int, ...], dt: Any = f32, cplx: bool = False):
        def make() -> Callable[[], Any]:
            x = T(*shape, dtype=dt)
            if cplx:
                x = torch.complex(x, T(*shape, dtype=dt))
            return fwd(lambda: f(x))

        return make

    case("fft_rfft_65536_fp32", fft(torch.fft.rfft, (1 << 16,)))
    case("fft_irfft_32769_fp32", fft(torch.fft.irfft, (32769,), cplx=True))
    case("fft_fft_c2c_4096", fft(torch.fft.fft, (64, 4096), cplx=True))
    case("fft_ifft_c2c_4096", fft(torch.fft.ifft, (64, 4096), cplx=True))
    case("fft_rfft_batched_64x1024", fft(torch.fft.rfft, (64, 1024)))
    case("fft_rfft_1000", fft(torch.fft.rfft, (64, 1000)))
    case("fft_rfft_prime_997", fft(torch.fft.rfft, (64, 997)))
    case("fft_rfft_fp16", fft(torch.fft.rfft, (64, 1024), dt=f16))
    case("fft_rfft_fp64", fft(torch.fft.rfft, (64, 1024), dt=f64))
    case("fft_fft2_256", fft(torch.fft.fft2, (8, 256, 256), cplx=True))
    case("fft_rfft2_256", fft(torch.fft.rfft2, (8, 256, 256)))
    case("fft_irfft2_256", fft(torch.fft.irfft2, (8, 256, 129), cplx=True))
    case("fft_fftn_3d", fft(torch.fft.fftn, (4, 32, 32, 32), cplx=True))
    case("fft_large_1M", fft(torch.fft.rfft, (1 << 20,)))

    def stft() -> Callable[[], Any]:
        x, w = T(4, 16000), torch.hann_window(400, device=dev)
        return fwd(lambda: torch.stft(x, 512, 160, 400, window=w, return_complex=True))

    case("fft_stft", stft)

    # ---- linalg ------------------------------------------------------------------------
    def spd(shape: tuple[int, ...], dt: Any = f32) -> torch.Tensor:
        a = T(*shape, dtype=dt)
        return a @ a.mT + shape[-1] * torch.eye(shape[-1], device=dev, dtype=dt)

    def la(f: Callable[..., Any], shape: tuple[int, ...], dt: Any = f32, kind: str = "gen", rhs: int = 0):
        def make() -> Callable[[], Any]:
            a = spd(shape, dt) if kind == "spd" else T(*shape, dtype=dt)
            if kind == "tri":
                a = torch.tril(a) + shape[-1] * torch.eye(shape[-1], device=dev, dtype=dt)
            if rhs:
                b = T(*shape[:-1], rhs, dtype=dt)
                return fwd(lambda: f(a, b))
            return fwd(lambda: f(a))

        return make

    L = torch.linalg
    big, batch = (256, 256), (64, 32, 32)
    case("linalg_svd_256", la(L.svd, big))
    case("linalg_svd_batched_64x32", la(L.svd, batch))
    case("linalg_svdvals_256", la(L.svdvals, big))
    case("linalg_svd_tall_2048x64", la(lambda a: L.svd(a, full_matrices=False), (2048, 64)))
    case("linalg_eigh_256", la(L.eigh, big, kind="spd"))
    case("linalg_eigh_batched_64x32", la(L.eigh, batch, kind="spd"))
    case("linalg_eigh_fp64", la(L.eigh, big, f64, kind="spd"))
    case("linalg_eig_128", la(L.eig, (128, 128)))
    case("linalg_qr_256", la(L.qr, big))
    case("linalg_qr_batched_64x32", la(L.qr, batch))
    case("linalg_qr_tall_2048x64", la(L.qr, (2048, 64)))
    case("linalg_lu_factor_256", la(L.lu_factor, big))
    case("linalg_lu_factor_batched_64x32", la(L.lu_factor, batch))
    case("linalg_solve_256", la(L.solve, big, rhs=16))
    case("linalg_solve_batched_64x32", la(L.solve, batch, rhs=4))
    case("linalg_cholesky_256", la(L.cholesky, big, kind="spd"))
    case("linalg_cholesky_batched_64x32", la(L.cholesky, batch, kind="spd"))
    case("linalg_cholesky_fp64", la(L.cholesky, big, f64, kind="spd"))
    case("linalg_inv_256", la(L.inv, big))
    case("linalg_inv_batched_64x32", la(L.inv, batch))
    case("linalg_lstsq_512x256", la(L.lstsq, (512, 256), rhs=8))
    case("linalg_solve_triangular_256", la(lambda a, b: L.solve_triangular(a, b, upper=False), big, kind="tri", rhs=16))
    case(
        "linalg_triangular_solve_256",
        la(lambda a, b: torch.triangular_solve(b, a, upper=False), big, kind="tri", rhs=16),
    )
    case("linalg_det_256", la(L.det, big))
    case("linalg_slogdet_batched", la(L.slogdet, batch))
    case("linalg_pinv_256", la(L.pinv, big))
    case("linalg_cholesky_solve_256", la(lambda a, b: torch.cholesky_solve(b, L.cholesky(a)), big, kind="spd", rhs=8))

    # ---- random ------------------------------------------------------------------------
    def rnd(f: Callable[[], Any]) -> Callable[[], Callable[[], Any]]:
        return lambda: fwd(f)

    case("random_rand_fp32", rnd(lambda: torch.rand(1 << 20, device=dev)))
    case("random_randn_fp32", rnd(lambda: torch.randn(1 << 20, device=dev)))
    case("random_randn_bf16", rnd(lambda: torch.randn(1 << 20, device=dev, dtype=bf16)))
    case("random_randint", rnd(lambda: torch.randint(0, 1000, (1 << 20,), device=dev)))

    def with_input(
        f: Callable[[torch.Tensor], Any], shape: tuple[int, ...] = (1 << 20,), dt: Any = f32, grad: bool = False
    ):
        def make() -> Callable[[], Any]:
            x = T(*shape, dtype=dt, grad=grad)
            return bwd(lambda: f(x), [x]) if grad else fwd(lambda: f(x))

        return make

    case("random_dropout_fp32", with_input(lambda x: F.dropout(x, 0.1, training=True)))
    case("random_dropout_bf16", with_input(lambda x: F.dropout(x, 0.1, training=True), dt=bf16))
    case("random_dropout_bwd_fp32", with_input(lambda x: F.dropout(x, 0.1, training=True), grad=True))
    case("random_bernoulli_p", with_input(lambda x: torch.bernoulli(x.sigmoid())))
    case("random_bernoulli_scalar", with_input(lambda x: x.bernoulli_(0.3)))
    case("random_normal_", with_input(lambda x: x.normal_()))
    case("random_uniform_", with_input(lambda x: x.uniform_()))
    case("random_exponential_", with_input(lambda x: x.exponential_()))
    case(
        "random_multinomial_replacement", with_input(lambda x: torch.multinomial(x.abs() + 0.1, 16, True), (64, 32000))
    )
    case("random_multinomial_noreplace", with_input(lambda x: torch.multinomial(x.abs() + 0.1, 16), (64, 32000)))
    case("random_randperm_1000", rnd(lambda: torch.randperm(1000, device=dev)))
    case("random_randperm_1M", rnd(lambda: torch.randperm(1 << 20, device=dev)))

    # ---- sort / scan / unique / select ---------------------------------------------------
    def ints(n: int, hi: int) -> torch.Tensor:
        return torch.randint(0, hi, (n,), device=dev)

    case("sort_1d_1M", with_input(lambda x: torch.sort(x)))
    case("sort_1d_4096", with_input(lambda x: torch.sort(x), (4096,)))
    case("sort_2d_rows", with_input(lambda x: torch.sort(x, dim=-1), (512, 1024)))
    case("sort_2d_long_rows", with_input(lambda x: torch.sort(x, dim=-1), (8, 65536)))
    case("sort_stable", with_input(lambda x: torch.sort(x, stable=True)))
    case("sort_bf16", with_input(lambda x: torch.sort(x), dt=bf16))
    case("sort_argsort", with_input(lambda x: torch.argsort(x, dim=-1), (512, 1024)))
    case("sort_topk_10", with_input(lambda x: torch.topk(x, 10, dim=-1), (64, 32000)))
    case("sort_topk_1000", with_input(lambda x: torch.topk(x, 1000, dim=-1), (64, 32000)))
    case("sort_topk_1d", with_input(lambda x: torch.topk(x, 100)))
    case("sort_kthvalue", with_input(lambda x: torch.kthvalue(x, 10, dim=-1), (512, 1024)))
    case("sort_median_dim", with_input(lambda x: torch.median(x, dim=-1), (512, 1024)))
    case("sort_unique", lambda: fwd((lambda t: lambda: torch.unique(t))(ints(1 << 20, 1000))))
    case(
        "sort_unique_counts",
        lambda: fwd((lambda t: lambda: torch.unique(t, return_counts=True, return_inverse=True))(ints(1 << 20, 1000))),
    )
    case("sort_unique_consecutive", lambda: fwd((lambda t: lambda: torch.unique_consecutive(t))(ints(1 << 20, 4))))
    case("select_nonzero", with_input(lambda x: torch.nonzero(x > 0)))
    case("select_masked_select", with_input(lambda x: x[x > 0]))
    case(
        "select_searchsorted",
        lambda: fwd((lambda s, v: lambda: torch.searchsorted(s, v))(torch.sort(T(4096))[0], T(1 << 16))),
    )
    case("select_bincount", lambda: fwd((lambda t: lambda: torch.bincount(t))(ints(1 << 20, 1000))))
    case("select_histc", with_input(lambda x: torch.histc(x, 100)))
    case("scan_cumsum_1M", with_input(lambda x: torch.cumsum(x, 0)))
    case("scan_cumsum_rows", with_input(lambda x: torch.cumsum(x, -1), (512, 1024)))
    case("scan_cumsum_cols", with_input(lambda x: torch.cumsum(x, 0), (512, 1024)))
    case("scan_cumsum_int", lambda: fwd((lambda t: lambda: torch.cumsum(t, 0))(ints(1 << 20, 10))))
    case("scan_cumprod", with_input(lambda x: torch.cumprod(x, -1), (512, 1024)))
    case("scan_logcumsumexp", with_input(lambda x: torch.logcumsumexp(x, -1), (512, 1024)))
    case("scan_cummax", with_input(lambda x: torch.cummax(x, -1), (512, 1024)))

    # ---- pooling -----------------------------------------------------------------------
    img = (16, 64, 56, 56)
    case("pool_max2d_fwd", with_input(lambda x: F.max_pool2d(x, 3, 2, 1), img))
    case("pool_max2d_bwd", with_input(lambda x: F.max_pool2d(x, 3, 2, 1), img, grad=True))
    case("pool_max2d_bwd_bf16", with_input(lambda x: F.max_pool2d(x, 3, 2, 1), img, bf16, grad=True))

    def cl_input(f: Callable[[torch.Tensor], Any], shape: tuple[int, ...], dt: Any = f32, grad: bool = False):
        def make() -> Callable[[], Any]:
            x = T(*shape, dtype=dt, grad=grad, cl=True)
            return bwd(lambda: f(x), [x]) if grad else fwd(lambda: f(x))

        return make

    case("pool_max2d_bwd_cl", cl_input(lambda x: F.max_pool2d(x, 3, 2, 1), img, grad=True))
    case("pool_avg2d_bwd", with_input(lambda x: F.avg_pool2d(x, 2), img, grad=True))
    case("pool_avg2d_bwd_cl", cl_input(lambda x: F.avg_pool2d(x, 2), img, grad=True))
    case("pool_adaptive_avg_1x1_bwd", with_input(lambda x: F.adaptive_avg_pool2d(x, 1), img, grad=True))
    case("pool_adaptive_avg_7x7_fwd", with_input(lambda x: F.adaptive_avg_pool2d(x, 7), img))
    case("pool_adaptive_max_bwd", with_input(lambda x: F.adaptive_max_pool2d(x, 7), img, grad=True))
    case("pool_max3d_bwd", with_input(lambda x: F.max_pool3d(x, 2), (4, 16, 16, 32, 32), grad=True))
    case("pool_avg3d_bwd", with_input(lambda x: F.avg_pool3d(x, 2), (4, 16, 16, 32, 32), grad=True))
    case("pool_avg1d_fwd", with_input(lambda x: F.avg_pool1d(x, 4), (16, 64, 1024)))
    case("pool_max1d_fwd", with_input(lambda x: F.max_pool1d(x, 4), (16, 64, 1024)))

    # ---- losses ------------------------------------------------------------------------
    def loss(
        f: Callable[[torch.Tensor, torch.Tensor], Any],
        shape: tuple[int, ...],
        target: Callable[[], Any],
        dt: Any = f32,
        grad: bool = True,
    ):
        def make() -> Callable[[], Any]:
            x = T(*shape, dtype=dt, grad=grad)
            y = target()
            return bwd(lambda: f(x, y), [x]) if grad else fwd(lambda: f(x, y))

        return make

    cls_t = lambda: torch.randint(0, 1000, (256,), device=dev)  # noqa: E731
    same_t = lambda: T(256, 1000)  # noqa: E731
    prob_t = lambda: torch.rand(256, 1000, device=dev)  # noqa: E731
    case("loss_cross_entropy_fwd", loss(F.cross_entropy, (256, 1000), cls_t, grad=False))
    case("loss_cross_entropy_bwd", loss(F.cross_entropy, (256, 1000), cls_t))
    case("loss_cross_entropy_bwd_bf16", loss(F.cross_entropy, (256, 1000), cls_t, dt=bf16))
    case(
        "loss_cross_entropy_smoothing_bwd",
        loss(lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1), (256, 1000), cls_t),
    )
    case("loss_cross_entropy_probs_bwd", loss(F.cross_entropy, (256, 1000), prob_t))
    case(
        "loss_cross_entropy_2d_bwd",
        loss(F.cross_entropy, (4, 21, 64, 64), lambda: torch.randint(0, 21, (4, 64, 64), device=dev)),
    )
    case("loss_nll_bwd", loss(lambda x, y: F.nll_loss(F.log_softmax(x, -1), y), (256, 1000), cls_t))
    case("loss_mse_bwd", loss(F.mse_loss, (256, 1000), same_t))
    case("loss_l1_bwd", loss(F.l1_loss, (256, 1000), same_t))
    case("loss_smooth_l1_bwd", loss(F.smooth_l1_loss, (256, 1000), same_t))
    case("loss_bce_bwd", loss(lambda x, y: F.binary_cross_entropy(x.sigmoid(), y), (256, 1000), prob_t))
    case("loss_bce_logits_bwd", loss(F.binary_cross_entropy_with_logits, (256, 1000), prob_t))
    case(
        "loss_kl_div_bwd",
        loss(lambda x, y: F.kl_div(F.log_softmax(x, -1), y, reduction="batchmean"), (256, 1000), prob_t),
    )
    case(
        "loss_cosine_embedding_bwd",
        loss(lambda x, y: F.cosine_embedding_loss(x, y, torch.ones(256, device=dev)), (256, 1000), same_t),
    )

    def ctc(cudnn: bool) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            t_len, n, c, s = 50, 16, 20, 10
            x = T(t_len, n, c, grad=True)
            if cudnn:  # cuDNN's CTC: concatenated int32 targets on the CPU, lengths as ints, all inputs full length
                targets = torch.randint(1, c, (n * s,), dtype=torch.int32)
                il = (t_len,) * n
                tl = (s,) * n
            else:
                targets = torch.randint(1, c, (n, s), device=dev)
                il = torch.full((n,), t_len, dtype=torch.long, device=dev)
                tl = torch.full((n,), s, dtype=torch.long, device=dev)
            return bwd(lambda: F.ctc_loss(x.log_softmax(2), targets, il, tl), [x])

        return make

    case("loss_ctc_bwd", ctc(False))
    case("loss_ctc_cudnn_bwd", ctc(True), deterministic=True)

    # ---- interpolation -----------------------------------------------------------------
    small_img = (8, 32, 64, 64)
    case(
        "interp_bilinear_up_bwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), small_img, grad=True),
    )
    case(
        "interp_bilinear_align_fwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), small_img),
    )
    case(
        "interp_bilinear_antialias_down_fwd",
        with_input(lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True), small_img),
    )
    case("interp_bilinear_up_cl_fwd", cl_input(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), small_img))
    case(
        "interp_nearest_up_bwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), small_img, grad=True),
    )
    case(
        "interp_nearest_exact_fwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"), small_img),
    )
    case(
        "interp_bicubic_up_bwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), small_img, grad=True),
    )
    case(
        "interp_trilinear_fwd",
        with_input(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), (2, 8, 16, 32, 32)),
    )
    case("interp_linear_1d_fwd", with_input(lambda x: F.interpolate(x, scale_factor=2, mode="linear"), (16, 64, 1024)))
    case("interp_area_fwd", with_input(lambda x: F.interpolate(x, size=(20, 20), mode="area"), small_img))

    def grid(mode: str, backward: bool) -> Callable[[], Callable[[], Any]]:
        def make() -> Callable[[], Any]:
            x = T(*small_img, grad=backward)
            g = torch.rand(8, 64, 64, 2, device=dev) * 2 - 1
            f = lambda: F.grid_sample(x, g, mode=mode, align_corners=False)  # noqa: E731
            return bwd(f, [x]) if backward else fwd(f)

        return make

    case("interp_grid_sample_bilinear_bwd", grid("bilinear", True))
    case("interp_grid_sample_nearest_fwd", grid("nearest", False))
    case("interp_grid_sample_bicubic_fwd", grid("bicubic", False))
    case(
        "interp_affine_grid_fwd",
        with_input(lambda th: F.affine_grid(th, (8, 32, 64, 64), align_corners=False), (8, 2, 3)),
    )
    case("interp_pixel_shuffle_fwd", with_input(lambda x: F.pixel_shuffle(x, 2), small_img))

    # ---- embedding ---------------------------------------------------------------------
    def emb(backward: bool, dt: Any = f32, padding: bool = False):
        def make() -> Callable[[], Any]:
            e = nn.Embedding(32000, 512, padding_idx=0 if padding else None, device=dev, dtype=dt)
            idx = torch.randint(0, 32000, (16, 512), device=dev)
            return bwd(lambda: e(idx), leaves_of(e)) if backward else fwd(lambda: e(idx))

        return make

    case("embedding_fwd_fp32", emb(False))
    case("embedding_bwd_fp32", emb(True))
    case("embedding_bwd_bf16", emb(True, bf16))
    case("embedding_padding_bwd_fp32", emb(True, padding=True))

    def emb_bag(mode: str, backward: bool, weights: bool = False):
        def make() -> Callable[[], Any]:
            e = nn.EmbeddingBag(32000, 256, mode=mode, device=dev)
            idx = torch.randint(0, 32000, (256, 20), device=dev)
            w = torch.rand(256, 20, device=dev) if weights else None
            f = lambda: e(idx, per_sample_weights=w)  # noqa: E731
            return bwd(f, leaves_of(e)) if backward else fwd(f)

        return make

    case("embedding_bag_sum_fwd", emb_bag("sum", False))
    case("embedding_bag_sum_bwd", emb_bag("sum", True))
    case("embedding_bag_mean_bwd", emb_bag("mean", True))
    case("embedding_bag_max_bwd", emb_bag("max", True))
    case("embedding_bag_weighted_bwd", emb_bag("sum", True, weights=True))

    # ---- norms -------------------------------------------------------------------------
    def norm(
        ctor: Callable[..., nn.Module],
        shape: tuple[int, ...],
        dt: Any,
        backward: bool,
        cl: bool = False,
        train: bool = True,
    ):
        def make() -> Callable[[], Any]:
            mod = ctor(device=dev, dtype=dt)
            mod.train(train)
            x = T(*shape, dtype=dt, grad=backward, cl=cl)
            return bwd(lambda: mod(x), leaves_of(mod, x)) if backward else fwd(lambda: mod(x))

        return make

    tok = (8, 512, 1024)
    case("norm_layer_fwd_fp32", norm(lambda **k: nn.LayerNorm(1024, **k), tok, f32, False))
    case("norm_layer_bwd_fp32", norm(lambda **k: nn.LayerNorm(1024, **k), tok, f32, True))
    case("norm_layer_bwd_bf16", norm(lambda **k: nn.LayerNorm(1024, **k), tok, bf16, True))
    case("norm_rms_fwd_fp32", norm(lambda **k: nn.RMSNorm(1024, **k), tok, f32, False))
    case("norm_rms_bwd_fp32", norm(lambda **k: nn.RMSNorm(1024, **k), tok, f32, True))
    case("norm_rms_bwd_bf16", norm(lambda **k: nn.RMSNorm(1024, **k), tok, bf16, True))
    case("norm_group_bwd_fp32", norm(lambda **k: nn.GroupNorm(8, 64, **k), img, f32, True))
    case("norm_group_bwd_bf16", norm(lambda **k: nn.GroupNorm(8, 64, **k), img, bf16, True))
    case("norm_batch2d_train_bwd_fp32", norm(lambda **k: nn.BatchNorm2d(64, **k), img, f32, True))
    case(
        "norm_batch2d_train_bwd_bf16_cl",
        norm(lambda **k: nn.BatchNorm2d(64, **k).to(memory_format=torch.channels_last), img, bf16, True, cl=True),
    )
    case("norm_batch2d_eval_fwd_fp32", norm(lambda **k: nn.BatchNorm2d(64, **k), img, f32, False, train=False))
    case("norm_batch1d_train_bwd_fp32", norm(lambda **k: nn.BatchNorm1d(512, **k), (256, 512), f32, True))
    case("norm_instance_bwd_fp32", norm(lambda **k: nn.InstanceNorm2d(64, affine=True, **k), img, f32, True))
    case("norm_local_response_fwd", with_input(lambda x: F.local_response_norm(x, 5), img))
    case("norm_normalize_l2_fwd", with_input(lambda x: F.normalize(x, dim=-1), (4096, 1024)))

    # ---- softmax -----------------------------------------------------------------------
    case("softmax_fwd_fp32", with_input(lambda x: torch.softmax(x, -1), (4096, 1024)))
    case("softmax_fwd_bf16", with_input(lambda x: torch.softmax(x, -1), (4096, 1024), bf16))
    case("softmax_bwd_fp32", with_input(lambda x: torch.softmax(x, -1), (4096, 1024), grad=True))
    case("softmax_long_row_fwd", with_input(lambda x: torch.softmax(x, -1), (8, 131072)))
    case("softmax_short_row_fwd", with_input(lambda x: torch.softmax(x, -1), (65536, 16)))
    case("softmax_dim1_4d_fwd", with_input(lambda x: torch.softmax(x, 1), (16, 64, 32, 32)))
    case("softmax_log_bwd_bf16", with_input(lambda x: torch.log_softmax(x, -1), (4096, 1024), bf16, grad=True))

    # ---- elementwise, reductions, indexing (ATen's own kernels) -------------------------
    def two(f: Callable[[torch.Tensor, torch.Tensor], Any], shape: tuple[int, ...] = (4096, 1024), dt: Any = f32):
        def make() -> Callable[[], Any]:
            a, b = T(*shape, dtype=dt), T(*shape, dtype=dt)
            return fwd(lambda: f(a, b))

        return make

    case("elem_add_fp32", two(torch.add))
    case("elem_mul_bf16", two(torch.mul, dt=bf16))
    case("elem_where", two(lambda a, b: torch.where(a > 0, a, b)))
    case("elem_gelu_bwd", with_input(F.gelu, (4096, 1024), grad=True))
    case("elem_silu_bf16", with_input(F.silu, (4096, 1024), bf16))
    case("elem_to_bf16", with_input(lambda x: x.to(bf16), (4096, 1024)))
    case("elem_transpose_copy", with_input(lambda x: x.t().contiguous(), (4096, 1024)))
    case("elem_cat", two(lambda a, b: torch.cat([a, b], 1)))
    case("elem_pad_reflect", with_input(lambda x: F.pad(x, (2, 2, 2, 2), mode="reflect"), img))
    case("elem_tril", with_input(torch.tril, (4096, 1024)))
    case("reduce_sum_fp32", with_input(lambda x: x.sum(-1), (4096, 1024)))
    case("reduce_mean_bf16_all", with_input(lambda x: x.mean(), (4096, 1024), bf16))
    case("reduce_argmax", with_input(lambda x: x.argmax(-1), (4096, 1024)))
    case("reduce_var_mean", with_input(lambda x: torch.var_mean(x, -1), (4096, 1024)))
    case("reduce_norm", with_input(lambda x: torch.linalg.vector_norm(x, dim=-1), (4096, 1024)))
    case(
        "index_gather",
        lambda: fwd(
            (lambda x, i: lambda: torch.gather(x, 1, i))(T(4096, 1024), torch.randint(0, 1024, (4096, 16), device=dev))
        ),
    )
    case("index_select", lambda: fwd((lambda x, i: lambda: x.index_select(0, i))(T(4096, 1024), ints(512, 4096))))
    case(
        "index_scatter_add",
        lambda: fwd(
            (lambda x, i, s: lambda: x.scatter_add(0, i, s))(
                T(4096, 64), torch.randint(0, 4096, (8192, 64), device=dev), T(8192, 64)
            )
        ),
    )
    case(
        "index_put_accumulate",
        lambda: fwd(
            (lambda x, i, s: lambda: x.index_put_((i,), s, accumulate=True))(T(4096, 64), ints(8192, 4096), T(8192, 64))
        ),
    )
    case("index_one_hot", lambda: fwd((lambda t: lambda: F.one_hot(t, 1000))(ints(4096, 1000))))
    case("misc_cdist", two(torch.cdist, (1024, 64)))
    case("misc_unfold_im2col", with_input(lambda x: F.unfold(x, 3, padding=1), (4, 16, 32, 32)))
    case("misc_fold_col2im", with_input(lambda x: F.fold(x, (32, 32), 3, padding=1), (4, 144, 1024)))

    # ---- optimizers --------------------------------------------------------------------
    def optim(make_opt: Callable[[list[torch.Tensor]], Any], dt: Any = f32, clip: bool = False):
        def make() -> Callable[[], Any]:
            params = [
                torch.nn.Parameter(T(*s, dtype=dt)) for s in ((1024, 1024), (1024,), (4096, 1024), (4096,), (512, 64))
            ]
            for p in params:
                p.grad = torch.randn_like(p)
            opt = make_opt(params)

            def step() -> None:
                if clip:
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()

            return step

        return make

    optim_ = torch.optim
    case("optim_adamw_fused", optim(lambda p: optim_.AdamW(p, lr=1e-3, fused=True)))
    case("optim_adamw_fused_bf16", optim(lambda p: optim_.AdamW(p, lr=1e-3, fused=True), dt=bf16))
    case("optim_adamw_foreach", optim(lambda p: optim_.AdamW(p, lr=1e-3, foreach=True)))
    case("optim_adamw_forloop", optim(lambda p: optim_.AdamW(p, lr=1e-3, foreach=False)))
    case("optim_adam_fused_capturable", optim(lambda p: optim_.Adam(p, lr=1e-3, fused=True, capturable=True)))
    case("optim_sgd_momentum_foreach", optim(lambda p: optim_.SGD(p, lr=1e-3, momentum=0.9, foreach=True)))
    case("optim_clip_grad_norm_adamw_foreach", optim(lambda p: optim_.AdamW(p, lr=1e-3, foreach=True), clip=True))

    # ---- Inductor ----------------------------------------------------------------------
    def compiled(f: Callable[..., Any], *shapes: tuple[int, ...], dt: Any = f32, grad: bool = False, **ckw: Any):
        def make() -> Callable[[], Any]:
            xs = [T(*s, dtype=dt, grad=grad) for s in shapes]
            g = torch.compile(f, **ckw)
            return bwd(lambda: g(*xs), xs) if grad else fwd(lambda: g(*xs))

        return make

    case(
        "inductor_pointwise_fused",
        compiled(lambda x, y: (x * y).sigmoid() + x.sin(), (4096, 1024), (4096, 1024)),
        compiled=True,
    )
    case("inductor_softmax_reduction", compiled(lambda x: torch.softmax(x * 2.0, -1), (4096, 1024)), compiled=True)
    case(
        "inductor_layernorm_gelu_bwd",
        compiled(lambda x: F.gelu(F.layer_norm(x, (1024,))), (4096, 1024), grad=True),
        compiled=True,
    )
    case(
        "inductor_mm_relu_bf16",
        compiled(lambda a, b: torch.relu(a @ b), (1024, 1024), (1024, 1024), dt=bf16),
        compiled=True,
    )
    case("inductor_sum_bf16", compiled(lambda x: x.float().pow(2).sum(-1), (4096, 1024), dt=bf16), compiled=True)


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------

DEVICE = "cuda"

KEEP_CATS = frozenset(
    (
        "cpu_op",
        "user_annotation",
        "gpu_user_annotation",
        "cuda_runtime",
        "cuda_driver",
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
    )
)
KEEP_ARGS = {
    "cpu_op": ("External id", "Input type", "Input Dims"),
    "user_annotation": ("External id",),
    "gpu_user_annotation": ("External id",),
    "cuda_runtime": ("External id", "correlation"),
    "cuda_driver": ("External id", "correlation"),
    "kernel": (
        "External id",
        "correlation",
        "device",
        "stream",
        "grid",
        "block",
        "registers per thread",
        "shared memory",
    ),
    "gpu_memcpy": ("External id", "correlation", "device", "stream", "bytes"),
    "gpu_memset": ("External id", "correlation", "device", "stream", "bytes"),
}
KEEP_HEADER = (
    "schemaVersion",
    "deviceProperties",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "displayTimeUnit",
    "baseTimeNanoseconds",
)


def trim_trace(raw: dict[str, Any], device_index: int) -> dict[str, Any]:
    """The exported Chrome trace cut to what the tests read."""
    out: dict[str, Any] = {}
    for key in KEEP_HEADER:
        if key in raw:
            out[key] = raw[key]
    props = raw.get("deviceProperties")
    if isinstance(props, list):
        mine = [p for p in props if isinstance(p, dict) and p.get("id") == device_index] or props[:1]
        keep = (
            "id",
            "name",
            "totalGlobalMem",
            "computeMajor",
            "computeMinor",
            "numSms",
            "sharedMemPerBlock",
            "regsPerBlock",
            "warpSize",
            "maxThreadsPerBlock",
            "l2CacheSize",
        )
        out["deviceProperties"] = [{k: p[k] for k in keep if k in p} for p in mine]
    events = []
    for ev in raw.get("traceEvents", []):
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if cat not in KEEP_CATS:
            continue
        slim = {k: ev[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in ev}
        args = ev.get("args")
        if isinstance(args, dict):
            kept = {k: args[k] for k in KEEP_ARGS[cat] if k in args}
            if kept:
                slim["args"] = kept
        events.append(slim)
    out["traceEvents"] = events
    return out


@contextlib.contextmanager
def case_flags(c: Case) -> Iterator[None]:
    import torch

    saved = (
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic,
    )
    torch.backends.cudnn.deterministic = c.deterministic
    torch.backends.cuda.matmul.allow_tf32 = c.tf32
    torch.backends.cudnn.allow_tf32 = c.tf32
    torch.backends.cudnn.benchmark = bool(c.benchmark)
    try:
        yield
    finally:
        (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.backends.cudnn.benchmark,
            torch.backends.cudnn.deterministic,
        ) = saved


def sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def record(c: Case, path: Path) -> tuple[int, int]:
    """Warm up, profile one call, write the trimmed gzipped trace; (kernels, bytes)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    with case_flags(c):
        call = c.setup()
        for _ in range(2 if c.compiled else 1):
            call()
        sync()
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
        with profile(activities=activities, record_shapes=True) as prof:
            with record_function("ProfilerStep#1"):
                call()
            sync()
    with tempfile.TemporaryDirectory() as tmp:
        raw_path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw_path)
        with open(raw_path, encoding="utf-8") as handle:
            raw = json.load(handle)
    index = torch.cuda.current_device() if DEVICE == "cuda" else 0
    trimmed = trim_trace(raw, index)
    data = json.dumps(trimmed, separators=(",", ":")).encode()
    with gzip.GzipFile(filename="", mode="wb", fileobj=open(path, "wb"), mtime=0) as gz:  # noqa: SIM115
        gz.write(data)
    kernels = sum(1 for e in trimmed["traceEvents"] if e["cat"] == "kernel")
    return kernels, path.stat().st_size


def card_name(override: str | None) -> str:
    if override:
        return override
    import torch

    if DEVICE != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name()
    for known in ("H100", "H200", "B200", "A100", "L40", "L4", "V100", "A10"):
        if known in name:
            return known.lower()
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"


def one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return text[:300]


def run_zoo(outdir: Path, only: list[str] | None, card: str | None) -> int:
    import torch

    build_cases()
    names = [n for n in CASES if not only or any(fnmatch.fnmatch(n, g) for g in only)]
    card = card_name(card)
    folder = outdir / card
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"kernel zoo: {len(names)} cases on {card} ({device_name()}), torch {torch.__version__}",
        flush=True,
    )
    ran: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    total = 0
    start = time.perf_counter()
    for name in names:
        c = CASES[name]
        path = folder / f"{name}.json.gz"
        t0 = time.perf_counter()
        torch.manual_seed(0)
        try:
            kernels, size = record(c, path)
        except Exception as exc:  # noqa: BLE001 - an unsupported case is skipped, never fatal
            skipped[name] = one_line(exc)
            print(f"SKIP {name}: {skipped[name]}", flush=True)
            if os.environ.get("ZOO_TRACEBACK"):
                traceback.print_exc()
            path.unlink(missing_ok=True)
            with contextlib.suppress(Exception):
                sync()
            continue
        total += size
        ran[name] = {
            "kernels": kernels,
            "bytes": size,
            "tf32": c.tf32,
            "cudnn_benchmark": bool(c.benchmark),
            "compiled": c.compiled,
        }
        print(f"ok   {name}: {kernels} kernels, {size} B, {time.perf_counter() - t0:.2f} s", flush=True)
    meta = {
        "card": card,
        "device": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu",
        "capability": list(torch.cuda.get_device_capability()) if DEVICE == "cuda" else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if DEVICE == "cuda" else None,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python -m tools.kernel_zoo " + " ".join(sys.argv[1:]),
        "cases": ran,
        "skipped": skipped,
    }
    (outdir / f"{card}_cases.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(
        f"kernel zoo: {len(ran)} recorded, {len(skipped)} skipped, {total} bytes of traces, "
        f"{time.perf_counter() - start:.1f} s",
        flush=True,
    )
    return 0


# --------------------------------------------------------------------------------------
# Decode summary (needs pytest_kernelprof on the path)
# --------------------------------------------------------------------------------------

GEMM_OPS = frozenset(
    (
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::_scaled_mm",
        "aten::addmv",
        "aten::mv",
        "aten::dot",
        "aten::vdot",
        "aten::matmul",
        "aten::linear",
        "aten::_int_mm",
        "aten::addbmm",
    )
)


def _op_inputs(path: Path) -> dict[tuple[str, Any], tuple[str, str]]:
    """(kernel name, its External id) -> (its launching op by External id, that op's input dtypes)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        trace = json.load(handle)
    ops: dict[Any, tuple[str, str]] = {}
    for ev in trace["traceEvents"]:
        if ev.get("cat") == "cpu_op":
            args = ev.get("args", {})
            types = [t for t in args.get("Input type", []) if t]
            ext = args.get("External id")
            if ext is not None:
                ops[ext] = (ev["name"], ",".join(dict.fromkeys(types)))
    out: dict[tuple[str, Any], tuple[str, str]] = {}
    for ev in trace["traceEvents"]:
        if ev.get("cat") == "kernel":
            ext = ev.get("args", {}).get("External id")
            out[(ev["name"], ext)] = ops.get(ext, ("", ""))
    return out


def summary(card_dir: Path, tsv: Path | None, out: Path | None) -> int:
    from pytest_kernelprof import load_trace

    card = card_dir.name
    paths = sorted(card_dir.glob("*.json.gz"))
    lines: list[str] = []
    say = lines.append
    decoded: dict[str, Any] = {}
    # name -> {(op, dtypes): set(cases)}
    where: dict[str, dict[tuple[str, str], set[str]]] = defaultdict(lambda: defaultdict(set))
    failed: dict[str, str] = {}
    kernels_total = 0
    for path in paths:
        case_name = path.name[: -len(".json.gz")]
        try:
            profile = load_trace(path)
            kernels = list(profile.kernels)
            if len(profile.calls) != 1:
                failed[case_name] = f"{len(profile.calls)} calls, expected 1"
        except Exception as exc:  # noqa: BLE001 - reported, the summary goes on
            failed[case_name] = one_line(exc)
            continue
        raw = _op_inputs(path)
        by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for (kname, _ext), info in raw.items():
            by_name[kname].append(info)
        for k in kernels:
            kernels_total += 1
            decoded.setdefault(k.name, k)
            infos = by_name.get(k.name) or [("", "")]
            dtypes = ";".join(sorted({d for _, d in infos if d}))
            where[k.name][(k.op or "", dtypes)].add(case_name)
    kinds = Counter(decoded[n].kind for n in decoded)
    say(
        f"== {card}: {len(paths)} traces, {len(paths) - len(failed)} loaded, {kernels_total} kernels, "
        f"{len(decoded)} distinct names"
    )
    for name, why in failed.items():
        say(f"LOAD FAILED {name}: {why}")
    say("distinct names by kind: " + ", ".join(f"{k}={v}" for k, v in kinds.most_common()))
    fams = Counter(decoded[n].family for n in decoded)
    say("distinct names by family: " + ", ".join(f"{k}={v}" for k, v in fams.most_common()))
    unknown = sorted(n for n, k in decoded.items() if k.kind == "other" or k.family == "unknown")
    pct = 100.0 * len(unknown) / max(1, len(decoded))
    say(
        f"\n-- {len(unknown)} of {len(decoded)} distinct names ({pct:.1f}%) decode as kind 'other' or family "
        "'unknown', by launching op:"
    )
    grouped: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for n in unknown:
        for (op, dt), cases in sorted(where[n].items()):
            grouped[op or "<no op>"].append((n, dt, ",".join(sorted(cases)[:3]) + (" ..." if len(cases) > 3 else "")))
    for op in sorted(grouped):
        say(f"  [{op}]")
        for n, dt, cases in grouped[op]:
            k = decoded[n]
            say(
                f"    {n}\n        kind={k.kind} family={k.family} dtype={k.dtype} | inputs: {dt or '-'} "
                f"| cases: {cases}"
            )
    bad_gemm: list[str] = []
    for n, sites in sorted(where.items()):
        k = decoded[n]
        for (op, dt), cases in sorted(sites.items()):
            if op in GEMM_OPS and (k.kind != "gemm" or k.dtype is None):
                bad_gemm.append(
                    f"    {n}\n        kind={k.kind} family={k.family} dtype={k.dtype} | op: {op} "
                    f"| inputs: {dt or '-'} | cases: {','.join(sorted(cases)[:3])}"
                )
    say(f"\n-- {len(bad_gemm)} (kernel, GEMM op) pairs whose kind is not gemm or dtype is None:")
    lines.extend(bad_gemm)
    text = "\n".join(lines) + "\n"
    print(text, flush=True)
    if out is not None:
        out.write_text(text)
    if tsv is not None:
        rows = ["kernel\tkind\tfamily\tdtype\tlayout\top\tinput_dtypes\tcases"]
        for n in sorted(where):
            k = decoded[n]
            for (op, dt), cases in sorted(where[n].items()):
                clean = n.replace("\t", " ").replace("\n", " ")
                rows.append(
                    "\t".join((clean, k.kind, k.family, k.dtype or "", k.layout or "", op, dt, ",".join(sorted(cases))))
                )
        tsv.write_text("\n".join(rows) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    global DEVICE  # noqa: PLW0603
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", type=Path, nargs="?")
    parser.add_argument("--only", help="comma-separated globs of case names")
    parser.add_argument("--card", help="card folder name (default from the device name: h100, h200, ...)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: check the script without a GPU")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--summary", type=Path, help="a card folder of traces: print the decode summary")
    parser.add_argument("--tsv", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    DEVICE = args.device
    if args.summary:
        return summary(args.summary, args.tsv, args.out)
    only = [g for g in args.only.split(",") if g] if args.only else None
    if args.list:
        build_cases()
        names = [n for n in CASES if not only or any(fnmatch.fnmatch(n, g) for g in only)]
        print("\n".join(names))
        print(f"{len(names)} cases", file=sys.stderr)
        return 0
    if args.outdir is None:
        parser.error("OUTDIR is required")
    return run_zoo(args.outdir, only, args.card)


if __name__ == "__main__":
    raise SystemExit(main())
