"""What nsys 2023.4 checks before the stats reports of data Strata does not load.

Plain Python: the column path (:mod:`analysis.stats.absent`) and the SQL path
(:mod:`analysis.stats.sql`) both decide with :func:`absent_verdict`, from the report's table
names and a way to ask whether tables hold rows, so they print the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from strata.analysis.errors import AnalysisError

__all__ = ["ABSENT_REPORTS", "UM_TOTAL_COLUMNS", "Absent", "AbsentSkip", "absent_verdict"]


class AbsentSkip(Exception):  # noqa: N818 - a control-flow signal, as SkipReport
    """The report lacks the tables: nsys's SKIPPED text (without the report's name)."""


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
UM_TOTAL_COLUMNS = ("Total HtoD Migration Size", "Total DtoH Migration Size",
                     "Total CPU Page Faults", "Total GPU PageFaults",
                     "Minimum Virtual Address", "Maximum Virtual Address")  # fmt: skip


def _tables_of(tables: Collection[str], any_of: tuple[str, ...]) -> list[str]:
    """The report's tables among ``any_of`` (names, or one ``^regex$`` pattern)."""
    if len(any_of) == 1 and any_of[0].startswith("^"):
        pattern = re.compile(any_of[0])
        return [t for t in sorted(tables) if pattern.match(t)]
    return [t for t in any_of if t in tables]


def absent_verdict(
    name: str, report_name: str, tables: Collection[str], has_rows: Callable[[list[str]], bool]
) -> str:
    """Say what nsys prints for summary ``name`` of a report with these ``tables``.

    ``has_rows(sources)``: whether any of those tables (or ``SELECT``s) has a row.

    Returns
    -------
    str
        ``"empty"`` (nsys's table without rows), or ``"um_total"`` (um_total_sum's one row
        of empty totals).

    Raises
    ------
    AbsentSkip
        The report lacks a table nsys checks for (nsys's SKIPPED text).
    AnalysisError
        Its tables hold rows, which Strata does not summarise.
    """
    spec = ABSENT_REPORTS[name]
    for table, message in spec.checks:
        if table not in tables:
            raise AbsentSkip(f"{report_name} {message}")
    for table, checks in spec.when:
        if table in tables:
            for needed, message in checks:
                if needed not in tables:
                    raise AbsentSkip(f"{report_name} {message}")
    present: list[str] = []
    if spec.any_of is not None:
        present = _tables_of(tables, spec.any_of[0])
        if not present:
            raise AbsentSkip(f"{report_name} {spec.any_of[1]}")
    data = [d for d in spec.data if d.startswith("SELECT") or d in tables]
    if has_rows([*data, *(t for t in present if t not in data)]):
        raise AnalysisError(
            f"{report_name}: {name}: Strata does not summarise this report's data yet "
            "(its tables hold rows); nsys stats can"
        )
    return "um_total" if name == "um_total_sum" else "empty"
