"""docs/measured.md's table of kernels by kind per real-model workload, against the traces it names.

The table is written by hand from ``python -m tools.record_models`` on a GPU; a row whose trace is
kept under ``tests/data/`` is recomputed here from that trace, so that the page cannot go on
telling what the decoder no longer reads (it said Liger's kernels were 9 ``other`` kernels long
after they decoded as family ``liger``).
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "measured.md"
# | workload | `trace` | kernels | by kind | still `other` |
ROW = re.compile(
    r"^\| (?P<workload>[^|]+?) \| `(?P<trace>\w+)` \| (?P<kernels>\d+) \| (?P<kinds>[^|]+?) \| (?P<other>[^|]+?) \|$"
)


def traced_rows() -> list[dict[str, str]]:
    return [match.groupdict() for match in map(ROW.match, PAGE.read_text(encoding="utf-8").splitlines()) if match]


def test_the_page_names_the_traces_of_its_rows() -> None:
    assert [row["trace"] for row in traced_rows()] == [
        "h200_llama_forward_modules",
        "h200_liger_llama_forward_modules",
        "h200_llama_layer_compiled_modules",
        "h200_resnet50_forward_cl_modules",
    ]


@pytest.mark.parametrize("row", traced_rows(), ids=lambda row: row["trace"])
def test_a_rows_counts_are_its_traces(row: dict[str, str]) -> None:
    kernels = load_trace(ROOT / "tests" / "data" / f"{row['trace']}.json.gz").kernels
    kinds = collections.Counter(k.kind for k in kernels)
    shown = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())
    assert (int(row["kernels"]), row["kinds"], row["other"]) == (len(kernels), shown, str(kinds["other"]))
