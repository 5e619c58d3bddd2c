"""Profile a function on N ranks of one host: torch.multiprocessing spawn, one process per GPU.

Each rank joins a process group (NCCL with GPUs, gloo without), builds its step with
``make_step(rank, world_size)``, and profiles it with the same capture as ``kernelprof``;
its Chrome trace comes back to the test process, which loads it with ``load_trace``. So
each rank's ``KernelProfile`` is built by the one builder, and nothing unpicklable crosses
a process boundary.

A rank that raises fails the whole run with its traceback; a run that outlives
``timeout_s`` (a rank stuck in a collective, say) fails with the time limit. Either way
every rank process is terminated before the error is raised.
"""

from __future__ import annotations

import os
import pickle
import queue
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..capture.profiler import import_torch
from ..errors import RankError
from ..model import KernelProfile
from ..options import DEFAULT_CALLS, DEFAULT_WARMUP, ProfileOptions
from .loading import read_trace
from .profiler import capture_profile

# NVLink multicast (NVLS) can take shared machines' GPUs out of service; ranks keep it off
# unless the caller set it explicitly.
SAFE_NCCL_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rank_main(
    rank: int,
    world_size: int,
    make_step: Callable[[int, int], Callable[[], Any]],
    port: int,
    out_dir: str,
    options: ProfileOptions,
    results: Any,
) -> None:
    failed_at: float | None = None
    try:
        import torch
        import torch.distributed as dist

        for key, value in SAFE_NCCL_ENV.items():
            os.environ.setdefault(key, value)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world_size))
        gpu = torch.cuda.is_available()
        if gpu:
            torch.cuda.set_device(rank % torch.cuda.device_count())
        dist.init_process_group("nccl" if gpu else "gloo", rank=rank, world_size=world_size)
        try:
            step = make_step(rank, world_size)
            capture = capture_profile(step, options=options)
            path = Path(out_dir) / f"rank{rank}.json.gz"
            capture.export_trace(path)
            dist.barrier()
        except BaseException:
            failed_at = time.time()  # before the teardown takes the other ranks' collectives down too
            raise
        finally:
            dist.destroy_process_group()
        results.put((rank, "ok", str(path), 0.0))
    except BaseException:  # noqa: BLE001 - every failure goes back to the test process
        results.put((rank, "error", traceback.format_exc(), failed_at or time.time()))


def profile_ranks(
    make_step: Callable[[int, int], Callable[[], Any]],
    world_size: int = 2,
    *,
    warmup: int = DEFAULT_WARMUP,
    calls: int = DEFAULT_CALLS,
    timeout_s: float = 300.0,
    trace_dir: str | os.PathLike[str] | None = None,
) -> list[KernelProfile]:
    """One KernelProfile per rank, rank order, of the step ``make_step(rank, world_size)`` returns.

    ``make_step`` must be picklable (a module-level function): ranks are spawned processes.
    Traces go to ``trace_dir`` when given (``rank0.json.gz``, ...), else to a temporary folder.
    """
    _check_ranks(make_step, world_size)
    options = ProfileOptions(warmup=warmup, calls=calls, allow_variation=True)
    torch = import_torch()  # an unsupported torch is refused here, before a rank starts
    import torch.multiprocessing as mp

    visible = _gpus_for_ranks(torch)
    if torch.cuda.is_available() and visible < world_size:
        raise RankError(f"world_size={world_size} needs {world_size} GPUs; {visible} are visible")
    context = mp.get_context("spawn")
    results = context.Queue()
    with tempfile.TemporaryDirectory(prefix="kernelprof-ranks-") as tmp:
        out_dir = os.fspath(trace_dir) if trace_dir is not None else tmp
        os.makedirs(out_dir, exist_ok=True)
        port = _free_port()
        processes = [
            context.Process(
                target=_rank_main,
                args=(rank, world_size, make_step, port, out_dir, options, results),
                daemon=True,
            )
            for rank in range(world_size)
        ]
        for process in processes:
            process.start()
        deadline = time.monotonic() + timeout_s
        try:
            paths = _collect(results, processes, world_size, deadline, timeout_s)
        finally:
            _stop(processes, hung=time.monotonic() >= deadline)
        return [read_trace(paths[rank], allow_variation=True) for rank in range(world_size)]


