"""How nsys spells the names of CUDA API calls and memory operations, one name at a time.

Plain Python (no NumPy): :mod:`analysis.names` applies these rules to whole columns, and the
SQL path of ``stats`` (:mod:`analysis.stats.sql`) to the few groups of a small report.
spec: nsys-sqlite.md §3.3 (the API version suffix), §3.6 (memory operation names).
"""

from __future__ import annotations

__all__ = ["MEMSET_NAME", "api_display_name", "memcpy_name"]

#: The name of every memset (spec §3.6).
MEMSET_NAME = "[CUDA memset]"


def api_display_name(name: object) -> object:
    """A CUDA API name as nsys prints it: a ``_vNNNN`` suffix dropped (spec §3.3).

    The suffix goes when the two characters six from the end are ``_v`` (``substr(name,
    -6, 2) = '_v'``), so ``cudaMalloc_v3020`` is ``cudaMalloc`` while
    ``cudaGraphAddKernelNode_v10000`` stays as it is. Anything but text stays as it is.
    """
    return name[:-6] if isinstance(name, str) and name[-6:-4] == "_v" else name


def memcpy_name(label: str) -> str:
    """A memcpy's name from its copy kind's ``ENUM_CUDA_MEMCPY_OPER`` label (spec §3.6)."""
    return f"[CUDA memcpy {label}]"
