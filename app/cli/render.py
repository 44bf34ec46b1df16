"""``main.py render REPORT... -o out.png``: the timeline, headless, to an image.

The output's suffix says what is written: ``.png``, ``.jpg``/``.jpeg`` (pixels, encoded by
Qt) or ``.svg`` (vector boxes and text, :func:`app.image_export.svg_bytes`); ``-`` is PNG on
stdout. Another suffix is refused before any report is opened.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from strata.analysis.alignment import TimeAlignment
from strata.analysis.errors import StrataError
from strata.analysis.reportset import ReportSet
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)
from strata.viewer.state.rows import pin_regex

__all__ = [
    "add_parser",
    "clamp_view",
    "image_format",
    "parse_range",
    "parse_size",
    "parse_time_ns",
    "range_text",
    "run",
]

_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*(ns|us|µs|ms|s)?\s*$")
#: Times beyond ±2^62 ns (146 years) are no trace's; int64 arithmetic must not overflow.
_MAX_NS = 1 << 62
#: A side of at most 16384 px: a 16384 x 16384 image is 1 GiB of pixels already.
_MAX_SIDE_PX = 16384
#: Output suffix -> what is written (Qt's image format name, or SVG).
_IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".svg": "SVG"}


def image_format(output: str) -> str:
    """What ``-o output`` is written as: ``PNG``, ``JPEG`` or ``SVG`` (``-``: PNG).

    Raises
    ------
    StrataError
        Any other suffix (or none).
    """
    if output == "-":
        return "PNG"
    suffix = Path(output).suffix.lower()
    if suffix not in _IMAGE_FORMATS:
        raise StrataError(
            f"render: cannot write {output!r}: name it .png, .jpg, .jpeg or .svg "
            "('-': PNG on stdout)"
        )
    return _IMAGE_FORMATS[suffix]


def parse_time_ns(text: str) -> int:
    """Return ``text`` in ns: a number of ns, or with a unit (``1.5s``, ``200ms``, ``40us``)."""
    match = _TIME.match(text)
    if not match:
        raise StrataError(f"render: bad time {text!r}; use ns or a unit like 1.5s, 200ms, 40us")
    value, unit = match.groups()
    ns = round(float(value) * _UNITS_NS[unit or "ns"])
    if abs(ns) > _MAX_NS:
        raise StrataError(f"render: time {text!r} is out of range (beyond ±146 years)")
    return int(ns)


def parse_range(text: str, command: str = "render") -> tuple[int, int]:
    """Return ``START:END`` as (start_ns, end_ns); each side needs its unit (``1.2s:1.5s``).

    A bare number is refused (``0.5:0.8`` meant seconds more often than 0 to 1 ns), with the
    range spelled with a unit in the message; only ``0`` may go without one.

    Raises
    ------
    StrataError
        Not ``START:END``, a side that is not a time or has no unit, or an empty range; the
        message starts with ``command``.
    """
    if ":" not in text:
        raise StrataError(f"{command}: bad --range {text!r}; use START:END, e.g. 1.2s:1.5s")
    sides = [side.strip() for side in text.split(":", 1)]
    for side in sides:
        if not _TIME.match(side):
            raise StrataError(
                f"{command}: bad time {side!r} in --range {text!r}; "
                "use a number with a unit: 1.5s, 200ms, 40us, 100ns"
            )
    if any(_is_bare(side) for side in sides):
        raise StrataError(
            f"{command}: --range {text!r}: a time needs a unit; did you mean "
            f"{_with_units(sides)}? (ns, us, ms or s)"
        )
    t0, t1 = parse_time_ns(sides[0]), parse_time_ns(sides[1])
    if t1 <= t0:
        raise StrataError(f"{command}: --range {text!r} ends before it starts")
    return t0, t1


def _is_bare(side: str) -> bool:
    """Whether a time has no unit (zero needs none: it is 0 in every unit)."""
    value, unit = _TIME.match(side).groups()
    return unit is None and float(value) != 0


def _with_units(sides: list[str]) -> str:
    """The range with a unit on each bare side: the other side's, else s (ns for integers
    of 1000 and more, which read as ns)."""
    units = [_TIME.match(side).group(2) for side in sides]
    given = next((u for u in units if u), None)
    if given is None:
        values = [_TIME.match(side).group(1) for side in sides]
        is_ns = (
            all(v.lstrip("-").isdigit() for v in values)
            and max(abs(int(v)) for v in values) >= 1000
        )
        given = "ns" if is_ns else "s"
    spelled = [side + given if _is_bare(side) else side for side in sides]
    return ":".join(spelled)


def parse_size(text: str) -> tuple[int, int]:
    """Return ``WxH`` as (width, height)."""
    match = re.fullmatch(r"\s*(\d{1,9})\s*[xX×]\s*(\d{1,9})\s*", text)
    sides = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if min(sides) < 100 or max(sides) > _MAX_SIDE_PX:
        raise StrataError(
            f"render: bad --size {text!r}; use WxH, e.g. 1600x900 (each 100 to {_MAX_SIDE_PX})"
        )
    return sides


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("render", help="render the timeline to an image, headless")
    add_report_args(parser)
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        help="image to write: .png, .jpg/.jpeg or .svg by its suffix ('-': PNG on stdout); "
        "never onto, into or around an input",
    )
    parser.add_argument(
        "--range", help="time range START:END, each with its unit (1.2s:1.5s, 200ms:1s, 40us)"
    )
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="REGEX",
        help="pin the rows whose label, as the row header shows it, matches REGEX "
        "(case-insensitive, as the GUI's Pin by Name); a REGEX matching whole labels pins "
        "only those, one holding '/' is searched in the full path "
        "'report / group / ... / label' (repeatable)",
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


def _check_pins(patterns: list[str]) -> None:
    for pattern in patterns:
        try:
            pin_regex(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            raise StrataError(f"render: bad --pin {pattern!r}: {exc}") from exc


def range_text(t0_ns: int, t1_ns: int) -> str:
    """Return ``[t0_ns, t1_ns]`` as a ``--range`` value that covers it (s to the µs, or ns)."""
    if t1_ns - t0_ns < 1_000_000:  # under a millisecond: whole ns say it exactly
        return f"{t0_ns}ns:{t1_ns}ns"
    start_us, end_us = t0_ns // 1_000, -(-t1_ns // 1_000)  # rounded outwards: it covers all
    return f"{start_us / 1e6:.6f}s:{end_us / 1e6:.6f}s"


def clamp_view(view: tuple[int, int], span: tuple[int, int], text: str) -> tuple[int, int]:
    """Return the part of ``view`` the trace covers (``span``: the trace on the same axis).

    A range partly past the trace is cut to it, with a note on stderr; one that shows none of
    it is refused, naming the trace's range in a form ``--range`` takes.

    Raises
    ------
    StrataError
        When ``view`` and ``span`` do not overlap.
    """
    covered = (max(view[0], span[0]), min(view[1], span[1]))
    if covered[1] <= covered[0]:
        raise StrataError(
            f"render: --range {text!r} lies outside the trace, which spans "
            f"{range_text(*span)}; pick a range inside it"
        )
    if covered != view:
        sys.stderr.write(
            f"strata: render: --range {text!r} reaches past the trace "
            f"({range_text(*span)}); drawing {range_text(*covered)}\n"
        )
    return covered


def run(args: argparse.Namespace) -> int:
    size = parse_size(args.size)
    view = parse_range(args.range) if args.range else None
    _check_pins(args.pin)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)  # an input is named as such first
    image_format_name = image_format(args.output)
    reports = open_all(paths, not args.no_cache, skips, LoadBar.for_args(args))
    if not reports:
        return skips.status()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from strata.app.fonts import ensure_usable_font
    from strata.viewer.render import ensure_application
    from strata.viewer.timeline import TimelineWidget

    ensure_usable_font(ensure_application())
    widget = TimelineWidget()
    widget.resize(*size)
    report_set = ReportSet(reports)
    if args.align_nvtx:
        offsets = report_set.offsets_ns(TimeAlignment("nvtx", args.align_nvtx))
    else:
        offsets = report_set.offsets_ns(TimeAlignment(args.align))
    widget.state.set_data(report_set, report_set.tracks(), offsets)
    if view is not None:
        view = clamp_view(view, widget.state.full_range(), args.range)
    for pattern in args.pin:
        widget.state.pin_matching(pattern)
    if view is not None:
        widget.state.set_view_range(*view)
    data = _encoded(widget, size, image_format_name)
    widget.deleteLater()
    with output_stream(args.output, binary=True) as out:  # whole (atomically), or stdout
        out.write(data)
    return skips.status()


def _encoded(widget, size: tuple[int, int], image_format_name: str) -> bytes:
    """The widget's view as an image file's bytes, encoded in memory."""
    from strata.app.image_export import encode_image, svg_bytes
    from strata.viewer.render import render_to_image

    if image_format_name == "SVG":
        return svg_bytes(widget)
    return encode_image(render_to_image(widget, size), image_format_name)
