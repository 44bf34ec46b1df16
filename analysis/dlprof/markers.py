"""What the NVTX texts of a PyTorch run say: DLProf markers, ``emit_nvtx`` ranges, op types.

spec: dlprof.md §2 (the three kinds of range a DLProf-profiled PyTorch run pushes), §3 (Op ID,
Op Name, Op Type), §4 (direction), §5 (Tensor Core kernels and eligible ops). Each function
takes the *distinct* texts of a report (a few thousand at most), never one row per event.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "TC_ELIGIBLE_OPS",
    "TC_KERNEL_PATTERNS",
    "MarkerInfo",
    "classify_texts",
    "is_tc_eligible",
    "normalize_func_stack",
    "op_id_prefix",
    "uses_tensor_cores",
]

#: Substrings of kernel names that use Tensor Cores: NVIDIA's public list (PyProf ``tc.py``,
#: also the PyTorch TensorBoard plugin's), spec §5. It predates Hopper; callers may extend it.
TC_KERNEL_PATTERNS = (
    "h884", "s884", "h1688", "s1688", "c1688", "hmma", "i8816", "16816",
    "dgrad_1x1_stride_2x2", "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1",
    "direct_group", "xmma_implicit_gemm", "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm",
)  # fmt: skip

#: Op types that may use Tensor Cores (PyTorch's autocast FP16 list, spec §5), lower case,
#: without ``aten::``, ``Backward`` or a trailing number; backward names are normalised too.
TC_ELIGIBLE_OPS = frozenset(
    {
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "_convolution", "cudnn_convolution",
        "cudnn_convolution_transpose", "cudnnconvolution", "convolutionbackward",
        "cudnnconvolutionbackward", "addmm", "addmv", "addr", "mm", "mv", "matmul", "linear",
        "bmm", "baddbmm", "addbmm", "chain_matmul", "linalg_multi_dot", "prelu", "lstm_cell",
        "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "lstm", "gru",
    }
)  # fmt: skip

# emit_nvtx: ``name[, seq = N][, op_id = K][, sizes = [...]][, input_op_ids = [...]]`` ([PT]).
_EMIT = re.compile(
    r"^(?P<name>[^,{}\[\]]+?)(?:, seq = (?P<seq>-?\d+))?(?:, op_id = (?P<op_id>\d+))?"
    r"(?:, sizes = .*?)?(?:, input_op_ids = .*)?$",
    re.S,
)
_BACKWARD = re.compile(r"[Bb]ackward\d*$")
_REPEAT = re.compile(r"\((\d+)\)(?=/|$)")
_STEP_NUMBER = re.compile(r"#\d+$")


class MarkerInfo:
    """Per distinct text, what kind of range it is (parallel arrays, one entry per text).

    Attributes
    ----------
    is_op
        A framework op: a DLProf marker ``{'mod': …, 'op': …}`` or an ``emit_nvtx`` range.
    is_trace
        A DLProf call-site marker ``{'traceMarker': …, 'funcStack': …}``.
    is_backward
        An ``emit_nvtx`` backward range (``…Backward0, seq = N``), spec §4.
    op_type
        The op type (``conv2d``, ``uniform_``, ``ConvolutionBackward0``); '' when not an op.
    label
        How the range is named in an op or group path: the op name without ``aten::`` and
        without ``emit_nvtx``'s suffixes, a ``#N`` step number dropped.
    func_stack
        The normalised ``funcStack`` of a call-site marker (:func:`normalize_func_stack`).
    seq
        The autograd sequence number of an ``emit_nvtx`` range, -1 when none.
    node
        The name a ``--key-node`` matches: the op type, or the label.
    """

    def __init__(self, n: int) -> None:
        self.is_op = np.zeros(n, dtype=bool)
        self.is_trace = np.zeros(n, dtype=bool)
        self.is_backward = np.zeros(n, dtype=bool)
        self.is_emit = np.zeros(n, dtype=bool)
        self.op_type = np.full(n, "", dtype=object)
        self.label = np.full(n, "", dtype=object)
        self.func_stack = np.full(n, "", dtype=object)
        self.seq = np.full(n, -1, dtype=np.int64)
        self.node = np.full(n, "", dtype=object)


def normalize_func_stack(stack: str) -> str:
    """DLProf's Op Name of a ``funcStack``: ``/<module>`` → ``/module``, ``(2)`` → ``[2]``."""
    return _REPEAT.sub(r"[\1]", stack.replace("<module>", "module"))


def _literal(text: str) -> dict | None:
    """A DLProf marker is a Python dict literal (single quotes, tuples): never ``json``."""
    if not text.startswith("{") or ("'op'" not in text and "'funcStack'" not in text):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def classify_texts(texts: Sequence[str | None]) -> MarkerInfo:
    """Classify distinct NVTX texts (spec §2): DLProf markers, emit_nvtx ranges, the rest."""
    info = MarkerInfo(len(texts))
    for i, text in enumerate(texts):
        text = text or ""
        marker = _literal(text)
        if marker is not None and isinstance(marker.get("op"), str):
            info.is_op[i] = True
            info.op_type[i] = info.label[i] = info.node[i] = marker["op"]
            continue
        if marker is not None and isinstance(marker.get("funcStack"), str):
            info.is_trace[i] = True
            info.func_stack[i] = normalize_func_stack(marker["funcStack"])
            continue
        match = _EMIT.match(text)
        name = match["name"] if match else text
        is_emit = bool(match) and (
            name.startswith("aten::") or match["seq"] is not None or match["op_id"] is not None
        )
        bare = name.removeprefix("aten::")
        if is_emit:
            info.is_op[i] = info.is_emit[i] = True
            info.op_type[i] = bare
            info.seq[i] = int(match["seq"]) if match["seq"] is not None else -1
            info.is_backward[i] = bool(_BACKWARD.search(bare)) and match["seq"] is not None
            info.label[i] = info.node[i] = name
        else:
            info.label[i] = info.node[i] = _STEP_NUMBER.sub("", text)
    return info


def op_id_prefix(op_type: str) -> str:
    """The Op ID of an op type before its ordinal: ``uniform_`` → ``UNIFORM__`` (spec §3)."""
    return f"{op_type.upper()}_"


def is_tc_eligible(op_types: Iterable[str]) -> npt.NDArray[np.bool_]:
    """Whether each op type may use Tensor Cores (spec §5's public proxy)."""
    out = []
    for op_type in op_types:
        base = re.sub(r"\d+$", "", op_type.removeprefix("aten::")).lower()
        out.append(base in TC_ELIGIBLE_OPS or base.removesuffix("backward") in TC_ELIGIBLE_OPS)
    return np.array(out, dtype=bool)


def uses_tensor_cores(
    names: Iterable[str | None], patterns: Sequence[str] = TC_KERNEL_PATTERNS
) -> npt.NDArray[np.bool_]:
    """Whether each kernel name contains one of ``patterns`` (spec §5, PyProf's rule)."""
    return np.array([any(p in (n or "") for p in patterns) for n in names], dtype=bool)
