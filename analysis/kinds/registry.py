"""The kind registry: what an event kind is, and how its rows become columns for every view.

An :class:`EventKind` says where a kind's events come from (report tables), which rows of
them count (``locate``), how they are named and grouped (``names``, :mod:`analysis.names`),
how the timeline draws them (``slices`` and ``place``), and which panel tabs, outliers and
nsys summaries they feed. Window stats, the one-shot aggregate, outliers and the timeline
rows loop over the registry; none of them names a table.
"""

# Over 600 lines: what a kind is and every question asked of the registry, with the default
# rows, names, slices and panel pooling a kind gets when it does not bring its own.
from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis._tablespecs import (
    SPECS,
    EventFilter,
    TableSpec,
    add_table,
    column_spec,
    event_tables,
)
from strata.analysis.errors import AnalysisError
from strata.analysis.model import EventTable, Report
from strata.analysis.names import EventNames, string_codes
from strata.analysis.schema import tid_of
from strata.analysis.slices import SliceTable

if TYPE_CHECKING:
    from strata.analysis.kinds.details import EventDetail

__all__ = [
    "DURATION",
    "KIND_ALIASES",
    "PLACES",
    "EventFilter",
    "EventKind",
    "KindRows",
    "Panel",
    "PanelRows",
    "Projector",
    "TableSpec",
    "check_panel",
    "column_spec",
    "event_kinds",
    "event_tables",
    "get_kind",
    "kind_slices",
    "kinds_at",
    "outlier_kinds",
    "panel_has_style",
    "panel_kinds",
    "panel_rows",
    "panel_tables",
    "panel_title",
    "panel_unit",
    "register",
    "resolve_kind",
    "resolve_kinds",
    "table_kind",
    "row_labels",
    "string_names",
    "table_rows",
    "table_view",
    "unregister",
]

#: Where a kind's timeline rows go: GPU stream rows, thread rows (by nesting level), CPU
#: core rows, projected rows under a GPU, counter rows under a GPU, or nowhere ('').
PLACES = ("gpu", "thread", "cpu", "gpu_projected", "gpu_counter", "")
#: The panel value of a kind's events that is their duration (else a column name: 'bytes').
DURATION = "duration"

#: ``project_nvtx``-like: a report's NVTX projection (a caller with a cache passes its own).
Projector = Callable[[Report], pd.DataFrame]


@dataclass(frozen=True)
class KindRows:
    """The events of one kind in one report, as columns in the kind's row order.

    Attributes
    ----------
    tables
        Names of the tables ``rows`` index (report tables, or a derived name such as
        ``nvtx_gpu`` for rows of the NVTX projection).
    table_codes
        Per event, its index into ``tables`` (int8).
    rows
        Per event, its row of that table (int64).
    start_ns, end_ns
        Bounds (int64, the report's own time base).
    track_ids
        Per event, its ``track_id`` in its table; None for derived rows without tracks.
    columns
        Extra per-event columns a derived kind names its rows by (e.g. ``name``, ``style``,
        ``tid`` of projected ranges).
    """

    tables: tuple[str, ...]
    table_codes: npt.NDArray[np.int8]
    rows: npt.NDArray[np.int64]
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    track_ids: np.ndarray | None = None
    columns: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, positions: np.ndarray) -> KindRows:
        """Return the events at ``positions`` (int indices), in that order."""
        return KindRows(
            self.tables, self.table_codes[positions], self.rows[positions],
            self.start_ns[positions], self.end_ns[positions],
            None if self.track_ids is None else self.track_ids[positions],
            {name: column[positions] for name, column in self.columns.items()},
        )  # fmt: skip


class Panel(NamedTuple):
    """A live panel / aggregate tab a kind's events pool into (:attr:`EventKind.panels`).

    Attributes
    ----------
    name
        The panel kind (a tab's id, ``window(kind=...)``).
    value
        :data:`DURATION`, or the column of the kind's table summed (``bytes``).
    title
        The summary tab's title ('' = the first member's label).
    unit
        The value's unit in column headers ('' = ``ns`` for :data:`DURATION`).
    """

    name: str
    value: str = DURATION
    title: str = ""
    unit: str = ""


