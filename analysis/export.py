"""Export loaded events: Parquet or Arrow tables per event kind, nsys's own export folders
(``arrowdir``, ``parquetdir``), or a Chrome-trace JSON (Perfetto's protobuf format:
:mod:`analysis.perfetto`).

Tables (``parquet``, ``arrow``) are :meth:`analysis.reportset.ReportSet.events` of each kind,
written as they are (one file per kind, every report stacked with its ``report`` column) into
a folder with a ``manifest.json``; the folder is built beside its place and swapped in.

``arrowdir`` and ``parquetdir`` copy every table of a report's SQLite export as
``nsys export --type arrowdir|parquetdir`` lays them out: one ``<TABLE>.arrow`` (Arrow IPC
stream, the schema's metadata naming the table) or ``<TABLE>.parquet`` per table, in the
folder itself for one report, else in one ``<name>_arwdir``/``<name>_pqtdir`` folder per
report (nsys's default names); Strata opens either as the report.

The Chrome trace (the Trace Event Format, which Perfetto UI and ``chrome://tracing`` open) is
one merged trace for all reports. Report ``i`` owns the pids ``i * PID_STRIDE`` and up: a
process ``p`` is pid ``base + p``, GPU ``d`` is pid ``base + GPU_PID + d``. Rows map as the
timeline draws them: a GPU's streams are its threads (tid = stream id); a CPU thread ``t``
gets one Chrome thread per kind row (CUDA API, NVTX, OS runtime), tid ``t * 4 + slot``, so
each row nests on its own; NVTX start/end ranges, which overlap freely, are async ``b``/``e``
pairs on their process. Names and labels are the timeline's ("M" metadata events), each
event's ``args`` hold its kind's columns, and flow events (``s``/``f``) join each CUDA API
call to the GPU work it launched (same correlation id and process, spec §1.2). ``ts`` and
``dur`` are µs written with three decimals: exact to the ns. The JSON is written in chunks
of rows, never as one list of every event.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from strata.analysis import __version__
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.event_frames import event_frame
from strata.analysis.kinds import get_kind, kinds_at, resolve_kinds
from strata.analysis.model import Report
from strata.analysis.nvtx import STYLE_PUSHPOP
from strata.analysis.outputs import staged_folder
from strata.analysis.reportset import EVENT_KINDS, ReportSet

__all__ = [
    "EXPORT_TYPES",
    "GPU_PID",
    "NSYS_DIR_TYPES",
    "MANIFEST_NAME",
    "PID_STRIDE",
    "TABLE_SUFFIX",
    "THREAD_SLOTS",
    "TRACE_KINDS",
    "export_nsys_dirs",
    "export_tables",
    "launching_calls",
    "ns_to_us_text",
    "trace_frames",
    "trace_rows",
    "wanted_kinds",
    "write_chrome_trace",
]

#: What ``strata export --type`` writes.
EXPORT_TYPES = ("parquet", "arrow", "arrowdir", "parquetdir", "chrome-trace", "perfetto")
#: nsys's folder types: (table file suffix, folder name suffix nsys gives).
NSYS_DIR_TYPES = {"arrowdir": (".arrow", "_arwdir"), "parquetdir": (".parquet", "_pqtdir")}
#: File name ending per table type (Arrow: the IPC file format, ``pyarrow.ipc.open_file``).
TABLE_SUFFIX = {"parquet": ".parquet", "arrow": ".arrow"}
MANIFEST_NAME = "manifest.json"
#: CPU-side kinds, each its own Chrome thread per OS thread: tid ``t * 4 + slot``; the
#: thread-row kinds a panel summarises, in registry order.
THREAD_SLOTS = {k.name: slot for slot, k in enumerate(k for k in kinds_at("thread") if k.panels)}
_SLOTS = max(4, len(THREAD_SLOTS))
#: GPU kinds: a Chrome process per device, a thread per stream.
_GPU_KINDS = tuple(k.name for k in kinds_at("gpu"))
#: Kinds a Chrome trace holds: recorded events (the NVTX projection is derived, and its
#: ranges overlap without nesting, which "X" events cannot show).
TRACE_KINDS = (*THREAD_SLOTS, *_GPU_KINDS)
#: Pids of one report: processes below GPU_PID (pids are 24-bit), GPUs from it.
GPU_PID = 1 << 24
PID_STRIDE = 1 << 25
#: Rows formatted per chunk: bounds the strings held at once on a 10 M-event report.
CHUNK_ROWS = 65_536
#: Columns the event line says itself (name, ts, dur) rather than in ``args``.
_OWN = ("report", "name", "start", "end", "duration")


# --------------------------------------------------------------------------- tables
def export_tables(
    report_set: ReportSet, folder: str | Path, fmt: str, kinds: Iterable[str] | None = None
) -> Path:
    """Write each kind's :meth:`ReportSet.events` as ``<kind>.parquet|.arrow`` in ``folder``.

    Parameters
    ----------
    report_set
        The loaded reports.
    folder
        The output folder: created, or replacing an empty folder or an earlier export (one
        with a ``manifest.json`` of ``strata export``); anything else is refused.
    fmt
        ``parquet`` or ``arrow``.
    kinds
        Event kinds (default :data:`analysis.reportset.EVENT_KINDS`).

    Returns
    -------
    Path
        The manifest file.

    Raises
    ------
    AnalysisError
        Unknown kind or format; the folder may not be replaced or cannot be written.
    """
    import pyarrow as pa

    if fmt not in TABLE_SUFFIX:
        raise AnalysisError(f"unknown table type {fmt!r}; use parquet or arrow")
    wanted = wanted_kinds(kinds, EVENT_KINDS, fmt)
    snap = report_set.snapshot()
    with staged_folder(folder, _may_replace(folder)) as tmp:
        files = {}
        for kind in wanted:
            frame = snap.events(kind)
            file = f"{kind}{TABLE_SUFFIX[fmt]}"
            _write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp / file, fmt)
            files[kind] = {"file": file, "rows": len(frame)}
        _write_manifest(tmp, snap, fmt, {"kinds": files})
    return Path(folder) / MANIFEST_NAME


def export_nsys_dirs(report_set: ReportSet, folder: str | Path, fmt: str) -> Path:
    """Write every table of each report's SQLite export as ``nsys export --type fmt`` does.

    Parameters
    ----------
    report_set
        The loaded reports (Nsight Systems reports: their SQLite export is read again).
    folder
        The output folder: created, or replacing an empty folder or an earlier export. One
        report's tables go in it; several reports get a ``<name>_arwdir``/``_pqtdir`` folder
        each inside it.
    fmt
        ``arrowdir`` or ``parquetdir``.

    Returns
    -------
    Path
        The manifest file (``manifest.json`` in ``folder``).

    Raises
    ------
    AnalysisError
        Unknown format, a report that is no Nsight Systems report (a PyTorch trace), or the
        folder may not be replaced or cannot be written.
    """
    from strata.analysis._sqlite import ReportDatabase
    from strata.analysis.open import sqlite_source

    if fmt not in NSYS_DIR_TYPES:
        raise AnalysisError(f"unknown folder type {fmt!r}; use arrowdir or parquetdir")
    snap = report_set.snapshot()
    sources = []
    for report in snap.reports:
        source = sqlite_source(report.path)
        if source is None:
            raise AnalysisError(
                f"{escape_text(os.fspath(report.path))}: --type {fmt} copies the tables of an "
                "Nsight Systems report; this one has none (a PyTorch profiler trace?)"
            )
        sources.append(source)
    suffix, folder_suffix = NSYS_DIR_TYPES[fmt]
    with staged_folder(folder, _may_replace(folder)) as tmp:
        written = {}
        for label, source in zip(snap.labels, sources, strict=True):
            target = tmp
            if len(sources) > 1:
                target = tmp / f"{Path(label).stem}{folder_suffix}"
                target.mkdir()
            with ReportDatabase(source) as db:
                tables = sorted(db.tables)
                for table in tables:
                    _write_nsys_table(db.read_table(table), target / f"{table}{suffix}")
            written[label] = {"folder": os.fspath(target.relative_to(tmp)),
                              "tables": len(tables)}  # fmt: skip
        _write_manifest(tmp, snap, fmt, {"folders": written})
    return Path(folder) / MANIFEST_NAME


def _write_nsys_table(table, path: Path) -> None:
    """One table as nsys writes it: an Arrow IPC stream or a Parquet file, named in its schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = table.schema.with_metadata({"table_name": path.stem})
    table = table.replace_schema_metadata(schema.metadata)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
        return
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(table)


