"""The nsys stats reports of data Strata does not load: SKIPPED, empty, or refused.

Unified Memory, OpenMP, OpenACC, MPI, network metrics and the graphics APIs (DX11/DX12,
OpenGL, Vulkan, WDDM, NvVideo). nsys 2023.4 checks for their tables first: a report without
them prints nsys's SKIPPED line, word for word. A report whose tables exist but hold no row
prints what nsys prints for it (no data; ``um_total_sum``: its one row of empty totals). A
report with rows in them is refused with one line, rather than printing a table that could
differ from nsys's. So their options (``um_sum:rows=``,
``network_congestion:ticks_threshold=``) change nothing that is printed but the
``Processing`` line and the file names, as nsys's.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis._sqlfile import _ro_uri, quote_ident
from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.stats._base import SkipReport, register

__all__ = ["ABSENT_REPORTS"]

_MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
_UM_CPU = "CUDA_UM_CPU_PAGE_FAULT_EVENTS"
_UM_GPU = "CUDA_UM_GPU_PAGE_FAULT_EVENTS"
_UM_CHECKS = (
    (_MEMCPY, "does not contain CUDA memory transfers data."),
    (_UM_CPU, "does not contain CUDA Unified Memory CPU page faults data."),
    (_UM_GPU, "does not contain CUDA Unified Memory GPU page faults data."),
)
#: Unified Memory migrations among the memcpys (copyKind 11: HtoD, 12: DtoH).
_UM_MIGRATIONS = f"SELECT 1 FROM {_MEMCPY} WHERE copyKind IN (11, 12)"


@dataclass(frozen=True)
class Absent:
    """One report: its table checks in nsys's order, and where data would be (its title is
    :mod:`analysis.stats.catalog`'s).

    ``when``: (table, checks): the checks that apply when that table exists (before
    ``any_of``). ``any_of``: (table pattern or names, message): SKIPPED unless one of those
    tables exists. ``data``: tables (or a ``SELECT``) whose rows the report would summarise.
    """

    checks: tuple[tuple[str, str], ...] = ()
    any_of: tuple[tuple[str, ...], str] | None = None
    data: tuple[str, ...] = ()
    when: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


def _graphics(table: str, what: str) -> Absent:
    return Absent(((table, f"does not contain {what}."),), data=(table,))


_WDDM_PAIRS = ("WDDM_DMA_PACKET_START_EVENTS", "WDDM_DMA_PACKET_STOP_EVENTS",
               "WDDM_QUEUE_PACKET_START_EVENTS", "WDDM_QUEUE_PACKET_STOP_EVENTS")  # fmt: skip
_MPI = ("MPI_P2P_EVENTS", "MPI_START_WAIT_EVENTS", "MPI_OTHER_EVENTS", "MPI_COLLECTIVES_EVENTS")
_NVVIDEO = ("NVVIDEO_ENCODER_API", "NVVIDEO_DECODER_API", "NVVIDEO_JPEG_API")
_NET_METRICS = (
    "TARGET_INFO_NETWORK_METRICS",
    "file does not contain network metrics information table.",
)
_NIC_CHECKS = (
    ("ENUM_NET_DEVICE_ID", "does not contain network device IDs."),
    ("NIC_ID_MAP", "does not contain NIC ID map."),
    _NET_METRICS,
    ("TARGET_INFO_NIC_INFO", "does not contain NIC info data."),
)
_NETWORK = ("NET_NIC_METRIC", "NET_IB_SWITCH_METRIC")

#: name -> what nsys 2023.4 checks (reports/<name>.py ``table_checks`` and ``setup``).
ABSENT_REPORTS: dict[str, Absent] = {
    "um_sum": Absent(_UM_CHECKS, data=(_UM_CPU, _UM_GPU, _UM_MIGRATIONS)),
    "um_total_sum": Absent(_UM_CHECKS, data=(_UM_CPU, _UM_GPU, _UM_MIGRATIONS)),
    "um_cpu_page_faults_sum": Absent(_UM_CHECKS[1:2], data=(_UM_CPU,)),
    "openmp_sum": Absent(any_of=(("^OPENMP_EVENT_KIND_.+$",),
                                 "does not contain OpenMP event data.")),
    "openacc_sum": Absent(any_of=(("^CUPTI_ACTIVITY_KIND_OPENACC_.+$",),
                                  "does not contain OpenACC event data.")),
    "mpi_event_trace": Absent(any_of=(_MPI, "does not contain MPI event data.")),
    "network_congestion": Absent(
        when=(("NET_NIC_METRIC", _NIC_CHECKS), ("NET_IB_SWITCH_METRIC", (_NET_METRICS,))),
        any_of=(_NETWORK, "does not contain NIC or IB switch metrics."), data=_NETWORK),
    "dx11_pix_sum": _graphics("D3D11_PIX_DEBUG_API", "DX11 CPU debug markers"),
    "dx12_gpu_marker_sum": _graphics("DX12_WORKLOAD", "DX12 GPU debug markers"),
    "dx12_pix_sum": _graphics("D3D12_PIX_DEBUG_API", "DX12 CPU debug markers"),
    "opengl_khr_range_sum": _graphics("KHR_DEBUG_EVENTS", "KHR Extension (KHR_DEBUG) data"),
    "opengl_khr_gpu_range_sum": _graphics("KHR_DEBUG_EVENTS",
                                          "GPU KHR Extension (KHR_DEBUG) data"),
    "vulkan_api_sum": _graphics("VULKAN_API", "Vulkan API trace data"),
    "vulkan_api_trace": _graphics("VULKAN_API", "Vulkan API trace data"),
    "vulkan_gpu_marker_sum": _graphics(
        "VULKAN_WORKLOAD", "GPU Vulkan Debug Extension (GPU Vulkan Debug markers) data"),
    "vulkan_marker_sum": _graphics(
        "VULKAN_DEBUG_API", "Vulkan Debug Extension (Vulkan Debug Util) data"),
    "wddm_queue_sum": Absent(
        (("TARGET_INFO_WDDM_CONTEXTS", "does not contain WDDM context data."),),
        any_of=(_WDDM_PAIRS, "does not contain WDDM event data."), data=_WDDM_PAIRS),
    "nvvideo_api_sum": Absent(any_of=(_NVVIDEO, "does not contain NvVideo trace data."),
                              data=_NVVIDEO),
}  # fmt: skip

#: um_total_sum's one row over empty tables: NULL sums and addresses, a count of 0.
_UM_TOTAL_COLUMNS = ("Total HtoD Migration Size", "Total DtoH Migration Size",
                     "Total CPU Page Faults", "Total GPU PageFaults",
                     "Minimum Virtual Address", "Maximum Virtual Address")  # fmt: skip


def _tables_of(report: Report, any_of: tuple[str, ...]) -> list[str]:
    """The report's tables among ``any_of`` (names, or one ``^regex$`` pattern)."""
    if len(any_of) == 1 and any_of[0].startswith("^"):
        pattern = re.compile(any_of[0])
        return [t for t in report.source_columns if pattern.match(t)]
    return [t for t in any_of if report.has_source(t)]


