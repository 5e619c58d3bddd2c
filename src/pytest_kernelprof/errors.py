"""Exceptions raised by pytest-kernelprof. Each message says what went wrong and what to do."""

from __future__ import annotations


class KernelProfError(Exception):
    """Base class of every error this package raises on purpose."""


class NoDeviceActivityError(KernelProfError, AssertionError):
    """A kernel query on a profile that recorded no GPU activity.

    An ``AssertionError`` so that a test asserting on kernels fails (not errors) where no
    GPU work was seen: an empty kernel list must never pass a test by accident.
    """


class IncompleteProfileError(KernelProfError):
    """The CPU side recorded kernel launches whose GPU records the profiler lost."""


class KernelSequenceMismatchError(KernelProfError, AssertionError):
    """The profiled calls did not launch the same kernel sequence."""


class ProfilerBusyError(KernelProfError):
    """A torch profiler session was already running when one was asked for."""


class ProfilerStartError(KernelProfError):
    """The profiler (CUPTI) refused to start."""


class TraceError(KernelProfError, ValueError):
    """A trace file that cannot be read as a torch.profiler Chrome trace."""
