"""Rename the script a recorded trace's Python frames name, leaving every other byte of it as
recorded. ::

    python tools/rename_trace_frames.py TRACE OLD NEW
    python tools/rename_trace_frames.py tests/data/h200_sync_item_stacks.json.gz main_ace.py train.py

A trace recorded with stacks names the script that ran it in each Python frame
(``main_ace.py(40): train_step_item``): a recording machine's scratch name, which the docs'
samples then print. The frames (``python_function`` events' names, ``FILE(LINE): FUNCTION``) are
renamed in the decompressed text, so the rest stays byte for byte what the profiler wrote; the
result is checked to parse to the same events but for those names, and is written gzipped
without a name or a time in its header, so that the same input gives the same bytes.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any


def renamed(text: str, old: str, new: str) -> str:
    """``text`` (a Chrome trace) with the frames of the file ``old`` naming ``new``."""
    frame = re.compile(rf'"{re.escape(old)}\((\d+)\): ')
    result = frame.sub(lambda m: f'"{new}({m[1]}): ', text)
    before, after = json.loads(text), json.loads(result)
    expected = _frames_renamed(before, old, new)
    if after != expected:
        raise ValueError(f"renaming {old} changed more than the Python frames' names")
    if result == text:
        raise ValueError(f"no Python frame names {old}")
    return result


def _frames_renamed(trace: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    events = []
    for event in trace.get("traceEvents", []):
        name = event.get("name")
        if event.get("cat") == "python_function" and isinstance(name, str) and name.startswith(f"{old}("):
            event = {**event, "name": new + name[len(old) :]}
        events.append(event)
    return {**trace, "traceEvents": events}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    path, old, new = Path(argv[0]), argv[1], argv[2]
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    data = renamed(text, old, new).encode("utf-8")
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{path}: frames of {old} now name {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
