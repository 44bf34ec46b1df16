"""Every ``nsys stats`` summary Strata knows: its name, nsys's title and its options.

The one place these are written. Plain Python (no NumPy, no pandas): ``main.py stats``
checks its ``-r`` names, prints ``--help-reports`` and prints a stored answer
(:mod:`analysis.answers`) without importing what computes the summaries. The functions
that compute them are registered against these names (:func:`analysis.stats._base.register`,
which refuses a name that is not here).
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.analysis.errors import AnalysisError
from strata.analysis.filterspec import FILTER_OPTIONS, is_int64
from strata.analysis.spelling import did_you_mean

__all__ = ["REPORT_NAMES", "SUMMARIES", "SummaryInfo", "parse_spec", "summary_spec"]

_KERNEL = ("nvtx-name", "base", "mangled")


@dataclass(frozen=True)
class SummaryInfo:
    """A summary as ``-r`` names it: name, nsys's title, the options after its colons.

    An option with a value is written as nsys's help writes it: ``rows=<limit>`` (an
    integer, as nsys's ``int`` argument takes it).
    """

    name: str
    title: str
    args: tuple[str, ...] = ()

    @property
    def value_options(self) -> frozenset[str]:
        """The names of the options that take a value (``rows`` of ``rows=<limit>``)."""
        return frozenset(a.partition("=")[0] for a in self.args if "=" in a)


#: name -> (nsys 2023.4's title, options), in nsys's ``--help-reports`` order of names.
_TABLE: dict[str, tuple[str, tuple[str, ...]]] = {
    "cuda_api_gpu_sum": ("CUDA Summary (API/Kernels/MemOps)", _KERNEL),
    "cuda_api_sum": ("CUDA API Summary", ()),
    "cuda_api_trace": ("CUDA API Trace", ()),
    "cuda_gpu_kern_gb_sum": ("CUDA GPU Kernel/Grid/Block Summary", _KERNEL),
    "cuda_gpu_kern_sum": ("CUDA GPU Kernel Summary", _KERNEL),
    "cuda_gpu_mem_size_sum": ("CUDA GPU MemOps Summary (by Size)", ()),
    "cuda_gpu_mem_time_sum": ("CUDA GPU MemOps Summary (by Time)", ()),
    "cuda_gpu_sum": ("CUDA GPU Summary (Kernels/MemOps)", _KERNEL),
    "cuda_gpu_trace": ("CUDA GPU Trace", _KERNEL),
    "cuda_kern_exec_sum": ("CUDA Kernel Launch & Exec Time Summary", _KERNEL),
    "cuda_kern_exec_trace": ("CUDA Kernel Launch & Exec Time Trace", _KERNEL),
    "dx11_pix_sum": ("DX11 PIX Range Summary", ()),
    "dx12_gpu_marker_sum": ("DX12 GPU Command List PIX Ranges Summary", ()),
    "dx12_pix_sum": ("DX12 PIX Range Summary", ()),
    "mpi_event_trace": ("MPI Event Trace", ()),
    "network_congestion": ("Network Devices Congestion", ("ticks_threshold=<ticks_per_ms>",)),
    "nvtx_gpu_proj_sum": ("NVTX GPU Projection Summary", ()),
    "nvtx_gpu_proj_trace": ("NVTX GPU Projection Trace", ()),
    "nvtx_kern_sum": ("NVTX Range Kernel Summary", ("base", "mangled")),
    "nvtx_pushpop_sum": ("NVTX Push/Pop Range Summary", ()),
    "nvtx_pushpop_trace": ("NVTX Push/Pop Range Trace", ()),
    "nvtx_startend_sum": ("NVTX Start/End Range Summary", ()),
    "nvtx_sum": ("NVTX Range Summary", ()),
    "nvvideo_api_sum": ("NvVideo API Summary", ()),
    "openacc_sum": ("OpenACC Summary", ()),
    "opengl_khr_gpu_range_sum": ("OpenGL KHR_debug GPU Range Summary", ()),
    "opengl_khr_range_sum": ("OpenGL KHR_debug Range Summary", ()),
    "openmp_sum": ("OpenMP Summary", ()),
    "osrt_sum": ("OS Runtime Summary", ()),
    "um_cpu_page_faults_sum": ("Unified Memory CPU Page Faults Summary", ()),
    "um_sum": ("Unified Memory Analysis Summary", ("rows=<limit>",)),
    "um_total_sum": ("Unified Memory Totals Summary", ()),
    "vulkan_api_sum": ("Vulkan API Summary", ()),
    "vulkan_api_trace": ("Vulkan API Trace", ()),
    "vulkan_gpu_marker_sum": ("Vulkan GPU Range Summary", ()),
    "vulkan_marker_sum": ("Vulkan Range Summary", ()),
    "wddm_queue_sum": ("WDDM Queue Utilization Summary", ()),
}

SUMMARIES: dict[str, SummaryInfo] = {
    name: SummaryInfo(name, title, args) for name, (title, args) in _TABLE.items()
}
#: Every summary name (options such as ``:base`` come after a colon).
REPORT_NAMES: tuple[str, ...] = tuple(sorted(SUMMARIES))


def summary_spec(name: str) -> SummaryInfo | None:
    """Return the summary ``name`` (its nsys title and options), or None."""
    return SUMMARIES.get(name)


def parse_spec(spec: str) -> tuple[SummaryInfo, tuple[str, ...]]:
    """Split ``name:arg:arg`` and check the name and arguments.

    Besides its own arguments (``base``...), every report takes nsys's filter options
    ``start=NS``, ``end=NS`` and ``nvtx=NAME[@DOMAIN][/INDEX]`` (what ``--filter-time`` and
    ``--filter-nvtx`` add, see :func:`analysis.filterspec.split_filter`); an NVTX name keeps
    its own colons (``nvtx=aten::empty:base`` is the range ``aten::empty`` and the argument
    ``base``). An option with a value (``um_sum:rows=5``) takes an integer.

    Raises
    ------
    AnalysisError
        Unknown report name or argument, a start, end or option value that is not an
        integer.
    """
    name, *pieces = spec.strip().split(":")
    info = SUMMARIES.get(name)
    if info is None:
        hint = did_you_mean(name, REPORT_NAMES) or f"; choose one of {', '.join(REPORT_NAMES)}"
        raise AnalysisError(f"unknown stats report '{name}'{hint}")
    args: list[str] = []
    valued = info.value_options
    for piece in pieces:
        key = piece.partition("=")[0]
        starts_arg = piece in info.args or ("=" in piece and key in (*FILTER_OPTIONS, *valued))
        if args and args[-1].startswith("nvtx=") and not starts_arg:
            args[-1] += ":" + piece  # the NVTX name's own colon
        elif piece:
            args.append(piece)
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and key in FILTER_OPTIONS:
            if key != "nvtx" and not is_int64(value):
                raise AnalysisError(f"report '{name}': {arg!r} is not a 64-bit integer time")
        elif sep and key in valued:
            if not _is_int(value):
                raise AnalysisError(f"report '{name}': {arg!r} is not an integer")
        elif arg not in info.args:
            allowed = (*info.args, "start=NS", "end=NS", "nvtx=RANGE")
            hint = did_you_mean(arg, allowed) or f" (options: {', '.join(allowed)})"
            raise AnalysisError(f"report '{name}' has no option '{arg}'{hint}")
    return info, tuple(args)


def _is_int(text: str) -> bool:
    """Whether ``text`` is an integer as Python's ``int`` (nsys's option type) reads one."""
    try:
        int(text)
    except ValueError:
        return False
    return True
