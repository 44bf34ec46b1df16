"""The layering rule (style.md §1), enforced on the source, not trusted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import run_python

FORBIDDEN_IN_VIEWER = {"sqlite3", "adbc_driver_sqlite", "adbc_driver_manager", "subprocess"}
QT = {"PySide6", "shiboken6", "pyqtgraph"}
#: viewer modules that hold state and NumPy logic the widgets render: tested without Qt.
QT_FREE_VIEWER = ("viewer.state", "viewer.rows", "viewer.lod")


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", _modules("viewer"), ids=lambda p: p.name)
def test_viewer_opens_no_files_and_runs_no_sql(path: Path) -> None:
    tree = ast.parse(path.read_text())
    assert not (_imports(tree) & FORBIDDEN_IN_VIEWER)
    assert not (_imports(tree) & {"app"})
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            assert name not in {"open", "read_text", "read_bytes", "write_text", "write_bytes"}, (
                f"{path.name}:{node.lineno} calls {name}()"
            )


@pytest.mark.parametrize("path", _modules("analysis"), ids=lambda p: p.name)
def test_analysis_never_imports_qt_or_upper_layers(path: Path) -> None:
    imported = _imports(ast.parse(path.read_text()))
    assert not (imported & (QT | {"app", "viewer"}))


@pytest.mark.parametrize("module", QT_FREE_VIEWER)
def test_qt_free_viewer_modules_load_no_qt(module: str) -> None:
    """Not only their own imports: nothing they import may pull Qt in either."""
    code = (
        f"import sys, {module}; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(QT)!r}))"
    )
    done = run_python("-c", code, timeout_s=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
