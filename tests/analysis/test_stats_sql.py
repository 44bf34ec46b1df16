"""The SQL path of ``stats`` (analysis.stats.sql) against the column path: the same bytes in
every format on every real report and fixture, the same refusals on hostile reports, and the
choice between them (analysis.stats.compute)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from strata.analysis.errors import AnalysisError, StrataError
from strata.analysis.stats import FORMATS, format_results, run_report
from strata.analysis.stats import compute as compute_mod
from strata.analysis.stats.compute import PATH_ENV, choose_path
from strata.analysis.stats.lean import open_for_stats
from strata.analysis.stats.plain import PlainResult
from strata.analysis.stats.sql import SQL_REPORTS, NotServed, sql_summaries
from strata.analysis.summary import compute_file as summarize
from strata.app.cli.stats import DEFAULT_REPORTS
from tests.conftest import fixture_reports, real_reports, requires_shared
from tests.fuzz.cases import REPORT_CLASSES
from tests.fuzz.checks import NotApplicable, prepare
from tests.helpers import mutate_sqlite, run_cli

#: The lean reader's summaries (the column path reads two tables), then all of them (the
#: column path loads the whole model).
SPEC_SETS = (
    ("cuda_gpu_kern_sum", "cuda_gpu_kern_sum:base", "cuda_gpu_kern_sum:mangled", "cuda_api_sum"),
    tuple(sorted(SQL_REPORTS)),
    # nsys's default set: 13 of its 19 summaries are of data Strata does not load, which
    # the SQL path answers too (SKIPPED, empty, um_total_sum's row of empty totals).
    (
        *DEFAULT_REPORTS,
        "um_sum:rows=3",
        "network_congestion",
        "vulkan_api_trace",
        "mpi_event_trace",
        "nvvideo_api_sum",
    ),
)


def _columns(path: Path, specs: tuple[str, ...]):
    report = open_for_stats(path, specs, use_cache=False)
    return report.name, [run_report(report, spec) for spec in specs]


def _texts(name: str, results) -> list[str]:
    return [
        format_results({name: results}, fmt, unit) for fmt in FORMATS for unit in ("nsec", "msec")
    ]


def _outcome(run) -> tuple:
    """('ok', every printed text) or ('error', type, message)."""
    try:
        return ("ok", _texts(*run()))
    except StrataError as exc:
        return ("error", type(exc).__name__, str(exc))


@requires_shared
@pytest.mark.parametrize("specs", SPEC_SETS, ids=["lean", "all", "default"])
@pytest.mark.parametrize("path", real_reports() + fixture_reports(), ids=lambda p: p.name)
def test_sql_path_prints_the_column_paths_bytes(path: Path, specs) -> None:
    want = _outcome(lambda: _columns(path, specs))
    try:
        got = sql_summaries(path, specs)
    except NotServed as exc:
        why = str(exc)
    else:
        why = None
    if why is not None:
        # Left to the column path: only a report it refuses (one fixture names a string id
        # its StringIds lacks); every real report is answered here.
        assert want[0] == "error", why
        return
    assert all(isinstance(r, PlainResult) for r in got[1])
    assert _texts(*got) == want[1]


@pytest.mark.parametrize("label", list(REPORT_CLASSES))
def test_hostile_report_same_answer_or_refusal(
    label: str, demo_seed, tmp_path: Path, monkeypatch
) -> None:
    try:
        path = prepare(demo_seed, REPORT_CLASSES[label](demo_seed), tmp_path)
    except NotApplicable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    specs = SPEC_SETS[1]
    monkeypatch.setenv(PATH_ENV, "columns")
    want = _outcome(lambda: summarize(path, specs, use_cache=False))
    monkeypatch.setenv(PATH_ENV, "sql")
    assert _outcome(lambda: summarize(path, specs, use_cache=False)) == want


@pytest.mark.parametrize(
    "label", ["NVTX domain created before 0", "open NVTX range starting before 0"]
)
def test_nvtx_before_zero_is_served(label: str, demo_seed, tmp_path: Path) -> None:
    """The loader reads NVTX rows starting before 0 (a real report creates its domain
    there): the SQL path's checks do not leave such a report to the column path."""
    path = prepare(demo_seed, REPORT_CLASSES[label](demo_seed), tmp_path)
    name, results = sql_summaries(path, SPEC_SETS[1])
    assert _texts(name, results) == _texts(*_columns(path, SPEC_SETS[1]))


def test_nvtx_text_that_is_not_utf8_is_served_as_the_loader_reads_it(
    demo_seed, tmp_path: Path
) -> None:
    # Inline text only (no textId): the label is those bytes, read with U+FFFD.
    path = tmp_path / demo_seed.path.name
    shutil.copyfile(demo_seed.path, path)
    where = "rowid = (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59)"
    mutate_sqlite(
        path,
        "UPDATE NVTX_EVENTS SET textId = NULL, "
        f"text = CAST(x'7374657061ff6f6e65' AS TEXT) WHERE {where}",  # b"stepa\xffone"
    )
    name, results = sql_summaries(path, SPEC_SETS[1])
    texts = _texts(name, results)
    assert texts == _texts(*_columns(path, SPEC_SETS[1]))
    assert "stepa\ufffdone" in texts[0]


