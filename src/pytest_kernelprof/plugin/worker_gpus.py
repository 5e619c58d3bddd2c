"""A GPU per xdist worker, through pytest: the controller chooses the GPUs (``--kernelprof-gpus``)
and hands each worker its own through its workerinput; a worker takes its GPU before anything
initialises CUDA, and runs each GPU test in its turn where a test may be lent every GPU. What
is chosen and how a turn is taken is gpus.py's, which knows no pytest."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..errors import GpuSpecError, MissingTorchError
from .gpus import (
    can_lend,
    choose_gpus,
    gpu_for_worker,
    gpu_turn,
    gpus_needed,
    new_lock_file,
    parse_gpu_spec,
    remove_lock_file,
    take_worker_gpu,
)

GPU_MARKER = "gpu"
GPUS_KEY = pytest.StashKey[list[str]]()
GPU_LOCK_KEY = pytest.StashKey[str]()
WORKER_GPU = "kernelprof_gpu"
CHOSEN_GPUS = "kernelprof_gpus"  # workerinput: every GPU the controller chose, comma-joined
GPU_LOCK = "kernelprof_gpu_lock"  # workerinput: the lock file of the workers' GPU tests
RUN_WITHOUT_WORKERS = "without -n (-n 0)"


def configure_gpus(config: pytest.Config) -> None:
    """Controller: choose the GPUs. Worker: take its GPU before anything initialises CUDA."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        gpu = workerinput.get(WORKER_GPU)
        try:
            if gpu is not None:
                take_worker_gpu(gpu)
        except GpuSpecError as exc:
            raise pytest.UsageError(f"--kernelprof-gpus: {exc}") from None
        if gpu is not None and workerinput.get(GPU_LOCK):
            chosen = workerinput[CHOSEN_GPUS].split(",")
            config.pluginmanager.register(GpuLending(workerinput[GPU_LOCK], chosen), "kernelprof-gpu-lending")
        return
    spec_text = config.getoption("kernelprof_gpus")
    if spec_text is None:
        return
    try:
        parse_gpu_spec(spec_text)  # a bad value is an error with or without workers
    except GpuSpecError as exc:
        raise pytest.UsageError(f"--kernelprof-gpus {spec_text}: {exc}") from None
    if not config.pluginmanager.hasplugin("xdist") or not config.getoption("numprocesses", None):
        return
    try:
        config.stash[GPUS_KEY] = choose_gpus(spec_text)
    except (GpuSpecError, MissingTorchError) as exc:
        raise pytest.UsageError(f"--kernelprof-gpus {spec_text}: {exc}") from None
    if can_lend():
        path = config.stash[GPU_LOCK_KEY] = new_lock_file()
        config.add_cleanup(lambda: remove_lock_file(path))


class GpuLending:
    """In an xdist worker with a GPU of its own: each GPU test runs in its turn (gpus.gpu_turn),
    setup and teardown included, so a module-scoped fixture that starts ranks holds the GPUs too."""

    def __init__(self, lock_path: str, chosen: list[str]) -> None:
        self.lock_path = lock_path
        self.chosen = chosen

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        try:
            needed = gpus_needed([(mark.args, mark.kwargs) for mark in item.iter_markers(GPU_MARKER)])
        except GpuSpecError:
            needed = 0  # setup reports the bad marker
        with gpu_turn(self.lock_path, self.chosen, needed):
            return (yield)


def hand_out_gpu(node: Any) -> None:
    """xdist controller: hand ``node`` (a worker) its GPU, the chosen ones and the lock through its workerinput."""

    chosen = node.config.stash.get(GPUS_KEY, None)
    if chosen:
        node.workerinput[WORKER_GPU] = gpu_for_worker(chosen, node.gateway.id)
        node.workerinput[CHOSEN_GPUS] = ",".join(chosen)
        node.workerinput[GPU_LOCK] = node.config.stash.get(GPU_LOCK_KEY, "")
