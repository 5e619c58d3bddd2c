"""Learning which kernels are Triton kernels: the launch hook of each Triton generation, the
JIT-cache scan, and capture without Triton, all with fake Triton modules (no GPU needed)."""

from __future__ import annotations

import gc
import gzip
import json
import sys
import types
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import profiler_running, triton_kernels
from pytest_kernelprof.capture.triton_kernels import learn_triton_kernels, scan_jit_caches, watch_triton_launches
from pytest_kernelprof.decode.triton_ir import IrFacts
from pytest_kernelprof.traces.chrome import events_from_trace_file
from tests.helpers import DATA


class LazyDict:
    """Triton's launch metadata: ``data`` plus extras that ``get()`` evaluates (user code)."""

    def __init__(self, name: str) -> None:
        self.data = {"name": name, "stream": 0}
        self.extras_evaluated = 0

    def get(self) -> dict[str, Any]:
        self.extras_evaluated += 1
        return dict(self.data)


class HookChain:
    """Triton 3.5+'s ``knobs.runtime.launch_enter_hook``."""

    def __init__(self) -> None:
        self.calls: list[Callable[[Any], None]] = []

    def add(self, fn: Callable[[Any], None]) -> None:
        self.calls.append(fn)

    def remove(self, fn: Callable[[Any], None]) -> None:
        self.calls.remove(fn)

    def __call__(self, metadata: Any) -> None:
        for call in self.calls:
            call(metadata)


def fake_triton(generation: str) -> types.ModuleType:
    """A module shaped like one Triton generation's launch-hook API."""
    triton = types.ModuleType("triton")
    if generation == "chain":  # 3.5+
        triton.knobs = types.SimpleNamespace(runtime=types.SimpleNamespace(launch_enter_hook=HookChain()))
    elif generation == "knob":  # 3.4: one hook on the knobs
        triton.knobs = types.SimpleNamespace(runtime=types.SimpleNamespace(launch_enter_hook=None))
    elif generation == "class":  # 3.0-3.3: a class attribute of CompiledKernel

        class CompiledKernel:
            launch_enter_hook: Any = None

        triton.compiler = types.SimpleNamespace(CompiledKernel=CompiledKernel)
    return triton


def launch(triton: types.ModuleType, name: str) -> LazyDict:
    """What Triton's launcher does before a launch: call the hook, if one is set."""
    metadata = LazyDict(name)
    knobs = getattr(triton, "knobs", None)
    hook = knobs.runtime.launch_enter_hook if knobs is not None else None
    if hook is None and hasattr(triton, "compiler"):
        hook = triton.compiler.CompiledKernel.launch_enter_hook
    if hook is not None:
        hook(metadata)
    return metadata


def current_hook(triton: types.ModuleType) -> Any:
    knobs = getattr(triton, "knobs", None)
    if knobs is not None:
        return knobs.runtime.launch_enter_hook
    return triton.compiler.CompiledKernel.launch_enter_hook


@pytest.fixture
def real_triton_state() -> None:
    """torch caches whether Triton is installed when it first imports Inductor (a session may:
    torch.profiler's start does, capture's where Inductor is loaded): that must not happen
    while a fake Triton is in sys.modules."""
    import torch._inductor.config  # noqa: F401
    import torch.utils._triton

    torch.utils._triton.has_triton_package()


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch, real_triton_state: None) -> Callable[[str], types.ModuleType]:
    def put(generation: str) -> types.ModuleType:
        triton = fake_triton(generation)
        monkeypatch.setitem(sys.modules, "triton", triton)
        return triton

    return put


@pytest.mark.parametrize("generation", ["chain", "knob", "class"])
def test_each_generation_of_launch_hook_is_installed_for_the_block_only(
    install: Callable[[str], types.ModuleType], generation: str
) -> None:
    triton = install(generation)
    launch(triton, "before_kernel")
    with watch_triton_launches() as watch:
        metadata = launch(triton, "_rms_norm_forward_kernel")
        launch(triton, "_swiglu_forward_kernel")
    launch(triton, "after_kernel")
    assert watch.names == {"_rms_norm_forward_kernel", "_swiglu_forward_kernel"}
    assert metadata.extras_evaluated == 0  # the name is read without running launch_metadata
    if generation == "chain":
        assert current_hook(triton).calls == []
    else:
        assert current_hook(triton) is None


@pytest.mark.parametrize("generation", ["knob", "class"])
def test_a_single_hook_already_set_keeps_running_and_is_restored(
    install: Callable[[str], types.ModuleType], generation: str
) -> None:
    triton = install(generation)
    seen: list[str] = []

    def theirs(metadata: Any) -> None:
        seen.append(metadata.data["name"])

    if generation == "knob":
        triton.knobs.runtime.launch_enter_hook = theirs
    else:
        triton.compiler.CompiledKernel.launch_enter_hook = theirs
    with watch_triton_launches() as watch:
        launch(triton, "k")
    assert watch.names == {"k"}
    assert seen == ["k"]
    assert current_hook(triton) is theirs


