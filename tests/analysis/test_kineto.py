"""PyTorch profiler (Kineto) traces: read into the nsys model, checked against the JSON itself."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import open_report
from strata.analysis.discover import find_reports
from strata.analysis.errors import CorruptReportError, NotAReportError
from strata.analysis.reportset import ReportSet
from strata.analysis.stats import run_report
from tests.conftest import REAL_DIR, fingerprint, real_reports, requires_shared
from tests.helpers import run_cli

KINETO_DIR = REAL_DIR / "kineto"
TRACES = sorted(KINETO_DIR.glob("*.json.gz")) if KINETO_DIR.is_dir() else []
NS_TRACE = next((p for p in TRACES if "ns_resolution" in p.name), None)
#: Kineto categories and the model table each becomes.
KIND_OF_CAT = {"cpu_op": "nvtx", "user_annotation": "nvtx", "python_function": "nvtx",
               "cuda_runtime": "cuda_api", "cuda_driver": "cuda_api", "kernel": "kernels",
               "gpu_memcpy": "memcpy", "gpu_memset": "memset", "cuda_sync": "sync"}  # fmt: skip


def _json(path: Path) -> dict:
    # Floats as Decimal: the exact text the trace wrote.
    with gzip.open(path, "rt") as fh:
        return json.load(fh, parse_float=Decimal)


def _spans(doc: dict, cats: set[str]) -> list[dict]:
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in cats]


@requires_shared
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name[40:80])
def test_counts_per_kind_equal_the_json(path: Path) -> None:
    doc = _json(path)
    want = Counter(KIND_OF_CAT[e["cat"]] for e in _spans(doc, set(KIND_OF_CAT)))
    report = open_report(path, use_cache=False)
    got = {kind: len(table) for kind, table in report.tables.items() if len(table)}
    assert got == dict(want)
    dist = doc.get("distributedInfo", {})
    assert report.info.rank == dist.get("rank")
    assert report.info.world_size == dist.get("world_size")


@requires_shared
@pytest.mark.skipif(NS_TRACE is None, reason="needs the ns-resolution Kineto trace")
def test_times_are_exact_nanoseconds_and_launches_link_to_kernels() -> None:
    doc = _json(NS_TRACE)
    base = int(doc.get("baseTimeNanoseconds", 0))
    kernels = _spans(doc, {"kernel"})
    # "…689.047" µs: float64 would drop the 47 ns; the model keeps every digit.
    want = sorted(base + int(Decimal(e["ts"]) * 1000) for e in kernels)
    assert any(Decimal(e["ts"]) % 1 != 0 for e in kernels)
    report = open_report(NS_TRACE, use_cache=False)
    got = np.sort(report.kernels.start_ns + report.info.session_start_utc_ns)
    assert got.tolist() == want
    durations = sorted(int(Decimal(e["dur"]) * 1000) for e in kernels)
    assert np.sort(report.kernels.duration_ns).tolist() == durations
    # Every kernel's correlation id is that of a CUDA call (the ac2g link nsys draws).
    calls = set(report.cuda_api["correlation_id"].tolist())
    assert set(report.kernels["correlation_id"].tolist()) <= calls
    assert (report.kernels["correlation_id"] > 0).all()


@requires_shared
@pytest.mark.skipif(NS_TRACE is None, reason="needs the ns-resolution Kineto trace")
def test_kernel_summary_equals_a_per_name_aggregation_of_the_json() -> None:
    doc = _json(NS_TRACE)
    want: dict[str, list[int]] = defaultdict(list)
    for e in _spans(doc, {"kernel"}):
        want[e["name"]].append(int(Decimal(e["dur"]) * 1000))
    frame = run_report(open_report(NS_TRACE, use_cache=False), "cuda_gpu_kern_sum").frame
    got = {
        row.Name: (int(row._2), int(row.Instances), int(row.Min), int(row.Max))
        for row in frame.itertuples()
    }
    assert got == {n: (sum(d), len(d), min(d), max(d)) for n, d in want.items()}


@requires_shared
@pytest.mark.skipif(NS_TRACE is None or not real_reports(), reason="needs real reports")
def test_an_nsys_report_and_a_kineto_trace_open_and_render_together(tmp_path: Path) -> None:
    nsys = min(real_reports(), key=lambda p: p.stat().st_size)
    before = fingerprint(NS_TRACE)
    reports = ReportSet([open_report(nsys, use_cache=False), open_report(NS_TRACE)])
    assert [r.name for r in reports] == [nsys.name, NS_TRACE.name]
    out = tmp_path / "x.png"
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path / "cache"),
           "QT_QPA_PLATFORM": "offscreen"}  # fmt: skip
    done = run_cli("render", str(nsys), str(NS_TRACE), "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000
    assert fingerprint(NS_TRACE) == before


@requires_shared
@pytest.mark.skipif(not TRACES, reason="needs the Kineto traces")
def test_a_folder_of_traces_lists_them(tmp_path: Path) -> None:
    assert find_reports([KINETO_DIR]) == TRACES


def _write(tmp_path: Path, name: str, text: str, gz: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


_EVENT = '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %s, "dur": %s}'


def _trace(*events: str, tail: str = "") -> str:
    return '{"schemaVersion": 1, "traceEvents": [' + ", ".join(events) + "]" + tail + "}"


def test_decimal_timestamps_and_a_late_time_base(tmp_path: Path) -> None:
    # baseTimeNanoseconds after traceEvents (2024 files) and µs with ns decimals.
    text = _trace(
        _EVENT % ("1712195495519689.047", "1.5"),
        _EVENT % ("2.0005", "0"),
        tail=', "baseTimeNanoseconds": 1000, "distributedInfo": {"rank": 3, "world_size": 8}',
    )
    report = open_report(_write(tmp_path, "t.pt.trace.json.gz", text, gz=True), use_cache=False)
    starts = (report.kernels.start_ns + report.info.session_start_utc_ns).tolist()
    assert sorted(starts) == [1000 + 2000, 1000 + 1712195495519689047]  # 2000.5 rounds to even
    assert sorted(report.kernels.duration_ns.tolist()) == [0, 1500]
    assert (report.info.rank, report.info.world_size) == (3, 8)


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        (_trace(_EVENT % (1, 2))[:-3], CorruptReportError, "truncated"),
        ("[" + _EVENT % (1, 2) + "]", NotAReportError, "JSON array"),
        ('{"name": "not a trace", "values": [1, 2]}', NotAReportError, "without a traceEvents"),
        (_trace(_EVENT % ("NaN", 2)), CorruptReportError, "ts that is not a number"),
        (_trace(_EVENT % ('"x"', 2)), CorruptReportError, "ts that is not a number"),
        (_trace(_EVENT % (1, -2)), CorruptReportError, "negative duration"),
        (_trace(_EVENT % (1, "Infinity")), CorruptReportError, "dur that is not a number"),
        (_trace(_EVENT % ("1e400", 1)), CorruptReportError, "ts that is not a number"),
        ('{"traceEvents": [] } x', CorruptReportError, "text after"),
        ("{nonsense", CorruptReportError, "not valid JSON"),
    ],
    ids=[
        "truncated",
        "array",
        "not-kineto",
        "nan-ts",
        "string-ts",
        "negative-dur",
        "infinite-dur",
        "huge-ts",
        "trailing",
        "broken",
    ],  # fmt: skip
)
def test_hostile_traces_are_refused_in_one_line(
    tmp_path: Path, text: str, error: type, words: str
) -> None:
    path = _write(tmp_path, "bad.json", text)
    with pytest.raises(error, match=words):
        open_report(path, use_cache=False)
    done = run_cli("info", str(path), env={**os.environ,
                                           "STRATA_CACHE_DIR": str(tmp_path / "c")})  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("strata: ")
    assert words in lines[0]


def test_truncated_gzip_is_refused(tmp_path: Path) -> None:
    whole = gzip.compress(_trace(*[_EVENT % (i, 1) for i in range(2000)]).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(CorruptReportError, match="gzip|truncated"):
        open_report(path, use_cache=False)


def test_an_empty_trace_and_odd_ids_open(tmp_path: Path) -> None:
    assert open_report(_write(tmp_path, "e.json", _trace()), use_cache=False).event_count == 0
    cpu = '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %s, "tid": %s, "ts": %s, "dur": %s}'
    text = _trace(
        cpu % ("outer", '"Spans"', -247463936, 0, 10),
        cpu % ("inner", '"Spans"', -247463936, 2, 3),
        cpu % ("other", 5, 2**40, 0, 1),
        '{"ph": "M", "name": "thread_name", "pid": 5, "tid": 1099511627776, '
        '"args": {"name": "worker "}}',
    )
    report = open_report(_write(tmp_path, "odd.json", text), use_cache=False)
    assert len(report.nvtx) == 3
    assert sorted(set(report.nvtx.track_keys["level"].tolist())) == [0, 1]
    assert "worker" in report.threads["name"].tolist()
    assert report.threads["global_tid"].is_unique


@requires_shared
@pytest.mark.skipif(not TRACES, reason="needs the Kineto traces")
def test_info_names_the_format_and_the_rank(tmp_path: Path) -> None:
    trace = next(p for p in TRACES if "cpu_only" in p.name)
    done = run_cli("info", str(trace), env={**os.environ, "STRATA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "  format:        PyTorch profiler trace (Kineto 1)" in done.stdout
    assert "  rank:          34 of 300" in done.stdout


def test_a_folder_scan_skips_other_json(tmp_path: Path) -> None:
    # A manifest beside the reports must not turn the folder open into an error.
    (tmp_path / "demo-manifest.json").write_text('{"reports": ["a.sqlite"]}')
    (tmp_path / "broken.json.gz").write_bytes(b"\x1f\x8b not gzip")
    trace = _write(tmp_path, "run.pt.trace.json.gz", _trace(_EVENT % (1, 2)), gz=True)
    assert find_reports([tmp_path]) == [trace]
