"""``info --schema``: every table of the SQLite file, with its rows and columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from strata.analysis.timefmt import pluralize
from strata.app.cli import main
from tests.cli.conftest import plant
from tests.helpers import mutate_sqlite


def _tables(path: Path) -> dict[str, int]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        con.close()


def test_schema_lists_every_table_with_its_rows_and_columns(tmp_path: Path, capsys) -> None:
    report = plant(tmp_path / "r.sqlite")
    assert main(["info", "--no-cache", "--schema", str(report)]) == 0
    out = capsys.readouterr().out
    listed = out.split("  tables:\n", 1)[1]
    for name, rows in _tables(report).items():
        assert f"\n    {name}  {pluralize(rows, 'row')}\n" in "\n" + listed
    assert "\n      demangledName  INTEGER" in listed


def test_schema_names_are_escaped_and_views_not_counted(tmp_path: Path, capsys) -> None:
    """A table named with an escape sequence cannot drive the terminal; a view (which may
    never end) is not listed."""
    report = plant(tmp_path / "r.sqlite")
    mutate_sqlite(
        report,
        'CREATE TABLE "odd\x1b[2Jname" (x INTEGER)',
        "CREATE VIEW loop AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        "SELECT n FROM c",
    )
    assert main(["info", "--no-cache", "--schema", str(report)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "    odd\\x1b[2Jname  0 rows" in out
    assert "loop" not in out
