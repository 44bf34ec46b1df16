"""How nsys spells the names of CUDA API calls, memory operations and NVTX ranges, one name
at a time.

Plain Python (no NumPy): :mod:`analysis.names` and :mod:`analysis.nvtx` apply these rules to
whole columns, and the SQL path of ``stats`` (:mod:`analysis.stats.sql`) to the few groups
of a small report. spec: nsys-sqlite.md §3.3 (the API version suffix), §3.6 (memory
operation names), §3.4 and §4.4 (NVTX range labels and styles), §1.5 (NVTX domains).
"""

from __future__ import annotations

from collections.abc import Iterable

from strata.analysis.schema import NVTX_PUSHPOP_TYPES, NVTX_STARTEND_TYPES

__all__ = [
    "MEMSET_NAME",
    "STYLE_PUSHPOP",
    "STYLE_STARTEND",
    "api_display_name",
    "memcpy_name",
    "nvtx_domain_names",
    "nvtx_label",
    "nvtx_style",
]

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


STYLE_PUSHPOP = "PushPop"
STYLE_STARTEND = "StartEnd"


def nvtx_style(event_type: int) -> str:
    """'PushPop', 'StartEnd' or 'Unknown' for an NVTX event type (spec §4.4)."""
    if event_type in NVTX_PUSHPOP_TYPES:
        return STYLE_PUSHPOP
    return STYLE_STARTEND if event_type in NVTX_STARTEND_TYPES else "Unknown"


def nvtx_domain_names(
    creations: Iterable[tuple[int, int, int, int, str]],
) -> dict[tuple[int, int], str]:
    """The name of each (pid, domain id) from the report's domain creations, given as
    ``(start, rowid, pid, domain id, name)`` (a nameless creation names its domain ``""``).

    A process that creates an id twice: the earliest creation wins, the first row among
    equal starts (spec §1.5). The default domain (id 0) has no name here.
    """
    names: dict[tuple[int, int], str] = {}
    for _, _, pid, domain, name in sorted(creations, key=lambda c: (c[0], c[1])):
        if domain != 0:
            names.setdefault((pid, domain), name)
    return names


def nvtx_label(domain: str | None, text: str | None) -> str | None:
    """The nsys 2023.4 label of an NVTX range: ``domain:text`` in a named domain, else
    ``text`` (2024+ prints ``:text`` for the default domain, which we do not follow); a
    range without text has no label (SQL's ``domain || ':' || NULL`` is NULL)."""
    return text if domain is None or text is None else f"{domain}:{text}"
