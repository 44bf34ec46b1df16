"""What the fuzz suite does to a report or a cache: small, printable, replayable mutations.

Each mutation is a frozen dataclass whose ``repr`` is its reproducer: the SQL statements run
on a copy of the report (``Sql``), the bytes changed (``Bytes``), the statements left only in
the ``-wal`` file (``WalPending``), or the damage done to one cache file (``CacheDamage``).
:class:`Seed` describes a pristine report (its tables, columns, row counts), from which the
strategies draw mutations that hit real tables and columns.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Bytes",
    "CacheDamage",
    "Seed",
    "Sql",
    "WalPending",
    "apply_all",
    "cache_files",
    "introspect",
    "qname",
]


@dataclass(frozen=True)
class Seed:
    """A pristine report the mutations start from (never modified itself)."""

    name: str
    path: Path
    size: int
    page_size: int
    #: table -> ((column, declared type, not null), ...), tables only (no views)
    tables: dict[str, tuple[tuple[str, str, bool], ...]] = field(repr=False)
    rows: dict[str, int] = field(repr=False)
    max_string_id: int = field(repr=False, default=0)

    def __repr__(self) -> str:
        return f"Seed({self.name})"

    def columns(self, table: str) -> list[str]:
        return [c[0] for c in self.tables.get(table, ())]

    def has(self, table: str, *columns: str) -> bool:
        return table in self.tables and set(columns) <= set(self.columns(table))


def introspect(name: str, path: Path) -> Seed:
    """Describe the report at ``path`` (read-only)."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        tables, rows = {}, {}
        for table in names:
            info = con.execute(f'PRAGMA table_info("{table}")').fetchall()
            tables[table] = tuple((c[1], c[2].upper(), bool(c[3])) for c in info)
            rows[table] = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        max_id = 0
        if "StringIds" in tables:
            max_id = con.execute("SELECT coalesce(max(id), 0) FROM StringIds").fetchone()[0]
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
    finally:
        con.close()
    return Seed(name, path, path.stat().st_size, page_size, tables, rows, max_id)


def qname(name: str) -> str:
    """``name`` as an SQL identifier (double quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Sql:
    """Statements run on the report in one transaction.

    ``relax`` names tables whose NOT NULL constraints are dropped first (by editing their
    schema text), so that a NULL can be written where nsys never writes one.
    """

    label: str
    statements: tuple[str, ...]
    relax: tuple[str, ...] = ()
    #: The report stays one nsys could have written (an odd extra table, no kernel table,
    #: escapes in names ...): Strata must open it, not refuse it.
    valid: bool = False

    def apply(self, path: Path) -> None:
        if self.relax:
            _relax_not_null(path, self.relax)
        con = sqlite3.connect(path)
        try:
            for sql in self.statements:
                con.execute(sql)
            con.commit()
        finally:
            con.close()

    def __repr__(self) -> str:
        relax = f" [NOT NULL dropped on {', '.join(self.relax)}]" if self.relax else ""
        valid = " [still a valid report]" if self.valid else ""
        return f"Sql({self.label}{relax}{valid}: {'; '.join(self.statements)})"


def _relax_not_null(path: Path, tables: tuple[str, ...]) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA writable_schema = ON")
        for table in tables:
            con.execute(
                "UPDATE sqlite_master SET sql = replace(sql, ' NOT NULL', '') "
                "WHERE type = 'table' AND name = ?",
                (table,),
            )
        version = con.execute("PRAGMA schema_version").fetchone()[0]
        con.execute(f"PRAGMA schema_version = {version + 1}")
        con.commit()
    finally:
        con.close()


@dataclass(frozen=True)
class WalPending:
    """Leave ``statements`` committed in a ``-wal`` file beside the report, not in it.

    What a report still being written by another program looks like: reading the main
    file alone shows the older data.
    """

    label: str
    statements: tuple[str, ...]

    def apply(self, path: Path) -> None:
        con = sqlite3.connect(path)
        try:
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA wal_autocheckpoint = 0")
            for sql in self.statements:
                con.execute(sql)
            con.commit()
            # Copy the pair while the connection holds them: closing checkpoints the WAL.
            shutil.copyfile(path, f"{path}.main")
            shutil.copyfile(f"{path}-wal", f"{path}.wal")
        finally:
            con.close()
        os.replace(f"{path}.main", path)
        os.replace(f"{path}.wal", f"{path}-wal")
        Path(f"{path}-shm").unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"WalPending({self.label}: {'; '.join(self.statements)})"


@dataclass(frozen=True)
class Bytes:
    """Change the file's bytes: ``flip`` one bit, ``zero``/``set`` a range, ``truncate``."""

    label: str
    op: str
    offset: int
    arg: int = 0  # flip: the bit; zero: length; set: the byte value; truncate: unused

    def apply(self, path: Path) -> None:
        data = bytearray(path.read_bytes())
        at = min(self.offset, max(0, len(data) - 1))
        if self.op == "flip":
            data[at] ^= 1 << self.arg
        elif self.op == "zero":
            data[at : at + self.arg] = bytes(len(data[at : at + self.arg]))
        elif self.op == "set":
            data[at] = self.arg
        elif self.op == "truncate":
            del data[self.offset :]
        elif self.op == "append":
            data += bytes([0xA5]) * self.arg
        path.write_bytes(bytes(data))

    def __repr__(self) -> str:
        what = {
            "flip": f"flip bit {self.arg} of byte {self.offset}",
            "zero": f"zero {self.arg} bytes at {self.offset}",
            "set": f"set byte {self.offset} to {self.arg:#04x}",
            "truncate": f"truncate to {self.offset} bytes",
            "append": f"append {self.arg} bytes of 0xa5",
        }[self.op]
        return f"Bytes({self.label}: {what})"


