"""The lean summaries as plain tables (``stats --no-cache``, analysis.stats.lean_plain) print
what the column path's DataFrames print, on every real report and on hostile ones, and
import no pandas."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from strata.analysis.errors import StrataError
from strata.analysis.stats import format_results, run_report
from strata.analysis.stats.lean import LEAN_REPORTS, open_for_stats
from strata.analysis.stats.lean_plain import lean_summaries, serves
from tests.conftest import real_reports, requires_shared
from tests.fuzz.cases import REPORT_CLASSES
from tests.fuzz.checks import NotApplicable, prepare
from tests.helpers import run_python

SPECS = list(LEAN_REPORTS)


def _column_path(path: Path, specs: list[str]):
    """The column path's text, or its refusal (type, message)."""
    try:
        report = open_for_stats(path, specs, use_cache=False)
        results = [run_report(report, s, np) for s in specs]
    except StrataError as exc:
        return type(exc).__name__, str(exc)
    return format_results({report.name: results}, "csv")


def _plain_path(path: Path, specs: list[str]):
    try:
        name, results = lean_summaries(path, specs)
    except StrataError as exc:
        return type(exc).__name__, str(exc)
    return format_results({name: results}, "csv")


@requires_shared
@pytest.mark.parametrize("path", real_reports(), ids=lambda p: p.stem)
def test_plain_tables_print_the_column_paths_text(path: Path) -> None:
    assert serves(path, SPECS)
    assert _plain_path(path, SPECS) == _column_path(path, SPECS)


@pytest.mark.parametrize("label", sorted(REPORT_CLASSES))
def test_hostile_reports_get_the_same_answer_or_refusal(
    label: str, demo_seed, tmp_path: Path
) -> None:
    try:
        path = prepare(demo_seed, REPORT_CLASSES[label](demo_seed), tmp_path)
    except NotApplicable as skip:
        pytest.skip(str(skip))
    if not serves(path, SPECS):
        pytest.skip("not a plain SQLite file: the column path opens it")
    assert _plain_path(path, SPECS) == _column_path(path, SPECS)


# A cold ``stats`` of the lean summaries, in process, as main.py runs it.
_PROBE = """
import contextlib, io, json, sys
from strata.app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["stats", "--no-cache", "-r", "cuda_gpu_kern_sum,cuda_api_sum", sys.argv[1]])
heavy = sorted(m for m in ("pandas", "pyarrow") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy, "text": out.getvalue()}))
"""


@requires_shared
def test_a_cold_stats_of_the_lean_summaries_imports_neither_pandas_nor_pyarrow() -> None:
    """pandas: ~0.25 s and ~50 MB; pyarrow: ~30 ms and ~55 MB (2-core machine): the native
    reader's batches stay NumPy arrays, the tables plain lists."""
    path = real_reports()[0]
    proc = run_python("-c", _PROBE, str(path), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0
    assert "Processing [" in probe["text"]
    assert not probe["heavy"], f"a cold lean stats imported {probe['heavy']}"