def _check_ranks(make_step: object, world_size: object) -> None:
    """Refuse, before a rank starts, what would fail in each spawned rank or with a raw error."""
    if isinstance(world_size, bool) or not isinstance(world_size, int):
        raise TypeError(f"world_size must be an int >= 1, got {world_size!r}")
    if world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size}")
    if not callable(make_step):
        raise TypeError(f"make_step must be a function of (rank, world_size), got {type(make_step).__name__}")
    try:
        pickle.dumps(make_step)
    except Exception as exc:  # PicklingError, or AttributeError/TypeError for a local object
        raise TypeError(
            f"make_step must be a module-level function: the ranks are spawned processes, "
            f"and {make_step!r} cannot be pickled ({type(exc).__name__}: {exc})"
        ) from None


def _gpus_for_ranks(torch: Any) -> int:
    """The GPUs the spawned ranks will see: ``CUDA_VISIBLE_DEVICES`` as it is now, where set.
    This process's own count can be fewer: CUDA read the variable once, when it started, and an
    xdist worker lent every chosen GPU (``--kernelprof-gpus``) started with one."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return int(torch.cuda.device_count())
    return len([part for part in listed.split(",") if part.strip()])


def _collect(results: Any, processes: list[Any], world_size: int, deadline: float, timeout_s: float) -> dict[int, str]:
    paths: dict[int, str] = {}
    while len(paths) < world_size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            missing = sorted(set(range(world_size)) - set(paths))
            raise RankError(f"ranks {missing} did not finish within {timeout_s:g} s (a hang in a collective?)")
        try:
            rank, status, payload, failed_at = results.get(timeout=min(remaining, 1.0))
        except queue.Empty:
            dead = [
                r
                for r, p in enumerate(processes)
                if not p.is_alive() and r not in paths and p.exitcode not in (0, None)
            ]
            if dead:
                # Killed without reporting (a signal, the OOM killer): no traceback to show.
                rank = dead[0]
                raise RankError(f"rank {rank} died with exit code {processes[rank].exitcode}") from None
            continue
        if status != "ok":
            raise _first_failure({rank: (failed_at, payload)}, results, processes, paths, deadline)
        paths[rank] = payload
    return paths


# How long the other ranks' reports are awaited once one rank failed.
_FAILURE_GRACE_S = 10.0


def _first_failure(
    failures: dict[int, tuple[float, str]],
    results: Any,
    processes: list[Any],
    paths: dict[int, str],
    deadline: float,
) -> RankError:
    """The error of the rank that failed first. A rank that fails takes the others down with it
    (their collectives lose a peer), and their reports can arrive before its own: each is
    awaited a moment, while its process runs, and the earliest failure is the one named."""
    until = min(deadline, time.monotonic() + _FAILURE_GRACE_S)
    while time.monotonic() < until:
        waiting = [r for r, p in enumerate(processes) if r not in failures and r not in paths and p.is_alive()]
        if not waiting:
            break
        try:
            rank, status, payload, failed_at = results.get(timeout=min(max(until - time.monotonic(), 0.01), 0.2))
        except queue.Empty:
            continue
        if status != "ok":
            failures[rank] = (failed_at, payload)
        else:
            paths[rank] = payload
    rank = min(failures, key=lambda r: failures[r][0])
    return RankError(f"rank {rank} failed:\n{failures[rank][1]}")


def _stop(processes: list[Any], *, hung: bool) -> None:
    """End every rank process: a moment to exit on its own, then SIGTERM, then SIGKILL.

    Past the time limit (``hung``) a rank still running is stuck, in a collective say, and
    waiting for it to exit on its own would only delay the error, so it is terminated at once.
    """
    if not hung:
        for process in processes:
            process.join(timeout=5)
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
