"""The layering rule (style.md §1), enforced on the source, not trusted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN_IN_VIEWER = {"sqlite3", "adbc_driver_sqlite", "adbc_driver_manager", "subprocess"}
QT = {"PySide6", "shiboken6", "pyqtgraph"}


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
