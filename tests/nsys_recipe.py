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

import pytest

__all__ = ["nsys_recipe", "stage_reports"]

_PACKAGE = Path("target-linux-x64/python/packages/nsys_recipe")


def _install_dir() -> Path:
    from analysis.open import find_nsys

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


def nsys_recipe(name: str, inputs: Path, output: Path, *args: str) -> Path:
    """Run nsys's recipe ``name`` on the staged ``inputs`` folder; return its output folder."""
    for module in ("psutil", "dask", "distributed", "pyarrow"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"nsys recipe needs the {module} package")
    install = _install_dir()
    package = output.parent / "nsys-recipe-package"
    if not package.exists():
        shutil.copytree(install / _PACKAGE, package / "nsys_recipe")
        (package / "nsys_recipe" / "third_party").mkdir()
    env = {
        **os.environ,
        "NSYS_DIR": str(install),
        "PYTHONPATH": str(package),
        "PATH": f"{install / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "nsys_recipe", name, "--input", str(inputs),
         "--output", str(output), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return output
