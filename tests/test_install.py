"""A plain ``pip install .`` (no ``make``) into a fresh environment: the native reader is
built into the package with the machine's C compiler (setup.py), and without a compiler the
install still succeeds and Strata reads through ADBC, saying why once."""

from __future__ import annotations

import os
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: What pip prints when it cannot fetch the build requirements (setuptools) from an index.
_NO_NETWORK = (
    "Could not find a version that satisfies",
    "No matching distribution found",
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
)

#: Where pip (which builds in the source tree) must not pick up an earlier build: the copy
#: leaves out build outputs, ``make native``'s library and caches.
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "build", "out", "*.egg-info", "*.so", "__pycache__", ".*_cache"
)

_PROBE = """
import logging, sys
from strata.analysis import _native
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("LOG %(message)s"))
logging.getLogger(_native.__name__).addHandler(handler)
logging.getLogger(_native.__name__).setLevel(logging.INFO)
_native.available()
lib = _native._library()
print("MODULE", _native.__file__)
print("LOADED", lib._name if lib is not None else None)
"""


def _compiler() -> str | None:
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(command)[0])


def _install(tmp_path: Path, env_extra: dict[str, str]) -> Path:
    """Copy the checkout, ``pip install --no-deps`` it into a fresh venv; the venv's python.

    The venv sees this interpreter's site-packages (NumPy...) through a ``.pth`` line, after
    its own, so ``analysis`` is imported from the installed package only.
    """
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_NOT_COPIED)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "_strata_test_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CC")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         "--disable-pip-version-check", str(source)],
        capture_output=True, text=True, cwd=tmp_path, timeout=240, check=False,
        env=env | env_extra,
    )  # fmt: skip
    if done.returncode and any(words in done.stderr for words in _NO_NETWORK):
        pytest.skip(f"pip cannot fetch the build requirements (no network?): {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    return python


def _probe(python: Path, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STRATA_SQLITE_READER")}
    done = subprocess.run(
        [str(python), "-c", _PROBE], capture_output=True, text=True, cwd=tmp_path, env=env,
        timeout=120, check=True,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert sum(line.startswith("LOG ") for line in lines) <= 1, lines
    found = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in lines}
    found["LOGS"] = "\n".join(line for line in lines if line.startswith("LOG "))
    return found


@pytest.mark.slow
def test_a_plain_pip_install_loads_the_native_reader_from_the_package(tmp_path: Path) -> None:
    if _compiler() is None:
        pytest.skip("needs a C compiler (the CC of this Python's build, or cc)")
    python = _install(tmp_path, {})
    found = _probe(python, tmp_path)
    package = Path(found["MODULE"]).parent
    assert package.is_relative_to(tmp_path / "venv")
    assert found["LOADED"] == str(package / "libstrata_sqlread.so")
    assert found["LOGS"] == ""
    _assert_one_namespace(python, tmp_path)


def _assert_one_namespace(python: Path, tmp_path: Path) -> None:
    """Everything is installed under ``strata``; a user's own ``analysis/`` folder (a notebook
    folder, say) neither shadows Strata nor is shadowed, and ``python -m strata`` starts it."""
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()  # fmt: skip
    )
    installed = {p.name for p in purelib.iterdir() if not p.name.endswith((".pth", "-info"))}
    assert "strata" in installed
    assert not installed & {"analysis", "app", "viewer", "resources"}, installed
    notebook = tmp_path / "notebook"
    (notebook / "analysis").mkdir(parents=True)
    (notebook / "analysis" / "__init__.py").write_text("MINE = True\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = (
        "import analysis, strata.analysis; from strata.analysis import open_reports; "
        "print(analysis.MINE, strata.analysis.__version__ == strata.__version__)"
    )
    done = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, cwd=notebook, env=env,
        timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.split() == ["True", "True"]
    version = subprocess.run(
        [str(python), "-m", "strata", "--version"], capture_output=True, text=True,
        cwd=notebook, env=env, timeout=120, check=True,
    )  # fmt: skip
    assert version.stdout.split()[-1] == subprocess.run(
        [str(python), "-c", "import strata; print(strata.__version__)"],
        capture_output=True, text=True, cwd=notebook, env=env, check=True,
    ).stdout.strip()  # fmt: skip


@pytest.mark.slow
def test_without_a_compiler_the_install_succeeds_and_reads_through_adbc(tmp_path: Path) -> None:
    python = _install(tmp_path, {"CC": "/nonexistent/cc"})
    found = _probe(python, tmp_path)
    assert Path(found["MODULE"]).parent.is_relative_to(tmp_path / "venv")
    assert found["LOADED"] == "None"
    assert "ADBC" in found["LOGS"]
    assert "not built" in found["LOGS"]