@dataclass(frozen=True)
class EventKind:
    """One event kind: its sources, its rows, its names, and the views it feeds.

    Attributes
    ----------
    name
        Registry key; for a kind read from one report table, that table's name.
    label
        What the kind is called on screen ("CUDA API", "OS runtime"...): thread rows'
        headers and outliers' row texts.
    tables
        The report tables its events come from (:attr:`analysis.model.Report.tables`).
    locate
        ``locate(report, project) -> KindRows``: the events that count (default: the rows
        of ``tables[0]`` that :attr:`row_filter` keeps). ``project`` gives the NVTX
        projection to derived kinds.
    names
        ``names(report, rows) -> EventNames``: one group per event, as :mod:`analysis.names`
        spells and groups them (default: the ``name_id`` string). None: not summarised.
    slices
        ``slices(report) -> SliceTable``: what the timeline draws (default: a view of
        ``tables[0]`` labelled by ``names``); None for kinds not drawn.
    place
        One of :data:`PLACES`.
    slice_name
        The slice table's name ('' = ``name``): the ``(table, track)`` parts of a track.
    panels
        The live panel / aggregate tabs its events pool into: :class:`Panel` values (or
        ``(panel kind, value[, title, unit])`` tuples, read as such).
    outliers
        Whether :func:`analysis.outliers.find_outliers` scores it.
    has_style
        Whether its groups carry an NVTX style (PushPop / StartEnd).
    named_only
        Summaries leave out events without a name (memcpy kinds nsys has no label for).
    lazy_slices
        Its slices cost seconds (the projection): built on demand, not with the others.
    where
        ``where(report, rows) -> (codes, labels)``: the timeline row of each event as text
        (outliers' ``row``); default: by ``place``.
    summaries
        The nsys stats reports computed from it (documentation, and what a test checks).
    table
        The spec of the report table it reads (``tables[0]``): source table, columns and
        dtypes, name columns, track key, row filter. A built-in kind's is its entry of
        :data:`analysis._tablespecs.SPECS` (plain data: the SQL path of ``stats`` reads
        it without NumPy); a kind registered elsewhere brings its own, and registering it
        makes the loader read, check and cache that table as ``report.tables[name]``.
        None: a kind derived from other kinds' tables.
    details
        ``details(event) -> [(label, text)]``: the lines the hover text and the details
        pane show for one of its events (:class:`analysis.kinds.details.EventDetail`),
        after the name, start, duration and row every event has. None: none.
    """

    name: str
    label: str
    tables: tuple[str, ...]
    locate: Callable[[Report, Projector], KindRows] | None = None
    names: Callable[[Report, KindRows], EventNames] | None = None
    slices: Callable[[Report], SliceTable] | None = None
    place: str = ""
    slice_name: str = ""
    panels: tuple[Panel, ...] = ()
    outliers: bool = False
    has_style: bool = False
    named_only: bool = False
    lazy_slices: bool = False
    where: Callable[[Report, KindRows], tuple[np.ndarray, np.ndarray]] | None = None
    summaries: tuple[str, ...] = ()
    table: TableSpec | None = None
    details: Callable[[EventDetail], list[tuple[str, str]]] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "panels", tuple(Panel(*p) for p in self.panels))

    def rows(self, report: Report, project: Projector | None = None) -> KindRows:
        """Return the events of this kind in ``report`` (:attr:`locate`)."""
        if self.locate is not None:
            return self.locate(report, project or _project_nvtx)
        return table_rows(report, self.tables[0], self.row_indices(report))

    def row_indices(self, report: Report) -> npt.NDArray[np.int64] | None:
        """Return the rows of ``tables[0]`` that :attr:`row_filter` keeps (None: all)."""
        if self.row_filter is None or self.tables[0] not in report.tables:
            return None
        return self.row_filter.rows(report.tables[self.tables[0]])

    def event_names(self, report: Report, rows: KindRows) -> EventNames:
        """Return the names and groups of ``rows`` (:attr:`names`)."""
        if self.names is not None:
            return self.names(report, rows)
        return string_names(report, rows)

    @property
    def row_filter(self) -> EventFilter | None:
        """Which rows of ``tables[0]`` are its events (None: every row): the one definition
        the timeline, panel, summaries (column and SQL paths) and recipes read."""
        return None if self.table is None else self.table.row_filter

    @property
    def drawn_as(self) -> str:
        """The slice-table name its events are drawn from."""
        return self.slice_name or self.name


