"""What every value read from GPU records shares: where no GPU activity was recorded, a
read raises :class:`NoDeviceActivityError` instead of reading as empty."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from ..errors import NoDeviceActivityError
from ..tables import printable


class _Gated(Protocol):
    @property
    def _unavailable(self) -> str | None:
        """Why nothing could be measured, or None where something was."""


G = TypeVar("G", bound=_Gated)
P = ParamSpec("P")
R = TypeVar("R")


def needs_measurement(method: Callable[Concatenate[G, P], R]) -> Callable[Concatenate[G, P], R]:
    """``method``, raising :class:`NoDeviceActivityError` with the profile's reason before it
    runs where nothing was measured: "no kernels" must never pass a test.

    The check's frame is hidden from pytest's tracebacks, so that a failure points at the
    test's line, not into the model."""

    @functools.wraps(method)
    def gated(self: G, /, *args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        reason = self._unavailable
        if reason is not None:
            raise NoDeviceActivityError(reason)
        return method(self, *args, **kwargs)

    return gated


class _Measured:
    """What every collection of measured records shares: it may come from a profile that
    recorded no GPU activity, and then it says so instead of reading as empty."""

    __slots__ = ("_unavailable",)
    _unavailable: str | None

    @property
    def measured(self) -> bool:
        """Whether GPU activity was recorded, so that the records (maybe none) can be read."""
        return self._unavailable is None

    @needs_measurement
    def require_measured(self) -> None:
        """Raise :class:`NoDeviceActivityError`, with the profile's reason, unless :attr:`measured`."""


# How every output words a profile, or a value of one, that recorded no GPU activity: its table and
# repr, `kernelprof show`, the timeline page.
NO_GPU_ACTIVITY = "no GPU activity recorded"
UNMEASURED_TABLE = f"(unmeasured: {NO_GPU_ACTIVITY})"

# The profiler range of one nn.Module call (capture/module_ranges.py writes it): the model owns
# the names it reads, and capture imports them from here.
MODULE_RANGE_PREFIX = "nn.Module: "


T = TypeVar("T")
RecordsT = TypeVar("RecordsT", bound="_Records[Any]")


class _Records(_Measured, Sequence[T], Generic[T]):
    """A sequence of one call's records that raises :class:`NoDeviceActivityError` on every
    access where the profile recorded no GPU activity."""

    __slots__ = ("_items_", "_load")
    _noun = "records"

    def __init__(self, items: Sequence[T] = (), *, unavailable: str | None = None) -> None:
        self._items_: tuple[T, ...] | None = tuple(items)
        self._load: Callable[[], Sequence[T]] | None = None
        self._unavailable = unavailable

    @classmethod
    def deferred(cls: type[RecordsT], load: Callable[[], Sequence[Any]], *, unavailable: str | None = None) -> RecordsT:
        """Records that ``load()`` makes on first read.

        The builder gives each profiled call's kernels one: most tests read only the
        representative call, and making Kernel objects is most of the cost of building a profile.
        """
        made = cls.__new__(cls)
        made._items_, made._load, made._unavailable = None, load, unavailable
        return made

    def _loaded(self) -> tuple[T, ...]:
        items = self._items_
        if items is None:
            assert self._load is not None  # set whenever _items_ is not
            items = self._items_ = tuple(self._load())
            self._load = None
        return items

    @needs_measurement
    def _items(self) -> tuple[T, ...]:
        return self._loaded()

    @overload
    def __getitem__(self: RecordsT, index: int) -> T: ...
    @overload
    def __getitem__(self: RecordsT, index: slice) -> RecordsT: ...
    def __getitem__(self: RecordsT, index: int | slice) -> T | RecordsT:
        __tracebackhide__ = True
        if isinstance(index, slice):
            return self._like(self._items()[index])
        item: T = self._items()[index]
        return item

    def __len__(self) -> int:
        __tracebackhide__ = True
        return len(self._items())

    def __iter__(self) -> Iterator[T]:
        __tracebackhide__ = True
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True
        if isinstance(other, _Records):
            return self._items() == other._items()
        if isinstance(other, list | tuple):
            return list(self._items()) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _like(self: RecordsT, items: Sequence[T]) -> RecordsT:
        """Records of the same call as these, holding ``items`` (a slice): what a subclass knows
        of its call kept."""
        return type(self)(items)

    def _table(self, items: Sequence[T]) -> str:
        raise NotImplementedError

    def table(self) -> str:
        if self._unavailable is not None:
            return UNMEASURED_TABLE
        return self._table(self._items()) if self._loaded() else f"(no {self._noun})"

    def _summary(self, item: T) -> str:
        return repr(item)

    def headline(self) -> str:
        """One line that names the records; pytest shows ``assert not prof.syncs`` on one line."""
        name = type(self).__name__
        if self._unavailable is not None:
            return f"{name}(unavailable: no GPU activity recorded)"
        items = self._loaded()
        if not items:
            return f"{name}(no {self._noun})"
        shown = printable("; ".join(self._summary(item) for item in items[:3]))  # names from the trace: one line
        more = f"; {len(items) - 3} more" if len(items) > 3 else ""
        return f"{name} of {len(items)}: {shown}{more}"

    def __repr__(self) -> str:
        # One line, as KernelList's: pytest prints reprs in its assertion report.
        return self.headline()

    def __str__(self) -> str:
        # What print() and IPython show: the headline, then the table where there is one to show
        # (unmeasured or empty, the headline says so alone).
        return f"{self.headline()}\n{self.table()}" if self.measured and self._loaded() else self.headline()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.headline() if cycle else str(self))
