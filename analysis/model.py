"""The columnar report model: immutable event tables of NumPy columns and a string pool.

Every event table is sorted by ``(track_id, start_ns)`` so that a time window on one track is
two binary searches. ``track_id`` indexes the table's ``track_keys`` frame, which says what the
track is (a thread and nesting level, a GPU stream, a CPU core...).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd
# pandas is imported where a frame is built, not here: a cold `stats` reads its columns
# first and imports pandas on another thread meanwhile (analysis.stats.compute); importing
# it here put its ~0.25 s (2-core machine) before the first page was read.

__all__ = [
    "CHAIN_COLUMNS",
    "CONTEXT_COLUMNS",
    "CUDA_DEVICE_COLUMNS",
    "EVENT_TABLES",
    "DurationTable",
    "EventTable",
    "Report",
    "ReportInfo",
    "StringIds",
    "freeze",
]

#: The built-in event tables of a Report, in the order the loader builds them (their specs:
#: analysis._tablespecs.SPECS). A kind registered outside analysis.kinds.builtin may add one
#: (:func:`analysis.kinds.event_tables` lists them all).
EVENT_TABLES = (
    "kernels",
    "memcpy",
    "memset",
    "sync",
    "cuda_api",
    "nvtx",
    "osrt",
    "sched",
    "samples",
    "gpu_metrics",
    "memory_usage",
)


#: Columns of :attr:`Report.contexts` and :attr:`Report.cuda_devices` (all int64).
CONTEXT_COLUMNS = (
    "pid",
    "device_id",
    "context_id",
    "null_stream_id",
    "parent_context_id",
    "is_green_context",
)
CUDA_DEVICE_COLUMNS = ("pid", "device_id", "gpu_id")
#: Columns of :attr:`Report.sample_chains` and :attr:`Report.cuda_chains`, with dtypes.
CHAIN_COLUMNS = {"chain_id": "int64", "depth": "int64", "symbol": "int32", "module": "int32"}


def _new_frame(columns: Mapping[str, object] | None = None) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns)


def _empty_frame(columns: tuple[str, ...]) -> pd.DataFrame:
    return _new_frame({c: np.empty(0, dtype=np.int64) for c in columns})


def _empty_chains() -> pd.DataFrame:
    return _new_frame({c: np.empty(0, dtype=t) for c, t in CHAIN_COLUMNS.items()})


def freeze(array: np.ndarray) -> np.ndarray:
    """Mark ``array`` read-only and return it (every model column is immutable)."""
    array.flags.writeable = False
    return array


class StringIds:
    """The report's string pool: ``values[id]`` is the string of ``StringIds.id``.

    Ids are dense indices into an object array; ids absent from the report hold ``None``.
    Inline NVTX texts are interned after the report's own ids.
    """

    def __init__(self, values: npt.NDArray[np.object_]) -> None:
        self.values = freeze(np.asarray(values, dtype=object))
        self._text_codes: tuple[np.ndarray, np.ndarray, bool] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<StringIds: {len(self):,} strings>"

    def __getitem__(self, string_id: int) -> str | None:
        if 0 <= string_id < len(self.values):
            return self.values[string_id]
        return None

    def lookup(self, ids: npt.ArrayLike, missing: str | None = None) -> npt.NDArray[np.object_]:
        """Return the strings of ``ids`` as an object array; ids < 0 or unknown give ``missing``."""
        ids = np.asarray(ids)
        out = np.full(ids.shape, missing, dtype=object)
        ok = (ids >= 0) & (ids < len(self.values))
        out[ok] = self.values[ids[ok]]
        if missing is not None:
            out[out == None] = missing  # noqa: E711 - elementwise comparison on an object array
        return out

    def has(self, ids: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Return, per id, whether the pool holds a string for it."""
        ids = np.asarray(ids)
        ok = (ids >= 0) & (ids < len(self.values))
        present = np.zeros(ids.shape, dtype=bool)
        present[ok] = self.values[ids[ok]] != None  # noqa: E711
        return present

    def find(self, text: str) -> npt.NDArray[np.int64]:
        """Return every id whose string equals ``text``."""
        return np.flatnonzero(self.values == text)

    def text_codes(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_], bool]:
        """Return ``(code per id, text per code, whether codes are the ids)``, computed once.

        Ids with one text share a code (nsys groups by text); the id -1 (NULL) maps to the
        last code, whose text is None. A function of the immutable pool, so it is kept with
        it (a memo, not a change: the pool reads the same before and after).
        """
        with self._lock:
            if self._text_codes is None:
                codes, uniques = _factorize(self.values)
                labels = np.append(np.asarray(uniques, dtype=object), None)
                lookup = freeze(np.append(codes, len(uniques)).astype(np.int32))
                is_identity = len(uniques) == len(self.values) and bool(
                    np.array_equal(codes, np.arange(len(self.values)))
                )
                self._text_codes = (lookup, freeze(labels), is_identity)
            return self._text_codes