_KINDS: dict[str, EventKind] = {}


def register(kind: EventKind) -> EventKind:
    """Add ``kind`` to the registry (after the kinds already there) and return it.

    Raises
    ------
    AnalysisError
        A kind of that name is registered already, ``place`` is not one of
        :data:`PLACES`, or its :attr:`~EventKind.table` is not ``tables[0]``'s.
    """
    if kind.name in _KINDS:
        raise AnalysisError(f"event kind {kind.name!r} is registered already")
    if kind.place not in PLACES:
        raise AnalysisError(f"unknown place {kind.place!r}; use one of {', '.join(PLACES)}")
    if kind.table is not None:
        table = kind.tables[0] if kind.tables else ""
        if table not in SPECS:
            add_table(table, kind.table)  # the loader reads it from now on
        elif SPECS[table] is not kind.table:
            raise AnalysisError(f"event kind {kind.name!r}: table {table!r} has another spec")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove the kind ``name`` from the registry (a no-op when absent)."""
    _KINDS.pop(name, None)


def event_kinds() -> tuple[EventKind, ...]:
    """Return every registered kind, in registration order."""
    return tuple(_KINDS.values())


def get_kind(name: str) -> EventKind:
    """Return the registered kind ``name``.

    Raises
    ------
    AnalysisError
        No kind of that name.
    """
    kind = _KINDS.get(name)
    if kind is None:
        raise AnalysisError(f"unknown event kind {name!r}; use {', '.join(_KINDS)}")
    return kind


#: Other spellings of kind names (after lower-casing, ``-`` and spaces as ``_``); a singular
#: or plural of a name (``kernel``, ``memcpys``) is taken as that name as well.
KIND_ALIASES = {
    "api": "cuda_api",
    "runtime": "cuda_api",
    "cuda_runtime": "cuda_api",
    "os_runtime": "osrt",
    "nvtx_projected": "nvtx_gpu",
    "projected": "nvtx_gpu",
}


def resolve_kind(name: str, allowed: Iterable[str] | None = None, context: str = "") -> str:
    """Return the kind ``name`` stands for, one of ``allowed``: the one reading of kind names.

    Every place that takes a kind name (``ReportSet.events``, ``window``, ``outliers``,
    ``diff --kinds``, ``export --kinds``...) goes through it, so that ``kernel``,
    ``kernels``, ``Kernels`` and ``cuda-api`` mean the same everywhere.

    Parameters
    ----------
    name
        A kind name, an alias (:data:`KIND_ALIASES`), or a singular/plural of a name.
    allowed
        The kind names the caller takes (default: every registered and panel kind).
    context
        Words after the name in the refusal (``" for chrome-trace"``).

    Raises
    ------
    AnalysisError
        ``name`` stands for none of ``allowed`` (one line naming them, and the nearest).
    """
    choices = tuple(allowed) if allowed is not None else (*_KINDS, *panel_kinds())
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    key = KIND_ALIASES.get(key, key)
    for candidate in (key, f"{key}s", key.removesuffix("s")):
        if candidate in choices:
            return candidate
    near = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise AnalysisError(f"unknown kind {name!r}{context}; use {', '.join(choices)}{hint}")


def resolve_kinds(
    names: str | Iterable[str], allowed: Iterable[str] | None = None, context: str = ""
) -> tuple[str, ...]:
    """Return the kinds of a comma list (``"kernel,nvtx"``) or of names, each once, in order.

    Raises
    ------
    AnalysisError
        A name stands for no kind of ``allowed`` (:func:`resolve_kind`), or none is given.
    """
    choices = tuple(allowed) if allowed is not None else None
    parts = names.split(",") if isinstance(names, str) else list(names)
    wanted = [p for p in (str(n).strip() for n in parts) if p]
    if not wanted:
        shown = ", ".join(choices) if choices is not None else ", ".join(_KINDS)
        raise AnalysisError(f"no kind given{context}; use {shown}")
    return tuple(dict.fromkeys(resolve_kind(n, choices, context) for n in wanted))


def table_kind(table: str) -> EventKind | None:
    """Return the kind whose own table (:attr:`EventKind.table`) is ``table``, if any."""
    return next((k for k in _KINDS.values() if k.table is not None and k.tables[0] == table),
                None)  # fmt: skip


def kinds_at(place: str) -> tuple[EventKind, ...]:
    """Return the kinds drawn at ``place`` (one of :data:`PLACES`), in registry order."""
    return tuple(k for k in _KINDS.values() if k.place == place)


def outlier_kinds() -> tuple[str, ...]:
    """Return the names of the kinds outliers score."""
    return tuple(k.name for k in _KINDS.values() if k.outliers)


def panel_kinds() -> tuple[str, ...]:
    """Return the panel (window-stats / aggregate) kinds, in registry order."""
    seen: dict[str, None] = {}
    for kind in _KINDS.values():
        seen.update(dict.fromkeys(panel.name for panel in kind.panels))
    return tuple(seen)


def _panel_members(panel: str) -> list[tuple[EventKind, str]]:
    members = [(k, p.value) for k in _KINDS.values() for p in k.panels if p.name == panel]
    if not members:
        raise AnalysisError(f"unknown kind '{panel}'; choose one of {', '.join(panel_kinds())}")
    return members


def check_panel(panel: str) -> None:
    """Raise :class:`AnalysisError` (one line naming the choices) unless ``panel`` is one of
    :func:`panel_kinds`."""
    _panel_members(panel)


def _panel(panel: str) -> tuple[EventKind, Panel]:
    kind = _panel_members(panel)[0][0]
    return kind, next(p for p in kind.panels if p.name == panel)


def panel_title(panel: str) -> str:
    """The summary tab title of ``panel`` (its first member's :attr:`Panel.title`, or
    that kind's label)."""
    kind, entry = _panel(panel)
    return entry.title or kind.label


def panel_tables(panel: str) -> tuple[str, ...]:
    """The slice tables that draw the member kinds of ``panel`` (``memcpy``: memcpy and
    memset), in registry order."""
    return tuple(dict.fromkeys(kind.drawn_as for kind, _ in _panel_members(panel)))


def panel_unit(panel: str) -> str:
    """The unit of ``panel``'s values in column headers (``ns`` for durations)."""
    _, entry = _panel(panel)
    return entry.unit or ("ns" if entry.value == DURATION else entry.value)


def panel_has_style(panel: str) -> bool:
    """Whether the groups of ``panel`` carry an NVTX style."""
    return any(kind.has_style for kind, _ in _panel_members(panel))


# --------------------------------------------------------------------------- defaults
def _project_nvtx(report: Report) -> pd.DataFrame:
    from strata.analysis.projection import project_nvtx

    return project_nvtx(report)


def table_rows(report: Report, table: str, rows: np.ndarray | None = None) -> KindRows:
    """Return rows ``rows`` (default: all) of ``report.tables[table]`` as :class:`KindRows`.

    A report without that table (read before its kind was registered) has no such rows.
    """
    if table not in report.tables:
        empty = np.empty(0, np.int64)
        return KindRows((table,), np.empty(0, np.int8), empty, empty, empty, empty)
    events = report.tables[table]
    if rows is None:  # every row: the table's own (memory-mapped) columns, not copies
        n = len(events)
        return KindRows((table,), np.zeros(n, np.int8), np.arange(n, dtype=np.int64),
                        events.start_ns, events.end_ns, events["track_id"])  # fmt: skip
    rows = np.asarray(rows, dtype=np.int64)
    return KindRows(
        (table,), np.zeros(len(rows), np.int8), rows, events.start_ns[rows],
        events.end_ns[rows], events["track_id"][rows],
    )  # fmt: skip


def string_names(report: Report, rows: KindRows) -> EventNames:
    """Name rows of a one-table kind by their ``name_id`` string, grouped by the text."""
    if not len(rows):
        none = np.empty(0, dtype=object)
        return EventNames(np.empty(0, np.int64), none, none)
    ids = report.tables[rows.tables[0]]["name_id"][rows.rows]
    codes, texts = string_codes(report, ids)
    return EventNames(np.asarray(codes, dtype=np.int64), texts, texts)


def table_view(
    kind: str,
    table: EventTable,
    label_ids: np.ndarray,
    labels: np.ndarray,
    argb: np.ndarray | None = None,
) -> SliceTable:
    """Return a :class:`SliceTable` sharing the columns of a report table."""
    return SliceTable(
        kind=kind,
        start_ns=table["start_ns"],
        end_ns=table["end_ns"],
        track_offsets=table.track_offsets,
        label_ids=np.asarray(label_ids, dtype=np.int32),
        labels=labels,
        argb=argb,
        source=kind,
    )


def kind_slices(report: Report, kind: EventKind) -> SliceTable:
    """Return what the timeline draws for ``kind`` (:attr:`EventKind.slices`, or a view of its
    table labelled by its names)."""
    if kind.slices is not None:
        return kind.slices(report)
    if kind.tables[0] not in report.tables:
        return _no_slices(kind)
    table = report.tables[kind.tables[0]]
    names = kind.event_names(report, table_rows(report, kind.tables[0]))
    return table_view(kind.name, table, _label_ids(table, names.codes), names.labels)


def _no_slices(kind: EventKind) -> SliceTable:
    """No boxes: a report read before ``kind`` (with a table of its own) was registered."""
    key = () if kind.table is None else kind.table.key
    none = np.empty(0, np.int64)
    return SliceTable(
        kind=kind.drawn_as, start_ns=none, end_ns=none, track_offsets=np.zeros(1, np.int64),
        label_ids=np.empty(0, np.int32), labels=np.empty(0, dtype=object),
        track_keys=pd.DataFrame({c: none for c in key}),
    )  # fmt: skip


def _label_ids(table: EventTable, codes: np.ndarray) -> np.ndarray:
    """Per-event label ids as int32: the table's own ``name_id`` column when they are its
    values (the string pool's codes are its ids), so that no copy is kept per event (the
    report's column is memory-mapped from the cache); else ``codes`` as int32."""
    ids = table.columns.get("name_id")
    if ids is not None and ids.dtype == np.int32 and np.array_equal(ids, codes):
        return ids
    return np.asarray(codes, dtype=np.int32)


def row_labels(report: Report, kind: EventKind, rows: KindRows) -> tuple[np.ndarray, np.ndarray]:
    """Return (code per event, label per code): the timeline row each event is on, as text.

    GPU kinds: ``GPU 0 stream 7``; thread kinds: ``thread 1234 <label> L<level>``.
    """
    if kind.where is not None:
        return kind.where(report, rows)
    if rows.tables[0] not in report.tables:
        return np.empty(0, np.int64), np.empty(0, dtype=object)
    track = np.zeros(len(rows), np.int64) if rows.track_ids is None else rows.track_ids
    keys = report.tables[rows.tables[0]].track_keys
    if kind.place == "gpu":
        text = "GPU " + keys["device_id"].astype(str) + " stream " + keys["stream_id"].astype(str)
    elif "global_tid" in keys:
        tid = pd.Series(tid_of(keys["global_tid"].to_numpy())).astype(str)
        level = keys["level"].astype(str) if "level" in keys else "0"
        text = "thread " + tid + f" {kind.label} L" + level
    else:
        text = pd.Series([kind.label] * len(keys), dtype=object)
    return track, text.to_numpy(object)


# --------------------------------------------------------------------------- panels
@dataclass
class PanelRows:
    """One report's events of one panel kind: every member kind pooled, named and valued.

    Attributes
    ----------
    keys, labels, styles
        Per group: key (full name), shown name, NVTX style (None when the panel has none).
    codes
        Per event, its group (int64).
    values
        Per event, its duration or its value column (int64).
    start_ns, end_ns, tables, table_codes, rows
        As :class:`KindRows`, pooled over the member kinds.
    """

    keys: np.ndarray
    labels: np.ndarray
    styles: np.ndarray | None
    codes: np.ndarray
    values: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    tables: tuple[str, ...]
    table_codes: np.ndarray
    rows: np.ndarray


def _values(report: Report, rows: KindRows, value: str) -> np.ndarray:
    if value == DURATION:
        return np.asarray(rows.end_ns - rows.start_ns, dtype=np.int64)
    out = np.empty(len(rows), dtype=np.int64)
    for code, table in enumerate(rows.tables):
        mine = rows.table_codes == code
        if not mine.any():
            continue  # (a table the report may lack)
        out[mine] = report.tables[table][value][rows.rows[mine]]
    return out


def _member(report: Report, kind: EventKind, value: str, select, project) -> tuple:
    rows = kind.rows(report, project)
    if select is not None:
        keep = select(rows)
        if not isinstance(keep, slice):
            rows = rows.take(np.flatnonzero(keep))
    names = kind.event_names(report, rows)
    if kind.named_only:
        # As cuda_gpu_mem_*_sum: a copy kind nsys has no name for is left out (spec §3.6).
        named = np.flatnonzero(names.labels[names.codes] != None)  # noqa: E711
        rows = rows.take(named)
        names = EventNames(names.codes[named], names.keys, names.labels, names.styles)
    return rows, names, _values(report, rows, value)


def panel_rows(
    report: Report,
    panel: str,
    select: Callable[[KindRows], np.ndarray | slice] | None = None,
    project: Projector | None = None,
) -> PanelRows:
    """Return the events of ``report`` that panel kind ``panel`` pools, named and valued.

    Parameters
    ----------
    report
        A loaded report.
    panel
        One of :func:`panel_kinds`.
    select
        ``select(rows) -> mask``: keep only these events of each member kind (before they
        are named: a selection names only what it keeps); ``slice(None)`` keeps all.
    project
        Where derived kinds get the NVTX projection (default
        :func:`analysis.projection.project_nvtx`).

    Raises
    ------
    AnalysisError
        Unknown panel kind.
    """
    members = _panel_members(panel)
    has_style = any(kind.has_style for kind, _ in members)
    parts = [_member(report, kind, value, select, project) for kind, value in members]
    if len(parts) == 1:
        rows, names, values = parts[0]
        return PanelRows(names.keys, names.labels, names.styles if has_style else None,
                         names.codes, values, rows.start_ns, rows.end_ns, rows.tables,
                         rows.table_codes, rows.rows)  # fmt: skip
    return _pool(parts, has_style)


def _pool(parts: list[tuple], has_style: bool) -> PanelRows:
    """Concatenate member kinds' events: their groups side by side, codes shifted."""
    group_at = np.cumsum([0] + [len(names.keys) for _, names, _ in parts])
    table_at = np.cumsum([0] + [len(rows.tables) for rows, _, _ in parts])

    def joined(f) -> np.ndarray:
        return np.concatenate([f(j, rows, names) for j, (rows, names, _) in enumerate(parts)])

    styles = None
    if has_style:
        styles = joined(lambda _j, _r, n: n.styles if n.styles is not None
                        else np.full(len(n.keys), None, dtype=object))  # fmt: skip
    return PanelRows(
        keys=joined(lambda _j, _r, n: np.asarray(n.keys, dtype=object)),
        labels=joined(lambda _j, _r, n: np.asarray(n.labels, dtype=object)),
        styles=styles,
        codes=joined(lambda j, _r, n: n.codes + group_at[j]).astype(np.int64),
        values=np.concatenate([values for _, _, values in parts]),
        start_ns=joined(lambda _j, r, _n: r.start_ns),
        end_ns=joined(lambda _j, r, _n: r.end_ns),
        tables=tuple(t for rows, _, _ in parts for t in rows.tables),
        table_codes=joined(lambda j, r, _n: r.table_codes + table_at[j]).astype(np.int8),
        rows=joined(lambda _j, r, _n: r.rows),
    )
