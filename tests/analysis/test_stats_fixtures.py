"""Every expected nsys 2023.4 output in the fixtures, reproduced line for line (spec §6).

The expected files are nsys's own console output (column and csv) on the synthetic and real
fixture databases; each section is compared after its "Processing [...]" line, title
included, so column names, order, rounding, widths and SKIPPED messages are all checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from strata.analysis.stats import REPORT_NAMES, run_report
from strata.analysis.stats.text import format_table
from tests.conftest import EXPECTED_DIR, FIXTURES_DIR, requires_fixtures

_PROCESSING = re.compile(
    r"^Processing \[(?P<db>[^\]]+)\] with \[(?P<script>[^\]]+)\](?P<args>.*?)\.\.\. $"
)


@dataclass(frozen=True)
class Section:
    """One report's output: the report file, the stats spec, and its body lines."""

    db: str
    spec: str
    lines: tuple[str, ...]

    @property
    def body(self) -> list[str]:
        """The table (header onwards) or the SKIPPED / no-data line, without the title."""
        lines = list(self.lines)
        while lines and lines[-1] == "":
            lines.pop()
        while lines and (lines[0] == "" or lines[0].startswith(" ** ")):
            lines.pop(0)
        return lines


def spec_of(script: str, args: str) -> str:
    name = script.rsplit("/", 1)[-1].removesuffix(".py")
    opts = re.findall(r"\(([^)]*)\)", args)
    return ":".join([name, *opts])


def parse_sections(text: str) -> list[Section]:
    """Split output at its ``Processing [...] with [...]...`` lines."""
    sections: list[Section] = []
    current: tuple[str, str] | None = None
    lines: list[str] = []
    for line in text.split("\n"):
        match = _PROCESSING.match(line)
        if match:
            if current:
                sections.append(Section(current[0], current[1], tuple(lines)))
            current = (match["db"], spec_of(match["script"], match["args"]))
            lines = []
        elif current:
            lines.append(line)
    if current:
        sections.append(Section(current[0], current[1], tuple(lines)))
    return sections


DATABASES = ("syn", "syn2", "syn3", "real-2023.4-nvtx")


def _cases() -> list:
    cases = []
    for db in DATABASES:
        for fmt in ("column", "csv"):
            path = EXPECTED_DIR / f"{db}.{fmt}.txt"
            if not path.is_file():
                continue
            for section in parse_sections(path.read_text()):
                if section.spec.split(":")[0] in REPORT_NAMES:
                    cases.append(pytest.param(db, fmt, section, id=f"{db}-{fmt}-{section.spec}"))
    return cases or [pytest.param(None, None, None, marks=pytest.mark.skip("no fixtures"))]


@requires_fixtures
@pytest.mark.parametrize(("db", "fmt", "section"), _cases())
def test_matches_nsys_output(load_report, db: str, fmt: str, section) -> None:
    report = load_report(FIXTURES_DIR / f"{db}.sqlite")
    result = run_report(report, section.spec)
    ours = format_table(result, fmt)
    expected = section.body
    assert (ours.split("\n") if ours else []) == expected
    if fmt == "column" and not result.skipped:
        title = next(line for line in section.lines if line.startswith(" ** "))
        assert title == f" ** {result.title} ({result.base_name}):"


@requires_fixtures
def test_every_listed_report_is_covered() -> None:
    names = set()
    for db in DATABASES:
        for section in parse_sections((EXPECTED_DIR / f"{db}.csv.txt").read_text()):
            names.add(section.spec.split(":")[0])
    required = {
        "cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
        "nvtx_sum", "osrt_sum", "nvtx_gpu_proj_sum", "nvtx_gpu_proj_trace", "cuda_gpu_trace",
        "cuda_kern_exec_sum", "nvtx_kern_sum",
    }  # fmt: skip
    assert required <= set(REPORT_NAMES)
    assert required <= names


@requires_fixtures
@pytest.mark.parametrize("fmt", ["column", "csv"])
@pytest.mark.parametrize("db", DATABASES)
def test_whole_output_is_byte_identical(load_report, db: str, fmt: str) -> None:
    """The framing too: Processing lines, titles, blank lines (script paths aside)."""
    from strata.analysis.stats import format_results

    expected = (EXPECTED_DIR / f"{db}.{fmt}.txt").read_text()
    specs = [s.spec for s in parse_sections(expected)]
    report = load_report(FIXTURES_DIR / f"{db}.sqlite")
    ours = format_results({f"{db}.sqlite": [run_report(report, s) for s in specs]}, fmt)
    ours = re.sub(r"with \[(\w+\.py)\]", r"with [<nsys>/target-linux-x64/reports/\1]", ours)
    assert ours == expected


@pytest.mark.parametrize("timeunit", ["nsec", "usec", "msec", "seconds"])
def test_whole_column_printing_equals_printing_cell_by_cell(timeunit: str) -> None:
    """column_strings formats whole columns; the per-cell rule (_number_text) is the oracle."""
    from strata.analysis.stats.format import _number_text, column_strings

    rng = np.random.default_rng(7)
    n = 400
    ints = rng.integers(-(2**62), 2**62, n)
    some = rng.random(n) < 0.3
    frame = pd.DataFrame({
        "Start": ints,  # int64
        "Duration": pd.array(np.where(some, None, ints // 7), dtype="Int64"),  # with NA
        "GrdX": pd.Series(np.where(some, None, ints % 1000), dtype=object),  # ints and None
        "Bytes": pd.Series(np.where(some, None, np.abs(ints) % 10**12), dtype=object),
        "Throughput": np.where(some, np.nan, rng.random(n) * 1e12),  # float with NaN
        "Avg": rng.normal(0, 1e9, n),  # float, printed as repr
        "Name": pd.Series(np.where(some, None, [f"k,{i}" for i in range(n)]), dtype=object),
        "Mixed": pd.Series([1, 2.5, "x", None] * (n // 4), dtype=object),
    })  # fmt: skip
    units = {"Start": "ts", "Duration": "dur", "Bytes": "mem", "Throughput": "thru"}
    ours = column_strings(frame, units, timeunit)
    for column, texts in zip(frame.columns, ours, strict=True):
        expected = [_number_text(v, units.get(column), timeunit) for v in frame[column].tolist()]
        assert texts == expected, column
