"""``main.py render REPORT... -o out.png``: the timeline, headless, to a PNG."""

from __future__ import annotations

import argparse
import os
import re

from analysis.errors import StrataError
from app.cli.common import add_report_args, load_reports

__all__ = ["add_parser", "parse_size", "parse_time_ns", "run"]

_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*(ns|us|µs|ms|s)?\s*$")


def parse_time_ns(text: str) -> int:
    """Return ``text`` in ns: a number of ns, or with a unit (``1.5s``, ``200ms``, ``40us``)."""
    match = _TIME.match(text)
    if not match:
        raise StrataError(f"render: bad time {text!r}; use ns or a unit like 1.5s, 200ms, 40us")
    value, unit = match.groups()
    return int(round(float(value) * _UNITS_NS[unit or "ns"]))


def parse_range(text: str) -> tuple[int, int]:
    """Return ``START:END`` as (start_ns, end_ns)."""
    if ":" not in text:
        raise StrataError(f"render: bad --range {text!r}; use START:END, e.g. 1.2s:1.5s")
    start, end = text.split(":", 1)
    t0, t1 = parse_time_ns(start), parse_time_ns(end)
    if t1 <= t0:
        raise StrataError(f"render: --range {text!r} ends before it starts")
    return t0, t1


def parse_size(text: str) -> tuple[int, int]:
    """Return ``WxH`` as (width, height)."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match or min(int(match.group(1)), int(match.group(2))) < 100:
        raise StrataError(f"render: bad --size {text!r}; use WxH, e.g. 1600x900 (each ≥ 100)")
    return int(match.group(1)), int(match.group(2))


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("render", help="render the timeline to a PNG, headless")
    add_report_args(parser)
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--range", help="time range START:END (ns, or 1.5s, 200ms, 40us)")
    parser.add_argument(
        "--pin", action="append", default=[], help="pin rows matching REGEX (repeatable)"
    )
    parser.add_argument("--size", default="1600x900", help="image size WxH (default 1600x900)")
    parser.add_argument(
        "--align",
        choices=("session", "wallclock"),
        default="session",
        help="multi-report time alignment (default: session start)",
    )
    parser.add_argument(
        "--align-nvtx",
        metavar="NAME",
        help="align reports on the first instance of this NVTX range (overrides --align)",
    )


def run(args: argparse.Namespace) -> int:
    size = parse_size(args.size)
    view = parse_range(args.range) if args.range else None
    for pattern in args.pin:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise StrataError(f"render: bad --pin {pattern!r}: {exc}") from exc
    reports = load_reports(args)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from analysis.tracks import alignment_offsets, build_tracks
    from viewer.render import ensure_application, render_to_image
    from viewer.timeline import TimelineWidget

    ensure_application()
    widget = TimelineWidget()
    widget.resize(*size)
    if args.align_nvtx:
        offsets = alignment_offsets(reports, "nvtx", args.align_nvtx)
    else:
        offsets = alignment_offsets(reports, args.align)
    widget.set_data(reports, build_tracks(reports), offsets)
    for pattern in args.pin:
        widget.pin_matching(pattern)
    if view is not None:
        widget.set_view_range(*view)
    image = render_to_image(widget, size)
    if not image.save(args.output, "PNG"):
        raise StrataError(f"render: cannot write {args.output}")
    widget.deleteLater()
    return 0
