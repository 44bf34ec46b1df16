"""An independent oracle for two summaries: instances and total time per name, in plain SQL.

Computed with Python integers (no int64 wrap) from the report's rows, never with Strata's
code. A row is attributed to a name only when its name id is an integer that StringIds
holds; a row whose start or end is NULL, text or a blob adds nothing to the total and may
or may not be counted; a REAL may be read rounded (or left out). Strata's exit-0 output
must agree for every name the oracle knows, and must not show a real string for rows the
oracle cannot name.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path

from tests.fuzz.harness import StepResult, failure

__all__ = ["compare", "expected", "sections"]

#: summary -> (table, name id column, strips the API version suffix)
_SOURCES = {
    "cuda_gpu_kern_sum": ("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName", False),
    "cuda_api_sum": ("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId", True),
}
_HEADER = re.compile(r"^Processing \[.*\] with \[(?P<name>[^\]]+)\.py\](\([^)]*\))?\.\.\.")


def sections(text: str) -> list[tuple[str, list[str]]]:
    """Split stats output into (summary name, body lines), in the order printed."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        match = _HEADER.match(line)
        if match:
            found.append((match["name"], []))
        elif found and line.strip():
            found[-1][1].append(line)
    return found


def _specs(argv: list[str]) -> list[str]:
    """The summaries asked for, in order (what each printed section answers)."""
    from strata.app.cli.stats import DEFAULT_REPORTS

    if "-r" not in argv:
        return list(DEFAULT_REPORTS)
    return [s.strip() for s in argv[argv.index("-r") + 1].split(",") if s.strip()]


#: Names the oracle cannot compare as printed: control characters (which Strata escapes)
#: and undecodable bytes (which it may decode its own way).
_UNCHECKABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ufffd]")


def _strip(name: str) -> str:
    return name[:-6] if name[-6:-4] == "_v" else name


def _rows(path: Path, table: str, column: str) -> tuple[list[tuple], dict[int, object]]:
    wal = path.with_name(path.name + "-wal")
    if wal.is_file():  # the committed data include the log's: read them from a copy
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copyfile(path, Path(tmp) / "r.sqlite")
            shutil.copyfile(wal, Path(tmp) / "r.sqlite-wal")
            return _rows_of(f"file:{Path(tmp) / 'r.sqlite'}", table, column)
    return _rows_of(f"file:{path}?mode=ro&immutable=1", table, column)


def _rows_of(uri: str, table: str, column: str) -> tuple[list[tuple], dict[int, object]]:
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        strings = dict(con.execute("SELECT id, value FROM StringIds").fetchall())
        rows = con.execute(f'SELECT "{column}", start, "end" FROM "{table}"').fetchall()
    finally:
        con.close()
    return rows, strings


#: Ways a REAL start or end may fairly be read as integer nanoseconds.
_ROUNDINGS = (
    lambda s, e: math.trunc(e) - math.trunc(s),
    lambda s, e: math.floor(e) - math.floor(s),
    lambda s, e: round(e) - round(s),
    lambda s, e: math.trunc(e - s),
    lambda s, e: round(e - s),
)


def _kind(start: object, end: object) -> str:
    """``int`` (exact), ``real`` (a REAL somewhere, roundable) or ``bad`` (unreadable)."""
    if type(start) is int and type(end) is int:
        return "int"
    if all(type(v) in (int, float) and math.isfinite(v) and abs(v) < 2**63 for v in (start, end)):
        return "real"
    return "bad"


class _Group:
    """One name id's rows: what a correct summary may print for them."""

    def __init__(self) -> None:
        self.count = self.bad = self.reals = self.total = 0
        self.real_totals = [0] * len(_ROUNDINGS)

    def add(self, start: object, end: object) -> None:
        self.count += 1
        kind = _kind(start, end)
        if kind == "int":
            self.total += end - start
        elif kind == "real":
            self.reals += 1
            for i, rounding in enumerate(_ROUNDINGS):
                self.real_totals[i] += rounding(start, end)
        else:
            self.bad += 1

    def options(self) -> set[tuple[int, int]]:
        """(instances, total) pairs: unreadable rows counted or not, REALs rounded or not."""
        counts = {self.count, self.count - self.bad, self.count - self.bad - self.reals}
        totals = {self.total} if not self.reals else {self.total + t for t in self.real_totals}
        if self.reals:
            totals.add(self.total)  # the REAL rows left out
        return {(c, t) for c in counts for t in totals}

    def __repr__(self) -> str:
        return f"(rows {self.count}, unreadable {self.bad}, real {self.reals}, total {self.total})"


