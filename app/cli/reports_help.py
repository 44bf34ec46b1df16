"""``stats --help-reports [NAME|ALL]`` and ``analyze --help-rules [NAME|ALL]``, laid out as
nsys 2023.4 lays them out.

Without a name: nsys's list, line for line. With a name (or ``ALL``, every one): the
report's line of that list, then its options and what it shows, in Strata's own words
(nsys's texts are NVIDIA's): the names, options and defaults are nsys's. Unlike nsys, which
exits 1 after any help, Strata exits 0; an unknown name is one line with a suggestion, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from strata.analysis.escape import escape_text
from strata.analysis.spelling import did_you_mean

__all__ = ["HelpReports", "HelpRules", "report_help", "reports_list", "rule_help", "rules_list"]

_WIDTH = 80

#: What each option of the summaries does (``<value>`` as nsys's help names it).
_REPORT_OPTIONS = {
    "nvtx-name": "Put the name of the innermost NVTX range around each kernel's launch "
    "before the kernel's name.",
    "base": "Name kernels by their base name, without template arguments or parameters.",
    "mangled": "Name kernels by their mangled name where the report holds it (reports of "
    "recent nsys versions), else by the demangled one.",
    "rows=<limit>": "Show at most this many rows (nsys's default: 10).",
    "ticks_threshold=<ticks_per_ms>": "Count a device as congested above this many ticks a "
    "millisecond.",
}

#: Name -> what it shows, one or two sentences.
_REPORT_ABOUT = {
    "cuda_api_gpu_sum": "CUDA API calls, kernels and memory operations side by side, one row "
    "per name with its time statistics.",
    "cuda_api_sum": "Time spent in each CUDA runtime and driver API function, one row per "
    "function, sorted by total time.",
    "cuda_api_trace": "Every CUDA API call in time order, with its thread, result and "
    "correlation id.",
    "cuda_gpu_kern_gb_sum": "Kernel execution times grouped by kernel name and by grid and "
    "block dimensions.",
    "cuda_gpu_kern_sum": "Kernel execution times, one row per kernel name, sorted by total "
    "time; Time is the share of the kernels' total.",
    "cuda_gpu_mem_size_sum": "Memory copies and sets by operation, with the bytes each moved "
    "(sizes in MB = 10^6 bytes by default).",
    "cuda_gpu_mem_time_sum": "Memory copies and sets by operation, with the time each took.",
    "cuda_gpu_sum": "Kernels and memory operations on the GPU, one row per name with its "
    "category and time statistics.",
    "cuda_gpu_trace": "Every kernel, memory copy and memory set on the GPU in time order, "
    "with launch dimensions, sizes and throughput.",
    "cuda_kern_exec_sum": "For each kernel, the time of its launch call, of the wait before "
    "it ran and of its execution, with statistics.",
    "cuda_kern_exec_trace": "Every kernel launch in time order: the API call, the queue "
    "time and the execution on the GPU.",
    "dx11_pix_sum": "DirectX 11 PIX ranges on the CPU, one row per name.",
    "dx12_gpu_marker_sum": "DirectX 12 command-list PIX ranges on the GPU, one row per name.",
    "dx12_pix_sum": "DirectX 12 PIX ranges on the CPU, one row per name.",
    "mpi_event_trace": "Every MPI call in time order, with its communicator, peers and sizes.",
    "network_congestion": "Time the network devices spent congested, per device and port.",
    "nvtx_gpu_proj_sum": "NVTX ranges projected onto the GPU work launched inside them, one "
    "row per range name.",
    "nvtx_gpu_proj_trace": "Every NVTX range projected onto the GPU work launched inside it, "
    "in time order.",
    "nvtx_kern_sum": "Kernels grouped by the NVTX range they were launched in.",
    "nvtx_pushpop_sum": "Push/pop NVTX ranges, one row per name, with time statistics.",
    "nvtx_pushpop_trace": "Every push/pop NVTX range in time order, with its nesting level, "
    "parent and child time.",
    "nvtx_startend_sum": "Start/end NVTX ranges, one row per name, with time statistics.",
    "nvtx_sum": "NVTX ranges of both kinds (push/pop and start/end), one row per name and "
    "style, with time statistics.",
    "nvvideo_api_sum": "NvVideo encoder, decoder and JPEG API calls, one row per function.",
    "openacc_sum": "OpenACC events, one row per event name.",
    "opengl_khr_gpu_range_sum": "OpenGL KHR_debug ranges on the GPU, one row per name.",
    "opengl_khr_range_sum": "OpenGL KHR_debug ranges on the CPU, one row per name.",
    "openmp_sum": "OpenMP events, one row per event kind.",
    "osrt_sum": "Time spent in OS runtime calls (the C library's blocking functions), one row "
    "per function.",
    "um_cpu_page_faults_sum": "Unified Memory page faults on the CPU, by the code that "
    "raised them.",
    "um_sum": "Unified Memory migrations by virtual address: bytes each way, page faults and "
    "throughput.",
    "um_total_sum": "Unified Memory totals: bytes migrated each way and page faults.",
    "vulkan_api_sum": "Vulkan API calls, one row per function.",
    "vulkan_api_trace": "Every Vulkan API call in time order.",
    "vulkan_gpu_marker_sum": "Vulkan debug-marker ranges on the GPU, one row per name.",
    "vulkan_marker_sum": "Vulkan debug-marker ranges on the CPU, one row per name.",
    "wddm_queue_sum": "Windows display driver (WDDM) queue utilization, per queue.",
}

#: Each rule option's value as nsys's help names it, and what it does.
_RULE_OPTIONS = {
    "rows": ("<limit>", "Show at most this many rows (default 50; -1: all of them)."),
    "start": ("<time>", "Only what was recorded after this time, in nanoseconds."),
    "end": ("<time>", "Only what was recorded before this time, in nanoseconds."),
    "nvtx": (
        "<range[@domain]>",
        "Only what was recorded during the first instance of this NVTX range (its domain "
        "after @ unless it is the default one); wins over start and end.",
    ),
    "process": ("<id>", "Only the process with this id."),
    "thread": ("<id>", "Only the thread with this id."),
    "gap": ("<threshold>", "Report gaps of at least this many milliseconds (default 500)."),
    "threshold": ("<percent>", "Report regions used below this percentage (default 50)."),
    "chunks": ("<number>", "Cut the time into this many regions (default 30, 1 to 1000)."),
}

#: Rule -> (its header's option pattern, as nsys writes it; what it finds).
_RULE_ABOUT = {
    "cuda_api_sync": (
        "[:<option>[:<option>]...]",
        "CUDA calls that block the CPU thread until the GPU has finished (device, stream "
        "and event synchronization), which may keep the CPU from queueing more work.",
    ),
    "cuda_memcpy_async": (
        "[:<options>]",
        "Asynchronous memory copies from or to pageable host memory, which the driver "
        "makes synchronous; pinned memory lets them overlap.",
    ),
    "cuda_memcpy_sync": (
        "[:<option>[:<option>]...]",
        "Synchronous memory copies, which block the CPU thread until they are done.",
    ),
    "cuda_memset_sync": (
        "[:<option>[:<option>]...]",
        "Synchronous memory sets on host-visible memory, which block the CPU thread.",
    ),
    "dx12_mem_ops": (
        "[:<option>[:<option>]...]",
        "DirectX 12 memory operations that are known to be slow or wasteful.",
    ),
    "gpu_gaps": (
        "[:<option>[:<option>]...]",
        "Time regions, per process and GPU, where the GPU was idle for at least the gap "
        "threshold between its first and last operation.",
    ),
    "gpu_time_util": (
        "[:<option>[:<option>]...]",
        "Time regions, per process and GPU, where the share of time the GPU was busy fell "
        "below the threshold.",
    ),
}


def _paragraph(text: str, indent: str, first: str = "") -> str:
    """``text`` wrapped at 80 columns; after a ``first`` label, the next lines indented more."""
    import textwrap  # here: its wrapper compiles five patterns, and only help text wraps

    more = "    " if first else ""
    return textwrap.fill(
        text, _WIDTH, initial_indent=indent + first, subsequent_indent=indent + more
    )


def _report_line(name: str) -> str:
    from strata.analysis.stats import summary_spec

    spec = summary_spec(name)
    args = "".join(f"[:{a}]" for a in spec.args if a not in ("base", "mangled"))
    if "base" in spec.args:
        args += "[:base|:mangled]"
    return f"{name}{args} -- {spec.title}"


def reports_list() -> str:
    """What ``nsys stats --help-reports`` prints: every summary on one line."""
    from strata.analysis.stats import REPORT_NAMES

    lines = ["", "The following built-in reports are available:", ""]
    lines += [f"  {_report_line(name)}" for name in REPORT_NAMES]
    return "\n".join(lines) + "\n\n"


def report_help(name: str) -> str:
    """One summary's help: its line, options and what it shows."""
    from strata.analysis.stats import summary_spec

    parts = ["", _report_line(name), ""]
    options = summary_spec(name).args
    if options:
        parts.append("    Options:")
        for option in options:
            parts.append(_paragraph(_REPORT_OPTIONS[option], "        ", f"{option} - "))
            parts.append("")
    parts += [_paragraph(_REPORT_ABOUT[name], "    "), "", ""]
    return "\n".join(parts)


