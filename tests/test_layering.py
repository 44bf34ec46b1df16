"""The layering rule (style.md §1), enforced on the source, not trusted."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import run_python

FORBIDDEN_IN_VIEWER = {"sqlite3", "adbc_driver_sqlite", "adbc_driver_manager", "subprocess"}
QT = {"PySide6", "shiboken6", "pyqtgraph"}
#: The viewer's package of state and NumPy logic the widgets render, tested without Qt: every
#: module in it (an import contract in pyproject.toml holds the package to it as well).
QT_FREE_VIEWER_PACKAGE = "strata.viewer.state"
QT_FREE_VIEWER = tuple(
    f"{QT_FREE_VIEWER_PACKAGE}.{path.stem}" if path.stem != "__init__" else QT_FREE_VIEWER_PACKAGE
    for path in sorted((ROOT / "viewer" / "state").glob("*.py"))
)


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imported_modules(tree: ast.AST) -> list[str]:
    """Every absolute module name ``tree`` imports (``a.b`` of ``from a.b import c``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _imports(tree: ast.AST) -> set[str]:
    """The top-level names ``tree`` imports, Strata's packages by their own names
    (``strata.app.cli`` counts as ``app``)."""
    return {name.removeprefix("strata.").split(".")[0] for name in _imported_modules(tree)}


#: The four packages, installed and imported only as ``strata.<name>`` (issue #22).
_OLD_TOP_LEVEL = {"analysis", "app", "viewer", "resources"}


def test_no_code_imports_strata_packages_by_their_old_top_level_names() -> None:
    """From the checkout root ``import analysis`` still finds the folder; a module imported
    that way would be a second copy beside ``strata.analysis`` (its own caches, its own
    classes), and it would fail once installed. Every import says ``strata.``."""
    found = []
    for folder in ("analysis", "app", "viewer", "resources", "tests", "benchmarks", "strata"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
                if name.split(".")[0] in _OLD_TOP_LEVEL:
                    found.append(f"{path.relative_to(ROOT)}: {name}")
    for path in (ROOT / "main.py", ROOT / "setup.py"):
        for name in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            if name.split(".")[0] in _OLD_TOP_LEVEL:
                found.append(f"{path.name}: {name}")
    assert not found, "\n".join(found)


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


def test_app_leaves_resources_to_the_start_up_and_resources_uses_app_s_public_names() -> None:
    """app/ gets the demo builder from strata.launch (it imports nothing of resources/), and
    resources/ (its screenshot script drives the window) imports only public app names: the
    arrow between them runs one way (the cycle contract holds it for the packages)."""
    found = []
    for path in _modules("app"):
        for name in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            if name.startswith("strata.resources"):
                found.append(f"{path.relative_to(ROOT)} imports {name}")
    for path in _modules("resources"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("strata.app"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                hidden = [p for p in node.module.split(".") if p.startswith("_")]
                if private or hidden:
                    found.append(f"{path.relative_to(ROOT)} imports {node.module}: {private}")
    assert found == []


@pytest.mark.parametrize("path", _modules("analysis"), ids=lambda p: p.name)
def test_analysis_never_imports_qt_or_upper_layers(path: Path) -> None:
    imported = _imports(ast.parse(path.read_text()))
    assert not (imported & (QT | {"app", "viewer"}))


_LINT = "import sys; from importlinter import cli; sys.exit(cli.lint_imports_command())"


def test_import_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts: layers, no Qt in analysis, no import cycles."""
    pytest.importorskip("importlinter", reason="import-linter is not installed (test extra)")
    proc = run_python("-c", _LINT, "--no-cache", timeout_s=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_type_checking_cycle_breaks_the_cycle_contract(tmp_path: Path) -> None:
    """The project's cycle contract and options catch a cycle closed only for type checking."""
    pytest.importorskip("importlinter", reason="import-linter is not installed (test extra)")
    pkg = tmp_path / "toypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toypkg import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toypkg import a\n"
    )
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    cycles = [c for c in options["contracts"] if c["type"] == "acyclic_siblings"]
    assert cycles, "pyproject.toml declares no acyclic_siblings contract"
    skip_type_checking = str(options["exclude_type_checking_imports"]).lower()
    config = tmp_path / "importlinter.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["toypkg"]\n'
        f"exclude_type_checking_imports = {skip_type_checking}\n"
        '[[tool.importlinter.contracts]]\nname = "cycles"\ntype = "acyclic_siblings"\n'
        'ancestors = ["toypkg"]\n'
    )
    proc = subprocess.run(
        [sys.executable, "-c", _LINT, "--no-cache", str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cycles BROKEN" in proc.stdout, proc.stdout


def _public_type_names(path: Path) -> set[str]:
    """Classes and CapWords type aliases (``Progress = Callable[...]``) a module defines."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id[:1].isupper() and not target.id.isupper():
                names.add(target.id)
    return {name for name in names if not name.startswith("_")}


#: Left to rename, with why: remove an entry once its name is defined once.
_KNOWN_TWICE: set[str] = set()


def test_each_type_name_is_defined_once() -> None:
    """One name, one meaning: no two modules define a class or type alias of the same name."""
    where: dict[str, list[str]] = {}
    for package in ("analysis", "viewer", "app", "resources"):
        for path in _modules(package):
            for name in _public_type_names(path):
                where.setdefault(name, []).append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert {name: paths for name, paths in twice.items() if name not in _KNOWN_TWICE} == {}


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
