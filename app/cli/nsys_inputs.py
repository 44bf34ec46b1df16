"""nsys's options of ``stats`` and ``analyze`` about files: ``--sqlite``, ``--force-export``,
``--force-overwrite`` and ``--report-dir``, with nsys 2023.4's meaning.

An ``.nsys-rep`` is read through its SQLite export, found as nsys finds it: ``--sqlite FILE``,
else ``r.sqlite`` beside ``r.nsys-rep``, used when it is newer than the report (in whole
seconds, nsys's rule; nsys's NOTICE says so on stdout); else exported (``--sqlite FILE``:
into FILE, with nsys's "Generating SQLite file" line; otherwise into Strata's cache folder,
where nsys would write ``r.sqlite`` beside the report: Strata never writes beside a report).
``--force-export true`` exports again whatever exists. An output file that exists is
SKIPPED, as nsys skips it, unless ``--force-overwrite true``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from strata.analysis.errors import AnalysisError, ReportError
from strata.analysis.escape import escape_text
from strata.analysis.nsysrep import is_newer_export, is_nsys_rep
from strata.app.cli.common import Skips

__all__ = [
    "REPORT_PATH_ENV",
    "add_export_args",
    "add_overwrite_arg",
    "exported_inputs",
    "script_of",
]

#: nsys's variable of more folders of report scripts (after ``--report-dir``'s).
REPORT_PATH_ENV = "NSYS_STATS_REPORT_PATH"


def add_export_args(parser: argparse.ArgumentParser) -> None:
    """``--force-export [true|false]`` and ``--sqlite FILE``, as nsys takes them."""
    parser.add_switch(  # type: ignore[attr-defined] - StrataArgumentParser's
        "--force-export",
        "export an .nsys-rep again even if its SQLite export exists (as nsys)",
    )
    parser.add_argument(
        "--sqlite",
        metavar="FILE.sqlite",
        help="the SQLite export of the one .nsys-rep given: read if newer than it, else "
        "written there first (as nsys)",
    )


def add_overwrite_arg(parser: argparse.ArgumentParser) -> None:
    """``--force-overwrite [true|false]``: replace existing output files (nsys skips them)."""
    parser.add_switch(  # type: ignore[attr-defined] - StrataArgumentParser's
        "--force-overwrite",
        "replace output files that exist; without it each is SKIPPED, as nsys skips it",
    )


def exported_inputs(
    paths: Sequence[Path], args: argparse.Namespace, skips: Skips, quiet: bool
) -> list[Path]:
    """The file each input is read from: an ``.nsys-rep`` through its export, as nsys finds
    or makes it (module docstring); nsys's NOTICE and "Generating" lines on stdout unless
    ``quiet``. An input whose export fails is skipped (named on stderr).

    Raises
    ------
    AnalysisError
        ``--sqlite`` or ``--force-export true`` where nsys refuses them: an SQLite input,
        several inputs, or a ``--sqlite`` name without the ``.sqlite`` extension.
    """
    sqlite = Path(args.sqlite) if args.sqlite else None
    if sqlite is not None and sqlite.suffix != ".sqlite":
        raise AnalysisError(f"--sqlite {args.sqlite!r}: the export must have a .sqlite extension")
    if sqlite is not None and len(paths) > 1:
        raise AnalysisError(f"--sqlite names the export of one .nsys-rep; {len(paths)} given")
    out: list[Path] = []
    for path in paths:
        try:
            exported = is_nsys_rep(path)
        except ReportError:
            out.append(path)  # opening it says what is wrong
            continue
        if not exported:
            for option, given in (("--sqlite", sqlite), ("--force-export true", args.force_export)):
                if given:
                    name = escape_text(path.name)
                    raise AnalysisError(f"{option}: {name} is an SQLite file, not an .nsys-rep")
            out.append(path)
            continue
        try:
            read = _export_of(path, sqlite, args.force_export, quiet)
        except ReportError as exc:
            skips.skip(exc.path, exc.reason)
            continue
        out.append(read)
    return out


def _export_of(path: Path, sqlite: Path | None, force: bool, quiet: bool) -> Path:
    """The SQLite file to read ``path`` (an .nsys-rep) from (see :func:`exported_inputs`)."""
    target = sqlite or path.with_suffix(".sqlite")
    shown, shown_target = escape_text(str(path)), escape_text(str(target))
    if not force and target.is_file():
        if is_newer_export(target, path):
            _say(
                f"\nNOTICE: Existing SQLite export found: {shown_target}\n"
                f"        It is assumed file was previously exported from: {shown}\n"
                "        Consider using --force-export=true if needed.\n\n",
                quiet,
            )
            return target
        if sqlite is not None:  # nsys refuses an older one it was told to use
            raise ReportError(
                target, f"is older than {path.name}; --force-export true exports it again"
            )
    from strata.analysis.open import export_sqlite  # the readers: only for an export

    if sqlite is not None:
        _say(f"Generating SQLite file {shown_target} from {shown}\n", quiet)
        return export_sqlite(path, sqlite)
    if force:
        export_sqlite(path)  # into the cache folder, which the report is then read from
    return path


def _say(text: str, quiet: bool) -> None:
    """nsys's lines about exports, on stdout as nsys prints them (paths escaped)."""
    if not quiet:
        sys.stdout.write(text)
        sys.stdout.flush()


def script_of(name: str, report_dirs: Sequence[str] | None) -> Path | None:
    """The report script ``NAME.py`` nsys would run for ``-r NAME`` from ``--report-dir``
    folders or ``$NSYS_STATS_REPORT_PATH`` (before its own reports), or None."""
    folders = [*(report_dirs or ())]
    folders += [f for f in os.environ.get(REPORT_PATH_ENV, "").split(os.pathsep) if f]
    for folder in folders:
        script = Path(folder) / f"{name}.py"
        if script.is_file():
            return script
    return None