def rules_list() -> str:
    """What ``nsys analyze --help-rules`` prints: every rule on one line."""
    from strata.analysis.rules import RULE_NAMES

    lines = ["", "The following built-in reports are available:", ""]
    lines += [f"  {_rule_line(name)}" for name in RULE_NAMES]
    lines += ["", "For more information, use '--help-rules <report_name>'"]
    return "\n".join(lines) + "\n\n"


def _rule(name: str):  # noqa: ANN202 - analysis.rules' Rule
    from strata.analysis.rules import parse_rule_spec

    return parse_rule_spec(name)[0]


def _rule_line(name: str) -> str:
    return f"{name}{_RULE_ABOUT[name][0]} -- {_rule(name).title}"


def rule_help(name: str) -> str:
    """One rule's help: its line, its options with their defaults, what it finds."""
    parts = ["", _rule_line(name), "", "    Options:"]
    options = _rule(name).all_options()
    for option in sorted(options, key=list(_RULE_OPTIONS).index):  # nsys's order
        value, about = _RULE_OPTIONS[option]
        parts += [_paragraph(about, "        ", f"{option}={value} - "), ""]
    parts += [_paragraph(_RULE_ABOUT[name][1], "    "), "", ""]
    return "\n".join(parts)


def _help_action(
    names: Callable[[], Sequence[str]],
    listing: Callable[[], str],
    one: Callable[[str], str],
    what: str,
    option: str,
    trailer: str = "",
) -> type[argparse.Action]:
    class Help(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None) -> None:
            known = names()
            if values and values != "ALL" and values not in known:
                hint = did_you_mean(values, known) or f"; see {option}"
                parser.exit(2, f"strata: unknown {what} '{escape_text(values)}'{hint}\n")
            if not values:
                sys.stdout.write(listing())
            elif values == "ALL":  # nsys calls its rules "reports" here too
                head = "\nThe following built-in reports are available:\n\n"
                sys.stdout.write(head + "".join(one(name) for name in known) + trailer)
            else:
                sys.stdout.write(one(values))
            parser.exit(0)

    return Help


def _report_names() -> Sequence[str]:
    from strata.analysis.stats import REPORT_NAMES

    return REPORT_NAMES


def _rule_names() -> Sequence[str]:
    from strata.analysis.rules import RULE_NAMES

    return RULE_NAMES


#: ``--help-reports [NAME|ALL]``: the list, one summary's help, or every one's.
HelpReports = _help_action(_report_names, reports_list, report_help, "report", "--help-reports")
#: ``--help-rules [NAME|ALL]``: the list, one rule's help, or every one's.
HelpRules = _help_action(
    _rule_names,
    rules_list,
    rule_help,
    "rule",
    "--help-rules",
    "To list only one rule, use '--help-rules <report_name>'\n\n",
)
