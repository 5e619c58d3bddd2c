"""Every exception pytest-kernelprof raises on purpose, all under :class:`KernelProfError`
and all exported from the package. Each message says what went wrong and what to do.

Where an error also is a builtin kind (an ``AssertionError`` so that a test fails rather
than errors, a ``KeyError`` for a missing op, a ``ValueError`` for a bad value), it
subclasses that too, so existing ``except`` clauses keep working."""

from __future__ import annotations

from typing import Any


class KernelProfError(Exception):
    """Base class of every error this package raises on purpose."""


class NoAnswerError(KernelProfError, AssertionError):
    """A question this profile has no answer to: not "the answer is no", but no answer at all.
    :class:`NoDeviceActivityError` (nothing was measured) and :class:`VariedProfileError` (the
    profiled calls differ in what was asked) are its kinds; ``except NoAnswerError`` catches each.

    An ``AssertionError``, so that a test that asks fails (not errors). Where an assertion's
    failure is itself an answer, this one is not: a sweep's check that meets it propagates it
    rather than read it as "does not hold", where ``sweep.none(check)`` would pass.
    """


class NoDeviceActivityError(NoAnswerError):
    """A kernel query on a profile that recorded no GPU activity.

    An ``AssertionError`` so that a test asserting on kernels fails (not errors) where no
    GPU work was seen: an empty kernel list must never pass a test by accident.
    """


class IncompleteProfileError(KernelProfError):
    """The CPU side recorded kernel launches whose GPU records the profiler lost."""


class KernelSequenceMismatchError(KernelProfError, AssertionError):
    """The profiled calls did not launch the same kernel sequence."""


class ProfilerBusyError(KernelProfError):
    """A torch profiler session was already running when one was asked for, or the profiled
    code started or stopped one inside the plugin's session (which cut that session short)."""


class ProfilerStartError(KernelProfError):
    """The profiler (CUPTI) refused to start."""


class TraceError(KernelProfError, ValueError):
    """A trace file that cannot be read as a torch.profiler Chrome trace."""


class TraceNotKeptError(KernelProfError, RuntimeError):
    """A profile's trace exported after a later torch profiler session started, without having
    been kept when its own session ended. torch writes a session's trace from Kineto's buffers,
    which the next session takes: on a GPU the trace would hold none of the profile's kernels.
    Export it before the next profile, or keep it as it is profiled (``keep_traces=True``)."""


class OpNotFoundError(KernelProfError, KeyError):
    """``ops[name]`` for a name the call did not run; the message lists near names."""

    def __str__(self) -> str:
        # KeyError would show the message in quotes, as a repr of the key.
        return str(self.args[0])


class KernelMatchError(KernelProfError, AssertionError):
    """``kernels.one(...)`` where not exactly one kernel matched; the message shows the kernel
    table, the matches marked, and the nearest names. An ``AssertionError``, so the test fails."""

    # The KernelList whose whole table the message shows: a report that shows the failure
    # need not show that table again.
    kernels: Any = None


class QueryError(KernelProfError, ValueError):
    """A profile query given a value it cannot use: an unknown kernel kind, dtype, copy
    direction or host memory; the message lists the values it takes."""


class QueryTypeError(QueryError, TypeError):
    """A profile query given an argument of a type it cannot use: a kernel pattern that is no
    glob string or ``re.Pattern``, a ``KernelList`` compared with a list of neither names nor
    kernels. A ``TypeError`` (and a :class:`QueryError`)."""


class ModuleNotRecordedError(KernelProfError, KeyError):
    """``prof.module(name)`` or ``prof.modules`` on a profile without that module's range: it
    was not recorded with ``modules=True``, or no such module ran; the message says which."""

    def __str__(self) -> str:
        return str(self.args[0])


class BaselineError(KernelProfError):
    """A baseline file that cannot be read; it is left untouched."""


class BaselineMismatchError(KernelProfError, AssertionError):
    """``kernel_baseline.check(prof)`` on a profile whose kernel signature differs from its stored
    baseline, or whose metrics are worse; the message shows the diff and the command that records
    the change. One with no baseline yet raises :class:`BaselineMissingError`, a subclass. An
    ``AssertionError``, so the test fails."""

    # As KernelMatchError's: the KernelList whose whole table the message shows (a profile with
    # no baseline yet), which a report that shows the failure need not show again.
    kernels: Any = None


class BaselineMissingError(BaselineMismatchError):
    """``kernel_baseline.check(prof)`` (or ``check_sweep``) where the baseline file has no entry
    for the profile yet (no file, no entry for the GPU architecture, no entry of that name, or a
    sweep's buckets with none): nothing differs, there is nothing to compare with. The message
    says how to record it. A ``BaselineMismatchError``, so an ``except`` of that still catches
    it, and so an ``AssertionError``: the test fails until the baseline is recorded."""


