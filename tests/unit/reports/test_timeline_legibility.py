"""The timeline page read by a new user: colours that can be told apart, and a note that says
what is true of the call it shows (one call's trace, the profiler's first call)."""

from __future__ import annotations

import colorsys
import re
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from tests.helpers import DATA
from tests.unit.reports.test_timeline_browser import browser, needs_browser, note_lines, show_html

TEMPLATE = (Path(__file__).resolve().parents[3] / "src" / "pytest_kernelprof" / "reports" / "timeline.html").read_text(
    encoding="utf-8"
)


def _rgb(colour: str) -> tuple[float, float, float]:
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return red, green, blue


def _hue_apart(a: str, b: str) -> float:
    """Degrees between the hues of two colours, 0 to 180."""
    apart = abs(colorsys.rgb_to_hsv(*_rgb(a))[0] - colorsys.rgb_to_hsv(*_rgb(b))[0]) * 360
    return min(apart, 360 - apart)


def test_memory_ops_attention_and_the_idle_shading_are_told_apart() -> None:
    # Trial: attention kernels (pink #e377c2), memcpys and memsets (magenta #f0f) and the idle
    # shading (#e33 at 13%, light pink) read as one colour on a llama layer's page.
    kinds = dict(re.findall(r'(\w+):"(#[0-9a-f]{3,6})"', TEMPLATE.split("const COL={", 1)[1].split("};", 1)[0]))
    assert kinds["attention"]
    copy = re.search(r"\.copy\{fill:(#[0-9a-f]{3,6});stroke:#000", TEMPLATE)
    assert copy, "memcpys and memsets: a fill of their own, outlined as DtoH copies are"
    # Far from the pinks (magenta was 21 degrees from attention's pink); an outline sets memory
    # ops apart from the olive and gold of other kinds.
    assert min(_hue_apart(copy[1], kinds[kind]) for kind in ("attention", "loss")) >= 45
    # The idle shading: a hatch of greys, no hue that a kernel could be taken for.
    assert ".gap{fill:url(#idle)}" in TEMPLATE
    pattern = TEMPLATE.split('el("pattern",{id:"idle"', 1)[1].split("\n", 2)[:2]
    greys = re.findall(r'fill:"(#[0-9a-f]{3,6})"', "".join(pattern))
    assert len(greys) == 2
    assert all(len(set(_rgb(g))) == 1 for g in greys), greys


@needs_browser
@pytest.mark.parametrize(("recorded", "call"), [("h200_llama_layer_compiled_modules", 0), ("h200_geglu_eager", 0)])
def test_the_note_says_what_is_true_of_a_one_call_trace_and_of_the_first_call(
    tmp_path: Path, recorded: str, call: int
) -> None:
    # Trial: a one-call trace's page said "the median call by host span" (now the fastest) and "each kernel's
    # median over the calls", and its 98% idle said nothing of the profiler's start-up in it.
    prof = load_trace(DATA / f"{recorded}.json.gz")
    one = len(prof.calls) == 1
    page = tmp_path / "page.html"
    show_html(DATA / f"{recorded}.json.gz", page)
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("let call=D.open||0", f"let call={call}", 1), encoding="utf-8")
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    lines = note_lines(dom)
    said = " ".join(lines)
    assert ("the fastest call" not in said) == one, said
    assert ("the fastest call)</option>" not in dom) == one
    idle = next(i for i, line in enumerate(lines) if line.startswith("Idle within the host span: "))
    first = "The trace's one call is the first profiled" if one else "Call 0 is the first profiled"
    assert lines[idle + 1].startswith(f"{first}: its span carries the profiler's start-up, a few ms"), lines
    if one:
        assert "This is the trace's only call: kernelprof show and the profile's table give its figures." in lines
    else:  # a later call: no word of the start-up
        later = page.read_text(encoding="utf-8").replace(f"let call={call}", "let call=2", 1)
        page.write_text(later, encoding="utf-8")
        dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
        assert "start-up" not in " ".join(note_lines(dom))
