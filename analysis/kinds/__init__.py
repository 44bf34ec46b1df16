"""One registry entry per event kind: its tables, its rows as columns, its label, and the
summaries, panel tabs, outliers and timeline rows it feeds.

``analysis.kinds.registry`` defines what a kind is; ``analysis.kinds.builtin`` registers the
kinds of an Nsight Systems report. A new kind goes in with one :func:`register` call.
"""

from __future__ import annotations

from analysis.kinds.builtin import BUILTIN_KINDS
from analysis.kinds.registry import (
    DURATION,
    PLACES,
    EventKind,
    KindRows,
    PanelRows,
    Projector,
    event_kinds,
    get_kind,
    kind_slices,
    kinds_at,
    outlier_kinds,
    panel_has_style,
    panel_kinds,
    panel_rows,
    register,
    row_labels,
    string_names,
    table_rows,
    table_view,
    unregister,
)

__all__ = [
    "BUILTIN_KINDS",
    "DURATION",
    "PLACES",
    "EventKind",
    "KindRows",
    "PanelRows",
    "Projector",
    "event_kinds",
    "get_kind",
    "kind_slices",
    "kinds_at",
    "outlier_kinds",
    "panel_has_style",
    "panel_kinds",
    "panel_rows",
    "register",
    "row_labels",
    "string_names",
    "table_rows",
    "table_view",
    "unregister",
]
