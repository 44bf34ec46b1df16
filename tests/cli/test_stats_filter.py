"""``main.py stats --filter-time`` and ``--filter-nvtx``: nsys's filtered views, per summary.

Against the installed nsys 2023.4 on copies of real reports (skipped without it), and,
without nsys, against numbers computed in the test with sqlite3 from the filter's rule: a
row counts when it overlaps ``[start, end)`` (starts inside, ends inside, or spans it; a
NULL end only by its start), an NVTX push/pop range keeps its thread's rows.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.stats import parse_spec
from strata.app.cli import main
from tests.cli.test_stats_options import (
    SAXPY,
    _copy,
    nsys_stats,
    requires_nsys,
    strata_stats,
)
from tests.conftest import requires_shared
from tests.helpers import mutate_sqlite


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


CONCURRENT = "extra-p__extrap__concurrent.s1__profile1.sqlite"  # push/pop ranges in a domain
TENSORRT = "LeiWang1999__memfusion_artifact__report1.sqlite"  # negative times, TensorRT ranges
DLPROF = "MohanadOdema__DLProf__nsys_profile.sqlite"  # aten:: names: colons and quotes
DOMAIN = "de.tu-darmstadt.parallel.extra_prof"
SUMMARIES = ",".join(
    [
        "cuda_gpu_kern_sum", "cuda_gpu_kern_sum:base", "cuda_gpu_kern_sum:nvtx-name:base",
        "cuda_gpu_kern_gb_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_pushpop_sum", "nvtx_startend_sum",
        "osrt_sum", "nvtx_gpu_proj_sum", "nvtx_gpu_proj_trace", "cuda_kern_exec_sum",
        "nvtx_kern_sum", "cuda_api_gpu_sum", "cuda_gpu_sum", "nvtx_pushpop_trace",
        "cuda_api_trace", "cuda_kern_exec_trace:nvtx-name", "cuda_gpu_trace:nvtx-name",
    ]
)  # fmt: skip

CASES = [
    (CONCURRENT, "--filter-time", "300ms/400ms"),
    (CONCURRENT, "--filter-nvtx", f"main->test_max_par@{DOMAIN}"),
    (CONCURRENT, "--filter-nvtx", "main->test_max_par"),  # the domain is not optional
    (TENSORRT, "--filter-time", "-1067887349/-257483578"),
    (TENSORRT, "--filter-nvtx", "Identity_10@TensorRT"),
    (DLPROF, "--filter-nvtx", "aten::_convolution, seq = 0"),
    (DLPROF, "--filter-nvtx", "{'mod': 'torch', 'op': 'randn', 'args': []}"),  # nsys's SQL
    (SAXPY, "--filter-time", "1s/"),
    (SAXPY, "--filter-nvtx", "MPI_Finalize/3"),  # no fourth instance
]


@requires_shared
@requires_nsys
@pytest.mark.parametrize(("name", "option", "value"), CASES, ids=lambda v: str(v)[:24])
def test_filtered_summaries_equal_nsys(name, option, value, in_tmp: Path, capsys) -> None:
    report = _copy(name, in_tmp)
    args = ("-f", "csv", "-r", SUMMARIES, option, value)
    assert strata_stats(report, capsys, *args) == nsys_stats(report, *args)


@requires_shared
@requires_nsys
def test_an_unclosed_range_ends_at_the_last_nvtx_time_kept(in_tmp: Path, capsys) -> None:
    report = _copy(CONCURRENT, in_tmp)
    mutate_sqlite(report, "UPDATE NVTX_EVENTS SET end = NULL WHERE rowid IN (2, 5)")
    for option, value in (("--filter-time", "300ms/400ms"), ("--filter-time", "/200ms")):
        args = ("-f", "csv", "-r", "nvtx_sum,nvtx_pushpop_trace,nvtx_gpu_proj_sum", option, value)
        assert strata_stats(report, capsys, *args) == nsys_stats(report, *args)


@requires_shared
@requires_nsys
def test_filtered_files_are_named_as_nsys_names_them(in_tmp: Path, capsys) -> None:
    report = _copy(CONCURRENT, in_tmp)
    (in_tmp / "ours").mkdir()
    (in_tmp / "theirs").mkdir()
    args = ["-r", "nvtx_sum,cuda_gpu_kern_sum:base", "--filter-nvtx", f"main@{DOMAIN}"]
    ours = strata_stats(report, capsys, *args, "-o", "ours/p")
    theirs = nsys_stats(report, *args, "-o", "theirs/p")
    assert ours == theirs.replace("theirs/p", "ours/p")
    names = sorted(p.name for p in (in_tmp / "theirs").iterdir())
    assert names == [
        f"p_cuda_gpu_kern_sum_nvtx=main@{DOMAIN}_base.csv",
        f"p_nvtx_sum_nvtx=main@{DOMAIN}.csv",
    ]
    for file in names:
        assert (in_tmp / "ours" / file).read_text() == (in_tmp / "theirs" / file).read_text()


# --- without nsys: the numbers from the filter's rule, computed here with sqlite3 ---------


def _sections(text: str) -> dict[str, list[dict[str, str]]]:
    """Summary spec -> its CSV rows."""
    out: dict[str, list[dict[str, str]]] = {}
    for block in text.split("Processing [")[1:]:
        head, _, body = block.partition("\n")
        spec = head.split("with [")[1].split(".py]")[0]
        args = head.partition(".py](")[2].rpartition(")...")[0]
        out[f"{spec}:{args}" if args else spec] = list(csv.DictReader(io.StringIO(body.strip())))
    return out


def _overlapping(con: sqlite3.Connection, table: str, start: int, end: int, extra: str = ""):
    return con.execute(
        f"SELECT * FROM {table} WHERE ((start >= {start} AND start < {end}) "
        f"OR (end >= {start} AND end < {end}) OR (start < {start} AND end >= {end})) {extra}"
    ).fetchall()


@requires_shared
def test_filter_time_counts_the_calls_that_overlap(in_tmp: Path, capsys) -> None:
    report = _copy(CONCURRENT, in_tmp)
    lo, hi = 550_000_000, 580_000_000
    con = sqlite3.connect(report)
    con.row_factory = sqlite3.Row
    rows = _overlapping(con, "CUPTI_ACTIVITY_KIND_RUNTIME", lo, hi)
    expected = sorted((r["end"] - r["start"]) for r in rows)
    everything = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    con.close()
    assert 0 < len(expected) < everything  # the window leaves calls out on both sides
    out = strata_stats(report, capsys, "-f", "csv", "-r", "cuda_api_trace,cuda_api_sum",
                       "--filter-time", f"{lo}/{hi}")  # fmt: skip
    sections = _sections(out)
    trace = sections[f"cuda_api_trace:start={lo}:end={hi}"]
    assert sorted(int(r["Duration (ns)"]) for r in trace) == expected
    summary = sections[f"cuda_api_sum:start={lo}:end={hi}"]
    assert sum(int(r["Num Calls"]) for r in summary) == len(expected)
    assert sum(int(r["Total Time (ns)"]) for r in summary) == sum(expected)


@requires_shared
def test_filter_nvtx_counts_the_ranges_of_its_thread_and_loses_an_earlier_domain(
    in_tmp: Path, capsys
) -> None:
    """The ranges on the push/pop range's thread that overlap it; a domain created before
    it is not named."""
    report = _copy(CONCURRENT, in_tmp)
    con = sqlite3.connect(report)
    (s, e, gtid), *_ = con.execute(
        "SELECT n.start, n.end, n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s "
        "ON n.textId = s.id WHERE coalesce(n.text, s.value) = 'main->test_copies' "
        "ORDER BY n.start"
    ).fetchall()
    ranges = _overlapping(con, "NVTX_EVENTS", s, e, f"AND eventType = 59 AND globalTid = {gtid}")
    domain_made = con.execute("SELECT min(start) FROM NVTX_EVENTS WHERE eventType = 75").fetchone()
    con.close()
    out = strata_stats(report, capsys, "-f", "csv", "-r", "nvtx_sum",
                       "--filter-nvtx", f"main->test_copies@{DOMAIN}")  # fmt: skip
    rows = _sections(out)[f"nvtx_sum:nvtx=main->test_copies@{DOMAIN}"]
    assert sum(int(r["Instances"]) for r in rows) == len(ranges)
    assert all(not r["Range"].startswith(DOMAIN) for r in rows) == (domain_made[0] < s)
    assert {r["Range"] for r in rows} >= {"main", "main->test_copies"}


@requires_shared
def test_an_unclosed_range_ends_at_the_last_nvtx_time_in_the_window(in_tmp: Path, capsys) -> None:
    report = _copy(CONCURRENT, in_tmp)
    mutate_sqlite(report, "UPDATE NVTX_EVENTS SET end = NULL WHERE rowid = 2")
    lo, hi = 0, 200_000_000
    con = sqlite3.connect(report)
    (start,) = con.execute("SELECT start FROM NVTX_EVENTS WHERE rowid = 2").fetchone()
    kept = _overlapping(con, "NVTX_EVENTS", lo, hi)
    last = max(max(r[0], r[1] or r[0]) for r in kept)  # start, end are the first columns
    whole_last = con.execute("SELECT max(max(start), max(end)) FROM NVTX_EVENTS").fetchone()[0]
    con.close()
    assert start < hi
    assert last < whole_last
    out = strata_stats(report, capsys, "-f", "csv", "-r", "nvtx_pushpop_trace",
                       "--filter-time", f"{lo}/{hi}")  # fmt: skip
    rows = _sections(out)[f"nvtx_pushpop_trace:start={lo}:end={hi}"]
    opened = [r for r in rows if int(r["Start (ns)"]) == start]
    assert [int(r["End (ns)"]) for r in opened] == [last]


@requires_shared
def test_stored_answers_are_kept_apart_by_filter(in_tmp: Path, capsys) -> None:
    report = _copy(CONCURRENT, in_tmp)
    specs = ("-f", "csv", "-r", "cuda_api_sum,nvtx_sum")
    window = ("--filter-time", "300ms/400ms")
    capsys.readouterr()
    assert main(["stats", *specs, str(report)]) == 0  # stores the unfiltered answers
    whole = capsys.readouterr().out
    assert main(["stats", *specs, *window, str(report)]) == 0
    filtered = capsys.readouterr().out
    assert main(["stats", *specs, *window, str(report)]) == 0  # from the stored answers
    again = capsys.readouterr().out
    fresh = strata_stats(report, capsys, *specs, *window)
    assert filtered == again == fresh
    assert filtered.split("\n", 1)[1] != whole.split("\n", 1)[1]


@requires_shared
def test_the_sql_path_leaves_a_filter_to_the_columns(in_tmp, capsys, monkeypatch) -> None:
    report = _copy(CONCURRENT, in_tmp)
    args = ("-f", "csv", "-r", "cuda_api_sum,cuda_gpu_kern_sum", "--filter-time", "1/300ms")
    monkeypatch.setenv("STRATA_STATS_PATH", "columns")
    columns = strata_stats(report, capsys, *args)
    monkeypatch.setenv("STRATA_STATS_PATH", "sql")
    assert strata_stats(report, capsys, *args) == columns
    assert strata_stats(report, capsys, *args[:4]) != columns.replace("(start=1:end=300000000)", "")


def test_filter_options_parse_like_nsys() -> None:
    spec, args = parse_spec("cuda_gpu_kern_sum:nvtx=aten::_convolution, seq = 0:base")
    assert spec.name == "cuda_gpu_kern_sum"
    assert args == ("nvtx=aten::_convolution, seq = 0", "base")
    assert parse_spec("nvtx_sum:start=-5:end=3")[1] == ("start=-5", "end=3")
    for bad in ("nvtx_sum:start=1e3", "nvtx_sum:end=", "nvtx_sum:start=99999999999999999999"):
        with pytest.raises(AnalysisError):
            parse_spec(bad)


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--filter-time", "5", "slash"),
        ("--filter-time", "5/3", "after the end"),
        ("--filter-time", "5xs/", "not a time"),
        ("--filter-nvtx", "", "empty"),
    ],
)
def test_a_bad_filter_is_one_line(option, value, words, in_tmp: Path, capsys) -> None:
    capsys.readouterr()
    status = main(["stats", "--no-cache", option, value, "x.sqlite"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert words in err
