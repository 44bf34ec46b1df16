"""Helpers shared by tests: read-only SQL (the oracle), mutating copies, running the CLI."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from strata.analysis._tablespecs import SPECS
from tests.conftest import ROOT

if TYPE_CHECKING:
    from strata.analysis.model import EventTable, Report

__all__ = [
    "SOURCE_TABLES",
    "assert_same_output_in_every_mode",
    "mutate_sqlite",
    "run_cli",
    "run_notebook",
    "run_cli_forked",
    "sql_rows",
]

#: Our event kind -> the nsys table its rows come from, one row per row (no filtering): the
#: loader's table specs.
SOURCE_TABLES = {kind: spec.source for kind, spec in SPECS.items()}


def sql_rows(path: Path | str, query: str, *params: object) -> list[tuple]:
    """Run ``query`` on a report opened read-only (lenient text) and return every row."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def mutate_sqlite(path: Path, *statements: str) -> None:
    """Run write statements on ``path`` — only ever a copy made by the test in tmp_path."""
    con = sqlite3.connect(path)
    try:
        for sql in statements:
            con.execute(sql)
        con.commit()
    finally:
        con.close()


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout_s: int = 300, fresh: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``python main.py ARGS`` from the repository root and capture its output.

    In a process forked from :mod:`tests._forkserver` (a fresh Strata, warm third-party
    libraries: :func:`run_cli_forked`), or with ``fresh`` in a bare new interpreter (for what
    the fork cannot show: start-up, imports, packaging).
    """
    if fresh:
        return run_python(str(ROOT / "main.py"), *args, env=env, timeout_s=timeout_s)
    return run_cli_forked(*args, env=env, timeout_s=timeout_s)


def run_python(
    *args: str, env: dict[str, str] | None = None, timeout_s: int = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` in a fresh interpreter from the repository root; capture its output."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout_s,
        check=False,
        env=env if env is not None else dict(os.environ),
    )


def run_cli_forked(
    *args: str, env: dict[str, str] | None = None, timeout_s: int = 300
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` (or ``run_python("-c", CODE, ...)`` when ARGS start with ``-c``) in a
    process forked from a server that has imported NumPy, pandas and pyarrow
    (:mod:`tests._forkserver`): a fresh Strata (no module state shared with any other run),
    its own environment, streams and exit status, without the libraries' import per run.

    For tests that run many short commands in sequence (the cache-order tests). Tests about
    what a command imports need :func:`run_cli` (a bare interpreter).
    """
    from tests import _forkserver

    argv = list(args) if args[:1] == ("-c",) else [str(ROOT / "main.py"), *args]
    environ = env if env is not None else dict(os.environ)
    code, out, err = _forkserver.run(argv, environ, timeout_s)
    return subprocess.CompletedProcess(argv, code, out, err)


def run_notebook(path: Path, cwd: Path | None = None) -> dict:
    """Execute the code cells of the Jupyter notebook ``path`` in order, in one fresh
    namespace, with matplotlib's Agg backend and ``cwd`` (default: the notebook's folder) as
    the working directory, as Jupyter runs it; return the namespace.

    Each cell's last expression is evaluated as Jupyter shows it (its value discarded).
    Figures are closed afterwards; ``namespace["_figures"]`` counts those the cells drew.
    """
    import ast
    import contextlib
    import io
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    namespace: dict = {"__name__": "__main__"}
    before = set(plt.get_fignums())
    previous = Path.cwd()
    os.chdir(cwd or Path(path).parent)
    try:
        for number, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            tree = ast.parse(source, f"{Path(path).name} cell {number}")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            name = f"{Path(path).name} cell {number}"
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(tree, name, "exec"), namespace)  # noqa: S102 - the notebook's own
                if last is not None:
                    eval(compile(ast.Expression(last.value), name, "eval"), namespace)  # noqa: S307
        namespace["_figures"] = len(set(plt.get_fignums()) - before)
    finally:
        os.chdir(previous)
        plt.close("all")
    return namespace


def assert_same_output_in_every_mode(
    name: str, inputs: list, options: object, out: Path, scheduler: str
) -> None:
    """Run recipe ``name`` serially, in two processes and on the Dask ``scheduler``; assert
    one summary and byte-identical table files (Parquet, CSV) in the three output folders
    (``out/<name>-<mode>``; the JSON files carry the mode and times)."""
    from strata.analysis.recipes import run_recipe, write_output

    outs, summaries = {}, set()
    for mode, extra in (("serial", {}), ("processes", {"workers": 2}),
                        ("dask", {"scheduler": scheduler})):  # fmt: skip
        run = run_recipe(name, inputs, options, mode=mode, **extra)
        outs[mode] = out / f"{name}-{mode}"
        summaries.add(run.output.summary)  # summary.txt adds the mode and time
        write_output(run.output, outs[mode], run)
    assert len(summaries) == 1
    files = sorted(p.name for p in outs["serial"].iterdir() if p.suffix != ".json")
    assert any(f.endswith(".parquet") for f in files)
    for mode in ("processes", "dask"):
        assert files == sorted(p.name for p in outs[mode].iterdir() if p.suffix != ".json")
        for file in files:
            if file.endswith((".parquet", ".csv")):
                a = (outs["serial"] / file).read_bytes()
                assert a == (outs[mode] / file).read_bytes(), (name, mode, file)


def assert_same_table(a: EventTable, b: EventTable) -> None:
    """Two event tables hold the same columns, values and track keys."""
    import numpy as np

    assert a.kind == b.kind
    assert sorted(a.columns) == sorted(b.columns)
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f"{a.kind}.{name}")
    assert a.track_keys.equals(b.track_keys)


def assert_same_report(a: Report, b: Report) -> None:
    """Two complete reports hold the same events, strings, threads and processes."""
    from strata.analysis.kinds import event_tables

    assert a.complete
    assert b.complete
    for kind in event_tables():
        assert_same_table(a.tables[kind], b.tables[kind])
    assert list(a.strings.values) == list(b.strings.values)
    assert a.threads.equals(b.threads)
    assert a.processes.equals(b.processes)
