"""``stats -f json`` (nsys's), ``-f strata-json``, ``-q`` and ``--help-formats``.

Against nsys 2023.4 on copies of real reports (skipped without nsys or ../shared), and
without it on reports the tests plant (:func:`tests.cli.conftest.plant`).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from strata.analysis.stats.layouts import json_cell, json_string
from strata.app.cli import main
from tests.cli.conftest import plant
from tests.cli.test_stats_options import (
    CUPY,
    NSYS,
    SAXPY,
    _copy,
    nsys_stats,
    requires_nsys,
    strata_stats,
)
from tests.conftest import requires_shared
from tests.helpers import mutate_sqlite

#: Summaries with rows, an empty table (saxpy's osrt_sum, um_sum), SKIPPED ones and
#: um_total_sum's one row of empty cells. (cuda_gpu_trace would SKIP on these old
#: reports, and nsys then repeats its SKIPPED line for the next summary: not a format matter.)
SPECS = "osrt_sum,nvtx_sum,um_sum,um_total_sum,cuda_api_sum,openmp_sum,nvtx_pushpop_trace"
MEMFUSION = "LeiWang1999__memfusion_artifact__report1.sqlite"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@requires_shared
@requires_nsys
@pytest.mark.parametrize("timeunit", ["nsec", "msec"])
@pytest.mark.parametrize("name", [CUPY, SAXPY, MEMFUSION])
def test_json_equals_nsys(name: str, timeunit: str, in_tmp: Path, capsys) -> None:
    report = _copy(name, in_tmp)
    args = ("-f", "json", "--timeunit", timeunit, "-r", f"{SPECS},cuda_gpu_kern_sum:base")
    ours = strata_stats(report, capsys, *args)
    assert ours == nsys_stats(report, *args)
    assert '"Name": "' in ours or name != MEMFUSION


@requires_shared
@requires_nsys
def test_json_types_names_as_nsys_does(in_tmp: Path, capsys) -> None:
    """A name reading as a number or keyword is bare; quotes, backslashes, tabs escaped."""
    report = _copy(CUPY, in_tmp)
    names = ["123", "true", 'a"b\\c', "1e5", "tab\tx", "+5", "5.", "0001", "null", "-0x1F"]
    for rowid, text in enumerate(names[:5], start=1):
        mutate_sqlite(report, f"UPDATE NVTX_EVENTS SET text = '{text}' WHERE rowid = {rowid}")
    ours = strata_stats(report, capsys, "-f", "json", "-r", "nvtx_sum")
    assert ours == nsys_stats(report, "-f", "json", "-r", "nvtx_sum")
    for rowid, text in enumerate(names[5:], start=1):
        mutate_sqlite(report, f"UPDATE NVTX_EVENTS SET text = '{text}' WHERE rowid = {rowid}")
    ours = strata_stats(report, capsys, "-f", "json", "-r", "nvtx_sum")
    assert ours == nsys_stats(report, "-f", "json", "-r", "nvtx_sum")


@requires_shared
@requires_nsys
@pytest.mark.parametrize("quiet", [(), ("-q",)])
@pytest.mark.parametrize("fmt", ["json", "column", "csv,json,table,hdoc"])
def test_files_and_quiet_equal_nsys(fmt: str, quiet: tuple, in_tmp: Path, capsys) -> None:
    """-o PREFIX (json files named .json) and -q: the console and every file nsys writes."""
    report = _copy(SAXPY, in_tmp)
    (in_tmp / "ours").mkdir()
    (in_tmp / "theirs").mkdir()
    args = (*quiet, "-f", fmt, "-r", SPECS)
    ours = strata_stats(report, capsys, *args, "-o", "ours/p")
    theirs = nsys_stats(report, *args, "-o", "theirs/p")
    assert ours == theirs.replace("theirs/p", "ours/p")
    assert bool(quiet) == (ours == "")
    written = sorted(os.listdir(in_tmp / "theirs"))
    assert "p_osrt_sum.json" in written or "json" not in fmt.split(",")[0]
    for name in written:
        if (in_tmp / "theirs" / name).stat().st_size or name.startswith("p_osrt"):
            assert (in_tmp / "ours" / name).read_text() == (in_tmp / "theirs" / name).read_text()


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["column", "table", "csv", "tsv", "json", "hdoc", "htable"])
def test_quiet_console_equals_nsys(fmt: str, in_tmp: Path, capsys) -> None:
    report = _copy(CUPY, in_tmp)
    args = ("-q", "-f", fmt, "-r", SPECS)
    ours = strata_stats(report, capsys, *args)
    assert ours == nsys_stats(report, *args)
    assert "Processing" not in ours
    assert "SKIPPED" not in ours


@requires_nsys
@pytest.mark.parametrize("name", [None, "ALL", "column", "table", "csv", "tsv", "json", "hdoc"])
def test_help_formats_prints_nsys_text(name: str | None, capsys) -> None:
    args = ["--help-formats"] if name is None else ["--help-formats", name]
    with pytest.raises(SystemExit) as done:
        main(["stats", *args])
    assert done.value.code == 0
    proc = subprocess.run(
        [NSYS, "stats", *args], capture_output=True, text=True, timeout=60, check=False
    )  # fmt: skip
    assert capsys.readouterr().out == proc.stdout


def test_help_formats_unknown_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stats", "--help-formats", "yaml\x1b[2J"])
    assert done.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "strata: unknown format 'yaml\\x1b[2J'; see --help-formats\n"


def test_help_formats_lists_every_format(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["stats", "--help-formats", "ALL"])
    text = capsys.readouterr().out
    for fmt in ("column", "table", "csv", "tsv", "json", "hdoc", "htable"):
        assert f"\n\n{fmt}[:<unit>]" in text


@pytest.mark.parametrize(
    ("text", "bare"),
    [("12", True), ("-0.5", True), ("1e5", True), ("1.5E-3", True), ("+5", True),
     ("5.", True), ("true", True), ("null", True), ("", False), ("0001", False),
     (".5", False), ("0x10", False), ("nan", False), ("inf", False), ("True", False),
     (" 7", False), ("1,000", False)],
)  # fmt: skip
def test_json_cell_types_by_text(text: str, bare: bool) -> None:
    assert (json_cell(text) == text) == bare
    if not bare:
        assert json.loads(json_cell(text)) == text


def test_json_strings_decode_to_the_name_and_print_nothing_raw() -> None:
    for text in ['a"b\\c', "tab\tx", "e\x1b[2J", "\u202eexe", "\x9b\x7f", "\u2028", "\U000e0001"]:
        encoded = json_string(text)
        assert json.loads(encoded) == text
        assert encoded.isascii()
        assert encoded.isprintable()
    assert json_string("tab\tx") == '"tab\\tx"'  # nsys's escapes: \" \\ \t
    assert json_string('a"b\\c') == '"a\\"b\\\\c"'
    assert json_string("é") == '"é"'  # printable text is kept as is


@pytest.mark.parametrize("kernel", ["123", "gemm", "1e5"])
def test_json_is_nsys_sections_of_row_objects(kernel: str, tmp_path: Path, capsys) -> None:
    """Each summary after its Processing line; numbers bare; a numeric name typed by its text."""
    report = plant(tmp_path / "r.sqlite", kernel=kernel)
    assert (
        main(["stats", "--no-cache", "-f", "json", "-r", "cuda_gpu_kern_sum,nvtx_sum", str(report)])
        == 0
    )
    out = capsys.readouterr().out
    sections = out.split("Processing [r.sqlite] with [")[1:]
    assert [s.split("]", 1)[0] for s in sections] == ["cuda_gpu_kern_sum.py", "nvtx_sum.py"]
    kernels = json.loads(sections[0].split("\n", 1)[1])
    by_name = {row["Name"]: row for row in kernels}
    name = json.loads(kernel) if kernel != "gemm" else kernel
    assert set(by_name) == {name, "j"}
    assert by_name[name]["Total Time (ns)"] == 100
    assert by_name["j"]["Instances"] == 1
    (nvtx,) = json.loads(sections[1].split("\n", 1)[1])
    assert nvtx["Range"] == "step"
    assert nvtx["Total Time (ns)"] == 21_000


def test_strata_json_is_one_list_with_units(tmp_path: Path, capsys) -> None:
    report = plant(tmp_path / "r.sqlite")
    argv = ["stats", "--no-cache", "-f", "strata-json", "-r", "cuda_gpu_kern_sum", str(report)]
    assert main(argv) == 0
    (table,) = json.loads(capsys.readouterr().out)
    assert table["report"] == "r.sqlite"
    assert table["units"]["Total Time"] == "dur"
    totals = {row[-1]: row[table["columns"].index("Total Time")] for row in table["rows"]}
    assert totals == {"k": 100, "j": 50}


def test_strata_json_files_are_named_json(tmp_path: Path, capsys) -> None:
    report = plant(tmp_path / "r.sqlite")
    prefix = tmp_path / "out" / "p"
    prefix.parent.mkdir()
    argv = ["stats", "--no-cache", "-f", "strata-json,json", "-r", "nvtx_sum,cuda_gpu_kern_sum"]
    assert main([*argv, "-o", str(prefix), str(report)]) == 0
    assert sorted(os.listdir(prefix.parent)) == ["p_cuda_gpu_kern_sum.json", "p_nvtx_sum.json"]
    (ours,) = json.loads((prefix.parent / "p_nvtx_sum.json").read_text())
    assert ours["name"] == "nvtx_sum"
    rows = json.loads((prefix.parent / "p_cuda_gpu_kern_sum.json").read_text())
    assert {row["Name"] for row in rows} == {"k", "j"}


def test_quiet_prints_the_tables_alone(tmp_path: Path, capsys) -> None:
    """-q drops the Processing lines and the SKIPPED summaries; the tables are unchanged."""
    report = plant(tmp_path / "r.sqlite")
    argv = ["stats", "--no-cache", "-f", "csv", "-r", "cuda_gpu_kern_sum,openmp_sum,nvtx_sum"]
    assert main([*argv, str(report)]) == 0
    loud = capsys.readouterr().out
    assert main(["-q", *argv, str(report)]) == 0
    quiet = capsys.readouterr().out
    sections = loud.split("Processing [")[1:]
    assert sum(s.split("\n")[1].startswith("SKIPPED") for s in sections) == 1
    tables = [s.split("\n", 1)[1] for s in sections if "\nSKIPPED" not in s]
    assert quiet == "".join(tables)
    assert quiet.startswith("Time (%),Total Time (ns),Instances")


_NET_COLUMNS = "(start INT, end INT, value INT, globalId INT, metricsListId INT, metricsIdx INT)"
#: network_congestion's paths: no network table; a NIC table without the tables it needs;
#: an IB switch table with its metric names, but no rows (nsys's empty table).
_NETWORK = {
    "none": [],
    "nic alone": [f"CREATE TABLE NET_NIC_METRIC {_NET_COLUMNS}"],
    "switch, empty": [
        f"CREATE TABLE NET_IB_SWITCH_METRIC {_NET_COLUMNS}",
        "CREATE TABLE TARGET_INFO_NETWORK_METRICS (metricsListId INT, metricsIdx INT, name TEXT)",
    ],
}


@requires_shared
@requires_nsys
@pytest.mark.parametrize("tables", list(_NETWORK), ids=list(_NETWORK))
def test_um_rows_and_network_congestion_equal_nsys(tables: str, in_tmp: Path, capsys) -> None:
    report = _copy(SAXPY, in_tmp)  # um_sum: its tables exist, without rows
    for statement in _NETWORK[tables]:
        mutate_sqlite(report, statement)
    specs = "um_sum:rows=5,network_congestion:ticks_threshold=20,um_sum:rows=0,network_congestion"
    for fmt in ("column", "csv", "json"):
        ours = strata_stats(report, capsys, "-f", fmt, "-r", specs)
        assert ours == nsys_stats(report, "-f", fmt, "-r", specs)
    assert "with [um_sum.py](rows=5)... " in ours
    (in_tmp / "ours").mkdir()
    (in_tmp / "theirs").mkdir()
    ours = strata_stats(report, capsys, "-r", specs, "-o", "ours/p")
    assert ours == nsys_stats(report, "-r", specs, "-o", "theirs/p").replace("theirs/", "ours/")
    assert "p_um_sum_rows=5.csv" in os.listdir(in_tmp / "ours")


def test_value_options_take_integers(tmp_path: Path, capsys) -> None:
    report = plant(tmp_path / "r.sqlite")
    for spec in ("um_sum:rows=x", "um_sum:rows=", "um_sum:rows", "network_congestion:ticks=5"):
        capsys.readouterr()
        assert main(["stats", "--no-cache", "-r", spec, str(tmp_path / "none.sqlite")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith("strata: report '")
    assert main(["stats", "--no-cache", "-f", "csv", "-r", "um_sum:rows=+3", str(report)]) == 0
    head = capsys.readouterr().out.split("\n")[0]
    assert head == "Processing [r.sqlite] with [um_sum.py](rows=+3)... "
