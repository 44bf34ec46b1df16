"""``main.py stats REPORT... [-r NAME[,NAME...]]... [-f FORMAT]... [-o PREFIX]...``.

nsys-stats-compatible summaries (see :mod:`analysis.stats`): for each report, each asked
summary is printed under a ``Processing [<report>] with [<name>.py]...`` line, as
``nsys stats`` prints it, so scripts written against ``nsys stats -f csv`` keep working.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.analysis import summary
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.filterspec import with_filter
from strata.analysis.stats.catalog import REPORT_NAMES, parse_spec
from strata.analysis.stats.text import FORMATS, file_section, format_results, parse_timeunit
from strata.analysis.xp import BACKENDS
from strata.app.cli.common import (
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_each,
    output_stream,
)
from strata.app.cli.nsys_inputs import (
    add_export_args,
    add_overwrite_arg,
    exported_inputs,
    script_of,
)
from strata.app.cli.reports_help import HelpReports
from strata.app.cli.stats_help import HelpFormats
from strata.app.cli.stats_plan import (
    SummaryJob,
    check_formats,
    comma_list,
    output_file,
    plan,
)

__all__ = ["DEFAULT_REPORTS", "add_parser", "run"]

#: What ``nsys stats`` 2023.4 runs without ``-r``, in its order (``nsys stats --help``).
DEFAULT_REPORTS = (
    "nvtx_sum",
    "osrt_sum",
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "openmp_sum",
    "opengl_khr_range_sum",
    "opengl_khr_gpu_range_sum",
    "vulkan_marker_sum",
    "vulkan_gpu_marker_sum",
    "dx11_pix_sum",
    "dx12_gpu_marker_sum",
    "dx12_pix_sum",
    "wddm_queue_sum",
    "um_sum",
    "um_total_sum",
    "um_cpu_page_faults_sum",
    "openacc_sum",
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "stats",
        help="nsys-stats-compatible summaries",
        description="Print nsys-stats-compatible summaries. Reports: " + ", ".join(REPORT_NAMES),
    )
    add_report_args(parser)
    parser.add_argument(
        "-r",
        "--report",
        dest="report_names",
        action="append",
        metavar="NAME[,NAME...]",
        help="summaries to run, repeatable, with options after a colon (e.g. "
        "cuda_gpu_kern_sum:base); default: " + ",".join(DEFAULT_REPORTS),
    )
    parser.add_argument(
        "-f",
        "--format",
        dest="formats",
        action="append",
        metavar="FORMAT[:ARG...][,FORMAT...]",
        help=f"{', '.join(FORMATS)}, or '.' (column, csv into files); repeatable, the i-th "
        "for the i-th summary as nsys pairs them; with nsys's formatter arguments "
        "(column:nolimit, csv:nohdr, column:dur=us...: see --help-formats); json is nsys's "
        "(a list of row objects per summary), strata-json Strata's (one list of every "
        "summary, with units)",
    )
    parser.add_argument(
        "-o",
        "--output",
        dest="outputs",
        action="append",
        metavar="PREFIX",
        help="'-' (stdout, the default), '.' (beside each report) or a prefix: files "
        "PREFIX_<summary>.<ext> as nsys names them; repeatable like -f; never onto an input",
    )
    parser.add_argument(
        "--help-reports",
        nargs="?",
        action=HelpReports,
        metavar="NAME|ALL",
        help="list the summaries (or describe one, or ALL) as nsys does, and exit",
    )
    parser.add_argument(
        "--help-formats",
        nargs="?",
        action=HelpFormats,
        metavar="NAME|ALL",
        help="describe the formats (nsys's text) and exit",
    )
    parser.add_argument(
        "--timeunit",
        default=None,
        help="durations and timestamps in nsec (default), usec, msec or seconds; a prefix of "
        "nsec, nanoseconds, usec, microseconds, msec, milliseconds or seconds, as nsys takes it",
    )
    parser.add_argument(
        "--filter-time",
        metavar="[START]/[END]",
        help="only events overlapping this range (ns, or with units: 1s2ms, 5us...), as "
        "nsys's start=/end= options of each summary",
    )
    parser.add_argument(
        "--filter-nvtx",
        metavar="RANGE[@DOMAIN][/INDEX]",
        help="only events overlapping this NVTX range (the first, or the INDEX-th) and on its "
        "thread (push/pop) or process (start/end); wins over --filter-time",
    )
    add_overwrite_arg(parser)
    parser.allow_dashed_values("-o", "--output")
    add_export_args(parser)
    parser.add_argument(
        "--report-dir",
        dest="report_dirs",
        action="append",
        metavar="DIR",
        help="folders of nsys report scripts, as nsys searches them (then "
        "$NSYS_STATS_REPORT_PATH): a -r NAME found there as NAME.py is refused, as Strata "
        "runs only its own summaries",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="array backend of the aggregation engine (default: $STRATA_BACKEND, else CuPy "
        "when a GPU is usable, else NumPy)",
    )


def _jobs(args: argparse.Namespace) -> list[SummaryJob]:
    specs = comma_list(args.report_names or [",".join(DEFAULT_REPORTS)], "-r")
    formats = comma_list(args.formats, "-f")
    check_formats(formats, args.quiet)
    specs = with_filter(specs, args.filter_time, args.filter_nvtx)
    for spec in specs:
        name = spec.strip().partition(":")[0]
        script = script_of(name, args.report_dirs)
        if script is not None:
            raise AnalysisError(
                f"-r {name}: {escape_text(str(script))} is an nsys report script, which only "
                "nsys runs (nsys stats --report-dir); Strata runs its own summaries"
            )
        parse_spec(spec)  # a bad name fails before any report is opened
    return plan(specs, formats, comma_list(args.outputs, "-o"), quiet=args.quiet)


def _targets(jobs: list[SummaryJob], paths: list[Path]) -> dict[tuple[Path, int], Path]:
    """The file each (report, summary) is written to, for the jobs that write files."""
    return {
        (path, i): Path(job.output) if job.whole else output_file(job, path, len(paths) > 1)
        for path in paths
        for i, job in enumerate(jobs)
        if job.output is not None
    }


def run(args: argparse.Namespace) -> int:
    jobs = _jobs(args)
    specs = [job.spec for job in jobs]
    timeunit = None if args.timeunit is None else parse_timeunit(args.timeunit)
    if args.backend is not None:
        from strata.analysis.xp import get_xp

        get_xp(args.backend)  # an unusable backend fails before any report is opened
    skips = Skips()
    paths = exported_inputs(expand_reports(args.reports, skips), args, skips, args.quiet)
    targets = _targets(jobs, paths)
    for target in targets.values():
        check_output_file(str(target), args.reports, paths)

    computed = []

    def backend():  # noqa: ANN202 - the array module
        from strata.analysis.xp import get_xp

        return get_xp(args.backend)

    def compute(path, wanted):
        # Inside SQLite for a small report (plain Python), else only the columns the
        # summaries read: NumPy, pandas and the readers are imported there, and only there.
        computed.append(path)
        return compute_summaries(path, wanted, backend, use_cache=not args.no_cache)

    def summarize(path):
        # The one stats entry's strategies for a report file: the stored answers of the
        # summaries computed before for this same report, the rest computed.
        return summary.file_summaries(
            path, specs, lambda wanted: compute(path, wanted), use_cache=not args.no_cache
        )

    results, sources = {}, {}
    for path, (report_name, tables) in open_each(paths, summarize, skips):
        # Two reports with one file name (other folders) are told apart by their path.
        name = report_name if report_name not in results else str(path)
        results[name], sources[name] = tables, path
    if results:
        texts = _texts(results, sources, jobs, targets, timeunit, args.quiet, args.force_overwrite)
        _write(texts)
    if computed and "strata.analysis.stats.lean" in sys.modules:  # cache entries being written
        from strata.analysis.stats.lean import wait_for_cache_writes

        wait_for_cache_writes()
    return skips.status()


def compute_summaries(path, specs, xp, use_cache: bool):  # noqa: ANN001, ANN201
    """:func:`analysis.summary.compute_file`: the SQL or the column strategy."""
    return summary.compute_file(path, specs, xp, use_cache=use_cache)


def _texts(
    results,
    sources,
    jobs: list[SummaryJob],
    targets,
    timeunit: str | None,
    quiet: bool = False,
    overwrite: bool = False,
) -> dict[str | None, str]:
    """Destination (None: the console; else a file) -> its text, in printing order.

    ``quiet`` (``-q``, nsys's "only display errors"): no ``Processing`` lines, no SKIPPED
    reports, no lines naming the files written; the tables themselves are all printed.
    A ``PREFIX_<summary>`` file that exists is SKIPPED, as nsys skips it, unless
    ``overwrite`` (``--force-overwrite``).
    """
    fmts = {job.fmt for job in jobs}
    one_place = len({(job.output, job.whole) for job in jobs}) == 1
    if one_place and len(fmts) == 1 and (jobs[0].output is None or jobs[0].whole):
        return {jobs[0].output: format_results(results, fmts.pop(), timeunit, quiet)}
    texts: dict[str | None, list[str]] = {}
    for name, tables in results.items():
        for i, (job, result) in enumerate(zip(jobs, tables, strict=True)):
            if job.output is None or job.whole:
                text = format_results({name: [result]}, job.fmt, timeunit, quiet)
                texts.setdefault(job.output, []).append(text)
                continue
            target = targets[(sources[name], i)]
            exists = not overwrite and (target.exists() or target.is_symlink())
            line, body = file_section(name, result, job.fmt, timeunit, str(target), quiet, exists)
            texts.setdefault(None, []).append(line)
            if body is not None:
                texts[str(target)] = [body]
    return {dest: "".join(parts) for dest, parts in texts.items()}


def _write(texts: dict[str | None, str]) -> None:
    """Each file replaced once complete; then the console."""
    for dest, text in texts.items():
        if dest is not None:
            with output_stream(dest) as out:
                out.write(text)
    if None in texts:
        with output_stream(None) as out:
            out.write(texts[None])
