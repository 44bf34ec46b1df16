"""The torch.distributed collective metadata a Kineto trace attaches to its events.

PyTorch writes ``Collective name``, message sizes, the process group and (newer builds) a
sequence number on ``record_param_comms`` CPU ops and, from 2024, on the NCCL kernels too
(spec: kineto-trace.md §6). The trace reader keeps them, one row per event that has them, in
:attr:`analysis.model.Report.collective_args`; :mod:`analysis.collectives` reads them.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

__all__ = ["COLLECTIVE_ARG_COLUMNS", "DTYPE_BYTES", "collective_arg_row", "collective_args_frame"]

#: Columns of ``Report.collective_args``: the model table the event is in (``kernels`` or
#: ``nvtx``), its ``row_id`` there, the collective's name as PyTorch spells it, the process
#: group's name (``Process Group Name``, else ``Process Group ID``; '' when absent), its
#: ranks as text (``"[0, 1]"``, '' when absent), the message size in bytes (-1 when the
#: element count or dtype is unknown) and the sequence number (-1 when absent).
COLLECTIVE_ARG_COLUMNS = ("table", "row_id", "collective", "group", "group_ranks",
                          "size_bytes", "seq")  # fmt: skip

#: Bytes per element of the c10 scalar types PyTorch names in ``dtype``.
DTYPE_BYTES = {
    "Byte": 1, "Char": 1, "Bool": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1,
    "Short": 2, "Half": 2, "BFloat16": 2,
    "Int": 4, "Float": 4, "ComplexHalf": 4,
    "Long": 8, "Double": 8, "ComplexFloat": 8, "ComplexDouble": 16,
}  # fmt: skip


def _int_or(value: object, default: int = -1) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return default


def _ranks_text(value: object) -> str:
    """``Process Group Ranks`` is JSON inside a string (spec §9.5); normalise it."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value.strip()
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return "" if value is None else str(value)


def collective_arg_row(table: str, row_id: int, args: dict) -> tuple | None:
    """Return one ``collective_args`` row for an event's ``args``, or None without a
    ``Collective name``."""
    name = args.get("Collective name")
    if not isinstance(name, str) or not name:
        return None
    group = args.get("Process Group Name", args.get("Process Group ID", ""))
    nelems = _int_or(args.get("In msg nelems"))
    width = DTYPE_BYTES.get(str(args.get("dtype", "")), -1)
    size = nelems * width if nelems >= 0 and width > 0 else -1
    ranks = _ranks_text(args.get("Process Group Ranks"))
    group_text = "" if group is None else str(group)
    return (table, int(row_id), name, group_text, ranks, size, _int_or(args.get("Seq")))


def collective_args_frame(rows: list[tuple]) -> pd.DataFrame:
    """Return the ``collective_args`` frame of ``rows`` (:func:`collective_arg_row`)."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(COLLECTIVE_ARG_COLUMNS)
    frame = pd.DataFrame(
        {name: pd.Series(list(values), dtype=object)
         for name, values in zip(COLLECTIVE_ARG_COLUMNS, columns, strict=True)}
    )  # fmt: skip
    for name in ("row_id", "size_bytes", "seq"):
        frame[name] = frame[name].astype(np.int64)
    return frame
