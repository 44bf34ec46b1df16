"""Helpers shared by the sub-commands: report arguments, skipped inputs, output files.

Multi-report commands go report by report: one that cannot be read (a
:class:`~analysis.errors.ReportError`) is named in one ``strata: <path>: <reason>`` line on
stderr and the others go on; :meth:`Skips.status` is then the exit status (0 all done, 1
done with some skipped, 2 nothing done). An output is checked against every input and the
cache folder before anything is read, and written atomically (:mod:`analysis.outputs`).
A report that takes a while to load draws a progress bar on a terminal (:class:`LoadBar`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO, TypeVar

from strata.analysis.cachedir import cache_root
from strata.analysis.discover import find_reports
from strata.analysis.errors import ReportError
from strata.analysis.escape import escape_text
from strata.analysis.outputs import atomic_file, check_file_target, check_output, is_stdout
from strata.analysis.progress import Progress

if TYPE_CHECKING:
    from strata.analysis import Report

__all__ = [
    "LoadBar",
    "Skips",
    "add_report_args",
    "check_output_file",
    "draws_progress",
    "expand_reports",
    "open_all",
    "open_each",
    "output_stream",
    "report_opener",
]

T = TypeVar("T")

_BAR_WIDTH = 30


def add_report_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report files or folders")
    parser.add_argument("--no-cache", action="store_true", help="bypass the columnar cache")


class Skips:
    """The inputs a command skipped: each printed as one line on stderr when it happens."""

    def __init__(self) -> None:
        self.skipped = 0
        self.done = 0

    def skip(self, path: str | Path, reason: str) -> None:
        """Name a skipped input: ``strata: <path>: <reason>`` (escaped) on stderr."""
        self.skipped += 1
        sys.stderr.write(f"strata: {escape_text(os.fspath(path))}: {escape_text(reason)}\n")
        sys.stderr.flush()

    def status(self) -> int:
        """0 when nothing was skipped, 1 when some were but others done, 2 when none done."""
        if not self.skipped:
            return 0
        return 1 if self.done else 2


def expand_reports(raws: Sequence[str], skips: Skips) -> list[Path]:
    """Expand each file or folder argument into reports; a bad argument is skipped alone."""
    paths: list[Path] = []
    for raw in raws:
        try:
            paths.extend(find_reports([raw]))
        except ReportError as exc:
            skips.skip(exc.path, exc.reason)
        except OSError as exc:  # a folder that cannot be listed
            skips.skip(raw, f"cannot read ({exc.strerror or exc})")
    return paths


def open_each(
    paths: Sequence[Path], open_one: Callable[[Path], T], skips: Skips
) -> Iterator[tuple[Path, T]]:
    """Yield ``(path, open_one(path))`` for each path that opens; skip the others.

    Only :class:`ReportError` (this report cannot be used) is caught: an impossible request
    or a bug still ends the command.
    """
    for path in paths:
        try:
            opened = open_one(path)
        except ReportError as exc:
            skips.skip(exc.path, exc.reason)
            continue
        skips.done += 1
        yield path, opened


def report_opener(use_cache: bool, bar: LoadBar | None = None) -> Callable[[Path], Report]:
    """Return ``open_report`` of one path, its progress drawn on ``bar`` (a terminal's)."""

    from strata.analysis.open import open_report  # the readers: NumPy, pandas, pyarrow

    def open_one(path: Path) -> Report:
        if bar is None:
            return open_report(path, use_cache=use_cache)
        with bar.loading(path) as progress:
            return open_report(path, use_cache=use_cache, progress=progress)

    return open_one


def open_all(
    paths: Sequence[Path], use_cache: bool, skips: Skips, bar: LoadBar | None = None
) -> list[Report]:
    """Open every report of ``paths`` that opens; skip (and name) the others."""
    opened = open_each(paths, report_opener(use_cache, bar), skips)
    return [report for _path, report in opened]


def draws_progress(args: argparse.Namespace) -> bool:
    """Whether a command draws progress: only on a terminal (stderr), and not with ``-q``.

    Every progress bar of the command line asks here, so that a pipe, a file or a CI log
    never gets ``\\r`` frames, and what a command prints is the same with a bar and without.
    """
    isatty = getattr(sys.stderr, "isatty", None)
    return not args.quiet and isatty is not None and bool(isatty())


class LoadBar:
    """A one-line progress bar on stderr while a report loads, erased once it has loaded.

    Only on a terminal, and not with ``-q``: a pipe, a file or a CI log gets nothing, so what a
    command prints is the same with the bar and without it. A load that is served whole from
    the cache (its first call is already ``1.0``) draws nothing.
    """

    #: Seconds between two redraws: the loader reports from its reader threads, often.
    REDRAW_S = 0.1

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        import threading  # here: a stored answer's run draws no bar

        self._lock = threading.Lock()

    @classmethod
    def for_args(cls, args: argparse.Namespace) -> LoadBar:
        """The bar a command draws: on when :func:`draws_progress` says so."""
        return cls(sys.stderr, enabled=draws_progress(args))

    @contextmanager
    def loading(self, path: str | Path) -> Iterator[Progress | None]:
        """Yield the ``progress(fraction, text)`` callback of one load (None when off)."""
        if not self.enabled:
            yield None
            return
        label = escape_text(Path(path).name)
        t0 = time.perf_counter()
        last = [-1.0]  # when the bar was last drawn; -1: never

        def progress(fraction: float, text: str) -> None:
            now = time.perf_counter()
            if fraction >= 1.0 or now - last[0] < self.REDRAW_S:
                return
            with self._lock:
                last[0] = now
                self._draw(label, fraction, escape_text(text), now - t0)

        try:
            yield progress
        finally:
            if last[0] >= 0:
                with self._lock:
                    self.stream.write("\r\x1b[K")  # erase the bar's line: the output follows
                    self.stream.flush()

    def _draw(self, label: str, fraction: float, text: str, elapsed_s: float) -> None:
        import shutil  # here: its archive modules cost a stats run that draws no bar

        width = shutil.get_terminal_size().columns
        filled = round(_BAR_WIDTH * min(max(fraction, 0.0), 1.0))
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        # The report's name last: a narrow terminal cuts it, not the bar.
        line = f"[{bar}] {fraction:4.0%} {elapsed_s:5.1f} s  {text}  {label}"
        self.stream.write("\r" + line[: max(width - 1, 1)] + "\x1b[K")
        self.stream.flush()


def check_output_file(
    output: str | None, raws: Sequence[str], paths: Sequence[Path], option: str = "-o"
) -> None:
    """Refuse, before any work, an output file that overlaps an input or cannot be written.

    ``raws`` are the arguments as given (files and folders), ``paths`` the reports found in
    them; the cache folder counts as an input too. Standard output needs no check.
    """
    if is_stdout(output):
        return
    check_output(output, [*raws, *paths], option, cache=cache_root())
    check_file_target(output, option)


@contextmanager
def output_stream(path: str | None, binary: bool = False) -> Iterator[IO]:
    """Yield stdout (no path, or ``-``), or a file that replaces ``path`` once complete."""
    if is_stdout(path):
        yield sys.stdout.buffer if binary else sys.stdout
        return
    with atomic_file(path, binary=binary) as fh:
        yield fh
