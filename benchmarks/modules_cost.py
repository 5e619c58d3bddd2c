"""What ``modules=True`` costs on the tiny Llama's eager forward (33 modules, 2 decoder layers).

    python -m benchmarks.modules_cost        (from the repository root, on a GPU machine;
                                              needs transformers, the examples extra)

Three pairs, interleaved, median of 7 rounds after one round of warm-up, each round 20
synchronized forwards (or one whole profile): the forward alone with the module hooks
installed against without (outside a profiler session a range is a hook call and little
more), the same forwards inside a torch.profiler session (where each range is recorded),
and a whole ``Profiler.profile`` (2 warm-up calls, 3 profiled calls, the build) with
``modules=True`` against without.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from examples.models import llama_ids, tiny_llama
from pytest_kernelprof import Profiler
from pytest_kernelprof.capture.module_ranges import module_ranges

ROUNDS = 7
FORWARDS = 20


def main() -> None:
    model = tiny_llama()
    ids = llama_ids()

    def forwards() -> None:
        with torch.no_grad():
            for _ in range(FORWARDS):
                model(input_ids=ids)
        torch.cuda.synchronize()

    def hooked() -> None:
        with module_ranges(model, torch):
            forwards()

    def profiled(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=activities):
                fn()

        return run

    profiler = Profiler()
    variants: dict[str, Callable[[], object]] = {
        "forward": forwards,
        "forward, module hooks": hooked,
        "forward in a session": profiled(forwards),
        "forward in a session, module hooks": profiled(hooked),
        "kernelprof.profile": lambda: profiler.profile(model, (ids,), no_grad=True),
        "kernelprof.profile, modules=True": lambda: profiler.profile(model, (ids,), no_grad=True, modules=True),
    }
    for fn in variants.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e3)
            profiler.captures.clear()
    medians = {name: statistics.median(t) for name, t in times.items()}
    modules = len(list(model.modules()))
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}: {modules} modules, median of {ROUNDS}")
    for name, value in medians.items():
        per = f", {value / FORWARDS * 1e3:.0f} us a forward" if name.startswith("forward") else ""
        print(f"  {name}: {value:.1f} ms{per} ({', '.join(f'{t:.1f}' for t in sorted(times[name]))})")
    for plain in ("forward", "forward in a session", "kernelprof.profile"):
        with_hooks = next(n for n in medians if n.startswith(plain) and n != plain)
        print(f"  {with_hooks}: {medians[with_hooks] / medians[plain]:.3f}x {plain}")


if __name__ == "__main__":
    main()
