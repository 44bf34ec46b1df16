"""Run nsys 2023.4's own ``nsys recipe`` as the oracle of the recipe tests (offline).

``nsys recipe`` needs the Python packages of ``requirements/common.txt`` (our test venv has
them but plotly/jupyter, which no recipe run imports) and a ``third_party`` folder that the
CLI-only install lacks. So the oracle runs an untouched copy of nsys's ``nsys_recipe``
package (plus that empty folder) with this interpreter, ``NSYS_DIR`` pointing at the
install for its reports, rules and SQLite library. Nothing of nsys is modified.

nsys recipes take ``.nsys-rep`` files; a SQLite export next to one, newer than it, is used
as it is (its ``StatsService`` checks only the times), so a SQLite report is offered as an
empty ``X.nsys-rep`` followed by a copy ``X.sqlite``. Recipes that read Parquet exports
instead need a real ``.nsys-rep`` (``nsys export`` runs offline).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

__all__ = ["nsys_output_names", "nsys_recipe", "stage_parquet", "stage_reports"]

_PACKAGE = Path("target-linux-x64/python/packages/nsys_recipe")


def _install_dir() -> Path:
    from strata.analysis.open import find_nsys

    nsys = find_nsys()
    if nsys is None:
        pytest.skip("needs nsys (PATH or $NSYS) as the oracle")
    for parent in Path(nsys).resolve().parents:
        if (parent / _PACKAGE).is_dir():
            return parent
    pytest.skip(f"{nsys}: no nsys_recipe package in its install")


def stage_reports(sources: Sequence[Path], folder: Path) -> Path:
    """Copy ``sources`` into ``folder`` as nsys recipes take them; return ``folder``.

    A ``.nsys-rep`` is copied as it is; a ``.sqlite`` becomes an empty ``.nsys-rep`` and,
    strictly later, its copy.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        if source.suffix == ".sqlite":
            (folder / source.with_suffix(".nsys-rep").name).write_bytes(b"")
            time.sleep(0.02)  # the export must be newer than the report (ctime)
        shutil.copy(source, folder / source.name)
    return folder


def _empty_tables(extra: dict[str, Sequence[str]]) -> dict[str, list[str]]:
    """Table -> columns of every nsys 2023.4 table our demo schema knows, plus ``extra``."""
    import sqlite3

    from strata.resources.demo_schema import create_schema

    con = sqlite3.connect(":memory:")
    create_schema(con)
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    tables = {t: [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')] for t in names}
    con.close()
    return {**tables, **{t: list(c) for t, c in extra.items()}}


def stage_parquet(
    sources: Sequence[Path], folder: Path, absent: dict[str, Sequence[str]] | None = None
) -> Path:
    """Stage ``sources`` for the recipes that read Parquet exports; return ``folder``.

    A ``.nsys-rep`` is copied as it is (nsys exports it itself, offline). A ``.sqlite``
    becomes an empty ``X.nsys-rep`` and, strictly later, ``X_pqtdir/<TABLE>.parquet`` for
    every table: each table read with pandas as nsys's own SQLite loader reads one, written
    with pyarrow (a NULL-holding integer column is float64 both ways). A table the report
    lacks is written empty, as ``nsys export`` does: those of our nsys 2023.4 schema
    (:mod:`resources.demo_schema`) and ``absent`` (table -> columns). So nsys's recipe code
    runs on reports written by our own code (the demo's NCCL ranks, planted MPI tables), and
    on SQLite exports of real reports: its own export of an ``.nsys-rep`` writes ids as
    uint64, on which nsys 2023.4's ``globalPid >> 24`` raises a TypeError (every recipe
    that takes a PID from an id fails there).
    """
    import sqlite3

    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        if source.suffix != ".sqlite":
            shutil.copy(source, folder / source.name)
            continue
        (folder / source.with_suffix(".nsys-rep").name).write_bytes(b"")
        time.sleep(0.02)  # the export must be newer than the report (ctime)
        out = folder / f"{source.stem}_pqtdir"
        out.mkdir()
        con = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        con.text_factory = lambda b: b.decode("utf-8", errors="replace")
        try:
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            tables = [r[0] for r in con.execute(query)]
            for table in tables:
                frame = pd.read_sql_query(f'SELECT * FROM "{table}"', con)
                frame.to_parquet(out / f"{table}.parquet", index=False)
            for table, columns in _empty_tables(absent or {}).items():
                if table not in tables:
                    empty = pd.DataFrame({c: pd.Series(dtype="int64") for c in columns})
                    empty.to_parquet(out / f"{table}.parquet", index=False)
        finally:
            con.close()
    return folder


def _package(where: Path) -> tuple[Path, dict[str, str]]:
    """An untouched copy of nsys's ``nsys_recipe`` package under ``where``, and the
    environment that runs it."""
    for module in ("psutil", "dask", "distributed", "pyarrow"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"nsys recipe needs the {module} package")
    install = _install_dir()
    package = where / "nsys-recipe-package"
    if not package.exists():
        shutil.copytree(install / _PACKAGE, package / "nsys_recipe")
        (package / "nsys_recipe" / "third_party").mkdir()
    env = {
        **os.environ,
        "NSYS_DIR": str(install),
        "PYTHONPATH": str(package),
        "PATH": f"{install / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return package, env


def nsys_output_names(
    patterns: Sequence[str], cwd: Path, environ: dict[str, str]
) -> tuple[list[str], str]:
    """What nsys's ``--output`` type (``nsys_recipe.lib.args.process_output``) makes of each
    pattern, run in ``cwd`` with ``environ`` added: the names, and its log (one line per
    warning or error, ``LEVEL: text``)."""
    import json

    _, env = _package(cwd.parent)
    script = (
        "import json, sys\n"
        "from nsys_recipe import log\n"
        "from nsys_recipe.lib.args import process_output\n"
        "log.customize_logger('stderr', 'info')\n"
        "print(json.dumps([process_output(p) for p in json.loads(sys.argv[1])]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(list(patterns))],
        capture_output=True, text=True, env={**env, **environ}, cwd=cwd, timeout=60,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout), proc.stderr


def nsys_recipe(name: str, inputs: Path, output: Path, *args: str) -> Path:
    """Run nsys's recipe ``name`` on the staged ``inputs`` folder; return its output folder."""
    _, env = _package(output.parent)
    proc = subprocess.run(
        [sys.executable, "-m", "nsys_recipe", name, "--input", str(inputs),
         "--output", str(output), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return output