def expected(path: Path, summary: str) -> tuple[dict[str, list[_Group]], set[str]] | None:
    """Return (name -> one group per name id, every real name), or None.

    None: the oracle cannot say (the table or StringIds cannot be read as plain tables).
    """
    table, column, strip = _SOURCES[summary]
    try:
        rows, strings = _rows(path, table, column)
    except sqlite3.Error:
        return None
    real = {str(v) for v in strings.values() if isinstance(v, str)}
    if strip:
        real = {_strip(v) for v in real}
    groups: dict[int, _Group] = defaultdict(_Group)
    for name_id, start, end in rows:
        if type(name_id) is not int or not isinstance(strings.get(name_id), str):
            continue  # the oracle cannot name this row
        groups[name_id].add(start, end)
    by_name: dict[str, list[_Group]] = defaultdict(list)
    for name_id, group in groups.items():
        name = strings[name_id]
        if _UNCHECKABLE.search(name):
            continue
        by_name[_strip(name) if strip else name].append(group)
    return by_name, real


def _parse(body: list[str]) -> dict[str, list[tuple[str, str]]] | str | None:
    """CSV body -> name -> [(instances, total) as printed], the non-table line, or None."""
    if not body or not body[0].startswith("Time (%)"):
        return " ".join(body)[:300]
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    try:
        for row in csv.DictReader(io.StringIO("\n".join(body))):
            count = row.get("Instances") or row.get("Num Calls") or ""
            out[row["Name"]].append((count, row["Total Time (ns)"]))
    except (KeyError, csv.Error):
        return None  # names that break the CSV: the other checks see those
    return out


def _agrees(printed: list[tuple[str, str]], want: list[_Group]) -> bool:
    if len(printed) != len(want):
        return False
    try:
        got = sorted((int(c), int(t)) for c, t in printed)
    except ValueError:
        return False
    # few ids per name: pair both sides in sorted order
    options = sorted((g.options() for g in want), key=min)
    return all(g in opts for g, opts in zip(got, options, strict=True))


def compare(path: Path, step: StepResult, context: str) -> None:
    """Raise WrongTotals when an exit-0 summary disagrees with :func:`expected`."""
    printed = sections(step.out)
    specs = _specs(step.argv)
    if len(printed) != len(specs):
        raise failure(
            "SectionsMissing",
            f"{step.where()}  [{context}]: {len(specs)} summaries asked, {len(printed)} printed",
        )
    for summary, (_name, body) in zip(specs, printed, strict=True):
        if summary not in _SOURCES:
            continue  # other summaries, and variants such as cuda_gpu_kern_sum:base
        want = expected(path, summary)
        if want is None:
            continue
        by_name, real = want
        got = _parse(body)
        if got is None:
            continue
        where = f"{step.where()}  [{context}]"
        if isinstance(got, str):
            if by_name:
                rows = sum(len(v) for v in by_name.values())
                raise failure(
                    "MissingTable", f"{where}: {summary} printed {got!r}, SQL finds {rows} names"
                )
            continue
        for name, rows in by_name.items():
            if not _agrees(got.get(name, []), rows):
                raise failure(
                    f"WrongTotals_{summary}",
                    f"{where}: {summary} for {name[:120]!r}: printed (instances, total) "
                    f"{got.get(name)}, SQL gives {rows}",
                )
        # '' and the like may be Strata's placeholder for a name it cannot read
        extra = sorted(
            n
            for n in got
            if n.strip() and n in real and n not in by_name and not _UNCHECKABLE.search(n)
        )
        if extra:
            raise failure(
                f"InventedName_{summary}",
                f"{where}: {summary} shows {extra[:3]!r} for rows SQL cannot name that way",
            )
