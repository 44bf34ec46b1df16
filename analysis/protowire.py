"""Protocol Buffers wire format, written with NumPy: varints, fixed64, length-delimited fields.

Enough of https://protobuf.dev/programming-guides/encoding/ to write a Perfetto trace
(:mod:`analysis.perfetto`) without a protobuf dependency. Single messages are built from
``bytes`` (:func:`field_varint`, :func:`field_bytes`); many messages of one shape at once, a
row per message, from :class:`Rows`: each field a column of per-row byte strings of varying
length, joined row by row without a Python loop over the rows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "Rows",
    "VARINT",
    "FIXED64",
    "LEN",
    "field_bytes",
    "field_varint",
    "key_bytes",
    "varint",
    "varint_matrix",
]

#: Wire types (the low three bits of a field's key).
VARINT, FIXED64, LEN = 0, 1, 2
_MAX_VARINT = 10  # a 64-bit value takes at most 10 bytes of 7 bits
_SHIFTS = np.arange(0, 7 * _MAX_VARINT, 7, dtype=np.uint64)


def varint(value: int) -> bytes:
    """Return ``value`` (0 to 2^64 - 1; a negative int64 as its two's complement) as a varint."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key_bytes(number: int, wire_type: int) -> bytes:
    """Return the key of field ``number`` with ``wire_type``."""
    return varint((number << 3) | wire_type)


def field_varint(number: int, value: int) -> bytes:
    """Return a varint field (int32/int64/uint64/enum/bool)."""
    return key_bytes(number, VARINT) + varint(int(value))


def field_bytes(number: int, payload: bytes | str) -> bytes:
    """Return a length-delimited field: a string (UTF-8), bytes, or an embedded message."""
    data = payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else payload
    return key_bytes(number, LEN) + varint(len(data)) + data


def varint_matrix(values: npt.ArrayLike) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Return the varints of ``values``: a ``[n, 10]`` byte matrix and each row's length.

    Negative int64 values are written as their two's complement (10 bytes), as protobuf
    writes a negative ``int64``.
    """
    v = np.asarray(values).astype(np.int64).view(np.uint64).reshape(-1)
    groups = (v[:, None] >> _SHIFTS[None, :]) & np.uint64(0x7F)
    # Bytes needed: 1 + the number of 7-bit shifts that leave something.
    lengths = 1 + ((v[:, None] >> _SHIFTS[None, 1:]) != 0).sum(axis=1)
    more = np.arange(_MAX_VARINT)[None, :] < (lengths[:, None] - 1)
    matrix = (groups | np.where(more, np.uint64(0x80), np.uint64(0))).astype(np.uint8)
    return matrix, lengths.astype(np.int64)


class Rows:
    """Many messages of one shape, built column by column: a row per message.

    Each :meth:`add` appends one piece to every row (a row's piece may be empty); :meth:`tobytes`
    joins each row's pieces, rows in order; :meth:`lengths` gives each row's byte count, for
    an enclosing length-delimited field.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._pieces: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, matrix: np.ndarray, lengths: np.ndarray | int) -> Rows:
        """Append per-row bytes: ``matrix[i, :lengths[i]]`` to row ``i``."""
        matrix = np.asarray(matrix, dtype=np.uint8).reshape(self.count, -1)
        lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (self.count,))
        self._pieces.append((matrix, lengths))
        return self

    def constant(self, data: bytes, where: np.ndarray | None = None) -> Rows:
        """Append the same bytes to every row (or to the rows where ``where`` is true)."""
        piece = np.frombuffer(data, dtype=np.uint8)[None, :].repeat(self.count, axis=0)
        lengths = len(data) if where is None else np.where(where, len(data), 0)
        return self.add(piece, lengths)

    def key(self, number: int, wire_type: int, where: np.ndarray | None = None) -> Rows:
        """Append the key of field ``number`` (to the rows where ``where`` is true)."""
        return self.constant(key_bytes(number, wire_type), where)

    def varint(self, values: npt.ArrayLike, where: np.ndarray | None = None) -> Rows:
        """Append per-row varints (empty where ``where`` is false)."""
        matrix, lengths = varint_matrix(values)
        return self.add(matrix, lengths if where is None else np.where(where, lengths, 0))

    def varint_field(self, number: int, values: npt.ArrayLike, where=None) -> Rows:
        """Append a varint field per row (none where ``where`` is false)."""
        return self.key(number, VARINT, where).varint(values, where)

    def fixed64_field(self, number: int, values: npt.ArrayLike, where=None) -> Rows:
        """Append a fixed64 field per row, little-endian (none where ``where`` is false)."""
        data = np.asarray(values).astype("<u8").view(np.uint8).reshape(self.count, 8)
        self.key(number, FIXED64, where)
        return self.add(data, 8 if where is None else np.where(where, 8, 0))

    def message_field(self, number: int, inner: Rows) -> Rows:
        """Append a length-delimited field holding each row of ``inner``."""
        self.key(number, LEN).varint(inner.lengths())
        self._pieces.extend(inner._pieces)
        return self

    def lengths(self) -> npt.NDArray[np.int64]:
        """Each row's byte count so far."""
        total = np.zeros(self.count, dtype=np.int64)
        for _matrix, lengths in self._pieces:
            total += lengths
        return total

    def tobytes(self) -> bytes:
        """Every row's pieces joined, rows in order."""
        if not self.count or not self._pieces:
            return b""
        matrix = np.hstack([m for m, _ in self._pieces])
        mask = np.hstack([np.arange(m.shape[1])[None, :] < n[:, None] for m, n in self._pieces])
        return matrix[mask].tobytes()  # row-major: row 0's pieces, then row 1's...
