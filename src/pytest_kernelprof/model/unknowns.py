"""Loud unknowns: which kernels could change the answer to a question about kinds or dtypes.

A kernel that no evidence placed (``KernelName.unplaced``) could be of any kind, and one
whose dtype no evidence gave could be of any dtype. A count, a ``kernelprof_forbid`` rule or a
baseline's kind comparison that such kernels could change says so with an
:class:`~pytest_kernelprof.errors.UndecodedKernelWarning`, which strict decode (the plugin's
``--kernelprof-strict-decode``, through :func:`decode_strictness`) raises instead. Pure: no
pytest, no torch.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from ..decode import KernelName
from ..decode.facts import DTYPES, KINDS
from ..decode.inductor import INDUCTOR_KINDS
from ..errors import UndecodedKernelWarning
from ..paths import callers_stacklevel
from ..tables import display_name, name_matches, plural, printable
from ..tables.template_arguments import depths
from .kernel_text import kind_text

SHOWN = 5  # kernels listed in one warning; the rest are counted


def could_match(
    kernel: KernelName,
    *,
    kinds: Collection[str] | None = None,
    dtypes: Collection[str] | None = None,
    families: Collection[str] | None = None,
) -> bool:
    """Whether ``kernel`` fails to match ``kinds``/``dtypes``/``families`` only for want of
    evidence: a fact that is known and different rules it out; an unknown one (a family no
    rule knows, as ``kernelprof_forbid`` rules read it) leaves it open."""
    open_fact = False
    if families is not None and kernel.family not in families:
        if kernel.family != "unknown":
            return False
        open_fact = True
    if kinds is not None and kernel.kind not in kinds:
        if not kernel.unplaced or "other" in kinds:
            return False
        open_fact = True
    if dtypes is not None and kernel.dtype not in dtypes:
        if kernel.dtype is not None:
            return False
        open_fact = True
    return open_fact


_ANONYMOUS = "(anonymous namespace)::"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# Inductor's ``triton_<category>_fused_<origin ops>_<n>``: the index of a kernel in its graph, and
# before Triton 3.0 Triton's argument specialisation after it (decode/inductor.py). One greedy
# ``\w*``, which backtracks once over the name: no nested repeats for a hostile name to blow up.
_INDUCTOR_INDEX = re.compile(
    rf"(triton_(?:{'|'.join((*INDUCTOR_KINDS, 'tem'))})_fused__?[A-Za-z]\w*_)\d+(?:_0[a-z\d]*)?"
)


def teaching_glob(name: str) -> str:
    """A glob for ``name``'s kernel and its template siblings, and no other: the function's own
    name, with ``*`` for its namespaces and its arguments (``*::fill_index_and_segment_kernel(*``,
    ``*::tiled_matmul<*``); a plain name stays as it is, except an Inductor kernel's index in its
    graph, which a change to the graph renumbers: ``triton_poi_fused_gelu_mul_[0-9]*`` (not
    ``triton_poi_fused_gelu_mul_mul_0``). A kernel whose name names no op keeps its index:
    ``triton_poi_fused_[0-9]*`` would teach every such kernel at once.

    The line is pasted into the ini, where taught rules come before the built-in ones, so a
    glob that matched more than the kernel relabels other kernels of the suite: a name without
    a plain name of its own (``void <lambda>(int)``), or whose own name is no identifier, is
    taught by its whole name, escaped for a glob."""
    inductor = _INDUCTOR_INDEX.fullmatch(name)
    if inductor is not None:
        return f"{inductor.group(1)}[0-9]*"  # a name of word characters: nothing to escape
    text = name
    while text.startswith("void "):
        text = text[len("void ") :]
    text = text.replace(_ANONYMOUS, "")
    own = _own_name(text)
    if own is not None:
        qualified, function, after = own
        glob = f"{'*::' if qualified else ''}{function}{after}{'*' if after else ''}"
        if name_matches(name, glob):
            return glob
    return _exact_glob(text if name_matches(name, _exact_glob(text)) else name)


def _own_name(text: str) -> tuple[bool, str, str] | None:
    """(whether it has a namespace or class, the function's own name, the ``<`` or ``(`` after
    it or ""): the last ``::`` part outside brackets, before the parameter list, after a return
    type; None where that is not an identifier (or is ``operator``, every call operator's)."""
    end = len(text)
    start = 0
    for index, char, angles, rounds in depths(text):
        if angles == rounds == 0:
            if char == "(":
                end = index
                break
            if char == " ":
                start = index + 1
    function = text[start:end]
    own_start, own_end = 0, len(function)
    for index, char, angles, rounds in depths(function):
        if angles or rounds:
            continue
        if function.startswith("::", index):
            own_start, own_end = index + 2, len(function)
        elif char == "<" and index >= own_start and own_end == len(function):
            own_end = index
    own = function[own_start:own_end]
    if not _IDENTIFIER.fullmatch(own) or own == "operator":
        return None
    after = function[own_end] if own_end < len(function) else text[end] if end < len(text) else ""
    return own_start > 0, own, after


def _exact_glob(text: str) -> str:
    """``text`` as a glob that matches it alone, on one ini line: its glob characters in
    brackets, a character that cannot be written on the line (a newline) or that a glob line
    refuses (a double quote) as ``?``, and what the ini or the line's grammar would read
    otherwise in brackets (a leading ``#`` or ``;``, a ``:`` before a space, a leading or
    trailing space; a leading ``::`` too, so that the line is never a GitHub Actions workflow
    command)."""
    chars = []
    for index, char in enumerate(text):
        if char in "*?[" or (char == ":" and text[index + 1 : index + 2].isspace()):
            chars.append(f"[{char}]")
        elif not char.isprintable() or char == '"':
            chars.append("?")
        else:
            chars.append(char)
    if chars and (chars[0] in ("#", ";") or chars[0].isspace() or text.startswith("::")):
        chars[0] = f"[{chars[0]}]"
    if chars and chars[-1].isspace():
        chars[-1] = f"[{chars[-1]}]"
    return "".join(chars)


def missing(kernel: KernelName) -> tuple[str, ...]:
    """The facts of ``kernel`` that no evidence gave, of those kind questions ask."""
    return ("kind", "family") if kernel.unplaced else ("dtype",)


def how_to_teach(kernels: Iterable[KernelName]) -> list[str]:
    """The ini lines that would teach the decoder ``kernels``, asking for what is missing."""
    lines: dict[str, str] = {}
    for kernel in kernels:
        glob = teaching_glob(kernel.name)
        lines.setdefault(glob, " ".join(f"{fact}=..." for fact in missing(kernel)))
    return ["kernelprof_kernels =", *(f"    {glob}: {facts}" for glob, facts in lines.items())]


def teaching_values(kernels: Iterable[KernelName]) -> str:
    """What each ``...`` of :func:`how_to_teach`'s lines may be, for the facts they ask: a
    pasted ``dtype=...`` is refused, and the user should not have to look the values up."""
    asked = dict.fromkeys(fact for kernel in kernels for fact in missing(kernel))
    values = {
        "kind": f"kind is one of {', '.join(k for k in KINDS if k != 'template')}",
        "family": "family a name of your choosing (letters, digits, '_', '-', '.'; e.g. family=flash-attn)",
        "dtype": f"dtype is one of {', '.join(DTYPES)}",
    }
    return "where " + "; ".join(values[fact] for fact in asked)


def _known_and_not(kernel: KernelName) -> str:
    """What is known of ``kernel`` and what is not: ``pointwise/inductor, dtype unknown`` for one
    the decoder placed (only its dtype missing), ``aten, kind unknown`` or ``kind unknown`` for
    one it did not (its family known or not)."""
    if not kernel.unplaced:
        return f"{kind_text(kernel)}, dtype unknown"
    return "kind unknown" if kernel.family == "unknown" else f"{kernel.family}, kind unknown"


def describe(kernels: Sequence[KernelName]) -> list[str]:
    lines = []
    for kernel in kernels[:SHOWN]:
        op = getattr(kernel, "op", None)
        launched = f", launched by {printable(op)}" if op else ""
        lines.append(f"  {display_name(kernel.name)}  ({_known_and_not(kernel)}{launched})")
    if len(kernels) > SHOWN:
        lines.append(f"  ... and {len(kernels) - SHOWN} more")
    return lines


# A context variable, not a module's global: a pytest run inside a test (pytester's in-process
# runs) sets its own for its tests and gives the outer one's back.
_STRICT: ContextVar[bool] = ContextVar("kernelprof_strict_decode", default=False)


@contextmanager
def decode_strictness(strict: bool) -> Iterator[None]:
    """Within it, an undecided question raises its :class:`UndecodedKernelWarning` (``strict``)
    or warns. Raised, no warning filter of the test's (``recwarn``, ``pytest.warns``,
    ``warnings.catch_warnings``) can let the question pass. The plugin sets it around each
    test and the collection, from the session's ``--kernelprof-strict-decode``."""
    token = _STRICT.set(strict)
    try:
        yield
    finally:
        _STRICT.reset(token)


# A trace recorded without the plugin (or before it read Inductor's signatures) has no dtype for
# Inductor's kernels: teaching each generated name is the lesser remedy.
_INDUCTOR_NOTE = (
    "Inductor's kernels: the plugin reads their dtype from Inductor's compiled signatures when it "
    "profiles live, and keeps it in the traces it saves; this profile has none for these: profile the "
    "callable with the kernelprof fixture, or save the trace it takes (kernelprof.captures[i].export_trace(path), "
    "--kernelprof-trace-dir), to have them",
)


def warn_undecided(question: str, kernels: Sequence[KernelName]) -> None:
    """Warn, at the user's line, that ``kernels`` could change the answer to ``question``
    (under :func:`decode_strictness`, raise it); nothing when there are none."""
    __tracebackhide__ = True  # strict: raised here, the failure shows the user's line
    if not kernels:
        return
    distinct = list({kernel.name: kernel for kernel in kernels}.values())
    unknown = sorted({missing(kernel)[0] for kernel in distinct})
    # A kernel the decoder placed is no unknown kernel: only its dtype is (the class keeps its
    # name, "Undecoded", which users catch it by).
    of_what = "of known kind but unknown dtype" if unknown == ["dtype"] else f"of unknown {' or '.join(unknown)}"
    strict = _STRICT.get()
    # Raised, it says so first (the type's name says "warning": users catch it by that name).
    failed = "failed under --kernelprof-strict-decode: " if strict else ""
    # Inductor's kernels of unknown dtype only: a dtype taught by name would pin it, and the same
    # name recompiled for fp32 would then pass a "no fp32 kernel" question (a trial); what gives
    # them their dtype is a trace the plugin recorded.
    inductor_only = unknown == ["dtype"] and all(k.family == "inductor" for k in distinct)
    teach = [
        f"Teach the decoder {'their dtype' if unknown == ['dtype'] else 'what they are'} (pytest.ini), or "
        "kernelprof.teach(GLOB, ...) in the test before taking or loading the profile:",
        *(f"  {line}" for line in how_to_teach(distinct[:SHOWN])),
        f"  ({teaching_values(distinct[:SHOWN])})",
    ]
    lines = [
        f"{failed}{question} may not hold: {plural(len(kernels), 'kernel')} {of_what} could change it:",
        *describe(distinct),
        *([] if inductor_only else teach),
        *_INDUCTOR_NOTE * any(k.family == "inductor" and k.dtype is None for k in distinct),
        *("(teaching them a dtype by name is no remedy: the same name recompiled for another dtype would pass unseen)",)
        * inductor_only,
        *("(an error under --kernelprof-strict-decode)",) * (not strict),
    ]
    if strict:
        raise UndecodedKernelWarning("\n".join(lines))
    warnings.warn("\n".join(lines), UndecodedKernelWarning, stacklevel=callers_stacklevel())


UNPLACED_SHOWN = 20


def unplaced_summary(seen: Mapping[str, tuple[str, str]]) -> list[str]:
    """The end-of-run section on the kernel names no evidence placed (``name -> (launching op,
    first node id)``): its title, then its lines, with how to teach the first of them."""
    names = sorted(seen)
    lines = [f"kernelprof: {plural(len(names), 'kernel name')} no evidence could place (prof.kernels.unplaced())"]
    for name in names[:UNPLACED_SHOWN]:
        op, nodeid = seen[name]
        launched = f"launched by {printable(op)}; " if op else ""
        lines.append(f"{display_name(name)}  ({launched}{printable(nodeid)})")
    if len(names) > UNPLACED_SHOWN:
        lines.append(f"... and {len(names) - UNPLACED_SHOWN} more")
    lines.append("Kind and dtype questions warn about them. Teach the decoder what they are (ini):")
    taught = [KernelName(name, "other", "unknown") for name in names[:UNPLACED_SHOWN]]
    lines.extend(f"  {line}" for line in how_to_teach(taught))
    lines.append(f"  ({teaching_values(taught)})")
    return lines
