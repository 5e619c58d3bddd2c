"""The facts a kernel's decoding gives, and where each one came from."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = (
    "gemm",
    "convolution",
    "pointwise",
    "reduction",
    # A reduction whose every row fits one block (Inductor's ``triton_per_*``): a query for
    # "reduction" matches these too (KernelName.is_kind), one for "persistent_reduction" only these.
    "persistent_reduction",
    # Not a kind any kernel has: a query for it asks for the kernels generated from a template
    # (KernelName.template), whose kind says what they compute (gemm, attention, convolution).
    "template",
    "attention",
    "communication",
    # Library kernels whose names say what they do (ATen, CUB, cuDNN): see grammar.RULES.
    "indexing",
    "sort",
    "scan",
    "pooling",
    "resampling",
    "loss",
    "optimizer",
    # Work of a library call that is none of the above (cuFFT, cuDNN RNN, cuSOLVER/MAGMA, cuRAND).
    "fft",
    "rnn",
    "linalg",
    "random",
    "other",
)

LAYOUTS = ("nn", "nt", "tn", "tt")

# Every dtype the decoder gives (KernelName.dtype), for validating what users ask for.
DTYPES = (
    "fp64",
    "fp32",
    "tf32",
    "bf16",
    "fp16",
    "fp8",
    "int8",
    "uint8",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "bool",
    "complex64",
    "complex128",
)

# The families of Triton kernels: Inductor's generated ones, Liger-Kernel's, and any other that
# capture learned is one (a user's own @triton.jit). A family query names one family; ask for
# "any Triton kernel" with all three (``family=inductor,liger,triton`` in a rule).
TRITON_FAMILIES = ("inductor", "liger", "triton")

# Where a fact came from, strongest first: what the user taught, the kernel's name (its
# library's naming grammar), the operations in a Triton kernel's compiled IR (read live by the
# capture, kept in the traces it saves), the types in its template arguments, the op that
# launched it, and the dtypes of that op's inputs (recorded only where the profile recorded shapes).
# For fused ops only "name", "op" and None: the ops the name tells, else those its launching op
# says the kernel computes (an ATen elementwise kernel's op, the bias of addmm's GEMM).
SOURCES = ("user", "name", "ir", "template", "op", "op-inputs")


@dataclass(frozen=True)
class Evidence:
    """Where each fact of a decoded kernel came from: one of the sources that
    [The evidence, in order][the-evidence-in-order] lists, or None where no evidence gave the fact
    (``kind=None``: nothing placed the kernel, its kind is ``"other"`` because nothing said otherwise)."""

    kind: str | None = None
    family: str | None = None
    dtype: str | None = None
    layout: str | None = None
    fused_ops: str | None = None

    def __repr__(self) -> str:
        given = [f"{fact}={source}" for fact, source in self.facts() if source is not None]
        return f"Evidence({', '.join(given) or 'none'})"

    def facts(self) -> tuple[tuple[str, str | None], ...]:
        return (
            ("kind", self.kind),
            ("family", self.family),
            ("dtype", self.dtype),
            ("layout", self.layout),
            ("fused_ops", self.fused_ops),
        )

    def inferred(self) -> tuple[str, ...]:
        """The facts that were not read from the name: from templates, the op, or the user."""
        return tuple(fact for fact, source in self.facts() if source is not None and source != "name")


NO_EVIDENCE = Evidence()


@dataclass(frozen=True)
class KernelName:
    """What the evidence says about a kernel: its name decoded, and what its template
    arguments, launching op and the user added where the name was silent."""

    name: str
    kind: str
    family: str
    layout: str | None = None
    dtype: str | None = None
    fused_ops: tuple[str, ...] = ()
    collective: str | None = None
    # The kind of work this kernel is a helper of: "gemm" for cuBLAS's beta scaling
    # (scal_kernel), split-K reduction and bias epilogue, "convolution" for cuDNN's filter and
    # FFT/Winograd transforms. Such a kernel keeps its own kind, so one nn.Linear is one GEMM.
    part_of: str | None = None
    # Generated from a template (Inductor's ``triton_tem_*``: max-autotune GEMMs, flex attention,
    # convolutions); ``kind`` says what it computes. A ``kind="template"`` query asks for these.
    template: bool = False
    evidence: Evidence = field(default=NO_EVIDENCE, compare=False)

    @property
    def unplaced(self) -> bool:
        """True where no evidence placed this kernel: kind ``"other"`` because nothing said
        what it is. Kind and dtype queries cannot rule such a kernel in or out."""
        return self.kind == "other" and self.evidence.kind is None

    def is_kind(self, kind: str) -> bool:
        """Whether this kernel answers a query for ``kind``: its own kind, for ``"template"``
        whether it was generated from one, and for ``"reduction"`` a persistent reduction too (a
        compiled softmax's ``triton_per_*`` is the eager one's reduction: a trial counted none)."""
        if kind == "template":
            return self.template
        if kind == "reduction":
            return self.kind in ("reduction", "persistent_reduction")
        return self.kind == kind
