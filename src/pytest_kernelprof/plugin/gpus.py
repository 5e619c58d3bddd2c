"""One GPU per pytest-xdist worker: which physical GPU worker gwN gets.

``--kernelprof-gpus`` takes ``auto`` (every visible GPU), a count ``N`` (the first N visible
GPUs) or a comma-separated list of indices into the visible GPUs (``0,2,5``; one index is
written with a trailing comma, ``3,``). Workers get the chosen GPUs round-robin. Visible
means what the caller's ``CUDA_VISIBLE_DEVICES`` lists, or every GPU when it is unset, so
the assignment indexes into a selection the caller already made.

A test that needs more GPUs than its worker holds (``gpu(count=N)``, N > 1) is lent every
chosen GPU for its length, in turn: it waits until no other worker runs a GPU test, holds the
others off while it runs, and its spawned processes (``profile_ranks``, DDP) see all the chosen
GPUs through ``CUDA_VISIBLE_DEVICES``. The worker's own process keeps its one GPU: CUDA reads
``CUDA_VISIBLE_DEVICES`` once, when it starts. One file lock shared by the workers does it (a
shared lock per one-GPU test, an exclusive one per lending, and a turnstile in front so that a
lending is not starved by a stream of one-GPU tests); without ``fcntl`` (Windows) nothing is
lent and such tests skip, as they did before lending.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..errors import GpuSpecError


@dataclass(frozen=True)
class GpuSpec:
    count: int | None = None  # None: all
    indices: tuple[int, ...] | None = None

    def choose(self, visible: list[str]) -> list[str]:
        if not visible:
            raise GpuSpecError("no CUDA GPU is visible to share among the workers")
        if self.indices is not None:
            bad = [i for i in self.indices if i >= len(visible)]
            if bad:
                gpus = f"{len(visible)} GPU{'' if len(visible) == 1 else 's'}"
                raise GpuSpecError(f"GPU index {bad[0]} is out of range: {gpus} visible ({','.join(visible)})")
            return [visible[i] for i in self.indices]
        if self.count is not None:
            if self.count > len(visible):
                raise GpuSpecError(f"{self.count} GPUs asked for, {len(visible)} visible ({','.join(visible)})")
            return visible[: self.count]
        return visible


def parse_gpu_spec(value: str) -> GpuSpec:
    text = value.strip()
    if text == "auto":
        return GpuSpec()
    try:
        if "," in text:
            parts = text.removesuffix(",").split(",")  # one trailing comma: the one-index form, 3,
            indices = tuple(_ascii_int(part) for part in parts)  # an empty part (0,1,,2) is no index
            if any(i < 0 for i in indices):
                raise ValueError
        else:
            count = _ascii_int(text)
    except ValueError:
        raise GpuSpecError(f"takes auto, a count N or indices such as 0,2,5 (one index: 3,), got {value!r}") from None
    if "," in text:
        if len(set(indices)) != len(indices):
            twice = next(i for i in indices if indices.count(i) > 1)
            raise GpuSpecError(f"GPU index {twice} is listed twice in {value!r}: each worker's GPU is its own")
        return GpuSpec(indices=indices)
    if count < 1:
        raise GpuSpecError(f"a count must be at least 1, got {count}")
    return GpuSpec(count=count)


def _ascii_int(text: str) -> int:
    """``int()`` of ASCII only: it reads "٣" (an Arabic-Indic 3) as 3, which CUDA would not."""
    if not text.isascii():
        raise ValueError(text)
    return int(text)


def visible_gpus(cuda_visible_devices: str | None, device_count: int) -> list[str]:
    """The physical ids the caller made visible, as CUDA_VISIBLE_DEVICES entries: as CUDA reads
    the variable, up to the first entry that names no device (``-1`` hides every GPU)."""
    if cuda_visible_devices is None:
        return [str(i) for i in range(device_count)]
    visible: list[str] = []
    for part in (part.strip() for part in cuda_visible_devices.split(",")):
        if not ((part.isascii() and part.isdigit()) or part.startswith(("GPU-", "MIG-"))) or part in visible:
            break
        visible.append(part)
    return visible


def worker_index(worker_id: str) -> int:
    """``gw3`` -> 3 (xdist's worker ids)."""
    digits = worker_id.lstrip("gw")
    if not (digits.isascii() and digits.isdigit()):
        raise GpuSpecError(f"unexpected xdist worker id {worker_id!r}")
    return int(digits)


def gpu_for_worker(chosen: list[str], worker_id: str) -> str:
    return chosen[worker_index(worker_id) % len(chosen)]


def choose_gpus(spec_text: str) -> list[str]:
    """The xdist controller's choice for ``--kernelprof-gpus spec_text``, among the visible GPUs."""
    spec = parse_gpu_spec(spec_text)
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    # torch counts devices only where the caller made no selection of its own.
    count = 0 if env is not None else _device_count()
    return spec.choose(visible_gpus(env, count))


def _device_count() -> int:
    from ..capture.profiler import import_torch  # MissingTorchError where torch cannot be imported

    return int(import_torch().cuda.device_count())


def visible_gpu_count() -> int:
    """CUDA GPUs this process can use: 0 where CUDA is not available (imports torch: a
    ``MissingTorchError`` where it cannot be imported)."""
    from ..capture.profiler import import_torch

    torch = import_torch()
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def cuda_missing_cause() -> tuple[str, str]:
    """Why this process has no CUDA GPU, and what would give it one: (why, what to do), for a
    gpu test that must not skip. Imports torch (a ``MissingTorchError`` where it cannot be
    imported)."""
    from ..capture.profiler import import_torch

    torch = import_torch()
    build = getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None)
    if not build:
        return (
            f"torch {torch.__version__} is a CPU-only build",
            "install a CUDA build of torch (https://pytorch.org/get-started/locally/)",
        )
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and not visible_gpus(env, 0):
        return f"CUDA_VISIBLE_DEVICES={env!r} hides every GPU", "unset CUDA_VISIBLE_DEVICES or name a GPU in it"
    said = "torch.cuda.is_available() is False"
    if torch.cuda.device_count() == 0:
        # cudaGetDeviceCount's 0 does not say why; initialising CUDA does (no driver, a driver too
        # old for this build, no device), and on failure leaves CUDA uninitialised.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                torch.cuda.init()
            except Exception as exc:
                said = f"torch.cuda says: {_first_line(str(exc))}"
    return (
        f"torch {torch.__version__} (a CUDA {build} build) finds no GPU: {said}",
        "check the NVIDIA driver and the GPU with nvidia-smi",
    )