def apply_all(path: Path, mutations: tuple) -> None:
    """Apply ``mutations``: SQL, then what goes to the -wal, then the bytes.

    That order keeps each meaningful: an SQL connection closing after a WalPending would
    checkpoint the -wal away, and SQL cannot run on a file whose bytes are already damaged.
    """
    rank = {Sql: 0, WalPending: 1, Bytes: 2}
    for mutation in sorted(mutations, key=lambda m: rank.get(type(m), 0)):
        mutation.apply(path)


def cache_files(root: Path) -> list[Path]:
    """Every file under the cache folder, in a stable order (what CacheDamage picks from)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file())


@dataclass(frozen=True)
class CacheDamage:
    """Damage one cache file: the ``pick``-th (modulo the count) of :func:`cache_files`.

    ``op``: ``flip`` a bit at ``where`` (a fraction of the size, in millionths), ``scatter``
    (flip that bit in every 64th byte of the quarter of the file from there: some land in
    offsets, lengths and values whatever the layout, while the file's head and tail may
    stay intact), ``zero`` 64 bytes there, ``truncate`` there, ``empty`` the file,
    ``delete`` it; ``delete-all`` deletes every file whose path ends with ``match`` (the
    stored answers, say, so that the next run reads the damaged entry beneath them).
    """

    pick: int
    op: str
    where: int = 0
    bit: int = 0
    match: str = ""  # when set: the first file whose path ends with this, else no damage

    def apply(self, root: Path) -> str:
        """Damage the file; return what was done, with the file's name (for the report)."""
        files = cache_files(root)
        if self.op == "delete-all":
            gone = [p for p in files if str(p).endswith(self.match)]
            for path in gone:
                path.unlink()
            return f"deleted the {len(gone)} files *{self.match}"
        if self.match:
            files = [p for p in files if str(p).endswith(self.match)][:1]
        if not files:
            return f"no cache file {self.match!r} to damage"
        path = files[self.pick % len(files)]
        rel = path.relative_to(root)
        data = bytearray(path.read_bytes())
        at = min(len(data) - 1, len(data) * self.where // 1_000_000) if data else 0
        if self.op == "delete":
            path.unlink()
            return f"deleted {rel}"
        if self.op == "empty":
            data = bytearray()
        elif self.op == "truncate":
            del data[at:]
        elif self.op == "zero" and data:
            data[at : at + 64] = bytes(len(data[at : at + 64]))
        elif self.op == "flip" and data:
            data[at] ^= 1 << self.bit
        elif self.op == "scatter" and data:
            for i in range(at, min(len(data), at + len(data) // 4), 64):
                data[i] ^= 1 << self.bit
        path.write_bytes(bytes(data))
        return f"{self.op} {rel} at byte {at} (bit {self.bit}) of {path.stat().st_size}"
