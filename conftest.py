"""Fixtures shared by tests/ and examples/: the study's GeGLU MLP, its input, its Liger variant.

The models are defined in ``examples/models.py``; imported inside the fixtures so that a run
that uses none of them does not pay for importing torch here.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def mlp() -> Any:
    """The study's GeGLU MLP (dim 768, hidden 3072), bf16 on the GPU, seeded."""
    from examples.models import geglu_mlp

    return geglu_mlp()


@pytest.fixture
def x() -> Any:
    """The MLP's input, ``[64, 128, 768]`` bf16 on the GPU."""
    from examples.models import geglu_input

    return geglu_input()


@pytest.fixture
def liger_mlp(mlp: Any) -> Any:
    """Liger-Kernel's ``LigerGEGLUMLP`` with ``mlp``'s weights; skips where liger-kernel is missing."""
    pytest.importorskip("liger_kernel.transformers")
    from examples.models import liger_geglu_mlp

    return liger_geglu_mlp(mlp)
