"""What an entry written by --kernelprof-update cannot guard: its kernels of unknown dtype, and the
remedy for each (a live profile for Inductor's, teaching for others)."""

from __future__ import annotations

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline.files import unguarded_lines
from tests.helpers import DATA


def test_inductors_kernels_are_recorded_live_and_others_taught() -> None:
    # A trial: the update pointed at teaching for an Inductor kernel, which the undecoded warning
    # calls no remedy (the same name recompiled for another dtype would pass unseen).
    [inductor] = unguarded_lines(load_trace(DATA / "h200_geglu_compiled.json.gz"))
    assert inductor.startswith("dtype not guarded: 1 kernel name of unknown dtype, stored as null: triton_poi_")
    assert inductor.endswith("(record it from a live profile, which reads Inductor's dtypes)")
    # The compiled Llama layer: its Inductor kernels and cuDNN's attention kernel, which teaching fixes.
    [mixed] = unguarded_lines(load_trace(DATA / "h200_llama_layer_compiled_modules.json.gz"))
    assert mixed.startswith("dtype not guarded: 7 kernel names of unknown dtype, stored as null: ")
    assert ", +4 more (" in mixed
    assert mixed.endswith(
        "(Inductor's: record it from a live profile, which reads Inductor's dtypes; "
        "others: kernelprof show on its trace prints the --kernels line that teaches a dtype)"
    )
    assert unguarded_lines(load_trace(DATA / "h200_geglu_eager.json.gz")) == ()
