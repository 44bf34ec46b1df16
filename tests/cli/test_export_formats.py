"""``export``: nsys's spellings (-t, arrowdir, parquetdir) and Perfetto's protobuf trace."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from strata.analysis.discover import find_reports
from strata.analysis.export import TRACE_KINDS
from strata.analysis.open import find_nsys, open_report
from strata.analysis.reportset import open_reports
from strata.app.cli import main
from strata.resources import demo
from tests.cli.conftest import one_line
from tests.conftest import REAL_DIR, requires_shared

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
MULTI = REAL_DIR / "quasiben__nvtx-examples__multiprocessing.sqlite"
NSYS_REP = (
    REAL_DIR / "nsys-rep" / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.nsys-rep"
)
NSYS = find_nsys()


def _sqlite_tables(path: Path) -> dict[str, int]:
    """Every table of an SQLite report and its row count (nsys's own export, read directly)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )]  # fmt: skip
        return {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}


def _read(path: Path) -> pa.Table:
    if path.suffix == ".parquet":
        return pq.read_table(path)
    with pa.memory_map(str(path)) as source:
        return ipc.open_stream(source).read_all()


def _same_events(a, b) -> None:
    """Two reports hold the same events: every column of every event table."""
    assert set(a.tables) == set(b.tables)
    for kind, table in a.tables.items():
        other = b.tables[kind]
        assert len(table) == len(other), kind
        for column in ("start_ns", "end_ns"):
            assert np.array_equal(table[column], other[column]), (kind, column)


@requires_shared
@pytest.mark.parametrize(("export_type", "suffix"), [("arrowdir", ".arrow"),
                                                     ("parquetdir", ".parquet")])  # fmt: skip
def test_nsys_folders_hold_every_table_and_open_as_the_report(tmp_path, export_type, suffix):
    out = tmp_path / "out"
    assert main(["export", str(CONCURRENT), "-t", export_type, "-o", str(out)]) == 0
    tables = _sqlite_tables(CONCURRENT)
    files = {p.stem: p for p in out.iterdir() if p.suffix == suffix}
    assert set(files) == set(tables)
    for name, rows in tables.items():
        table = _read(files[name])  # pyarrow reads each file as it reads nsys's
        assert table.num_rows == rows, name
        assert table.schema.metadata[b"table_name"] == name.encode()
    _same_events(open_report(out, use_cache=False), open_report(CONCURRENT, use_cache=False))


@requires_shared
def test_several_reports_get_a_folder_each_that_opens_as_the_set(tmp_path):
    out = tmp_path / "out"
    assert main(["export", str(CONCURRENT), str(MULTI), "--type", "arrowdir", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(
        f"{p.stem}_arwdir" for p in (CONCURRENT, MULTI)
    )
    assert [p.name for p in find_reports([out])] == [f"{CONCURRENT.stem}_arwdir",
                                                     f"{MULTI.stem}_arwdir"]  # fmt: skip
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["written_by"] == "strata export"
    assert main(["export", str(CONCURRENT), "-t", "arrowdir", "-o", str(out)]) == 0  # replaced


@requires_shared
@pytest.mark.skipif(NSYS is None, reason="needs nsys ($NSYS or PATH) to export the .nsys-rep")
def test_arrowdir_has_the_files_and_columns_nsys_writes(tmp_path):
    copy = tmp_path / NSYS_REP.name
    shutil.copyfile(NSYS_REP, copy)  # nsys writes beside what it reads
    subprocess.run([NSYS, "export", "-q", "true", "-t", "arrowdir", "-o", str(tmp_path / "nsys"),
                    str(copy)], check=True, capture_output=True, timeout=300)  # fmt: skip
    theirs = next(p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("nsys"))
    ours = tmp_path / "ours"
    assert main(["export", str(copy), "-t", "arrowdir", "-o", str(ours)]) == 0
    for path in sorted(theirs.glob("*.arrow")):
        nsys_table, our_table = _read(path), _read(ours / path.name)
        assert our_table.schema.names == nsys_table.schema.names, path.name
        assert our_table.num_rows == nsys_table.num_rows, path.name


def test_kinds_do_not_apply_to_nsys_folders(capsys):
    assert main(["export", "x.sqlite", "-t", "arrowdir", "--kinds", "kernel", "-o", "d"]) == 2
    assert "--kinds does not apply to arrowdir" in one_line(capsys.readouterr().err)


# -- Perfetto ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    (path,) = demo.build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=1, steps=2)
    return path


def test_perfetto_is_smaller_than_the_json_of_the_same_slices(demo_report, tmp_path):
    trace, proto = tmp_path / "t.json", tmp_path / "t.perfetto-trace"
    assert main(["export", str(demo_report), "-t", "chrome-trace", "-o", str(trace)]) == 0
    assert main(["export", str(demo_report), "-t", "perfetto", "-o", str(proto)]) == 0
    assert proto.stat().st_size < trace.stat().st_size
    assert proto.read_bytes()[:1] == b"\x0a"  # Trace.packet, field 1, length-delimited


def _perfetto_slices(path: Path) -> dict[str, list[tuple[str, int, int]]]:
    """Per category, the (name, start, end) of each slice, read with Perfetto's own protos."""
    pb = pytest.importorskip(
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        reason="needs the perfetto package (pip install perfetto) to read the trace back",
    )
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    names, categories, tracks = {}, {}, set()
    open_slices = defaultdict(list)
    slices = defaultdict(list)
    for packet in trace.packet:
        seq = packet.trusted_packet_sequence_id
        if packet.HasField("track_descriptor"):
            tracks.add(packet.track_descriptor.uuid)
        for entry in packet.interned_data.event_names:
            names[seq, entry.iid] = entry.name
        for entry in packet.interned_data.event_categories:
            categories[seq, entry.iid] = entry.name
        if not packet.HasField("track_event"):
            continue
        event = packet.track_event
        assert event.track_uuid in tracks  # described before used
        if event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            category = categories[seq, event.category_iids[0]]
            open_slices[event.track_uuid].append((category, names[seq, event.name_iid],
                                                  packet.timestamp))  # fmt: skip
        else:
            assert event.type == pb.TrackEvent.TYPE_SLICE_END
            category, name, start = open_slices[event.track_uuid].pop()  # nests: never empty
            slices[category].append((name, start, packet.timestamp))
    assert not any(open_slices.values())
    return slices


@requires_shared
def test_perfetto_reads_back_every_slice_with_its_name_and_times(tmp_path):
    out = tmp_path / "t.perfetto-trace"
    reports = [CONCURRENT, MULTI]
    assert main(["export", *map(str, reports), "--type", "perfetto", "-o", str(out)]) == 0
    slices = _perfetto_slices(out)
    report_set = open_reports(reports)
    offsets = report_set.offsets_ns()
    shift = max(0, -min(o + min(int(r.tables[k].start_ns.min()) for k in TRACE_KINDS
                                if len(r.tables[k]))
                        for r, o in zip(report_set.reports, offsets, strict=True)))  # fmt: skip
    base = dict(zip(report_set.labels, [o + shift for o in offsets], strict=True))
    for kind in TRACE_KINDS:
        events = report_set.events(kind)
        moved = events["report"].map(base).astype("int64")  # int64 for a kind with no events too
        expected = Counter(zip(events["name"].fillna(""), events["start"] + moved,
                               events["end"] + moved, strict=True))  # fmt: skip
        assert Counter(slices.get(kind, [])) == expected, kind


def test_perfetto_of_the_demo_has_the_json_export_s_slices(demo_report, tmp_path):
    proto, trace = tmp_path / "t.pftrace", tmp_path / "t.json"
    assert main(["export", str(demo_report), "-t", "perfetto", "-o", str(proto)]) == 0
    assert main(["export", str(demo_report), "-t", "chrome-trace", "-o", str(trace)]) == 0
    slices = _perfetto_slices(proto)
    chrome = Counter()
    for event in json.loads(trace.read_text())["traceEvents"]:
        if event["ph"] in "Xb":
            chrome[event["cat"], event["name"]] += 1
    ours = Counter((kind, name) for kind, rows in slices.items() for name, _s, _e in rows)
    assert ours == chrome
