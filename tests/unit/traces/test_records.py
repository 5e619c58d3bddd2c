"""The raw-event records: how events are made (``gpu_event`` takes keywords only)."""

from __future__ import annotations

import pytest

from pytest_kernelprof.traces import KERNEL, gpu_event


def test_the_gpu_event_constructor_takes_keywords() -> None:
    with pytest.raises(TypeError):
        gpu_event(KERNEL, "k", 0, 1, 7, 1, 2)  # type: ignore[misc]
    e = gpu_event(category=KERNEL, name="k", start=0, end=1, stream=7, correlation=1, linked=2, grid=(1, 1, 1))
    assert (e.category, e.name, e.stream, e.correlation, e.linked, e.grid, e.block, e.nbytes, e.device) == (
        KERNEL,
        "k",
        7,
        1,
        2,
        (1, 1, 1),
        None,
        None,
        None,
    )
    assert (e.thread, e.ident, e.input_types) == (0, 0, ())
