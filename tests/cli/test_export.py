"""``main.py export``: Parquet/Arrow tables equal ReportSet.events; the Chrome trace is whole."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections import Counter, defaultdict
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strata.analysis.export import CHUNK_ROWS, TRACE_KINDS, ns_to_us_text
from strata.analysis.reportset import EVENT_KINDS, open_reports
from strata.app.cli import main
from tests.conftest import REAL_DIR, fingerprint, requires_shared
from tests.helpers import mutate_sqlite

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
MULTI = REAL_DIR / "quasiben__nvtx-examples__multiprocessing.sqlite"
REPORTS = [CONCURRENT, MULTI]


def _read_table(path):
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pandas()
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all().to_pandas()


def test_us_text_is_exact_to_the_ns():
    assert ns_to_us_text([0, 1, 999, 1000, 1234567, -1, -1001]) == [
        "0.000", "0.001", "0.999", "1.000", "1234.567", "-0.001", "-1.001",
    ]  # fmt: skip


@requires_shared
@pytest.mark.parametrize("kind_type", ["parquet", "arrow"])
def test_tables_read_back_equal_the_events(tmp_path, kind_type):
    out = tmp_path / "out"
    assert main(["export", *map(str, REPORTS), "--type", kind_type, "-o", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    report_set = open_reports(REPORTS)
    assert [r["label"] for r in manifest["reports"]] == report_set.labels
    assert set(manifest["kinds"]) == set(EVENT_KINDS)
    for kind in EVENT_KINDS:
        expected = report_set.events(kind)
        entry = manifest["kinds"][kind]
        got = _read_table(out / entry["file"])
        assert entry["rows"] == len(expected)
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)


@requires_shared
def test_tables_replace_an_earlier_export_but_not_another_folder(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["export", str(CONCURRENT), "--type", "arrow", "--kinds", "kernels", "-o", str(out)]
    assert main(args) == 0
    assert main(args) == 0  # an earlier export is replaced
    assert sorted(p.name for p in out.iterdir()) == ["kernels.arrow", "manifest.json"]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    capsys.readouterr()
    assert main([*args[:-1], str(other)]) == 2
    assert "is not an earlier export" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "keep me"


def _trace(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh, parse_float=Decimal)


def _us_to_ns(value) -> int:
    ns = Decimal(value) * 1000
    assert ns == ns.to_integral_value(), value
    return int(ns)


@requires_shared
@pytest.mark.parametrize("name", ["trace.json", "trace.json.gz"])
def test_chrome_trace_holds_every_event_exactly(tmp_path, name):
    out = tmp_path / name
    assert main(["export", *map(str, REPORTS), "--type", "chrome-trace", "-o", str(out)]) == 0
    events = _trace(out)["traceEvents"]
    report_set = open_reports(REPORTS)
    complete = defaultdict(list)
    for event in events:
        if event["ph"] in "Xb":  # b: NVTX start/end ranges (async)
            complete[event["cat"]].append(event)
    for kind in TRACE_KINDS:
        expected = report_set.events(kind)
        got = complete[kind]
        assert len(got) == len(expected), kind
        assert [e["name"] for e in got] == expected["name"].tolist()
        assert [_us_to_ns(e["ts"]) for e in got] == expected["start"].tolist()
        assert [_us_to_ns(e.get("dur", 0)) for e in got] == [
            0 if s != "PushPop" else d
            for s, d in zip(
                expected.get("style", ["PushPop"] * len(expected)),
                expected["duration"],
                strict=True,
            )
        ]
    # The reports' pid ranges do not meet.
    pids = {e["pid"] // (1 << 25) for e in events}
    assert pids == {0, 1}


@requires_shared
def test_chrome_trace_names_rows_and_pairs_flows(tmp_path):
    out = tmp_path / "trace.json"
    assert main(["export", str(CONCURRENT), "--type", "chrome-trace", "-o", str(out)]) == 0
    events = _trace(out)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    slices = defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            assert (event["pid"], event["tid"]) in names  # every row used is named
            slices[(event["pid"], event["tid"])].append(event)
    assert any(n.startswith("Stream ") for n in names.values())
    assert any(n.endswith("· CUDA API") for n in names.values())
    assert any("GPU 0" in n for n in processes.values())
    flows = [e for e in events if e["ph"] in "sf"]
    ends = Counter((e["id"], e["ph"]) for e in flows)
    ids = {e["id"] for e in flows}
    assert all(ends[(i, "s")] == 1 and ends[(i, "f")] == 1 for i in ids)
    gpu_events = sum(len(report_set_events) for report_set_events in (
        open_reports([CONCURRENT]).events(k) for k in ("kernels", "memcpy", "memset")))  # fmt: skip
    assert len(ids) == gpu_events  # every GPU op of this report has its launching call
    for flow in flows:
        ts = _us_to_ns(flow["ts"])
        enclosing = [
            s for s in slices[(flow["pid"], flow["tid"])]
            if _us_to_ns(s["ts"]) <= ts <= _us_to_ns(s["ts"]) + _us_to_ns(s["dur"])
        ]  # fmt: skip
        want = "cuda_api" if flow["ph"] == "s" else ("kernels", "memcpy", "memset")
        assert any(s["cat"] in want for s in enclosing), flow


@requires_shared
def test_chrome_trace_is_written_in_chunks(tmp_path, monkeypatch):
    """More rows than a chunk: the commas between chunks still make valid JSON."""
    import strata.analysis.export as export

    monkeypatch.setattr(export, "CHUNK_ROWS", 7)
    out = tmp_path / "trace.json"
    assert main(["export", str(CONCURRENT), "--type", "chrome-trace", "-o", str(out)]) == 0
    small = _trace(out)["traceEvents"]
    monkeypatch.setattr(export, "CHUNK_ROWS", CHUNK_ROWS)
    assert main(["export", str(CONCURRENT), "--type", "chrome-trace", "-o", str(out)]) == 0
    # The same events; flows sit after their chunk, so the order differs.
    assert sorted(map(repr, _trace(out)["traceEvents"])) == sorted(map(repr, small))


@requires_shared
@pytest.mark.parametrize("kind_type", ["chrome-trace", "parquet"])
def test_output_onto_the_input_is_refused(tmp_path, capsys, kind_type):
    before = fingerprint(CONCURRENT)
    for target in (CONCURRENT, REAL_DIR):
        assert main(["export", str(CONCURRENT), "--type", kind_type, "-o", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert err.startswith("strata: -o "), err
    assert fingerprint(CONCURRENT) == before


@requires_shared
@pytest.mark.parametrize("kind_type", ["chrome-trace", "arrow"])
def test_unwritable_output_is_one_line(tmp_path, capsys, kind_type):
    blocker = tmp_path / "file"
    blocker.write_text("")
    targets = [blocker / "out"]
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        targets.append(locked / "out")
    for target in targets:
        assert main(["export", str(CONCURRENT), "--type", kind_type, "-o", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert err.startswith("strata: "), err
        assert not target.exists()


def test_bad_kinds_and_stdout_folder_are_refused(capsys):
    assert main(["export", "x.sqlite", "--type", "chrome-trace", "--kinds", "nvtx_gpu",
                 "-o", "-"]) == 2  # fmt: skip
    assert "unknown kind 'nvtx_gpu' for chrome-trace" in capsys.readouterr().err
    assert main(["export", "x.sqlite", "--type", "parquet", "-o", "-"]) == 2
    assert "writes a folder" in capsys.readouterr().err


@requires_shared
def test_start_end_ranges_are_async_pairs(tmp_path):
    """Start/end NVTX ranges overlap without nesting: b/e pairs, ending where they end."""
    report = tmp_path / "startend.sqlite"
    shutil.copyfile(CONCURRENT, report)
    mutate_sqlite(
        report,
        "UPDATE NVTX_EVENTS SET eventType = 60 WHERE rowid IN "
        "(SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start LIMIT 5)",
    )
    out = tmp_path / "trace.json"
    assert main(["export", str(report), "--type", "chrome-trace", "-o", str(out)]) == 0
    events = _trace(out)["traceEvents"]
    ranges = open_reports([report]).events("nvtx")
    started = ranges[ranges["style"] == "StartEnd"]
    assert len(started) == 5
    begins = {e["id"]: e for e in events if e["ph"] == "b"}
    ends = {e["id"]: e for e in events if e["ph"] == "e"}
    assert begins.keys() == ends.keys()
    assert len(begins) == 5
    spans = sorted((_us_to_ns(begins[i]["ts"]), _us_to_ns(ends[i]["ts"])) for i in begins)
    assert spans == sorted(zip(started["start"], started["end"], strict=True))
    assert sum(e["ph"] == "X" and e["cat"] == "nvtx" for e in events) == len(ranges) - 5
