"""Export loaded events as a Perfetto protobuf trace (``strata export --type perfetto``).

Perfetto's own format (https://perfetto.dev/docs/reference/synthetic-track-event), which its
UI and trace processor read natively; its JSON import is best-effort and large JSON traces
overwhelm the UI. The file is a ``Trace``: a sequence of ``TracePacket`` messages, written
with :mod:`analysis.protowire` (no protobuf dependency).

Layout, as the Chrome trace of :mod:`analysis.export` lays the rows out: per report one
packet sequence (``trusted_packet_sequence_id`` = report index + 1) that starts by clearing
its incremental state and interning every event name and category once
(``InternedData``); then a ``TrackDescriptor`` per row: a process per OS process and per
GPU, a thread per CPU thread and kind (CUDA API, NVTX, OS runtime) and per GPU stream; then
one ``TrackEvent`` ``SLICE_BEGIN`` and ``SLICE_END`` per event, by time. Slices of a row that
overlap without nesting (NVTX start/end ranges) go on extra tracks under that row, so that
every track's slices nest as Perfetto requires. Each CUDA API call that launched GPU work
carries a flow to it (``flow_ids`` / ``terminating_flow_ids``). Process and thread ids are
numbered through the trace (the real ones are in the names), times are ns on the set's
shared axis (:meth:`ReportSet.offsets_ns`), shifted to start at 0 or later.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

import numpy as np
import pandas as pd

from strata.analysis.export import TRACE_KINDS, trace_frames, trace_rows, wanted_kinds
from strata.analysis.model import Report
from strata.analysis.protowire import Rows, field_bytes, field_varint
from strata.analysis.reportset import ReportSet

__all__ = ["PACKETS_PER_CHUNK", "write_perfetto_trace"]

#: Packets encoded at once: bounds the byte matrices held (about 100 bytes a packet).
PACKETS_PER_CHUNK = 65_536
# Field numbers: perfetto/protos/perfetto/trace/trace_packet.proto and track_event/*.proto.
_TRACE_PACKET = 1
_TIMESTAMP, _SEQUENCE_ID, _TRACK_EVENT, _INTERNED, _FLAGS, _DESCRIPTOR = 8, 10, 11, 12, 13, 60
_TYPE, _TRACK_UUID, _NAME_IID, _CATEGORY_IIDS, _FLOW_IDS, _TERMINATING = 9, 11, 10, 3, 47, 48
_SLICE_BEGIN, _SLICE_END = 1, 2
_CLEARED, _NEEDS_STATE = 1, 2
#: A thread's track uuid is its row number; lanes under it add multiples of this.
_LANE_STRIDE = 1 << 40


def write_perfetto_trace(
    report_set: ReportSet, out: BinaryIO, kinds: Iterable[str] | None = None
) -> dict[str, int]:
    """Write the events of ``report_set`` to ``out`` as one Perfetto protobuf trace.

    Parameters
    ----------
    report_set
        The loaded reports; their times are shifted by :meth:`ReportSet.offsets_ns`.
    out
        A binary stream.
    kinds
        Event kinds among :data:`analysis.export.TRACE_KINDS` (default: all), any spelling
        :func:`analysis.kinds.resolve_kind` reads.

    Returns
    -------
    dict
        Slices written per kind (over every report), ``flows`` and ``tracks``.

    Raises
    ------
    AnalysisError
        An unknown kind.
    """
    wanted = wanted_kinds(kinds, TRACE_KINDS, "perfetto")
    snap = report_set.snapshot()
    offsets = [int(o) for o in snap.offsets_ns()]
    firsts = [_first_start(r, wanted) + o for r, o in zip(snap.reports, offsets, strict=True)]
    shift = max(0, -min(firsts, default=0))  # Perfetto's timestamps are unsigned
    counts = dict.fromkeys(wanted, 0)
    counts.update(flows=0, tracks=0)
    ids = _Ids()
    for index, report in enumerate(snap.reports):
        events = _report_events(report, list(wanted), counts)
        sequence = _Sequence(index + 1, snap.labels[index], ids, counts)
        out.write(sequence.header(events))
        events["ts_begin"] = events["start"] + offsets[index] + shift
        events["ts_end"] = events["end"] + offsets[index] + shift
        for chunk in sequence.packets(events):
            out.write(chunk)
    return counts


def _first_start(report: Report, kinds: Iterable[str]) -> int:
    """The earliest start of the events of ``kinds`` (0 when there are none)."""
    starts = [int(report.tables[k].start_ns.min()) for k in kinds if len(report.tables[k])]
    return min(starts, default=0)


class _Ids:
    """Process, thread and flow ids numbered through the trace (each from 1)."""

    def __init__(self) -> None:
        self.pid = 0
        self.tid = 0
        self.flow = 0
        self.track = 0


def _report_events(report: Report, kinds: list[str], counts: dict[str, int]) -> pd.DataFrame:
    """Every event of ``kinds`` in ``report``: its row, name, kind code, bounds and flow."""
    parts = []
    api_part = None
    launched: list[np.ndarray] = []
    for code, (kind, frame, _api, launch) in enumerate(trace_frames(report, kinds)):
        pids, tids, processes, threads = trace_rows(report, kind, frame)
        part = pd.DataFrame({
            "pid": pids, "tid": tids, "name": frame["name"].to_numpy(object),
            "kind": np.full(len(frame), code, np.int64),
            "start": frame["start"].to_numpy(np.int64), "end": frame["end"].to_numpy(np.int64),
            "flow_out": np.full(len(frame), -1, np.int64),
            "flow_in": np.full(len(frame), -1, np.int64),
        })  # fmt: skip
        part.attrs.update(processes=processes, threads=threads, kind=kind)
        if launch is not None:
            part["flow_in"] = launch  # the api row, for now
            launched.append(launch)
        if kind == "cuda_api":
            api_part = part
        parts.append(part)
        counts[kind] += len(frame)
    if api_part is not None and launched:
        rows = np.unique(np.concatenate(launched))
        rows = rows[rows >= 0]
        flow_out = api_part["flow_out"].to_numpy().copy()
        flow_out[rows] = rows  # the api row: the flow's id once numbered
        api_part["flow_out"] = flow_out
    elif launched:  # no CUDA API slices to start from: no flows
        for part in parts:
            part["flow_in"] = -1
    processes = {p: n for part in parts for p, n in part.attrs["processes"].items()}
    threads = {t: n for part in parts for t, n in part.attrs["threads"].items()}
    events = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    events.attrs.update(processes=processes, threads=threads, kinds=kinds)
    return events


def _lanes(row: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per event (sorted by row, start, end), a lane of its row where no slice overlaps another.

    Each pass keeps the events that start after every earlier event of their row still in
    play has ended, and moves the others to the next lane; passes are as many as the deepest
    overlap (nested NVTX ranges: their depth).
    """
    lane = np.zeros(len(row), dtype=np.int64)
    pending = np.arange(len(row))
    depth = 0
    while len(pending):
        rows = pd.Series(row[pending])
        ends = pd.Series(end[pending]).groupby(rows.to_numpy()).cummax()
        before = ends.groupby(rows.to_numpy()).shift(1, fill_value=np.iinfo(np.int64).min)
        clash = start[pending] < before.to_numpy(np.int64)
        lane[pending] = depth
        pending = pending[clash]
        depth += 1
    return lane