def test_the_hook_is_removed_when_the_block_raises_and_never_raises_itself(
    install: Callable[[str], types.ModuleType],
) -> None:
    triton = install("chain")
    seen: set[str] = set()

    def launches_then_raises() -> None:
        with watch_triton_launches() as watch:
            triton.knobs.runtime.launch_enter_hook(object())  # metadata it cannot read: ignored
            triton.knobs.runtime.launch_enter_hook(types.SimpleNamespace(data={"name": 3}))
            launch(triton, "k")
            seen.update(watch.names)
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        launches_then_raises()
    assert seen == {"k"}
    assert triton.knobs.runtime.launch_enter_hook.calls == []


def test_a_triton_without_a_launch_hook_or_no_triton_installs_nothing(
    install: Callable[[str], types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    install("none")
    with watch_triton_launches() as watch:
        pass
    assert watch.names == set()
    monkeypatch.delitem(sys.modules, "triton")
    with watch_triton_launches() as watch:
        pass
    assert watch.names == set()


class KernelInterface:
    pass


class JITFunction(KernelInterface):
    def __init__(self, **caches: Any) -> None:
        self.__dict__.update(caches)


class Autotuner(KernelInterface):
    def __init__(self, fn: Any) -> None:
        self.fn = fn


class Compiled:
    def __init__(self, name: str, in_metadata: bool = False) -> None:
        if in_metadata:
            self.metadata = types.SimpleNamespace(name=name)
        else:
            self.name = name


class Unrelated:
    pass


@pytest.fixture
def jit_modules(monkeypatch: pytest.MonkeyPatch, real_triton_state: None) -> list[types.ModuleType]:
    """``triton.runtime.jit`` and a library module holding JIT functions of every layout."""
    jit = types.ModuleType("triton.runtime.jit")
    jit.JITFunction = JITFunction  # type: ignore[attr-defined]
    jit.KernelInterface = KernelInterface  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton.runtime.jit", jit)
    monkeypatch.setitem(sys.modules, "triton", types.ModuleType("triton"))
    lib = types.ModuleType("fake_liger_ops")
    # Triton 3.2+: device -> (compiled kernels by key, target, backend, binder)
    lib.rms = JITFunction(device_caches={0: ({"k1": Compiled("_rms_norm_forward_kernel")}, "target", None)})
    # autotuned: the JITFunction is the wrapper's .fn; kernels named in their metadata
    lib.tuned = Autotuner(JITFunction(device_caches={0: ({"k": Compiled("_swiglu_forward_kernel", True)},)}))
    # older Triton: device -> compiled kernels by key
    lib.rope = JITFunction(cache={0: {"k": Compiled("_triton_rope")}})
    lib.never_compiled = JITFunction(device_caches={})
    lib.alias = lib.rms  # the same function twice: scanned once
    lib.other = Unrelated()
    dead = Unrelated()
    lib.proxy = weakref.proxy(dead)  # isinstance() on a dead proxy raises ReferenceError
    del dead
    gc.collect()
    monkeypatch.setitem(sys.modules, "fake_liger_ops", lib)
    return [jit, lib]


def test_the_jit_cache_scan_finds_compiled_kernels_of_every_layout(jit_modules: list[types.ModuleType]) -> None:
    found = scan_jit_caches(jit_modules)
    assert found == {"_rms_norm_forward_kernel", "_swiglu_forward_kernel", "_triton_rope"}
    assert scan_jit_caches() >= found  # all of sys.modules, dead proxy and all


def test_the_scan_runs_only_for_kernels_the_hook_did_not_see(jit_modules: list[types.ModuleType]) -> None:
    scans: list[int] = []

    def scan() -> set[str]:
        scans.append(1)
        return {"_rms_norm_forward_kernel", "_triton_rope", "never_launched_here"}

    assert learn_triton_kernels({"a"}, set(), scan) == {"a"}
    assert learn_triton_kernels({"a"}, {"a"}, scan) == {"a"}
    assert scans == []
    learned = learn_triton_kernels({"a"}, {"a", "_triton_rope", "my_cuda_kernel"}, scan)
    assert learned == {"a", "_triton_rope"}  # only this profile's kernels; a CUDA one stays unknown
    assert scans == [1]


def test_names_a_scan_missed_are_not_scanned_for_again_until_a_module_comes(
    jit_modules: list[types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[int] = []

    def scan() -> set[str]:
        scans.append(1)
        return {"_triton_rope"}

    for _ in range(3):  # a cuBLAS kernel in every profile of a process that imported Triton
        assert learn_triton_kernels(set(), {"sgemm_largek_lds64"}, scan) == frozenset()
    assert scans == [1]
    # A name not scanned for yet is; one the scan found is found again.
    assert learn_triton_kernels(set(), {"sgemm_largek_lds64", "_triton_rope"}, scan) == {"_triton_rope"}
    assert learn_triton_kernels(set(), {"_triton_rope"}, scan) == {"_triton_rope"}
    assert scans == [1, 1, 1]
    monkeypatch.setitem(sys.modules, "fake_new_kernels", types.ModuleType("fake_new_kernels"))
    assert learn_triton_kernels(set(), {"sgemm_largek_lds64"}, scan) == frozenset()
    assert scans == [1, 1, 1, 1]


def test_without_triton_there_is_no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    assert learn_triton_kernels(set(), {"k"}, lambda: pytest.fail("scanned")) == frozenset()
    monkeypatch.delitem(sys.modules, "triton.runtime.jit", raising=False)
    assert scan_jit_caches() == set()


@pytest.fixture
def cpu_only() -> None:
    if torch.cuda.is_available():
        pytest.skip("pins what capture learns where no kernel runs")


@pytest.mark.usefixtures("cpu_only")
def test_capture_learns_launches_of_profiled_calls_and_writes_them_into_the_trace(
    install: Callable[[str], types.ModuleType], tmp_path: Path
) -> None:
    triton = install("chain")
    calls = 0

    def step() -> None:
        nonlocal calls
        calls += 1
        launch(triton, f"user_kernel_{min(calls, 3)}")  # warm-up calls 1 and 2 are not watched
        torch.relu(torch.ones(2))

    profiler = kp.Profiler(warmup=2, calls=2)
    profiler(step)
    capture = profiler.captures[-1]
    assert capture.learned == {"triton_kernels": ["user_kernel_3"]}
    assert triton.knobs.runtime.launch_enter_hook.calls == []
    path = tmp_path / "t.json.gz"
    capture.export_trace(path)
    assert json.loads(gzip.decompress(path.read_bytes()))["kernelprof"] == {
        "version": 1,
        "triton_kernels": ["user_kernel_3"],
    }
    assert events_from_trace_file(path)[0].triton_kernels == {"user_kernel_3"}
    assert kp.load_trace(path).ops["aten::relu"].count == 1


@pytest.mark.usefixtures("cpu_only")
def test_capture_removes_the_hook_when_a_profiled_call_raises(install: Callable[[str], types.ModuleType]) -> None:
    triton = install("class")

    def broken() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        kp.Profiler(warmup=0, calls=1)(broken)
    assert triton.compiler.CompiledKernel.launch_enter_hook is None
    assert not profiler_running()


@pytest.mark.usefixtures("cpu_only", "real_triton_state")
def test_capture_without_triton_learns_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    profiler = kp.Profiler(warmup=0, calls=1)
    with profiler.record():
        torch.relu(torch.ones(2))
    assert profiler.captures[-1].learned == {"triton_kernels": []}
    assert "triton" not in sys.modules  # capture never imports it


def _ttir(name: str) -> str:
    return gzip.decompress((DATA / "triton_ir" / f"{name}.ttir.gz").read_bytes()).decode()


def _with_ir(name: str, ttir: str | None) -> Compiled:
    compiled = Compiled(name)
    compiled.asm = {} if ttir is None else {"ttir": ttir}  # type: ignore[attr-defined]
    return compiled


@pytest.fixture
def ir_modules(jit_modules: list[types.ModuleType], monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """JIT functions whose compiled kernels keep their TTIR, as Triton's CompiledKernel.asm does."""
    monkeypatch.setattr(triton_kernels, "_IR_READ", {})
    lib = types.ModuleType("user_kernels")
    lib.matmul = JITFunction(device_caches={0: ({"a": _with_ir("user_matmul", _ttir("gemm_bf16_matmul"))},)})
    # one kernel compiled for two dtypes: the kind they share, no dtype
    lib.add = Autotuner(
        JITFunction(
            device_caches={
                0: (
                    {
                        "fp32": _with_ir("user_add", _ttir("pointwise_fp32_add")),
                        "bf16": _with_ir("user_add", _ttir("pointwise_bf16_gelu_mul")),
                    },
                )
            }
        )
    )
    lib.no_ir = JITFunction(device_caches={0: ({"k": _with_ir("user_no_ir", None)},)})
    monkeypatch.setitem(sys.modules, "user_kernels", lib)
    return lib


def test_a_user_kernel_is_read_from_its_compiled_ir(ir_modules: types.ModuleType) -> None:
    facts = triton_kernels.ir_facts({"user_matmul", "user_add", "user_no_ir", "never_launched"})
    assert facts == {"user_matmul": IrFacts("gemm", "bf16"), "user_add": IrFacts("pointwise", None)}


def test_each_name_is_read_once_per_process(ir_modules: types.ModuleType) -> None:
    scans: list[int] = []

    def counted() -> Any:
        scans.append(1)
        return ((name, compiled) for name, compiled in [("user_matmul", ir_modules.matmul.device_caches[0][0]["a"])])

    assert triton_kernels.ir_facts({"user_matmul"}, scan=counted) == {"user_matmul": IrFacts("gemm", "bf16")}
    assert triton_kernels.ir_facts({"user_matmul"}, scan=counted) == {"user_matmul": IrFacts("gemm", "bf16")}
    assert len(scans) == 1


def test_without_triton_nothing_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(triton_kernels, "_IR_READ", {})
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    assert triton_kernels.ir_facts({"anything"}, scan=lambda: pytest.fail("scanned without Triton")) == {}