def _has_rows(report: Report, sources: list[str]) -> bool:
    """Whether any of ``sources`` (tables or SELECTs) has a row; True when unsure."""
    # The file itself, or the SQLite copy behind an export folder or an .nsys-rep.
    path = sqlite_source(report.path) if report.path.exists() else None
    if path is None:
        return bool(sources)
    try:
        con = sqlite3.connect(_ro_uri(path), uri=True)
        try:
            for source in sources:
                query = (
                    source
                    if source.startswith("SELECT")
                    else f"SELECT 1 FROM {quote_ident(source)}"
                )
                if con.execute(f"{query} LIMIT 1").fetchone() is not None:
                    return True
        finally:
            con.close()
    except sqlite3.Error:
        return True
    return False


def _run(name: str, report: Report) -> tuple[pd.DataFrame, dict]:
    spec = ABSENT_REPORTS[name]
    for table, message in spec.checks:
        if not report.has_source(table):
            raise SkipReport(f"{report.name} {message}")
    for table, checks in spec.when:
        if report.has_source(table):
            for needed, message in checks:
                if not report.has_source(needed):
                    raise SkipReport(f"{report.name} {message}")
    present: list[str] = []
    if spec.any_of is not None:
        present = _tables_of(report, spec.any_of[0])
        if not present:
            raise SkipReport(f"{report.name} {spec.any_of[1]}")
    data = [d for d in spec.data if d.startswith("SELECT") or report.has_source(d)]
    if _has_rows(report, [*data, *(t for t in present if t not in data)]):
        raise AnalysisError(
            f"{report.name}: {name}: Strata does not summarise this report's data yet "
            "(its tables hold rows); nsys stats can"
        )
    if name == "um_total_sum":
        row = {c: [None] for c in _UM_TOTAL_COLUMNS}
        row["Total CPU Page Faults"] = [0]
        frame = pd.DataFrame(row)
        frame["Total CPU Page Faults"] = frame["Total CPU Page Faults"].astype(np.int64)
        units = {"Total HtoD Migration Size": "mem", "Total DtoH Migration Size": "mem"}
        return frame, units
    return pd.DataFrame(), {}


def _register(name: str) -> None:
    def func(report: Report, args: tuple[str, ...], xp: ModuleType):
        return _run(name, report)

    register(name)(func)


for _name in ABSENT_REPORTS:
    _register(_name)
