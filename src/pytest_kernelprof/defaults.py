"""Default values that the plugin's options show in ``pytest --help`` and the modules that
use them share: kept apart from those modules so that loading the plugin imports none of them."""

from __future__ import annotations

DEFAULT_WARMUP = 2  # unprofiled calls before profiling: enough for torch.compile and autotuning
DEFAULT_CALLS = 3  # profiled calls, each compared with the first
DEFAULT_ROUNDS = 20  # kernel_benchmark rounds
NAME_MODES = ("stable", "exact", "loose")  # which kernel names baselines compare
DEFAULT_MEMORY_TOLERANCE = 0.05  # relative slack of baseline metrics such as peak_bytes
