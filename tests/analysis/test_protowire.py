"""The protobuf wire writer: encodings from the protobuf encoding guide, and rows joined."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.protowire import Rows, field_bytes, field_varint, varint, varint_matrix

#: protobuf.dev/programming-guides/encoding: 1, 150 ("96 01"), 300 ("ac 02"), -1 (ten bytes).
KNOWN = {
    0: b"\x00",
    1: b"\x01",
    127: b"\x7f",
    128: b"\x80\x01",
    150: b"\x96\x01",
    300: b"\xac\x02",
    2**63 - 1: b"\xff" * 8 + b"\x7f",
    -1: b"\xff" * 9 + b"\x01",
}


@pytest.mark.parametrize(("value", "encoded"), KNOWN.items())
def test_varints_as_the_guide_writes_them(value, encoded) -> None:
    assert varint(value) == encoded
    matrix, lengths = varint_matrix([value])
    assert bytes(matrix[0, : lengths[0]]) == encoded


def test_fields_as_the_guide_writes_them() -> None:
    assert field_varint(1, 150) == b"\x08\x96\x01"  # "Test1 { a: 150 }"
    assert field_bytes(2, "testing") == b"\x12\x07testing"  # "Test2 { b: "testing" }"
    assert field_bytes(3, field_varint(1, 150)) == b"\x1a\x03\x08\x96\x01"  # "Test3"


def test_rows_join_fields_of_varying_length_row_by_row() -> None:
    values = np.array([1, 150, 300])
    present = np.array([True, False, True])
    rows = Rows(3).varint_field(1, values).fixed64_field(2, [7, 8, 9], present)
    expected = [field_varint(1, v) for v in values.tolist()]
    expected = [
        e + (b"\x11" + int(f).to_bytes(8, "little") if p else b"")
        for e, f, p in zip(expected, [7, 8, 9], present.tolist(), strict=True)
    ]
    assert rows.lengths().tolist() == [len(e) for e in expected]
    outer = Rows(3).message_field(5, rows)
    assert outer.tobytes() == b"".join(field_bytes(5, e) for e in expected)