def _first_line(text: str, most: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no message)"
    return line if len(line) <= most else line[: most - 3] + "..."


def gpus_needed(marks: Sequence[tuple[Sequence[object], Mapping[str, object]]]) -> int:
    """How many GPUs the ``gpu`` markers of a test ask for, given as (args, kwargs) each:
    ``gpu`` is 1, ``gpu(count=N)`` is N; the most any marker asks for (a module's
    ``pytestmark = pytest.mark.gpu`` and a test's ``gpu(count=2)`` need 2); 0 without one."""
    needed = 0
    for args, kwargs in marks:
        unknown = sorted(set(kwargs) - {"count"})
        if args or unknown:
            given = ", ".join([*map(repr, args), *(f"{k}=..." for k in unknown)])
            raise GpuSpecError(f"takes only count=N, got ({given})")
        count = kwargs.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise GpuSpecError(f"count must be an int >= 1, got {count!r}")
        needed = max(needed, count)
    return needed


def take_worker_gpu(gpu: str) -> None:
    """In an xdist worker: make ``gpu`` the only visible one, before anything initialises CUDA."""
    try:
        import torch
    except ImportError:  # a trace-only install: no torch, so nothing has initialised CUDA through it
        initialised = False
    else:
        initialised = torch.cuda.is_initialized()  # type: ignore[no-untyped-call]
    if initialised:
        raise GpuSpecError(
            "CUDA was initialised before the worker could pick its GPU "
            "(a conftest or plugin touched CUDA at import time)"
        )
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu


def assignment_line(chosen: list[str], workers: int) -> str:
    """``gw0 -> GPU 0, gw1 -> GPU 1`` for the report header."""
    return ", ".join(f"gw{i} -> GPU {gpu_for_worker(chosen, f'gw{i}')}" for i in range(workers))


def can_lend() -> bool:
    """Whether GPUs can be lent across workers here: the lock needs ``fcntl`` (POSIX)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


def new_lock_file() -> str:
    """The controller's lock file for its workers' GPU tests (removed by :func:`remove_lock_file`)."""
    fd, path = tempfile.mkstemp(prefix="kernelprof-gpus-", suffix=".lock")
    os.close(fd)
    return path


def remove_lock_file(path: str) -> None:
    for name in (path, path + ".turnstile"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(name)


@contextlib.contextmanager
def gpu_turn(lock_path: str, chosen: Sequence[str], needed: int) -> Iterator[None]:
    """Run a test that needs ``needed`` GPUs in its turn: one GPU (its worker's) beside the other
    workers' one-GPU tests; more than one alone, with every chosen GPU visible to the processes it
    starts. A test that needs none, or more than were chosen, runs at once (it skips or fails in
    setup)."""
    if needed == 0 or needed > len(chosen):
        yield
        return
    import fcntl

    with open(lock_path + ".turnstile", "a+b") as turnstile, open(lock_path, "a+b") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)  # behind a waiting lending, not past it
        if needed == 1:
            fcntl.flock(lock, fcntl.LOCK_SH)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            return
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            own = os.environ.get("CUDA_VISIBLE_DEVICES")
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(chosen)
            try:
                yield
            finally:
                if own is None:
                    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
                else:
                    os.environ["CUDA_VISIBLE_DEVICES"] = own
                fcntl.flock(lock, fcntl.LOCK_UN)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
