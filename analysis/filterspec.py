"""nsys's filter options of a summary or rule (``start=NS``, ``end=NS``, ``nvtx=RANGE``) and
``--filter-time``'s time syntax: plain Python, read before any report is opened.

What the options select is :mod:`analysis.filters`'.
"""

from __future__ import annotations

import re

from strata.analysis.errors import AnalysisError

__all__ = [
    "FILTER_OPTIONS",
    "is_int64",
    "parse_duration_ns",
    "parse_filter_time",
    "split_filter",
    "with_filter",
]

#: The filter options every summary and rule takes (what --filter-time/--filter-nvtx add).
FILTER_OPTIONS = ("start", "end", "nvtx")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
#: --filter-time units, in ns (nsys analyze --help).
_UNITS = {"ns": 1, "nsec": 1, "us": 10**3, "usec": 10**3, "ms": 10**6, "msec": 10**6,
          "s": 10**9, "sec": 10**9, "m": 60 * 10**9, "min": 60 * 10**9,
          "h": 3600 * 10**9, "hour": 3600 * 10**9}  # fmt: skip
_TIME_PART = re.compile(
    r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(nsec|ns|usec|us|msec|ms|sec|s|min|m|hour|h)?"
)


def is_int64(text: str) -> bool:
    """Whether ``text`` is an integer in the int64 range."""
    try:
        return _INT64_MIN <= int(text) <= _INT64_MAX
    except ValueError:
        return False


def _time_value(text: str, default: int, whole: str, option: str = "--filter-time") -> int:
    if not text:
        return default
    pos, total = 0, 0.0
    for match in _TIME_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2) or "ns"]
        pos = match.end()
    if pos != len(text) or pos == 0:
        raise AnalysisError(f"{option} {whole!r}: '{text}' is not a time (e.g. 1s2ms, 500us)")
    if not _INT64_MIN <= total <= _INT64_MAX:
        raise AnalysisError(f"{option} {whole!r}: '{text}' is out of the 64-bit range")
    return int(total)


def parse_duration_ns(text: str, option: str) -> int:
    """Return the ns of a duration in --filter-time's units (``500``, ``1us``, ``1.5ms``).

    Raises
    ------
    AnalysisError
        ``text`` is empty, not a time, or outside the 64-bit range; the message names
        ``option``.
    """
    text = text.strip()
    if not text:
        raise AnalysisError(f"{option}: an empty value is not a time (e.g. 1us, 500ns)")
    return _time_value(text, 0, text, option)


def parse_filter_time(text: str) -> tuple[int, int]:
    """Return (start, end) ns of ``--filter-time [START]/[END]`` (an omitted side: no bound).

    Raises
    ------
    AnalysisError
        No slash, a side that is not a time, or start after end.
    """
    start_text, slash, end_text = text.strip().partition("/")
    if not slash:
        raise AnalysisError(f"--filter-time {text!r}: the argument must contain a slash")
    start = _time_value(start_text.strip(), _INT64_MIN, text)
    end = _time_value(end_text.strip(), _INT64_MAX, text)
    if start > end:
        raise AnalysisError(f"--filter-time {text!r}: the start is after the end")
    return start, end


def split_filter(args: tuple[str, ...]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Return ({filter option: value}, the report's own arguments) of :func:`parse_spec`'s
    arguments; a filter option given twice keeps its last value (nsys's argparse)."""
    options: dict[str, str] = {}
    own = []
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and key in FILTER_OPTIONS:
            options[key] = value
        else:
            own.append(arg)
    return options, tuple(own)


def with_filter(specs: list[str], filter_time: str | None, filter_nvtx: str | None) -> list[str]:
    """Each spec with nsys's filter options first, as ``nsys stats`` passes them to each
    report (``cuda_gpu_kern_sum:nvtx=NAME:base``); ``--filter-nvtx`` wins over the time.

    ``filter_time`` is ``--filter-time``'s ``[START]/[END]``, ``filter_nvtx``
    ``--filter-nvtx``'s ``RANGE[@DOMAIN][/INDEX]`` (None: not given).

    Raises
    ------
    AnalysisError
        An empty NVTX range name, or a time :func:`parse_filter_time` refuses.
    """
    if filter_nvtx is not None:
        if not filter_nvtx.strip():
            raise AnalysisError("--filter-nvtx: the NVTX range name is empty")
        prefix = f"nvtx={filter_nvtx}"
    elif filter_time is not None:
        start, end = parse_filter_time(filter_time)
        prefix = f"start={start}:end={end}"
    else:
        return specs
    filtered = []
    for spec in specs:
        name, _, rest = spec.strip().partition(":")
        filtered.append(f"{name}:{prefix}:{rest}" if rest else f"{name}:{prefix}")
    return filtered
