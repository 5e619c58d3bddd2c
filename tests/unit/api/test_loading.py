"""``load_trace`` and ``load_sweep``: what their keywords take, as the guide's table spells them."""

from __future__ import annotations

import inspect
import re

import pytest

from pytest_kernelprof import Profiler, load_sweep, load_trace
from pytest_kernelprof.types import Decoder
from tests.helpers import DATA

ROOT = DATA.parent.parent

TRACE = DATA / "h200_sdpa_default.json.gz"


def test_decoder_none_is_the_built_in_decoder_wherever_a_decoder_is_taken() -> None:
    # A trial: the guide's table said decoder=None, and load_trace(..., decoder=None) raised a TypeError.
    for entry in (load_trace, load_sweep, Profiler):
        assert inspect.signature(entry).parameters["decoder"].default is None, entry
    built_in = load_trace(TRACE)
    assert load_trace(TRACE, decoder=None).kernels.names == built_in.kernels.names
    assert load_sweep(DATA / "h100_sweep_geglu", decoder=None)[0].profile.kernels.count("triton_*gelu*mul*") == 1
    assert Profiler(decoder=None).decoder is Profiler().decoder
    taught = Decoder().teach("*flash*", kind="attention", family="mine")
    assert {k.family for k in load_trace(TRACE, decoder=taught).kernels.of_kind("attention")} == {"mine"}
    with pytest.raises(TypeError, match=r"^decoder must be a pytest_kernelprof\.types\.Decoder or None, got str$"):
        load_trace(TRACE, decoder="built-in")  # type: ignore[arg-type]


def test_the_guides_signature_of_load_trace_is_its_signature() -> None:
    guide = (ROOT / "docs" / "guide" / "profiling.md").read_text()
    shown = re.search(r"`pytest_kernelprof\.load_trace\((.*?)\)`", guide)
    assert shown is not None
    parts = []
    for param in inspect.signature(load_trace).parameters.values():
        if param.kind is param.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(param.name if param.default is param.empty else f"{param.name}={param.default!r}")
    assert shown[1] == ", ".join(parts)
    # Every other page that passes a decoder passes a Decoder or None.
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for value in re.findall(r"\bdecoder=([\w.]+)", page.read_text()):
            assert value in {"None", "decoder", "taught"}, (page, value)
