"""modules=True: a range per nn.Module call, the per-module views built from them, and what
happens around torch.compile; live on the CPU, and on hand-made traces with kernels."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import torch
from torch import nn

import pytest_kernelprof as kp
from pytest_kernelprof import ModuleNotRecordedError, NoDeviceActivityError, load_trace
from pytest_kernelprof.capture import profiler_running
from pytest_kernelprof.capture.module_ranges import module_names
from tests.helpers import Stream

cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="pins the CPU-only behaviour")


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x) + self.head(x * 2)  # head runs twice


NAMES = [
    "Net",
    "layers.0",
    "layers.0.norm",
    "layers.0.mlp",
    "layers.0.mlp.0",
    "layers.0.mlp.1",
    "layers.0.mlp.2",
    "layers.1",
    "layers.1.norm",
    "layers.1.mlp",
    "layers.1.mlp.0",
    "layers.1.mlp.1",
    "layers.1.mlp.2",
    "head",
]


def hooks_left(model: nn.Module) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


@cpu_only
def test_each_module_call_is_a_range_named_after_the_module() -> None:
    net = Net()
    prof = kp.Profiler(warmup=1, calls=2).profile(net, (torch.randn(4, 8),), modules=True)
    assert list(prof.modules) == NAMES  # named_modules() names; the model under its class name
    assert net.get_submodule("layers.0.mlp") is net.layers[0].mlp
    mlp = prof.module("layers.0.mlp")
    assert mlp.count == 1
    assert prof.module("head").count == 2
    assert prof.ops["nn.Module: layers.0.mlp"].children == [f"nn.Module: layers.0.mlp.{i}" for i in range(3)]
    assert prof.ops["nn.Module: layers.0.mlp.0"].children == ["aten::linear"]
    assert prof.module("Net").cpu_time_us >= mlp.cpu_time_us
    assert [list(call.modules) for call in prof.calls] == [NAMES, NAMES]
    assert prof.modules is prof.modules  # made once, not per module() lookup
    with pytest.raises(NoDeviceActivityError):
        len(mlp.kernels)  # no GPU: "no kernels" must not pass
    with pytest.raises(NoDeviceActivityError):
        _ = mlp.device_time_us
    assert "no GPU activity recorded" in repr(mlp)
    assert "layers.0.mlp.2" in prof.modules.table()
    assert hooks_left(net) == 0


@cpu_only
def test_a_module_range_covers_the_users_own_hooks() -> None:
    net = Net()
    net.head.register_forward_pre_hook(lambda module, args: torch.relu(args[0]))
    net.head.register_forward_hook(lambda module, args, out: torch.sigmoid(out))
    prof = kp.Profiler(warmup=0, calls=1).profile(net, (torch.randn(4, 8),), modules=True)
    assert prof.ops["nn.Module: head"].children == ["aten::relu", "aten::linear", "aten::sigmoid"]


@cpu_only
def test_missing_modules_say_why() -> None:
    net = Net()
    prof = kp.profile(net, torch.randn(4, 8))  # no modules=True
    with pytest.raises(ModuleNotRecordedError, match="no nn.Module ranges: profile an nn.Module with modules=True"):
        prof.module("head")
    with pytest.raises(ModuleNotRecordedError, match="modules=True"):
        len(prof.modules)
    prof = kp.Profiler().profile(net, (torch.randn(4, 8),), modules=True)
    with pytest.raises(ModuleNotRecordedError, match=r"'layers.0.mpl' did not run.*nearest: layers.0.mlp"):
        prof.module("layers.0.mpl")
    assert "layers.2" not in prof.modules


@cpu_only
def test_hooks_are_removed_and_ranges_closed_when_a_module_raises() -> None:
    net = Net()
    calls = 0

    def boom(module: nn.Module, args: object, output: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the first profiled call (after one warm-up)
            raise ValueError("inside mlp")

    net.layers[1].mlp.register_forward_hook(boom)
    with pytest.raises(ValueError, match="inside mlp"):
        kp.Profiler(warmup=1, calls=1).profile(net, (torch.randn(4, 8),), modules=True)
    assert not profiler_running()
    assert hooks_left(net) == 1  # only the user's own hook
    assert list(kp.Profiler(warmup=0, calls=1).profile(net, (torch.randn(4, 8),), modules=True).modules) == NAMES


class Fallible(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("no")


class Forgiving(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.child = Fallible()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with contextlib.suppress(ValueError):
            self.child(x)
        return torch.relu(x)


@cpu_only
def test_the_range_of_a_module_that_raised_is_closed() -> None:
    prof = kp.Profiler(warmup=0, calls=1).profile(Forgiving(), (torch.ones(2),), modules=True)
    assert prof.ops["nn.Module: Forgiving"].children == ["nn.Module: child", "aten::relu"]


@cpu_only
def test_record_function_stands_in_where_the_fast_range_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(torch._C._profiler, "_RecordFunctionFast")
    net = Net()
    prof = kp.Profiler(warmup=0, calls=1).profile(net, (torch.randn(4, 8),), modules=True)
    assert list(prof.modules) == NAMES
    assert prof.ops["nn.Module: layers.0.mlp"].children == [f"nn.Module: layers.0.mlp.{i}" for i in range(3)]


@cpu_only
def test_which_model_gets_ranges() -> None:
    net = Net()
    x = torch.randn(4, 8)

    def step() -> torch.Tensor:
        return net(x)

    with pytest.raises(TypeError, match="pass the model itself, modules=model"):
        kp.Profiler().profile(step, modules=True)
    assert list(kp.Profiler().profile(step, modules=net).modules) == NAMES
    # A bound method's model gets ranges; forward() itself bypasses the model's own hooks.
    assert list(kp.Profiler().profile(net.forward, (x,), modules=True).modules) == NAMES[1:]
    with pytest.raises(ModuleNotRecordedError):
        len(kp.Profiler(modules=True)(step).modules)  # the fixture's default skips other callables
    assert list(kp.Profiler(modules=True)(net, x).modules) == NAMES
    with pytest.raises(TypeError, match="True, False or an nn.Module"):
        kp.Profiler().profile(net, (x,), modules="yes")
    profiler = kp.Profiler()
    with profiler.record(modules=net) as rec:
        net(x)
    assert list(rec.profile.modules) == NAMES
    with pytest.raises(TypeError, match="takes the nn.Module"), profiler.record(modules=True):
        pass
    assert hooks_left(net) == 0


@cpu_only
def test_no_module_ranges_inside_a_compiled_region() -> None:
    """Dynamo traced the modules' calls when it compiled them: their hooks do not run inside
    the compiled code (and adding them does not recompile: Dynamo skips guards on hooks)."""
    net = Net()
    x = torch.randn(4, 8)
    compiled = torch.compile(net, backend="eager")
    prof = kp.Profiler(warmup=2, calls=2).profile(compiled, (x,), modules=True)
    assert list(prof.modules) == ["Net"]  # the wrapper's call, around the compiled region
    regions = [n for n in prof.ops if n.startswith("Torch-Compiled Region")]
    assert len(regions) == 1
    assert prof.ops["nn.Module: Net"].count == 1
    net.layers[0] = torch.compile(net.layers[0], backend="eager")
    prof = kp.Profiler(warmup=2, calls=1).profile(net, (x,), modules=True)
    names = list(prof.modules)
    assert "layers.0" in names
    assert "layers.0.mlp" not in names
    assert "layers.1.mlp" in names
    assert not [n for n in names if "_orig_mod" in n]
    assert [op for op in prof.ops["nn.Module: layers.0"].children if op.startswith("Torch-Compiled")]


def test_names_of_a_compiled_submodule_are_said_once() -> None:
    net = Net()
    net.layers[0] = torch.compile(net.layers[0], backend="eager")
    names = [name for name, _ in module_names(net)]
    assert names[:4] == ["Net", "layers", "layers.0", "layers.0.norm"]  # the ModuleList too, never called
    assert len(names) == len(set(names)) == len(NAMES) + 1
    assert module_names(torch.compile(Block()))[0][0] == "Block"


@cpu_only
def test_module_views_load_from_the_exported_trace(tmp_path: Path) -> None:
    profiler = kp.Profiler(warmup=0, calls=2)
    live = profiler.profile(Net(), (torch.randn(4, 8),), modules=True)
    path = tmp_path / "net.json.gz"
    profiler.captures[-1].export_trace(path)
    offline = load_trace(path)
    assert list(offline.modules) == list(live.modules)
    assert offline.module("head").count == 2


def test_per_module_kernels_and_gpu_time(tmp_path: Path) -> None:
    s = Stream()
    s.step(0, 0, 200)
    s.op("nn.Module: Net", 1, 150)
    s.op("nn.Module: layers.0", 2, 100)
    norm = s.op("aten::layer_norm", 3, 10)
    s.launch(norm, "void at::native::vectorized_layer_norm_kernel<float>", 4, dur=2.0)
    s.op("nn.Module: layers.0.mlp", 20, 60)
    mm = s.op("aten::mm", 21, 10)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", 22, dur=5.0)
    act = s.op("LigerSiLUMulFunction", 40, 10)
    s.launch(act, "_swiglu_forward_kernel", 41, dur=3.0)
    head = s.op("aten::mm", 120, 10)
    s.launch(head, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_TNT", 121, dur=4.0)
    trace = s.trace()
    trace["kernelprof"] = {"version": 1, "triton_kernels": ["_swiglu_forward_kernel"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    # Liger's kernel is Triton's (the "kernelprof" key): the decoder knows it.
    prof = load_trace(path)
    assert [k.module for k in prof.kernels] == ["layers.0", "layers.0.mlp", "layers.0.mlp", "Net"]
    mlp = prof.module("layers.0.mlp")
    assert mlp.kernels.names == ["nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", "_swiglu_forward_kernel"]
    assert mlp.kernels.one(kind="gemm").ops == (
        "nn.Module: Net",
        "nn.Module: layers.0",
        "nn.Module: layers.0.mlp",
        "aten::mm",
    )
    assert mlp.device_time_us == pytest.approx(8.0)
    assert mlp.kernels.one("_swiglu_forward_kernel").family == "liger"
    layer = prof.module("layers.0")
    assert len(layer.kernels) == 3
    assert layer.self_kernels.names == ["void at::native::vectorized_layer_norm_kernel<float>"]
    assert prof.module("Net").device_time_us == pytest.approx(14.0)
    assert "layers.0.mlp: 1 call, 2 kernels, 8.0 us on the GPU" in repr(mlp)