#: Pools up to this size are factorized with a dict (no pandas: a cold ``stats`` need not
#: import it; ~10 ms for 100 k strings), bigger ones by pandas (faster there).
_DICT_FACTORIZE_MAX = 200_000


def _factorize(values: np.ndarray) -> tuple[np.ndarray, list]:
    """(code per value, the value of each code) by first appearance, None one value among
    the others: ``pd.factorize(..., use_na_sentinel=False)`` of a pool of str and None."""
    if len(values) > _DICT_FACTORIZE_MAX:
        import pandas as pd

        codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
        return codes, [None if pd.isna(u) else u for u in uniques]
    index: dict[str | None, int] = {}
    codes = [index.setdefault(v, len(index)) for v in values.tolist()]
    return np.asarray(codes, dtype=np.int64), list(index)


class _Columns:
    """Column access shared by :class:`EventTable` and :class:`DurationTable`."""

    columns: Mapping[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def to_frame(self, columns: list[str] | None = None) -> pd.DataFrame:
        """Return the table (or some columns) as a DataFrame sharing the arrays where possible."""
        import pandas as pd

        names = list(self.columns) if columns is None else columns
        return pd.DataFrame({name: self.columns[name] for name in names}, copy=False)


@dataclass(frozen=True)
class EventTable(_Columns):
    """One event kind as read-only NumPy columns of equal length, sorted by (track, start).

    Attributes
    ----------
    kind
        Table name, one of :data:`EVENT_TABLES`.
    columns
        Column name -> read-only array. Always present: ``start_ns``, ``end_ns`` (int64),
        ``track_id`` (int32), ``row_id`` (int64, the source rowid).
    track_keys
        One row per ``track_id`` (row i describes track i) with the key columns of the track.
    source
        Name of the SQLite table the rows came from ('' when the report lacks it).
    """

    kind: str
    columns: Mapping[str, np.ndarray]
    track_keys: pd.DataFrame
    source: str = ""
    track_offsets: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        track_ids = self.columns["track_id"]
        wanted = np.arange(len(self.track_keys) + 1)
        if len(track_ids) and track_ids.strides == (0,):
            # One track throughout (a zero-stride cached column): searchsorted would first
            # copy it to a contiguous array.
            bounds = np.where(wanted <= track_ids[0], 0, len(track_ids))
        else:
            bounds = np.searchsorted(track_ids, wanted, side="left")
        object.__setattr__(self, "track_offsets", freeze(bounds.astype(np.int64)))

    def __len__(self) -> int:
        return len(self.columns["start_ns"])

    def __repr__(self) -> str:
        return f"<EventTable {self.kind}: {len(self):,} events, {len(self.track_keys):,} tracks>"

    @property
    def start_ns(self) -> npt.NDArray[np.int64]:
        return self.columns["start_ns"]

    @property
    def end_ns(self) -> npt.NDArray[np.int64]:
        return self.columns["end_ns"]

    @property
    def duration_ns(self) -> npt.NDArray[np.int64]:
        return self.columns["end_ns"] - self.columns["start_ns"]

    def track_slice(self, track_id: int) -> slice:
        """Return the ``[lo, hi)`` row range of one track."""
        return slice(int(self.track_offsets[track_id]), int(self.track_offsets[track_id + 1]))

    def window(self, track_id: int, t0_ns: int, t1_ns: int) -> slice:
        """Return the rows of ``track_id`` whose start lies in ``[t0_ns - longest, t1_ns)``.

        Intervals on a track never overlap, so every interval that intersects the window
        starts at or after the one that contains ``t0_ns``.
        """
        rows = self.track_slice(track_id)
        starts = self.columns["start_ns"][rows]
        ends = self.columns["end_ns"][rows]
        lo = int(np.searchsorted(starts, t0_ns, side="right"))
        if lo > 0 and ends[lo - 1] > t0_ns:
            lo -= 1
        hi = int(np.searchsorted(starts, t1_ns, side="left"))
        return slice(rows.start + lo, rows.start + hi)


@dataclass(frozen=True)
class DurationTable(_Columns):
    """One event kind read for the duration summaries only: durations and name ids.

    What a partial report (:attr:`Report.complete` False, e.g. the lean stats read of
    :mod:`analysis.stats.lean`) holds instead of an :class:`EventTable`. It has no
    timestamps, tracks or row ids, hence no ``start_ns``, ``end_ns``, ``track_id`` or
    :meth:`EventTable.window`: a consumer that needs them finds a DurationTable, not an
    EventTable, and opens the full model. Rows are in the report's rowid order.

    Attributes
    ----------
    kind
        Table name, one of :data:`EVENT_TABLES`.
    columns
        Column name -> read-only array. Always present: ``duration_ns`` (int64, >= 0); the
        name id columns read (``name_id``...), StringIds ids as in an EventTable.
    source
        Name of the SQLite table the rows came from ('' when the report lacks it: empty).
    """

    kind: str
    columns: Mapping[str, np.ndarray]
    source: str = ""

    def __len__(self) -> int:
        return len(self.columns["duration_ns"])

    def __repr__(self) -> str:
        return f"<DurationTable {self.kind}: {len(self):,} events, {sorted(self.columns)}>"

    @property
    def duration_ns(self) -> npt.NDArray[np.int64]:
        return self.columns["duration_ns"]


@dataclass(frozen=True)
class ReportInfo:
    """What a report is: where it came from, who wrote it and when it ran.

    ``rank`` and ``world_size``: the torch.distributed rank and world size a PyTorch
    profiler (Kineto) trace names in its ``distributedInfo``; None when unknown (every nsys
    report).
    """

    path: Path
    name: str
    nsys_version: str
    schema_version: str
    session_start_utc_ns: int
    duration_ns: int
    os: str = ""
    rank: int | None = None
    world_size: int | None = None


@dataclass(frozen=True)
class Report:
    """A loaded Nsight Systems report. Immutable; derived data are new objects.

    Attributes
    ----------
    info
        Version, path and time base.
    strings
        The string pool; every ``*_id`` name column indexes it.
    tables
        Event tables by kind (see :data:`EVENT_TABLES`); absent kinds are empty tables (a
        report read before a kind with a table of its own was registered lacks it). In a
        partial report (:attr:`complete` False) only the kinds read are here, each a
        :class:`DurationTable` (empty when the file lacks its table), and the frames below
        are empty: ``report.memcpy`` of a kind not read raises AttributeError.
    processes
        ``pid`` (int64), ``global_pid`` (int64), ``name`` (str).
    threads
        ``global_tid`` (int64), ``pid``, ``tid`` (int64), ``name`` (str), ``priority``.
    gpus
        ``device_id`` (int64), ``name``, ``bus_location``, ``uuid`` (str, '' when
        unknown), ``sm_count``, ``total_memory_bytes`` (int64, -1 when unknown).
    streams
        ``pid``, ``context_id``, ``stream_id``, ``priority``, ``kind`` (str).
    nvtx_domains
        ``pid``, ``domain_id``, ``name``, ``start_ns`` (the eventType-75 rows).
    nvtx_categories
        ``pid``, ``domain_id``, ``category``, ``name`` (the eventType-33 rows).
    enums
        Enum label tables: ``memcpy_kind``, ``mem_kind``, ``sync_type``... id -> label.
    gpu_metric_names
        ``type_id``, ``metric_id``, ``name`` for the ``gpu_metrics`` table.
    source_columns
        The SQLite column names of each source table that the report has.
    nvtx_max_ns
        The largest start/end of any NVTX row: where unclosed ranges end (spec §3.4).
    contexts
        CUDA contexts: ``pid``, ``device_id``, ``context_id``, ``null_stream_id``,
        ``parent_context_id`` (-1 when none), ``is_green_context`` (0/1), all int64.
    cuda_devices
        ``pid``, ``device_id`` (CUDA ordinal, as in event tables), ``gpu_id`` (physical
        GPU, ``gpus.device_id`` space) from ``TARGET_INFO_CUDA_DEVICE``; empty before 2024.
    collective_args
        torch.distributed collective metadata of a Kineto trace's events, one row per event
        that has some (:data:`analysis.comm_args.COLLECTIVE_ARG_COLUMNS`); an empty frame
        for nsys reports, whose 2023.4 export drops NCCL's NVTX payloads.
    sample_chains, cuda_chains
        Call chains of CPU samples (``SAMPLING_CALLCHAINS``: ``chain_id`` is the sample's
        ``samples.sample_id``) and of CUDA API calls (``CUDA_CALLCHAINS``: the call's
        ``cuda_api.callchain_id``): one row per frame, :data:`CHAIN_COLUMNS`, sorted by
        ``(chain_id, depth)``; depth 0 is the innermost frame; ``symbol`` and ``module``
        index :attr:`strings` (-1: none). Empty while :attr:`pending` or in a partial report.
    unfiltered
        A filtered report (:func:`analysis.filters.filter_report`): the report it was
        filtered from, for what nsys reads unfiltered (the kernels' ``:nvtx-name``
        prefix); None otherwise.
    pending
        Kinds still being read by a progressive open (:func:`analysis.open_report`'s
        ``on_partial``): they are empty event tables for now, except the GPU tables, which
        may hold their first rows (the start of the trace) before they are read whole; a
        row's events are then a subset of its events in the loaded report. ``processes``
        and ``threads`` cover the tables read so far. Empty in a loaded report.
    """

    info: ReportInfo
    strings: StringIds
    tables: Mapping[str, EventTable | DurationTable]
    processes: pd.DataFrame
    threads: pd.DataFrame
    gpus: pd.DataFrame
    streams: pd.DataFrame
    nvtx_domains: pd.DataFrame
    nvtx_categories: pd.DataFrame
    enums: Mapping[str, Mapping[int, str]]
    gpu_metric_names: pd.DataFrame
    source_columns: Mapping[str, tuple[str, ...]]
    nvtx_max_ns: int = 0
    contexts: pd.DataFrame = field(default_factory=lambda: _empty_frame(CONTEXT_COLUMNS))
    cuda_devices: pd.DataFrame = field(default_factory=lambda: _empty_frame(CUDA_DEVICE_COLUMNS))
    sample_chains: pd.DataFrame = field(default_factory=_empty_chains)
    cuda_chains: pd.DataFrame = field(default_factory=_empty_chains)
    pending: frozenset[str] = frozenset()
    collective_args: pd.DataFrame = field(default_factory=_new_frame)
    unfiltered: Report | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # One line: the default dataclass repr printed every column (74,775 characters).
        return (
            f"<Report {self.info.name!r}: {self.event_count:,} events, "
            f"nsys {self.info.nsys_version or '?'}>"
        )

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def path(self) -> Path:
        return self.info.path

    @classmethod
    def from_durations(
        cls,
        info: ReportInfo,
        strings: StringIds,
        tables: Mapping[str, DurationTable],
        source_columns: Mapping[str, tuple[str, ...]],
    ) -> Report:
        """Return a partial report: the duration ``tables`` read, every frame empty."""
        empty = _new_frame()
        return cls(
            info=info,
            strings=strings,
            tables=tables,
            processes=empty,
            threads=empty,
            gpus=empty,
            streams=empty,
            nvtx_domains=empty,
            nvtx_categories=empty,
            enums={},
            gpu_metric_names=empty,
            source_columns=source_columns,
        )

    def has_source(self, table: str) -> bool:
        """Return whether the SQLite report contained ``table`` (even empty)."""
        return table in self.source_columns

    @property
    def complete(self) -> bool:
        """Whether this is the full model: every kind an :class:`EventTable` read whole
        (none :attr:`pending`), frames read."""
        return (
            not self.pending
            and set(self.tables) >= set(EVENT_TABLES)
            and all(isinstance(t, EventTable) for t in self.tables.values())
        )

    def holds(self, wanted: Mapping[str, Iterable[str]]) -> bool:
        """Return whether the report has each ``kind -> column names`` of ``wanted``."""
        return all(
            kind in self.tables and all(c in self.tables[kind] for c in columns)
            for kind, columns in wanted.items()
        )

    def __getattr__(self, kind: str) -> EventTable | DurationTable:
        # report.kernels, report.nvtx, ... as a convenience for the event tables.
        tables = object.__getattribute__(self, "tables")
        if kind in tables:
            return tables[kind]
        if kind in EVENT_TABLES:
            raise AttributeError(f"{kind}: not read (a partial report holds {sorted(tables)})")
        raise AttributeError(kind)

    @property
    def event_count(self) -> int:
        return sum(len(t) for t in self.tables.values())

    def span_ns(self) -> tuple[int, int]:
        """Return (first start, last end) over every event table, or (0, duration).

        A partial report's duration tables have no times: they are left out.
        """
        lo, hi = [], []
        for table in self.tables.values():
            if isinstance(table, EventTable) and len(table):
                lo.append(int(table.start_ns.min()))
                hi.append(int(table.end_ns.max()))
        if not lo:
            return 0, self.info.duration_ns
        return min(lo), max(hi)