#: Rows of the demo's NVTX table to change (``{w}``: a WHERE picking push/pop ranges).
_RANGE = "rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 AND {w} LIMIT {n})"
_DOMAIN_ROW = "FROM NVTX_EVENTS WHERE eventType = 75"


def test_nvtx_label_rules_are_the_column_paths(demo_seed, tmp_path: Path) -> None:
    """nvtx_sum's labels on the SQL path follow the column path's rules in their corners:
    a range with no text, a domain created twice (the earliest wins, then the first row),
    a nameless domain, a domain never created or created by another process, open ranges
    (no end, or -1) and one text in both styles."""
    path = tmp_path / "nvtx.sqlite"
    shutil.copyfile(demo_seed.path, path)
    ranges = "domainId = 0 AND textId IS NULL"
    mutate_sqlite(
        path,
        f"UPDATE NVTX_EVENTS SET text = NULL WHERE {_RANGE.format(w=ranges, n=2)}",
        "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, text) "
        f"SELECT start - 1, 75, globalTid, domainId, 'EARLIER' {_DOMAIN_ROW}",
        "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, text) "
        f"SELECT start - 1, 75, globalTid, domainId, 'TIE' {_DOMAIN_ROW} AND text = 'NCCL'",
        "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId) "
        f"SELECT start, 75, globalTid, 2 {_DOMAIN_ROW} AND text = 'NCCL'",
        "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, text) "
        f"SELECT start, 75, globalTid + {1 << 24}, 3, 'OTHER' {_DOMAIN_ROW} AND text = 'NCCL'",
        f"UPDATE NVTX_EVENTS SET domainId = 2 WHERE {_RANGE.format(w=ranges, n=4)}",
        f"UPDATE NVTX_EVENTS SET domainId = 3 WHERE {_RANGE.format(w=ranges, n=3)}",
        f"UPDATE NVTX_EVENTS SET domainId = 7 WHERE {_RANGE.format(w=ranges, n=1)}",
        f'UPDATE NVTX_EVENTS SET "end" = NULL WHERE {_RANGE.format(w="textId > 0", n=1)}',
        f'UPDATE NVTX_EVENTS SET "end" = -1 WHERE {_RANGE.format(w="textId > 0", n=2)}',
        "UPDATE NVTX_EVENTS SET textId = NULL, text = (SELECT text FROM NVTX_EVENTS WHERE "
        "eventType = 59 AND text IS NOT NULL LIMIT 1) WHERE eventType = 60",
    )
    name, results = sql_summaries(path, ["nvtx_sum"])
    labels = set(results[0].columns[-1].values)
    assert None in labels
    assert any(t.startswith("EARLIER:") for t in labels if t)
    assert any(t.startswith(":") for t in labels if t)
    assert not any(t.startswith(("NCCL:", "TIE:", "OTHER:")) for t in labels if t)
    assert len(set(results[0].columns[-2].values)) == 2  # both styles
    assert _texts(name, results) == _texts(*_columns(path, ("nvtx_sum",)))


def test_overflowing_total_is_the_column_paths_error(demo_seed, tmp_path: Path) -> None:
    path = prepare(
        demo_seed, REPORT_CLASSES["sum of durations overflows int64"](demo_seed), tmp_path
    )
    with pytest.raises(NotServed):
        sql_summaries(path, ["cuda_gpu_kern_sum"])
    with pytest.raises(AnalysisError, match="cuda_gpu_kern_sum: integer overflow: the total"):
        summarize(path, ["cuda_gpu_kern_sum"], use_cache=False)


def test_choice(demo_seed, tmp_path: Path, monkeypatch) -> None:
    path = demo_seed.path
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(PATH_ENV, raising=False)
    assert choose_path(path, ["cuda_api_sum"]) == "sql"
    assert choose_path(path, ["cuda_api_sum", "nvtx_pushpop_trace"]) == "columns"
    monkeypatch.setattr(compute_mod, "SQL_MAX_ROWS", 0)
    assert choose_path(path, ["cuda_api_sum"]) == "columns"
    monkeypatch.setenv(PATH_ENV, "sql")
    assert choose_path(path, ["cuda_api_sum"]) == "sql"
    monkeypatch.setenv(PATH_ENV, "fast")
    with pytest.raises(AnalysisError, match="use sql, columns or auto"):
        choose_path(path, ["cuda_api_sum"])


def test_cache_entry_wins_and_sql_path_writes_none(demo_seed, tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(cache))
    monkeypatch.delenv(PATH_ENV, raising=False)
    env = dict(os.environ)
    args = ("stats", "-f", "csv", "-r", "cuda_gpu_kern_sum,osrt_sum", str(demo_seed.path))
    first = run_cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    assert not (cache / "reports").exists() or not any((cache / "reports").iterdir())
    assert choose_path(demo_seed.path, ["cuda_gpu_kern_sum"]) == "sql"
    shutil.rmtree(cache / "answers", ignore_errors=True)  # the first run's stored answers
    columns = run_cli(*args, env={**env, PATH_ENV: "columns"})  # writes the entry
    assert columns.stdout == first.stdout
    assert choose_path(demo_seed.path, ["cuda_gpu_kern_sum"]) == "columns"
    assert run_cli(*args, env=env).stdout == first.stdout
