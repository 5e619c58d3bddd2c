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
_WORD = re.compile(r"\S+")
_PAIR = re.compile(r"\w+=\S+")
# A family is a name users choose (teaching it, or asking for it in a query): one word.
FAMILY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# "template" is a query word (the kernels generated from a template), no kernel's kind: taught,
# it gave kernels of kind "template" that no kind="template" query counted.
TAUGHT_KINDS = tuple(kind for kind in KINDS if kind != "template")
_CHOICES = {"kind": TAUGHT_KINDS, "dtype": DTYPES, "layout": LAYOUTS, "part_of": TAUGHT_KINDS}


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
    if name in ("kind", "part_of") and value == "template":
        raise TeachingError(
            f"{origin}: {name}=template cannot be taught: 'template' is a query word (kind='template' asks for "
            "the kernels generated from a template, whatever they compute), no kernel's kind; teach what the "
            f"kernel computes, e.g. {name}=gemm"
        )
    choices = _CHOICES.get(name)
    if choices is not None and value not in choices:
        raise TeachingError(f"{origin}: unknown {name} {value!r}; one of: {', '.join(choices)}")
    if name == "family" and not FAMILY_NAME.match(value):
        raise TeachingError(
            f"{origin}: family {value!r} is not a name; use letters, digits, '_', '-' or '.', e.g. family=flash-attn"
        )


def _split(text: str) -> tuple[str, str] | None:
    """``text`` as its glob and its facts: the facts are the words after the first ``:`` that
    ends a word (a glob holds colons: ``*::fwd*``) where every word after it is a ``field=value``
    pair; the glob is what comes before it, on the first line. In one pass over the words: a
    lazy regex for the glob tried each colon against the rest of the line, quadratic in the
    colons (24 s for a line of 16,000)."""
    words = [(found.start(), found.end()) for found in _WORD.finditer(text)]
    first = len(words)  # where the run of pairs that ends the line starts
    while first > 0 and _PAIR.fullmatch(text, *words[first - 1]):
        first -= 1
    newline = text.find("\n")
    for facts in range(max(first, 1), len(words)):
        colon = words[facts - 1][1] - 1
        if 0 <= newline < colon:
            return None  # a glob is one line
        if colon > 0 and text[colon] == ":":
            return text[:colon], text[words[facts][0] :]
    return None


def parse_teaching(line: str, origin: str) -> Teaching:
    """One ``GLOB: field=value ...`` line; ``origin`` says where it was written."""
    found = _split(line.strip())
    if found is None:
        raise TeachingError(
            f"{origin}: cannot read {line.strip()!r}; write 'GLOB: field=value ...', "
            "e.g. 'flash_fwd_*: kind=attention family=flash-attn'"
        )
    facts: dict[str, str] = {}
    glob, pairs = found
    for pair in pairs.split():
        name, _, value = pair.partition("=")
        if name not in TAUGHT_FIELDS:
            raise TeachingError(
                f"{origin}: unknown field {name!r} in {line.strip()!r}; one of: {', '.join(TAUGHT_FIELDS)}"
            )
        if name in facts:
            raise TeachingError(f"{origin}: {name}= given twice in {line.strip()!r}")
        facts[name] = value
    glob = glob.strip()
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
