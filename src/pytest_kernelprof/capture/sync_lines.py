"""The user's line of each host sync, from torch's sync debug mode, by profiled call
(``stacks=True``): the warnings are kept as lines, never shown.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from types import FrameType
from typing import TextIO

from ..decode.sync_calls import FlaggedSync, is_user_file
from ..paths import short_path
from .profiler import import_torch

_SYNC_WARNING = "called a synchronizing CUDA operation"
_PLUGIN = __name__.partition(".")[0]


class SyncLines:
    """The user's line of each sync torch's sync debug mode warns about, by profiled call.

    The warning is raised where the synchronizing torch call returns to Python, so the
    Python stack at that moment holds the user's exact line (the profiler's frames only
    name each function's def line).
    """

    def __init__(self) -> None:
        self.call = 0
        self.by_call: dict[int, list[FlaggedSync]] = {}

    def add(self, frame: FrameType | None) -> None:
        inner: list[tuple[str, int, str]] = []
        while frame is not None:
            # The profiled callable's frames end where the plugin's loop called it.
            if frame.f_globals.get("__name__", "").startswith(_PLUGIN):
                break
            inner.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
            frame = frame.f_back
        user = [f for f in inner if is_user_file(f[0])]
        if user:
            path, line, function = user[0]
            self.by_call.setdefault(self.call, []).append(FlaggedSync(f"{short_path(path)}:{line}", function))


@contextlib.contextmanager
def flagging_syncs(enabled: bool) -> Iterator[SyncLines | None]:
    """Turn torch's sync debug mode to "warn" and keep the line of each warning, not the warning.

    Only where the mode is off (a user's "warn" or "error" stays as it is) and CUDA is
    there. Other warnings pass through to the filters and display as they were.
    """
    torch = import_torch()
    set_mode = getattr(torch.cuda, "set_sync_debug_mode", None)
    get_mode = getattr(torch.cuda, "get_sync_debug_mode", None)
    if not enabled or set_mode is None or get_mode is None or not torch.cuda.is_available() or get_mode() != 0:
        yield None
        return
    lines = SyncLines()
    with warnings.catch_warnings():
        warnings.filterwarnings("always", message=f".*{_SYNC_WARNING}", category=UserWarning)
        # torch says so once per process when the mode is set; under -W error it would raise.
        warnings.filterwarnings("ignore", message=".*Synchronization debug mode is a prototype", category=UserWarning)
        shown = warnings.showwarning

        def showwarning(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, UserWarning) and _SYNC_WARNING in str(message):
                lines.add(sys._getframe(1))
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning
        try:
            set_mode("warn")
            yield lines
        finally:
            set_mode(0)  # also after a failed set: a mode left on would warn in every later test
