"""Stored kernel signatures per GPU architecture: record once, compare on every run.

A baseline file holds, per architecture (``sm80``, ``sm90``, ...), one entry per checked
profile: the kernel sequence of one call as kind, family, layout, fused ops, launching op
and name, plus the memory operations. cuBLAS picks other kernels on other GPUs, hence one
entry per architecture.

How names are compared (``names``):

- ``stable`` (default): names of Inductor kernels and of user kernels (Triton, CUDA
  extensions) are compared, library names are not. Inductor names encode the fusion
  (``triton_poi_fused__unsafe_view_gelu_mul_0``) and user kernels are yours; cuBLAS and
  ATen names change with the library version and with the card within one architecture
  (H100 and H200 pick different nvjet tiles), which is not a regression. Memcpys count,
  memsets do not: cuBLAS workspace memsets vary with shape and card.
- ``exact``: every name, and every memory operation.
- ``loose``: no names, no memory operations: only kind, family, layout, fused ops and op.

Beside the signature an entry keeps metrics, each better lower (``BASELINE_METRICS``): a
higher value fails with the change, a lower one passes and is reported as an improvement to
lock in. ``peak_bytes`` has a relative tolerance; the others are counts and have none. A
metric that a profile cannot tell, or that an older file lacks, is not compared. The memory
operations a mode counts are better lower in the same way (decided: a memcpy removed with an
``.item()`` is the improvement that its sync and its DtoH copy are).

Files are JSON with sorted keys, two-space indent and a trailing newline, written to a
temporary file and renamed, so a reader never sees half a file and review diffs stay small.
Reading one checks every stored value, since people edit these files by hand: a kind or
layout the decoder never gives, a family that is no family name (taught families are any such
name, so a baseline of them reads back), a count that is negative, not an integer or above
``MAX_COUNT`` (a billion per call), a size above ``MAX_BYTES`` (1 PiB) is a BaselineError
naming the file, the entry and the field. A file may start with a UTF-8 byte order mark.

A baseline stores one call's kernel sequence, so a profile whose calls launched different ones
(``prof.varied``) is refused; a check name is a str (a JSON key), anything else a TypeError.

``signature.py`` holds what an entry stores and the comparisons, ``files.py`` the files,
``check.py`` a test's check (``KernelBaseline``), ``notes.py`` what a check tells the run's end
(typed notes, carried on the test's report), ``session.py`` the run's end (``BaselineSession``).
"""

from __future__ import annotations

from .check import KernelBaseline
from .files import (
    UNCHANGED,
    UPDATED,
    WRITTEN,
    baseline_paths,
    entries,
    read_baseline,
    record,
    write_baseline,
)
from .notes import NOTE_TYPES, BaselineNote, Checked, Improved, ReadUnderOldName, Recorded, Renamed
from .session import (
    BaselineSession,
    Unused,
    prune_entries,
    unused_entries,
)
from .signature import (
    BASELINE_METRICS,
    FORMAT_VERSION,
    STORED_FIELDS,
    BaselineKernel,
    MetricChange,
    Signature,
    compare,
    compare_metrics,
    per_call_lines,
    stable_op,
)

__all__ = [
    "BASELINE_METRICS",
    "NOTE_TYPES",
    "BaselineKernel",
    "BaselineNote",
    "BaselineSession",
    "Checked",
    "FORMAT_VERSION",
    "Improved",
    "KernelBaseline",
    "MetricChange",
    "ReadUnderOldName",
    "Recorded",
    "Renamed",
    "STORED_FIELDS",
    "Signature",
    "UNCHANGED",
    "UPDATED",
    "Unused",
    "WRITTEN",
    "baseline_paths",
    "compare",
    "compare_metrics",
    "entries",
    "per_call_lines",
    "prune_entries",
    "read_baseline",
    "record",
    "stable_op",
    "unused_entries",
    "write_baseline",
]
