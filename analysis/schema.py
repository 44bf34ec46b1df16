"""Facts about the nsys export format that the loader and the summaries share.

spec: nsys-sqlite.md §1.2 (global ids), §1.5 (NVTX event types), §1.11 (enum labels).

The constants are plain Python and importing this module imports no NumPy (the SQL path of
``stats`` reads them); the id functions import it when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "LAUNCH_TYPE_LABELS",
    "MAX_SCHEMA_MAJOR",
    "MEMCPY_KIND_LABELS",
    "MEM_KIND_LABELS",
    "NVTX_MARK_TYPES",
    "NVTX_PUSHPOP_TYPES",
    "NVTX_RANGE_TYPES",
    "NVTX_STARTEND_TYPES",
    "NVTX_TYPE_CATEGORY",
    "NVTX_TYPE_DOMAIN_CREATE",
    "OSRT_CLASS_CALL",
    "SYNC_TYPE_LABELS",
    "global_pid_of",
    "pid_of",
    "tid_of",
]

#: Newest export schema major version we read (3.x covers nsys 2022.4 ... 2026.2).
MAX_SCHEMA_MAJOR = 3

NVTX_TYPE_CATEGORY = 33
NVTX_TYPE_MARK = 34
NVTX_TYPE_THREAD = 39
NVTX_TYPE_DOMAIN_CREATE = 75
NVTX_PUSHPOP_TYPES = (59, 70)
NVTX_STARTEND_TYPES = (60, 71)
NVTX_RANGE_TYPES = NVTX_PUSHPOP_TYPES + NVTX_STARTEND_TYPES
NVTX_MARK_TYPES = (34, 65)

#: OSRT_API eventClass of a complete call; 31/32 are partial start/finish markers (§1.6).
OSRT_CLASS_CALL = 27

# Built-in labels for exports without ENUM_* tables (before 2023), spec §1.11.
MEMCPY_KIND_LABELS = {
    0: "Unknown",
    1: "Host-to-Device",
    2: "Device-to-Host",
    3: "Host-to-Array",
    4: "Array-to-Host",
    5: "Array-to-Array",
    6: "Array-to-Device",
    7: "Device-to-Array",
    8: "Device-to-Device",
    9: "Host-to-Host",
    10: "Peer-to-Peer",
    11: "Unified Host-to-Device",
    12: "Unified Device-to-Host",
    13: "Unified Device-to-Device",
}
MEM_KIND_LABELS = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
    7: "Unknown",
}
#: ``ENUM_CUDA_KERNEL_LAUNCH_TYPE`` (spec §1.4), for exports without the ENUM table.
LAUNCH_TYPE_LABELS = {
    0: "Unknown",
    1: "Regular",
    2: "Cooperative (single device)",
    3: "Cooperative (multi device)",
}
SYNC_TYPE_LABELS = {
    0: "Unknown",
    1: "Event sync",
    2: "Stream wait sync",
    3: "Stream sync",
    4: "Context sync",
}


def pid_of(global_id: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Return the 24-bit PID of a globalTid/globalPid (bits 24-47)."""
    import numpy as np

    return (np.asarray(global_id, dtype=np.int64) >> 24) & 0xFFFFFF


def tid_of(global_tid: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Return the 24-bit TID of a globalTid (bits 0-23)."""
    import numpy as np

    return np.asarray(global_tid, dtype=np.int64) & 0xFFFFFF


def global_pid_of(global_tid: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Return the globalPid of a globalTid: the top 40 bits, TID cleared."""
    import numpy as np

    return np.asarray(global_tid, dtype=np.int64) & ~np.int64(0xFFFFFF)
