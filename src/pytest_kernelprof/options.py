"""Default values that the plugin's options show in ``pytest --help`` and the modules that
use them share: kept apart from those modules so that loading the plugin imports none of them."""

from __future__ import annotations

DEFAULT_WARMUP = 2  # unprofiled calls before profiling: enough for torch.compile and autotuning
DEFAULT_CALLS = 3  # profiled calls, each compared with the first
DEFAULT_ROUNDS = 20  # kernel_benchmark rounds
# The most warm-up calls, and the most profiled calls (or benchmark rounds), one profile takes,
# however given. Every profiled call's events stay in memory until the test ends, and a
# thousand calls of even a small step is minutes of profiling: a larger number is a typo
# (calls=10**20 once ran until it had filled the memory).
MAX_CALLS = 1000
# Why the bound, for the errors that enforce it.
MAX_CALLS_WHY = "every profiled call is held in memory until the test ends, and a thousand calls take minutes"
NAME_MODES = ("stable", "exact", "loose")  # which kernel names baselines compare
DEFAULT_MEMORY_TOLERANCE = 0.05  # relative slack of baseline metrics such as peak_bytes
