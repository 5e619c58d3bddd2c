"""What users teach the decoder: ``GLOB: field=value ...`` lines, before the built-in table.

    flash_fwd_*: kind=attention family=flash-attn
    *fbgemm_gpu*embedding*: kind=indexing family=fbgemm
    _rms_norm_forward_kernel: kind=reduction family=liger dtype=bf16

The glob is matched against the whole kernel name, with or without a leading ``void ``, and
against the name as every output shows it (``tables.display_name``): a name copied from a
table or a failure matches its kernel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import TeachingError
from ..tables import name_matches
from .facts import DTYPES, KINDS, LAYOUTS

TAUGHT_FIELDS = ("kind", "family", "dtype", "layout", "part_of")
_LINE = re.compile(r"^(?P<glob>\S.*?):\s+(?P<facts>\w+=\S+(?:\s+\w+=\S+)*)\s*$")
_FAMILY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CHOICES = {"kind": KINDS, "dtype": DTYPES, "layout": LAYOUTS, "part_of": KINDS}


@dataclass(frozen=True)
class Teaching:
    """One taught rule: kernels whose name matches ``pattern`` get the facts it gives."""

    pattern: str
    kind: str | None = None
    family: str | None = None
    dtype: str | None = None
    layout: str | None = None
    part_of: str | None = None
    origin: str = "teach()"  # where it was taught, for error messages and the evidence listing

    def __post_init__(self) -> None:
        __tracebackhide__ = True
        check_teaching(self.pattern, self.origin, {name: getattr(self, name) for name in TAUGHT_FIELDS})

    def matches(self, name: str) -> bool:
        return name_matches(name, self.pattern)

    def line(self) -> str:
        facts = " ".join(f"{name}={getattr(self, name)}" for name in TAUGHT_FIELDS if getattr(self, name) is not None)
        return f"{self.pattern}: {facts}"


def check_teaching(pattern: object, origin: str, facts: Mapping[str, object]) -> None:
    """Raise TeachingError, saying where and what to write, unless ``pattern`` and ``facts``
    make a rule (called before a Teaching is made, so that a failure shows the user's line)."""
    __tracebackhide__ = True
    if not isinstance(pattern, str) or not pattern.strip():
        raise TeachingError(f"{origin}: a taught rule needs a glob, got {pattern!r}")
    given = {name: value for name, value in facts.items() if value is not None}
    if not given:
        raise TeachingError(
            f"{origin}: {pattern!r} teaches nothing; give at least one of "
            f"{', '.join(f'{name}=' for name in TAUGHT_FIELDS)}"
        )
    for name, value in given.items():
        _check_value(origin, name, value)


def _check_value(origin: str, name: str, value: object) -> None:
    __tracebackhide__ = True
    if not isinstance(value, str):
        raise TeachingError(f"{origin}: {name}= takes a string, got {value!r}")
    choices = _CHOICES.get(name)
    if choices is not None and value not in choices:
        raise TeachingError(f"{origin}: unknown {name} {value!r}; one of: {', '.join(choices)}")
    if name == "family" and not _FAMILY.match(value):
        raise TeachingError(
            f"{origin}: family {value!r} is not a name; use letters, digits, '_', '-' or '.', e.g. family=flash-attn"
        )


def parse_teaching(line: str, origin: str) -> Teaching:
    """One ``GLOB: field=value ...`` line; ``origin`` says where it was written."""
    found = _LINE.match(line.strip())
    if found is None:
        raise TeachingError(
            f"{origin}: cannot read {line.strip()!r}; write 'GLOB: field=value ...', "
            "e.g. 'flash_fwd_*: kind=attention family=flash-attn'"
        )
    facts: dict[str, str] = {}
    for pair in found.group("facts").split():
        name, _, value = pair.partition("=")
        if name not in TAUGHT_FIELDS:
            raise TeachingError(
                f"{origin}: unknown field {name!r} in {line.strip()!r}; one of: {', '.join(TAUGHT_FIELDS)}"
            )
        if name in facts:
            raise TeachingError(f"{origin}: {name}= given twice in {line.strip()!r}")
        facts[name] = value
    glob = found.group("glob").strip()
    if len(glob) > 2 and glob[0] == glob[-1] == '"':  # quoted as a rule quotes a name
        glob = glob[1:-1]
    if '"' in glob:  # no kernel name holds one: a glob that would teach nothing, silently
        raise TeachingError(f"{origin}: the glob {glob!r} has an unbalanced double quote; write the glob bare")
    return Teaching(glob, origin=origin, **facts)


def parse_teachings(lines: Iterable[str], origin: str) -> tuple[Teaching, ...]:
    """Every non-blank line that is not a ``#`` comment, numbered in ``origin``."""
    __tracebackhide__ = True
    if isinstance(lines, str):
        raise TypeError(f"{origin}: teaching lines are a list of 'GLOB: field=value ...' strings, got one str")
    taught: list[Teaching] = []
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.strip().startswith("#"):
            taught.append(parse_teaching(line, f"{origin}, line {number}"))
    return tuple(taught)
