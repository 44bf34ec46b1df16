"""Start Strata: the command line, or the window with the built-in demo (``main.py``,
``python -m strata`` and the ``strata`` commands all start here).

The one module that knows both the application (``strata.app``) and its resources
(``strata.resources``): it hands the demo builder to the application, so that app/ never
imports resources/ and resources/ (whose screenshot script drives the window) sits above it.
An import contract (pyproject.toml) keeps the packages of ``strata`` free of cycles.
"""

from __future__ import annotations

import os
from pathlib import Path

from strata.app.cli import main as cli_main
from strata.app.cli import run as cli_run

__all__ = ["build_demo", "main", "run"]


def build_demo(folder: Path) -> list[Path]:
    """Build (or reuse) the built-in demo reports in ``folder``; return their paths."""
    # Imported when the demo is built: the command line never pays for it.
    from strata.resources.demo import build_demo_reports

    return build_demo_reports(folder)


def _one_blas_thread() -> None:
    """OpenBLAS (NumPy's) with one thread, unless the user chose: Strata does no float
    matrix products, and OpenBLAS starts a thread per core at NumPy's import that spins
    ~40 ms of CPU for nothing, next to the reader threads a cold ``stats`` starts then
    (2 M kernels + 2 M API calls: ~0.1 s of its ~0.65 s CPU). Before NumPy is imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str]) -> int:
    """Run the command line on ``argv``; return the exit status."""
    _one_blas_thread()
    return cli_main(argv, build_demo)


def run() -> None:
    """Console entry point of the ``strata`` and ``strata-gui`` commands."""
    _one_blas_thread()
    cli_run(build_demo)
