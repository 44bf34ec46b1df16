"""``main.py stats``: nsys's framing and formats, files, backends and bad arguments."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.analysis.test_stats_fixtures import parse_sections
from tests.conftest import (
    EXPECTED_DIR,
    FIXTURES_DIR,
    REAL_DIR,
    fingerprint,
    requires_fixtures,
    requires_shared,
)
from tests.helpers import run_cli


@requires_fixtures
def test_csv_of_several_reports_is_nsys_output(tmp_path: Path) -> None:
    syn, syn2 = FIXTURES_DIR / "syn.sqlite", FIXTURES_DIR / "syn2.sqlite"
    before = fingerprint(syn)
    out = tmp_path / "stats.csv"
    names = "cuda_gpu_kern_sum,cuda_gpu_kern_sum:nvtx-name,cuda_api_sum,nvtx_gpu_proj_trace"
    proc = run_cli("stats", str(syn), str(syn2), "-r", names, "-f", "csv", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    ours = parse_sections(out.read_text())
    expected = {
        (s.db, s.spec): s.body
        for db in ("syn", "syn2")
        for s in parse_sections((EXPECTED_DIR / f"{db}.csv.txt").read_text())
    }
    # Each report's tables come under its own file name, in the asked order.
    assert [(s.db, s.spec) for s in ours] == [
        (db, spec) for db in ("syn.sqlite", "syn2.sqlite") for spec in names.split(",")
    ]
    for section in ours:
        assert section.body == expected[(section.db, section.spec)]
    assert fingerprint(syn) == before


@requires_fixtures
def test_column_output_has_nsys_titles() -> None:
    proc = run_cli("stats", str(FIXTURES_DIR / "syn.sqlite"), "-r", "cuda_gpu_mem_size_sum",
                   "--backend", "numpy")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    expected = parse_sections((EXPECTED_DIR / "syn.column.txt").read_text())
    want = next(s for s in expected if s.spec == "cuda_gpu_mem_size_sum")
    (ours,) = parse_sections(proc.stdout)
    assert ours.lines[: len(want.lines) - 1] == want.lines[:-1]


@requires_fixtures
def test_strata_json_holds_native_units() -> None:
    proc = run_cli("stats", str(FIXTURES_DIR / "syn.sqlite"), "-r", "cuda_gpu_mem_size_sum",
                   "-f", "strata-json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (table,) = json.loads(proc.stdout)
    rows = {r[-1]: dict(zip(table["columns"], r, strict=True)) for r in table["rows"]}
    # spec §6.1: DtoH copies 2,097,152 bytes (shown as 2.097 MB by nsys)
    assert rows["[CUDA memcpy Device-to-Host]"]["Total"] == 2_097_152
    assert table["units"]["Total"] == "mem"


@requires_fixtures
def test_skipped_report_is_one_line_not_a_failure() -> None:
    proc = run_cli("stats", str(FIXTURES_DIR / "real-2023.4-nvtx.sqlite"), "-r",
                   "cuda_gpu_kern_sum,nvtx_sum", "-f", "csv")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sections = parse_sections(proc.stdout)
    assert sections[0].body == [
        "SKIPPED: real-2023.4-nvtx.sqlite does not contain CUDA kernel data."
    ]
    assert sections[1].body[0].startswith("Time (%),Total Time (ns)")


@requires_fixtures
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-r", "no_such_report"), "unknown stats report 'no_such_report'"),
        (("-r", "cuda_api_sum:base"), "has no option 'base'"),
        (("-f", "xml"), "invalid choice"),
        (("--backend", "opencl"), "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    proc = run_cli("stats", str(FIXTURES_DIR / "syn.sqlite"), *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@requires_shared
def test_lean_columns_give_the_full_model_numbers(tmp_path: Path) -> None:
    # cuda_gpu_kern_sum and cuda_api_sum read three columns of two tables; the CLI reads just
    # those (and keeps them as a partial cache entry) on a cold report. Same output all three
    # ways.
    source = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
    names = "cuda_gpu_kern_sum,cuda_gpu_kern_sum:base,cuda_api_sum"
    # The column path (a report this small would otherwise be computed through SQLite).
    env = {
        **os.environ,
        "STRATA_CACHE_DIR": str(tmp_path / "cache"),
        "STRATA_STATS_PATH": "columns",
    }
    cold = run_cli("stats", str(source), "-r", names, "-f", "csv", env=env)
    warm = run_cli("stats", str(source), "-r", names, "-f", "csv", env=env)
    full = run_cli("stats", str(source), "-r", names + ",nvtx_sum", "-f", "csv", "--no-cache")
    assert cold.returncode == warm.returncode == full.returncode == 0
    (entry,) = (tmp_path / "cache" / "reports").iterdir()
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["partial"] is True
    assert sorted(meta["rows"]) == ["cuda_api", "kernels"]
    assert cold.stdout == warm.stdout
    bodies = [(s.spec, s.body) for s in parse_sections(full.stdout)[:3]]
    assert [(s.spec, s.body) for s in parse_sections(cold.stdout)] == bodies


def test_timeunit_names_follow_nsys_prefix_rule() -> None:
    from strata.analysis.stats.text import parse_timeunit

    assert [parse_timeunit(u) for u in ("ns", "nsec", "u", "us", "ms", "msec", "s", "sec")] == [
        "nsec", "nsec", "usec", "usec", "msec", "msec", "seconds", "seconds"
    ]  # fmt: skip
    proc = run_cli("stats", "x.sqlite", "--timeunit", "hours")
    assert proc.returncode == 2
    assert "unknown time unit 'hours'" in proc.stderr
