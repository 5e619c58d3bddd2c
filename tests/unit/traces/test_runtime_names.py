"""Runtime calls that Kineto records as "INVALID": a CUPTI callback id its table has no name for
(the two-GPU DDP trace has 12 of them, callback ids 461 and 486). Shown by their id, each id
counted apart, by both Chrome readers and the live adapter."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof import traces as events
from pytest_kernelprof.cli import main
from pytest_kernelprof.traces import chrome
from tests.helpers import DATA

DDP = DATA / "h200x2_ddp_rank0.json.gz"


@pytest.mark.parametrize("reader", ["typed", "json"])
def test_both_readers_name_an_invalid_runtime_call_by_its_callback_id(
    reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if reader == "json":
        monkeypatch.setattr(chrome, "typed_reader", lambda: None)
    elif chrome.typed_reader() is None:
        pytest.skip("msgspec is not installed")
    _, read = chrome.read_chrome_trace(DDP)
    names = Counter(e.name for e in read if e.category == events.RUNTIME)
    assert "INVALID" not in names
    assert {name: n for name, n in names.items() if name.startswith("unnamed")} == {
        "unnamed (cbid 461)": 24,
        "unnamed (cbid 486)": 12,
    }


def test_the_profile_and_show_count_unnamed_calls_per_callback_id(capsys: pytest.CaptureFixture[str]) -> None:
    runtime = load_trace(DDP).runtime
    assert "INVALID" not in runtime
    assert (runtime["unnamed (cbid 461)"], runtime["unnamed (cbid 486)"]) == (8, 4)
    assert main(["show", str(DDP)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("runtime calls: "))
    assert "INVALID" not in line
    assert line.endswith(", unnamed (cbid 461) x8, unnamed (cbid 486) x4")


class _Runtime:
    """A live runtime ``_KinetoEvent`` (torch 2.12+): its metadata holds the callback id."""

    def __init__(self, name: str, metadata: str | None) -> None:
        self._name, self._metadata = name, metadata

    def name(self) -> str:
        return self._name

    def activity_type(self) -> str:
        return "cuda_runtime"

    def start_ns(self) -> int:
        return 5

    def duration_ns(self) -> int:
        return 10

    def start_thread_id(self) -> int:
        return 1

    def correlation_id(self) -> int:
        return 7

    def linked_correlation_id(self) -> int:
        return 0

    def metadata_json(self) -> Any:
        if self._metadata is None:
            raise AttributeError("metadata_json")  # a torch that has no metadata
        return self._metadata


def test_the_live_adapter_names_an_invalid_runtime_call_by_its_callback_id() -> None:
    adapted = events.events_from_kineto(
        [
            _Runtime("INVALID", '"cbid": 486, "correlation": 7'),
            _Runtime("INVALID", None),
            _Runtime("cudaLaunchKernel", '"cbid": 211, "correlation": 8'),
        ]
    )
    assert [e.name for e in adapted] == ["unnamed (cbid 486)", "unnamed (no cbid recorded)", "cudaLaunchKernel"]