def _write_table(table, path: Path, fmt: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if fmt == "parquet":
        pq.write_table(table, path)
        return
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _may_replace(folder: str | Path):
    def may_replace(existing: Path) -> None:
        if existing.is_dir() and not any(existing.iterdir()):
            return
        try:
            manifest = json.loads((existing / MANIFEST_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = None
        if not isinstance(manifest, dict) or manifest.get("written_by") != "strata export":
            raise AnalysisError(
                f"{escape_text(os.fspath(folder))} exists and is not an earlier export; "
                "give a new or empty folder"
            )

    return may_replace


def _write_manifest(folder: Path, snap: ReportSet, fmt: str, extra: dict) -> None:
    """Write the export's ``manifest.json`` into ``folder``: what wrote it, the reports, and
    ``extra`` (what the export type holds)."""
    reports = [
        {"label": label, "path": os.fspath(report.path)}
        for report, label in zip(snap.reports, snap.labels, strict=True)
    ]
    body = {"written_by": "strata export", "strata_version": __version__, "type": fmt,
            "time_unit": "ns", "time_base": "each report's own session time",
            "reports": reports, **extra}  # fmt: skip
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    (folder / MANIFEST_NAME).write_text(text, encoding="utf-8")


def wanted_kinds(kinds: Iterable[str] | None, allowed: tuple[str, ...], fmt: str) -> list[str]:
    """Return the kinds of ``allowed`` asked for, as :func:`analysis.kinds.resolve_kinds`
    reads them (None: all of ``allowed``); ``fmt`` names the output in its errors."""
    if kinds is None:
        return list(allowed)
    return list(resolve_kinds(kinds, allowed, f" for {fmt}"))


# --------------------------------------------------------------------------- chrome trace
def ns_to_us_text(ns: np.ndarray) -> list[str]:
    """Return int ns as µs texts with three decimals (``1234567`` -> ``"1234.567"``): exact."""
    values = np.asarray(ns, dtype=np.int64)
    whole, frac = np.divmod(np.abs(values), 1000)
    signs = np.where(values < 0, "-", "")
    return [
        f"{s}{w}.{f:03d}"
        for s, w, f in zip(signs.tolist(), whole.tolist(), frac.tolist(), strict=True)
    ]


def _json_texts(series: pd.Series) -> list[str]:
    """Each value of ``series`` as a JSON literal (missing values and NaN: ``null``)."""
    values = series.to_numpy()
    if values.dtype.kind in "iu":
        return values.astype(str).tolist()
    if values.dtype.kind == "b":
        return np.where(values, "true", "false").tolist()
    if values.dtype.kind == "f":
        return [repr(v) if math.isfinite(v) else "null" for v in values.tolist()]
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts = [json.dumps(_plain(v)) for v in uniques.tolist()]
    return [texts[c] if c >= 0 else "null" for c in codes.tolist()]


def _plain(value: object) -> object:
    """A value json can write: numbers and strings as they are, anything else as its str."""
    if isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


class _TraceWriter:
    """Writes trace events one chunk at a time, with the commas JSON needs between them."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.first = True
        self.flows = 0

    def write(self, lines: list[str]) -> None:
        if not lines:
            return
        self.out.write(("\n" if self.first else ",\n") + ",\n".join(lines))
        self.first = False


def write_chrome_trace(
    report_set: ReportSet, out: IO[str], kinds: Iterable[str] | None = None
) -> dict[str, int]:
    """Write the events of ``report_set`` to ``out`` as one Chrome-trace JSON object.

    Parameters
    ----------
    report_set
        The loaded reports; their times are shifted by :meth:`ReportSet.offsets_ns`.
    out
        A text stream.
    kinds
        Event kinds (default :data:`TRACE_KINDS`).

    Returns
    -------
    dict
        Events written per kind (over every report), and ``flows``: flow pairs.
    """
    wanted = wanted_kinds(kinds, TRACE_KINDS, "chrome-trace")
    snap = report_set.snapshot()
    writer = _TraceWriter(out)
    other = {"written_by": "strata export", "strata_version": __version__,
             "reports": snap.labels, "pid_stride": PID_STRIDE}  # fmt: skip
    out.write('{"displayTimeUnit":"ns","otherData":' + json.dumps(other) + ',"traceEvents":[')
    counts = dict.fromkeys(wanted, 0)
    offsets = snap.offsets_ns()
    for index, report in enumerate(snap.reports):
        trace = _ReportTrace(report, snap.labels[index], index * PID_STRIDE, offsets[index])
        for kind, n in trace.write(writer, wanted):
            counts[kind] += n
    out.write("\n]}\n")
    counts["flows"] = writer.flows
    return counts


class _ReportTrace:
    """One report's part of the trace: its events, flows, and process and thread names."""

    def __init__(self, report: Report, label: str, base: int, offset_ns: int) -> None:
        self.report = report
        self.label = label
        self.base = base
        self.offset_ns = int(offset_ns)
        self.threads: dict[tuple[int, int], str] = {}  # (chrome pid, chrome tid) -> name
        self.processes: dict[int, str] = {}

    def write(self, writer: _TraceWriter, kinds: list[str]) -> Iterator[tuple[str, int]]:
        for kind, frame, api, launch in trace_frames(self.report, kinds):
            pids, tids = self._rows(kind, frame)
            for lo in range(0, len(frame), CHUNK_ROWS):
                hi = min(lo + CHUNK_ROWS, len(frame))
                writer.write(self._events(kind, frame.iloc[lo:hi], pids[lo:hi], tids[lo:hi]))
                if launch is not None:
                    self._flows(
                        writer, frame.iloc[lo:hi], pids[lo:hi], tids[lo:hi], api, launch[lo:hi]
                    )
            yield kind, len(frame)
        writer.write(self._metadata())

    def _rows(self, kind: str, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Per event, its Chrome pid and tid; names the rows it uses."""
        if kind in _GPU_KINDS:
            devices = frame["device"].to_numpy(np.int64)
            pids = self.base + GPU_PID + devices
            tids = frame["stream"].to_numpy(np.int64)
            for pid, tid in set(zip(pids.tolist(), tids.tolist(), strict=True)):
                self.processes[pid] = self._gpu_name(pid - self.base - GPU_PID)
                self.threads[(pid, tid)] = f"Stream {tid}"
            return pids, tids
        real_pid = frame["pid"].to_numpy(np.int64)
        real_tid = frame["tid"].to_numpy(np.int64)
        pids = self.base + real_pid
        tids = real_tid * _SLOTS + THREAD_SLOTS[kind]
        for pid, tid in set(zip(real_pid.tolist(), real_tid.tolist(), strict=True)):
            self.processes[self.base + pid] = self._process_name(pid)
            thread = self._thread_name(pid, tid)
            self.threads[(self.base + pid, tid * _SLOTS + THREAD_SLOTS[kind])] = (
                f"{thread} [{tid}] · {get_kind(kind).label}"
            )
        return pids, tids

    def _events(self, kind: str, chunk: pd.DataFrame, pids, tids) -> list[str]:
        start = chunk["start"].to_numpy(np.int64) + self.offset_ns
        ts = ns_to_us_text(start)
        dur = ns_to_us_text(chunk["duration"].to_numpy(np.int64))
        names = _json_texts(chunk["name"])
        keys = [c for c in chunk.columns if c not in _OWN]
        # Braces of the keys doubled: str.format fills only the values.
        quoted = [json.dumps(k).replace("{", "{{").replace("}", "}}") for k in keys]
        template = "{{" + ",".join(f"{k}:{{}}" for k in quoted) + "}}"
        columns = [_json_texts(chunk[k]) for k in keys]
        args = [template.format(*row) for row in zip(*columns, strict=True)] if keys else None
        args = args or ["{}"] * len(chunk)
        head = f'{{"ph":"X","cat":"{kind}","name":'
        lines = [
            f'{head}{n},"ts":{t},"dur":{d},"pid":{p},"tid":{i},"args":{a}}}'
            for n, t, d, p, i, a in zip(
                names, ts, dur, pids.tolist(), tids.tolist(), args, strict=True
            )
        ]
        if kind == "nvtx":
            self._async_ranges(chunk, lines)
        return lines

    def _async_ranges(self, chunk: pd.DataFrame, lines: list[str]) -> None:
        """Start/end NVTX ranges as async ``b``/``e`` pairs: they overlap without nesting."""
        for pos in np.flatnonzero(chunk["style"].to_numpy(object) != STYLE_PUSHPOP).tolist():
            line = lines[pos]
            end = ns_to_us_text([int(chunk["end"].iloc[pos]) + self.offset_ns])[0]
            ident = f'"id":"{self.base}:{chunk.index[pos]}"'
            dur = line[line.index(',"dur":') : line.index(',"pid":')]
            lines[pos] = line.replace('"ph":"X"', f'"ph":"b",{ident}', 1).replace(dur, "", 1)
            tail = line[line.index('"pid":') : line.index(',"args":')]
            name = line[line.index('"name":') : line.index(',"ts":')]
            lines.append(f'{{"ph":"e",{ident},"cat":"nvtx",{name},"ts":{end},{tail}}}')

    def _flows(self, writer, chunk, pids, tids, api: pd.DataFrame, launch: np.ndarray) -> None:
        """An ``s`` at each launching call and an ``f`` at the GPU work it launched."""
        hit = np.flatnonzero(launch >= 0)
        if not len(hit):
            return
        calls = api.iloc[launch[hit]]
        # Mid-points: each end lies strictly inside the slice it binds to (bp "e").
        api_mid = calls["start"].to_numpy(np.int64) + calls["duration"].to_numpy(np.int64) // 2
        gpu = chunk.iloc[hit]
        gpu_mid = gpu["start"].to_numpy(np.int64) + gpu["duration"].to_numpy(np.int64) // 2
        api_pid = self.base + calls["pid"].to_numpy(np.int64)
        api_tid = calls["tid"].to_numpy(np.int64) * _SLOTS + THREAD_SLOTS["cuda_api"]
        ids = range(writer.flows + 1, writer.flows + 1 + len(hit))
        writer.flows += len(hit)
        head = '"cat":"launch","name":"launch","id":'
        lines = []
        for fid, ats, apid, atid, gts, gpid, gtid in zip(
            ids, ns_to_us_text(api_mid + self.offset_ns), api_pid.tolist(), api_tid.tolist(),
            ns_to_us_text(gpu_mid + self.offset_ns), pids[hit].tolist(), tids[hit].tolist(),
            strict=True,
        ):  # fmt: skip
            lines.append(f'{{"ph":"s",{head}{fid},"ts":{ats},"pid":{apid},"tid":{atid}}}')
            lines.append(f'{{"ph":"f","bp":"e",{head}{fid},"ts":{gts},"pid":{gpid},"tid":{gtid}}}')
        writer.write(lines)

    def _metadata(self) -> list[str]:
        """``M`` events naming each process and thread used, ordered as the timeline is."""
        lines = []
        for pid, name in sorted(self.processes.items()):
            lines.append(_meta("process_name", pid, 0, {"name": f"{self.label} · {name}"}))
            lines.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        for (pid, tid), name in sorted(self.threads.items()):
            lines.append(_meta("thread_name", pid, tid, {"name": name}))
            lines.append(_meta("thread_sort_index", pid, tid, {"sort_index": tid}))
        return lines

    def _process_name(self, pid: int) -> str:
        names = self.report.processes
        match = names.loc[names["pid"] == pid, "name"]
        name = Path(str(match.iloc[0] or "")).name if len(match) else ""
        return f"{name or 'process'} [{pid}]"

    def _thread_name(self, pid: int, tid: int) -> str:
        threads = self.report.threads
        gtid = (pid << 24) | tid
        match = threads.loc[threads["global_tid"] == gtid, "name"]
        name = str(match.iloc[0] or "") if len(match) else ""
        return name or ("main" if tid == pid else "thread")

    def _gpu_name(self, device: int) -> str:
        gpus = self.report.gpus
        match = gpus.loc[gpus["device_id"] == device, "name"]
        name = str(match.iloc[0] or "").removeprefix("NVIDIA ").strip() if len(match) else ""
        return f"GPU {device} · {name}" if name else f"GPU {device}"


def _meta(what: str, pid: int, tid: int, args: dict) -> str:
    return json.dumps({"ph": "M", "name": what, "pid": pid, "tid": tid, "args": args})


def trace_rows(
    report: Report, kind: str, frame: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, dict[int, str], dict[tuple[int, int], str]]:
    """Return the rows of the events of ``kind`` (``frame``: :func:`event_frame`) as the
    Chrome trace lays them out (report 0's pids): per event its pid and tid, then the names
    of the processes and of the threads used.

    GPU ``d`` is pid :data:`GPU_PID` + ``d`` and its streams its threads; a CPU thread ``t``
    of process ``p`` is pid ``p``, tid ``t * 4 + slot`` (:data:`THREAD_SLOTS`).
    """
    trace = _ReportTrace(report, "", 0, 0)
    pids, tids = trace._rows(kind, frame)
    return pids, tids, trace.processes, trace.threads


def trace_frames(
    report: Report, kinds: Iterable[str]
) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame | None, np.ndarray | None]]:
    """Yield, kind by kind, its :func:`event_frame`, the CUDA API calls' frame (read once,
    where a kind needs it) and per GPU event the row of the call that launched it
    (:func:`launching_calls`; None for a kind that is no GPU work)."""
    kinds = list(kinds)
    api = None
    if "cuda_api" in kinds or any(k in _GPU_KINDS for k in kinds):
        api = event_frame(report, "cuda_api")
    for kind in kinds:
        frame = api if kind == "cuda_api" else event_frame(report, kind)
        launch = launching_calls(api, frame) if kind in _GPU_KINDS and api is not None else None
        yield kind, frame, api, launch


def launching_calls(api: pd.DataFrame, gpu: pd.DataFrame) -> np.ndarray:
    """Per GPU event, the row of ``api`` that launched it (same correlation id and pid), or -1."""
    if not len(api) or not len(gpu):
        return np.full(len(gpu), -1, np.int64)
    keys = pd.MultiIndex.from_arrays([api["pid"].to_numpy(), api["correlation_id"].to_numpy()])
    first = ~keys.duplicated()
    rows = np.flatnonzero(first)
    wanted = pd.MultiIndex.from_arrays([gpu["pid"].to_numpy(), gpu["correlation_id"].to_numpy()])
    found = keys[first].get_indexer(wanted)
    return np.where(found >= 0, rows[np.maximum(found, 0)], -1)