class SweepError(KernelProfError, AssertionError):
    """A sweep's property broke: ``sweep.every(check)`` or ``sweep.none(check)`` failed in some
    case, or ``explore`` found a case that breaks its check. The message names the failing cases
    and the smallest of them as a case to pin (``cases=[dict(batch=17)]``), beside the kernel
    tables of that case and of the nearest passing one. An ``AssertionError``, so the test fails."""


class MissingHypothesisError(KernelProfError, ImportError):
    """``explore`` without Hypothesis installed (``pip install hypothesis``); ``sweep`` needs nothing."""


class MissingTorchError(KernelProfError, ImportError):
    """Profiling a callable, a ``gpu`` test or ``profile_ranks`` where torch cannot be imported
    (``pip install torch``). Reading saved traces (``load_trace``, ``kernelprof show``) needs no
    torch: a trace-only install without it fails only the tests that need it, each with this line."""


class RankError(KernelProfError):
    """A rank failed or the ranks did not finish in time; carries the rank's traceback."""


class GpuSpecError(KernelProfError, ValueError):
    """A --kernelprof-gpus value that cannot be used; the message says why."""


class RecordingError(KernelProfError, RuntimeError):
    """``kernelprof.record()``'s handle used outside its block: ``rec.step()`` after the block,
    ``rec.profile`` inside it."""


class BenchmarkError(KernelProfError, RuntimeError):
    """``kernel_benchmark`` without a pytest-benchmark it can drive, or asked for rounds it did not profile."""


class CannotTellError(KernelProfError):
    """A fact the profile did not record: a loaded trace asked for what only a live capture
    sees (graph breaks, allocator bytes), a torch without the probes, graph breaks of code
    compiled before the profile. The message says which and why."""


class ForbiddenError(KernelProfError, AssertionError):
    """A profile broke a ``kernelprof_forbid`` rule; the message names the rule, its reason
    and what broke it. An ``AssertionError``, so the test fails."""

    # The metrics of the broken rules that compare one (``syncs``, ``dtoh_copies``, ...), so that a
    # report can point at their cause without reading the message.
    metrics: tuple[str, ...] = ()


class UndecodedKernelWarning(KernelProfError, UserWarning):
    """A question about kinds or dtypes whose answer kernels of unknown kind or dtype could
    change: ``count(kind=...)``, a ``kernelprof_forbid`` rule, a baseline's kind comparison.
    The message names the kernels and how to teach the decoder. Under
    ``--kernelprof-strict-decode`` it is raised as an exception, not warned, so that no warning
    filter (the run's, or the test's own ``recwarn``, ``pytest.warns`` or
    ``catch_warnings``) lets the question pass; ``filterwarnings = error`` makes it an error too,
    through the filters."""


class TeachingError(KernelProfError, ValueError):
    """A taught decoding rule (``kernelprof_kernels`` line, ``teach()``) that cannot be used;
    the message says where it was written and what to write."""


class LateTeachingWarning(KernelProfError, UserWarning):
    """``kernelprof.teach(...)`` (``Profiler.teach``) after the profiler already took or loaded a
    profile: kernels are decoded when a profile is built, so the profiles it holds keep the decoding
    they were built with, and the taught rule decodes only those it takes or loads next. Teach before
    taking or loading the profile it is for. Under ``filterwarnings = error`` it fails the test."""


class UncheckedProfileWarning(KernelProfError, UserWarning):
    """``pytest_kernelprof.load_trace`` in a test that the suite's ``kernelprof_forbid`` rules hold:
    the module's ``load_trace`` checks no rule, so a trace that breaks one would pass in silence.
    The message names the rules; the ``kernelprof`` fixture's ``kernelprof.load_trace(path)``
    holds the trace to them. Under ``filterwarnings = error`` it fails the test."""


def hide_own_errors(excinfo: Any) -> bool:
    """A ``__tracebackhide__`` for pytest: a frame is hidden from a test's failure when the error
    is one this package raises on purpose (its message says what went wrong), shown for any other."""
    return bool(excinfo.errisinstance(KernelProfError))


class IncompleteProfileWarning(KernelProfError, UserWarning):
    """A profile read although part of its records were lost: some GPU records lie outside every
    profiled call, or have no launch record. Counts (kernels, launches, syncs) may be short; the
    message says how many records of how many. Under ``filterwarnings = error`` it fails the test;
    ``load_trace(..., check_complete=False)`` reads such a trace without it."""


class VariedProfileError(NoAnswerError):
    """A question asked of a whole profile whose profiled calls differ in what it asks about:
    ``prof.kernels`` where the calls launched different kernel sequences (``allow_variation=True``
    let them through), ``prof.ops`` where they ran different ops. Answering for one call would
    pass a test on the others' behalf; the message says how the calls differ and to ask
    ``prof.calls[i]``, or every call, instead."""
