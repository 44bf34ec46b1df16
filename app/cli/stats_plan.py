"""How ``stats`` pairs its summaries with formats and outputs, as ``nsys stats`` 2023.4 does.

``-r``, ``-f`` and ``-o`` each take comma lists and may be repeated. The i-th summary is
printed in the i-th format to the i-th output, the last format and output serving the
summaries after them. An output is ``-`` (the console), ``.`` (files beside each report,
named after it) or a prefix: summary ``cuda_gpu_kern_sum:base`` in csv goes to
``PREFIX_cuda_gpu_kern_sum_base.csv``. The format ``.`` is column on the console and csv in
a file, which is also the format of a file when no ``-f`` is given.

Kept from Strata's earlier ``-o FILE``: an output that exists already, or ends in the
extension of a format (``out.csv``, ``stats.txt``), is one file that receives everything
printed for it, as the console would (nsys would write ``out.csv_<summary>.csv``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.stats.formatspec import ignored_hint, parse_format
from strata.analysis.stats.layouts import format_extension
from strata.analysis.stats.text import STRATA_JSON

__all__ = ["SummaryJob", "check_formats", "comma_list", "output_file", "plan"]

_WHOLE_SUFFIXES = (".txt", ".csv", ".tsv", ".json", ".html")


class SummaryJob(NamedTuple):
    """One summary: its spec, its format, and its output (None: the console).

    ``whole``: the output is one file taking the console's text, not a prefix. A named
    tuple, not a dataclass: importing :mod:`dataclasses` (with the ``inspect``, ``ast`` and
    ``dis`` it imports) is ~18 % of the instructions of a stats answered from its stored
    answer, once nothing else on that path needs it.
    """

    spec: str
    fmt: str
    output: str | None
    whole: bool = False


def comma_list(values: Sequence[str] | None, option: str) -> list[str]:
    """The items of a repeated, comma-separated option, in order (empty ones dropped).

    Raises
    ------
    AnalysisError
        The option was given but names nothing.
    """
    items = [v.strip() for value in values or () for v in value.split(",") if v.strip()]
    if values and not items:
        raise AnalysisError(f"{option} {','.join(values)!r} names no summary or format")
    return items


def check_formats(formats: list[str], quiet: bool) -> None:
    """Refuse a format nsys does not have (or a malformed argument, ``colmax=abc``) before
    any report is opened; name on stderr each argument nsys would ignore (unless ``quiet``).

    Raises
    ------
    AnalysisError
        Not a format, or a known argument with a malformed number.
    """
    for fmt in formats:
        if fmt in (STRATA_JSON, "."):
            continue
        if fmt.partition(":")[0] == STRATA_JSON:
            raise AnalysisError(f"-f {fmt}: {STRATA_JSON} takes no arguments")
        spec = parse_format(fmt)
        for arg in spec.ignored if not quiet else ():
            sys.stderr.write(
                f"WARNING: -f {escape_text(fmt)}: '{escape_text(arg)}' is no argument of "
                f"nsys's {spec.name} formatter; ignored, as nsys ignores it"
                f"{ignored_hint(arg)}\n"
            )


def plan(
    specs: Sequence[str], formats: Sequence[str], outputs: Sequence[str], quiet: bool = False
) -> list[SummaryJob]:
    """Pair each summary with its format and output (nsys's rule: by position, last repeats).

    More formats or outputs than summaries: a warning on stderr, unless ``quiet``.

    Raises
    ------
    AnalysisError
        An output that runs a command (``@cmd``, which Strata does not do).
    """
    for output in outputs:
        if output.startswith("@"):
            raise AnalysisError(f"-o {output!r}: piping into a command is not supported")
    jobs = []
    for i, spec in enumerate(specs):
        output = outputs[min(i, len(outputs) - 1)] if outputs else "-"
        fmt = formats[min(i, len(formats) - 1)] if formats else "."
        if fmt == ".":
            fmt = "column" if output == "-" else "csv"
        if output == "-":
            jobs.append(SummaryJob(spec, fmt, None))
        else:
            jobs.append(SummaryJob(spec, fmt, output, _is_whole_file(output)))
    if not quiet and (len(formats) > len(specs) or len(outputs) > len(specs)):
        sys.stderr.write("WARNING: Number of specified output formats exceeds number of reports.\n")
    return jobs


def _is_whole_file(output: str) -> bool:
    if output == ".":
        return False
    path = Path(output)
    return path.suffix.lower() in _WHOLE_SUFFIXES or path.exists() or path.is_symlink()


def output_file(job: SummaryJob, report: Path, several: bool) -> Path:
    """Where ``job`` writes for ``report``: ``<prefix>_<spec>.<ext>``.

    ``.`` is the report's own path without its extension. With ``several`` reports, an
    explicit prefix gets each report's name too (``PREFIX_<report>_<spec>.csv``), so that
    they do not write over one another.
    """
    if job.output == ".":
        base = report.with_suffix("")
    else:
        base = Path(str(job.output))
        if several:
            base = base.with_name(f"{base.name}_{report.stem}")
    # A filter's NVTX range may hold a slash (``nvtx=loop/2``): kept in the file's name.
    name = job.spec.strip().replace(":", "_").replace("/", "_")
    return base.with_name(f"{base.name}_{name}.{format_extension(job.fmt)}")
