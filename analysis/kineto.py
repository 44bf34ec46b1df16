"""Read a PyTorch profiler (Kineto) Chrome-trace JSON into the same Report model as nsys.

CPU ops and user annotations become NVTX-like push/pop ranges on their thread, CUDA
runtime and driver calls the ``cuda_api`` table, GPU kernels, copies, sets and syncs the
GPU tables on (device, stream) rows; ``args.correlation`` links a launch to its GPU work as
nsys's ``correlationId`` does (the ``ac2g`` flows carry the same id, and older Kineto wrote
orphan flow ends, so the flows themselves are not read). Facts: spec ``kineto-trace.md``.

The file is parsed as a stream (one event at a time from a 1 MiB window, stdlib ``json``),
so memory grows with the events kept (about 100 bytes each in typed arrays), not with the
JSON text. Timestamps are microseconds written as decimals: they are converted to integer
nanoseconds from their text (``Decimal``), never through a float, which loses the
nanosecond digits of an epoch-based ``ts`` (spec §2). The JSON reading itself is
:mod:`analysis.tracejson`.
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.comm_args import collective_arg_row, collective_args_frame
from strata.analysis.errors import CancelledError, CorruptReportError
from strata.analysis.loader import _SPECS, _nvtx_meta, _TableBuilder
from strata.analysis.model import Report, ReportInfo, StringIds
from strata.analysis.progress import Progress
from strata.analysis.schema import MEM_KIND_LABELS, MEMCPY_KIND_LABELS, SYNC_TYPE_LABELS
from strata.analysis.tracejson import TraceJson, open_text

__all__ = ["load_kineto"]

_NS_LIMIT = 1 << 62
_PUSHPOP = 59  # NVTX_EVENTS eventType of a push/pop range (schema.NVTX_PUSHPOP_TYPES)

#: Kineto ``cat`` -> model kind.
_KIND_OF_CAT = {
    "cpu_op": "nvtx",
    "user_annotation": "nvtx",
    "python_function": "nvtx",
    "cuda_runtime": "cuda_api",
    "cuda_driver": "cuda_api",
    "kernel": "kernels",
    "gpu_memcpy": "memcpy",
    "gpu_memset": "memset",
    "cuda_sync": "sync",
}
#: The GPU tables a Kineto trace's GPU events become (the loader's four, sharing one stream
#: key table), not a list of kinds.
_GPU_KINDS = ("kernels", "memcpy", "memset", "sync")
_COPY_KINDS = {"HtoD": 1, "DtoH": 2, "DtoD": 8, "HtoH": 9, "PtoP": 10}
_MEM_KINDS = {label: code for code, label in MEM_KIND_LABELS.items()}
_SYNC_KINDS = {
    "event sync": 1,
    "stream wait event": 2,
    "stream sync": 3,
    "context sync": 4,
}


def load_kineto(
    path: Path, progress: Progress | None = None, cancel: threading.Event | None = None
) -> Report:
    """Read a Kineto trace (plain or gzip'd JSON) into a :class:`Report`.

    Raises
    ------
    NotAReportError
        The file is JSON but not a Kineto trace (an array, an object without
        ``traceEvents``).
    CorruptReportError
        Broken or truncated JSON or gzip, a timestamp or duration that is not a finite
        number, a negative duration.
    """
    events = _Events(path)
    size = max(path.stat().st_size, 1)
    with open_text(path) as (text, raw):
        stream = TraceJson(text, path)

        def each(event: object) -> None:
            events.add(event)
            if events.count % 65536 == 0:
                if cancel is not None and cancel.is_set():
                    raise CancelledError("loading cancelled")
                if progress is not None:
                    progress(0.9 * min(raw.tell() / size, 1.0), "reading events")

        meta = stream.top_level(each)
    if progress is not None:
        progress(0.9, "tracks")
    report = _report(events, meta)
    if progress is not None:
        progress(1.0, "loaded")
    return report


def _ns(value: object) -> int | None:
    """Microseconds (an int, or a decimal's text) -> integer nanoseconds; None if not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        ns = value * 1000
    elif isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        if not number.is_finite():
            return None
        ns = int((number * 1000).to_integral_value(ROUND_HALF_EVEN))
    else:
        return None  # NaN/Infinity (floats here), null, lists
    return ns if -_NS_LIMIT < ns < _NS_LIMIT else None


def _int(value: object, default: int = 0) -> int:
    """An integer argument; ROCm writes some as hex strings ("0x0")."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            try:
                return int(Decimal(value))
            except (InvalidOperation, ValueError):
                return default
    return default


def _xyz(value: object) -> tuple[int, int, int]:
    if isinstance(value, list) and len(value) == 3:
        return _int(value[0]), _int(value[1]), _int(value[2])
    return 0, 0, 0


#: Per kind, the fields kept of each event (all int64, in typed arrays: ~8 bytes a value).
_FIELDS = {
    "nvtx": ("start", "end", "thread", "name", "row"),
    "cuda_api": ("start", "end", "thread", "name", "row", "correlation"),
    "kernels": ("start", "end", "name", "row", "correlation", "device", "stream", "context",
                "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                "registers_per_thread", "static_smem_bytes"),
    "memcpy": ("start", "end", "name", "row", "correlation", "device", "stream", "context",
               "bytes", "copy_kind", "src_kind", "dst_kind"),
    "memset": ("start", "end", "name", "row", "correlation", "device", "stream", "context",
               "bytes", "mem_kind"),
    "sync": ("start", "end", "name", "row", "correlation", "device", "stream", "context",
             "sync_type"),
}  # fmt: skip


def _key(value: object) -> int | str:
    """A pid or tid as a dict key: ints stay, anything else by its text."""
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


class _Events:
    """The events kept from a trace, column by column, with the names and threads seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self.names: dict[str, int] = {}
        self.threads: dict[tuple[int | str, int | str], int] = {}
        self.process_names: dict[int | str, str] = {}
        self.thread_names: dict[tuple[int | str, int | str], str] = {}
        self.comms: list[tuple] = []  # torch.distributed metadata (analysis.comm_args)
        self.cols = {kind: {f: array("q") for f in fields} for kind, fields in _FIELDS.items()}

    def _name(self, value: object) -> int:
        text = value if isinstance(value, str) else "" if value is None else str(value)
        return self.names.setdefault(text, len(self.names))

    def add(self, event: object) -> None:
        """Keep one ``traceEvents`` item (spans of the kinds read; process/thread names)."""
        self.count += 1
        if not isinstance(event, dict):
            return
        phase = event.get("ph")
        if phase == "M":
            self._meta(event)
            return
        kind = _KIND_OF_CAT.get(event.get("cat")) if phase == "X" else None
        if kind is None:
            return  # flows, instants, counters, profiler spans: not events of the model
        start = _ns(event.get("ts"))
        if start is None:
            raise self._bad(
                event, f"a ts that is not a number of microseconds ({event.get('ts')!r})"
            )
        duration = _ns(event.get("dur", 0))
        if duration is None:
            raise self._bad(event, f"a dur that is not a number ({event.get('dur')!r})")
        if duration < 0:
            raise self._bad(event, f"a negative duration ({event.get('dur')})")
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        row = {"start": start, "end": start + duration, "name": self._name(event.get("name")),
               "row": self.count, "correlation": _int(args.get("correlation"))}  # fmt: skip
        pid, tid = event.get("pid"), event.get("tid")
        if kind in ("nvtx", "cuda_api"):
            thread = (_key(pid), _key(tid))
            row["thread"] = self.threads.setdefault(thread, len(self.threads))
        else:
            _gpu_fields(kind, str(event.get("name", "")), pid, tid, args, row)
        if kind in ("nvtx", "kernels") and "Collective name" in args:
            comm = collective_arg_row(kind, self.count, args)
            if comm is not None:
                self.comms.append(comm)
        cols = self.cols[kind]
        for field, column in cols.items():
            column.append(row.get(field, 0))

    def _bad(self, event: dict, what: str) -> CorruptReportError:
        name = str(event.get("name", ""))[:60]
        return CorruptReportError(
            self.path, f"traceEvents item {self.count} ({event.get('cat')} {name!r}) has {what}"
        )

    def _meta(self, event: dict) -> None:
        args = event.get("args")
        name = args.get("name") if isinstance(args, dict) else None
        if not isinstance(name, str):
            return
        pid = _key(event.get("pid"))
        if event.get("name") == "process_name":
            self.process_names[pid] = name
        elif event.get("name") == "thread_name":
            # Kineto may name one tid twice (python3, then pt_autograd_0): the last wins.
            self.thread_names[(pid, _key(event.get("tid")))] = name.strip()


def _gpu_fields(
    kind: str, name: str, pid: object, tid: object, args: dict, row: dict[str, int]
) -> None:
    """Fill the GPU columns of one event: its (device, stream) row and per-kind values."""
    row["device"] = _int(args.get("device"), _int(pid))
    row["stream"] = _int(args.get("stream"), _int(tid))
    row["context"] = _int(args.get("context"))
    if kind == "kernels":
        row["grid_x"], row["grid_y"], row["grid_z"] = _xyz(args.get("grid"))
        row["block_x"], row["block_y"], row["block_z"] = _xyz(args.get("block"))
        row["registers_per_thread"] = _int(args.get("registers per thread"))
        row["static_smem_bytes"] = _int(args.get("shared memory"))
    elif kind in ("memcpy", "memset"):
        row["bytes"] = _int(args.get("bytes"))
        # "Memcpy HtoD (Pageable -> Device)", "Memset (Device)"; ROCm: args kind "HtoD".
        words = name.replace("(", " ").replace(")", " ").replace("->", " ").split()
        kinds = [_MEM_KINDS[w] for w in words if w in _MEM_KINDS]
        if kind == "memcpy":
            copy = (
                str(args.get("kind", ""))
                if "kind" in args
                else next((w for w in words if w in _COPY_KINDS), "")
            )
            row["copy_kind"] = _COPY_KINDS.get(copy, 0)
            row["src_kind"], row["dst_kind"] = (kinds + [7, 7])[:2] if kinds else (7, 7)
        else:
            row["mem_kind"] = kinds[0] if kinds else 7
    else:
        sync = str(args.get("cuda_sync_kind", name)).strip().lower()
        row["sync_type"] = _SYNC_KINDS.get(sync, 0)


_ID_BITS = 24
_ID_MAX = (1 << _ID_BITS) - 1


class _Ids:
    """Gives each raw pid (or tid within a pid) a 24-bit number, as nsys's globalTid has.

    A non-negative integer below 2^24 keeps its value; others (string pids such as
    "Spans", old Kineto's negative tids, 64-bit thread ids) get free numbers from the top.
    """

    def __init__(self) -> None:
        self.given: dict[object, int] = {}
        self.taken: set[int] = set()
        self.next_free = _ID_MAX

    def __call__(self, raw: object) -> int:
        if raw in self.given:
            return self.given[raw]
        number = raw if isinstance(raw, int) and 0 <= raw <= _ID_MAX else -1
        if number < 0 or number in self.taken:
            while self.next_free in self.taken:
                self.next_free -= 1
            number = self.next_free
        self.taken.add(number)
        self.given[raw] = number
        return number


def _array(values: array, dtype: type) -> np.ndarray:
    return (
        np.frombuffer(values, dtype=np.int64).astype(dtype) if len(values) else np.empty(0, dtype)
    )


def _report(events: _Events, meta: dict[str, object]) -> Report:
    """The Report of the events read and the trace's top-level keys."""
    path = events.path
    starts = [int(np.frombuffer(c["start"], np.int64).min()) for c in events.cols.values()
              if len(c["start"])]  # fmt: skip
    t0 = min(starts, default=0)
    pid_ids = _Ids()
    tid_ids: dict[int, _Ids] = {}
    thread_gtid = np.zeros(len(events.threads), dtype=np.int64)
    thread_rows = []
    for (pid, tid), index in events.threads.items():
        p = pid_ids(pid)
        t = tid_ids.setdefault(p, _Ids())(tid)
        thread_gtid[index] = (p << _ID_BITS) | t
        name = events.thread_names.get((pid, tid), "")
        thread_rows.append((int(thread_gtid[index]), p, t, name, pid))
    owner = _gpu_owner(events, thread_gtid)
    raw = {kind: _kind_columns(kind, cols, t0, thread_gtid, owner)
           for kind, cols in events.cols.items()}  # fmt: skip
    present = {_SPECS[kind].source for kind, cols in events.cols.items() if len(cols["start"])}
    gpus = _gpus(meta.get("deviceProperties"))
    extra = {"StringIds", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND"}
    extra |= {"TARGET_INFO_GPU"} if len(gpus) else set()
    builder = _TableBuilder(_Source(path, frozenset(present)), list(events.names), None)
    for kind in builder.kinds:
        builder.add(kind, raw.get(kind) or _filled(kind, 0, {}))
    tables = builder.tables()
    pool = StringIds(np.array(list(events.names), dtype=object))
    span = max((int(t.end_ns.max()) for t in tables.values() if len(t)), default=0)
    return Report(
        info=_info(path, meta, t0, span),
        strings=pool,
        tables=tables,
        processes=_processes(events, pid_ids, thread_rows, owner),
        threads=pd.DataFrame(
            [r[:4] for r in thread_rows], columns=["global_tid", "pid", "tid", "name"]
        ).astype({"global_tid": np.int64, "pid": np.int64, "tid": np.int64}),
        gpus=gpus,
        streams=pd.DataFrame(columns=["pid", "context_id", "stream_id", "priority", "flag"]),
        nvtx_domains=_nvtx_meta(tables["nvtx"], pool, 75),
        nvtx_categories=_nvtx_meta(tables["nvtx"], pool, 33),
        enums={
            "memcpy_kind": dict(MEMCPY_KIND_LABELS),
            "mem_kind": dict(MEM_KIND_LABELS),
            "sync_type": dict(SYNC_TYPE_LABELS),
        },  # fmt: skip
        gpu_metric_names=pd.DataFrame(columns=["type_id", "metric_id", "name"]),
        source_columns={
            **{t: () for t in sorted(extra)},
            **{
                spec.source: tuple(c.source for c in spec.columns)
                for spec in _SPECS.values()
                if spec.source in present
            },
        },  # fmt: skip
        nvtx_max_ns=builder.nvtx_max_ns,
        collective_args=collective_args_frame(events.comms),
    )


@dataclass(frozen=True)
class _Source:
    """What :class:`analysis.loader._TableBuilder` asks of its database: a path, its tables."""

    path: Path
    tables: frozenset[str]

    def has_table(self, name: str) -> bool:
        return name in self.tables


def _gpu_owner(events: _Events, thread_gtid: np.ndarray) -> int:
    """The globalPid GPU work belongs to: the process making the most CUDA calls.

    Kineto puts GPU rows under the device index as pid; nsys keys them by the CUDA process.
    """
    threads = np.frombuffer(events.cols["cuda_api"]["thread"], np.int64)
    if len(threads):
        counts = np.bincount(threads, minlength=len(thread_gtid))
        return int(thread_gtid[int(counts.argmax())]) & ~_ID_MAX
    return int(thread_gtid[0]) & ~_ID_MAX if len(thread_gtid) else 0


def _filled(kind: str, n: int, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every loader column of ``kind``: ``values`` where given, else the loader's fill."""
    out = {}
    for c in _SPECS[kind].columns:
        given = values.get(c.name)
        out[c.name] = np.full(n, c.fill, dtype=c.dtype) if given is None else given.astype(c.dtype)
    out["row_id"] = values.get("row_id", np.empty(0, np.int64))
    return out


def _kind_columns(
    kind: str, cols: dict[str, array], t0: int, thread_gtid: np.ndarray, owner: int
) -> dict[str, np.ndarray]:
    """One kind's events as the loader's raw columns (times relative to the first event)."""
    col = {name: np.frombuffer(values, np.int64) for name, values in cols.items()}
    n = len(col["start"])
    values = {"start_ns": col["start"] - t0, "end_ns": col["end"] - t0, "row_id": col["row"]}
    if kind == "nvtx":
        values.update(
            end_raw=values.pop("end_ns"),
            event_type=np.full(n, _PUSHPOP),
            global_tid=thread_gtid[col["thread"]] if n else np.empty(0, np.int64),
            text_id=col["name"],
        )
    elif kind == "cuda_api":
        values.update(
            global_tid=thread_gtid[col["thread"]] if n else np.empty(0, np.int64),
            name_id=col["name"],
            correlation_id=col["correlation"],
        )
    else:
        values.update({f: col[f] for f in _FIELDS[kind][8:]})
        values.update(
            device_id=col["device"],
            stream_id=col["stream"],
            context_id=col["context"],
            correlation_id=col["correlation"],
            global_pid=np.full(n, owner, dtype=np.int64),
        )
        if kind == "kernels":
            values.update(name_id=col["name"], short_name_id=col["name"],
                          mangled_name_id=col["name"])  # fmt: skip
    return _filled(kind, n, values)


def _gpus(props: object) -> pd.DataFrame:
    """The ``gpus`` frame from ``deviceProperties`` (absent or ``[]``: no rows)."""
    rows = [p for p in props if isinstance(p, dict)] if isinstance(props, list) else []
    return pd.DataFrame(
        {
            "device_id": np.array([_int(p.get("id"), i) for i, p in enumerate(rows)], np.int64),
            "name": [str(p.get("name", "")) for p in rows],
            "bus_location": [""] * len(rows),
            "uuid": [""] * len(rows),
            "sm_count": np.array([_int(p.get("numSms"), -1) for p in rows], np.int64),
            "total_memory_bytes": np.array(
                [_int(p.get("totalGlobalMem"), -1) for p in rows], np.int64
            ),
        }
    )


def _processes(
    events: _Events, pid_ids: _Ids, thread_rows: list[tuple], owner: int
) -> pd.DataFrame:
    counts: dict[int, int] = {}
    for row in thread_rows:
        counts[row[1]] = counts.get(row[1], 0) + 1
    names = {
        pid_ids(raw): name for raw, name in events.process_names.items() if raw in pid_ids.given
    }
    pids = sorted(set(counts) | ({owner >> _ID_BITS} if owner or counts else set()))
    return pd.DataFrame(
        {
            "pid": np.array(pids, dtype=np.int64),
            "name": [names.get(p, "") for p in pids],
            "thread_count": [counts.get(p, 0) for p in pids],
        }
    )


def _info(path: Path, meta: dict[str, object], t0: int, span: int) -> ReportInfo:
    """Name, time base (epoch ns of the first event), rank and world size of the trace."""
    base = _int(meta.get("baseTimeNanoseconds"))
    dist = meta.get("distributedInfo")
    dist = dist if isinstance(dist, dict) else {}
    rank = _int(dist.get("rank"), -1) if "rank" in dist else None
    world = _int(dist.get("world_size"), -1) if "world_size" in dist else None
    schema = meta.get("schemaVersion")
    return ReportInfo(
        path=path,
        name=path.name,
        nsys_version="",
        schema_version=f"Kineto {schema}" if schema is not None else "Kineto",
        session_start_utc_ns=base + t0,
        duration_ns=span,
        rank=rank,
        world_size=world,
    )