class _Sequence:
    """One report's packet sequence: its interned names, its tracks, its slices."""

    def __init__(self, sequence_id: int, label: str, ids: _Ids, counts: dict[str, int]) -> None:
        self.sequence_id = sequence_id
        self.label = label
        self.ids = ids
        self.counts = counts

    def header(self, events: pd.DataFrame) -> bytes:
        """The first packets: interned names and categories, then the track descriptors.

        Adds to ``events`` its columns ``name_iid`` and ``track``.
        """
        codes, names = pd.factorize(events["name"].fillna(""), sort=False)
        events["name_iid"] = codes.astype(np.int64) + 1
        interned = b"".join(
            field_bytes(1, field_varint(1, i + 1) + field_bytes(2, kind))
            for i, kind in enumerate(events.attrs["kinds"])
        ) + b"".join(
            field_bytes(2, field_varint(1, i + 1) + field_bytes(2, str(name)))
            for i, name in enumerate(names.tolist())
        )
        first = (
            field_varint(_SEQUENCE_ID, self.sequence_id)
            + field_varint(_FLAGS, _CLEARED)
            + field_bytes(_INTERNED, interned)
        )
        return field_bytes(_TRACE_PACKET, first) + self._tracks(events)

    def _tracks(self, events: pd.DataFrame) -> bytes:
        """Track descriptors: processes, their threads, and the lanes under a thread.

        Adds to ``events`` its column ``track``: the uuid of the track each slice is on.
        """
        order = np.lexsort((events["end"], events["start"], events["tid"], events["pid"]))
        ordered = events.iloc[order]
        row_codes, rows = pd.factorize(
            pd.MultiIndex.from_arrays([ordered["pid"], ordered["tid"]]), sort=False
        )
        lanes = _lanes(row_codes, ordered["start"].to_numpy(), ordered["end"].to_numpy())
        base = self.ids.track
        track = np.empty(len(events), dtype=np.int64)
        track[order] = base + 1 + row_codes + lanes * _LANE_STRIDE
        events["track"] = track
        processes, threads = events.attrs["processes"], events.attrs["threads"]
        packets = []
        pid_of: dict[int, int] = {}  # the Chrome layout's pid -> this trace's pid
        for n, (pid, name) in enumerate(sorted(processes.items())):
            self.ids.pid += 1
            pid_of[pid] = self.ids.pid
            process = field_varint(1, self.ids.pid) + field_bytes(6, f"{self.label} · {name}")
            packets.append(field_varint(1, base + 1 + len(rows) + n) + field_bytes(3, process))
        row_names = [threads.get((pid, tid), f"thread {tid}") for pid, tid in rows.tolist()]
        for code, (pid, _tid) in enumerate(rows.tolist()):
            self.ids.tid += 1
            thread = (
                field_varint(1, pid_of[pid])
                + field_varint(2, self.ids.tid)
                + field_bytes(5, row_names[code])
            )
            packets.append(field_varint(1, base + 1 + code) + field_bytes(4, thread))
        lane_pairs = np.unique(np.stack([row_codes, lanes], axis=1)[lanes > 0], axis=0)
        for code, lane in lane_pairs.tolist():
            packets.append(
                field_varint(1, base + 1 + code + lane * _LANE_STRIDE)
                + field_bytes(2, f"{row_names[code]} ({lane + 1})")
                + field_varint(5, base + 1 + code)
            )
        self.ids.track = base + 1 + len(rows) + len(processes)
        self.counts["tracks"] += len(packets)
        return b"".join(field_bytes(_TRACE_PACKET, field_bytes(_DESCRIPTOR, p)) for p in packets)

    def packets(self, events: pd.DataFrame) -> Iterable[bytes]:
        """Yield the slices' packets in time order, a chunk at a time."""
        flow_base = self.ids.flow
        flow_out = events["flow_out"].to_numpy()
        flow_in = events["flow_in"].to_numpy()
        api_rows = flow_out >= 0
        self.counts["flows"] += int(api_rows.sum())
        self.ids.flow += len(events)
        # Per slice: BEGIN then END, slices of a track by start; a stable sort by time keeps
        # each track's order (its slices do not overlap), so ends and begins pair up.
        by_track = np.lexsort((events["end"], events["start"], events["track"]))
        n = len(by_track)
        slice_of = np.repeat(by_track, 2)
        is_end = np.tile(np.array([False, True]), n)
        ts = np.where(is_end, events["ts_end"].to_numpy()[slice_of],
                      events["ts_begin"].to_numpy()[slice_of])  # fmt: skip
        order = np.argsort(ts, kind="stable")
        slice_of, is_end, ts = slice_of[order], is_end[order], ts[order]
        kind = events["kind"].to_numpy()
        track = events["track"].to_numpy()
        name_iid = events["name_iid"].to_numpy()
        for lo in range(0, len(ts), PACKETS_PER_CHUNK):
            hi = min(lo + PACKETS_PER_CHUNK, len(ts))
            rows, ends = slice_of[lo:hi], is_end[lo:hi]
            begins = ~ends
            count = hi - lo
            event = Rows(count).varint_field(_TYPE, np.where(ends, _SLICE_END, _SLICE_BEGIN))
            event.varint_field(_TRACK_UUID, track[rows])
            event.varint_field(_NAME_IID, name_iid[rows], begins)
            event.varint_field(_CATEGORY_IIDS, kind[rows] + 1, begins)
            out_ids = flow_out[rows]
            event.fixed64_field(_FLOW_IDS, flow_base + 1 + out_ids, begins & (out_ids >= 0))
            in_ids = flow_in[rows]
            event.fixed64_field(_TERMINATING, flow_base + 1 + in_ids, begins & (in_ids >= 0))
            packet = Rows(count).varint_field(_TIMESTAMP, ts[lo:hi])
            packet.varint_field(_SEQUENCE_ID, np.full(count, self.sequence_id))
            packet.varint_field(_FLAGS, np.full(count, _NEEDS_STATE))
            packet.message_field(_TRACK_EVENT, event)
            yield Rows(count).message_field(_TRACE_PACKET, packet).tobytes()
