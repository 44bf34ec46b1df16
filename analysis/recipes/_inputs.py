"""The reports a recipe runs on: files and folders expanded (``DIR:n``: a folder's first n
reports), in rank order (natural order of the file names), each with a unique label.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from strata.analysis.discover import find_reports, natural_key
from strata.analysis.errors import AnalysisError, ReportError
from strata.analysis.escape import escape_text

__all__ = ["ReportFailure", "expand_inputs", "file_labels", "input_paths"]


@dataclass(frozen=True)
class ReportFailure:
    """A report that could not be used: its label, path and the one-line reason."""

    file: str
    path: Path
    reason: str


def file_labels(paths: Sequence[Path]) -> list[str]:
    """Return a unique label per path: the file name, or more of the path where names clash.

    A label is text every output can hold (:func:`analysis.escape.escape_text`): the bytes of
    a name that is not UTF-8 are written ``\\xHH``, as ``main.py stats`` prints them; Parquet,
    JSON and a UTF-8 summary.txt refused the lone surrogates Python holds them as.
    """
    labels = [escape_text(p.name) for p in paths]
    depth = 1
    while len(set(labels)) < len(labels) and depth < 64:
        depth += 1
        labels = [escape_text("/".join(p.parts[-depth:])) for p in paths]
    return labels


def _find_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[ReportFailure]]:
    """Expand files and folders; ``DIR:n`` takes the first ``n`` reports of a folder (spec §5.1).

    An input that is missing, or a folder without reports, is a failure of its own: the
    other inputs still run.
    """
    paths: list[Path] = []
    failures: list[ReportFailure] = []
    for raw in inputs:
        match = re.fullmatch(r"(.+):(\d+)", str(raw))
        try:
            if match and not Path(raw).exists():
                folder = Path(match.group(1))
                if not folder.is_dir():
                    raise AnalysisError(
                        f"{raw}: ':n' limits a folder's reports, {folder} is no folder"
                    )
                paths.extend(find_reports([folder])[: int(match.group(2))])
            else:
                paths.extend(find_reports([raw]))
        except ReportError as exc:
            failures.append(ReportFailure(str(raw), exc.path, exc.reason))
        except OSError as exc:  # an unreadable folder
            failures.append(ReportFailure(str(raw), Path(raw), exc.strerror or str(exc)))
    return paths, failures


def input_paths(inputs: Iterable[str | Path]) -> list[Path]:
    """Every path ``inputs`` name: each as given (``DIR:n`` as ``DIR``) and the reports found.

    What an output must stay clear of; inputs that do not exist or cannot be listed are
    left out (they are skipped when the recipe runs).
    """
    named: list[Path] = []
    for raw in inputs:
        match = re.fullmatch(r"(.+):(\d+)", str(raw))
        path = Path(match.group(1)) if match and not Path(raw).exists() else Path(raw)
        named.append(path)
        with contextlib.suppress(ReportError, OSError):
            named.extend(find_reports([path]))
    return named


def expand_inputs(
    recipe_takes_reports: bool, inputs: Iterable[str | Path]
) -> tuple[list[Path], list[ReportFailure]]:
    if not recipe_takes_reports:
        return [Path(p) for p in inputs], []
    paths, failures = _find_inputs(inputs)
    unique = list(dict.fromkeys(p.resolve() for p in paths))
    labels = file_labels(unique)
    # Rank order = file names in natural order (profile2 before profile16), spec §5.2.
    order = sorted(range(len(unique)), key=lambda i: natural_key(labels[i]))
    return [unique[i] for i in order], failures
