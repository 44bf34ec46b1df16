"""Which heavy modules each CLI command imports, each run in a fresh interpreter (issue #13).

Start-up is most of a short command's time: pandas alone takes longer to import than
``nsys stats`` takes to answer on a small report. So each command may import only the heavy
modules it needs; the allowances below say why each one is needed. A command that imports
fewer is fine (the test fails only when one imports *more*); one that imports a module
outside its allowance fails, naming it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.conftest import plant
from tests.helpers import run_python

#: Third-party packages that cost tens to hundreds of milliseconds to import.
HEAVY = frozenset(
    {
        "PySide6", "shiboken6", "pyqtgraph", "matplotlib", "PIL",  # GUI and plots
        "numpy", "pandas", "pyarrow", "adbc_driver_manager", "adbc_driver_sqlite",
        "dask", "distributed", "cloudpickle", "psutil", "cupy",
    }
)  # fmt: skip

#: Never on a headless command that draws nothing: the Qt stack and the plotting libraries.
NEVER = frozenset({"PySide6", "shiboken6", "pyqtgraph", "matplotlib", "PIL", "dask"})

#: A loaded report: its model holds NumPy columns and pandas frames (processes, GPUs,
#: threads), and the columnar cache it comes from is Arrow IPC. pyarrow brings cloudpickle.
#: ``xp`` may look for CuPy (only where it is installed) to pick the default backend.
_MODEL = frozenset({"numpy", "pandas", "pyarrow", "cloudpickle"})
#: Reading the report itself (no cache, or a cold one): the ADBC SQLite driver.
_READ = frozenset({"adbc_driver_manager", "adbc_driver_sqlite"})

#: command (before the report path) -> heavy modules it may import.
ALLOWED = {
    # Prints a constant: nothing heavy at all (the sub-commands' parsers are not built).
    ("--version",): frozenset(),
    # The report summary comes from the (cached) model: process and GPU tables are frames.
    ("info",): _MODEL,
    ("info", "--no-cache"): _MODEL | _READ,
    # Run a second time, the summary is printed from its stored answer (analysis.answers):
    # plain Python lists formatted by analysis.stats.text, nothing heavy at all.
    ("stats", "-r", "cuda_gpu_kern_sum"): frozenset(),
    # Computed by the column path (the suite's default, tests/conftest.py; a small report
    # goes the SQL path otherwise, see below), summaries are DataFrames
    # (analysis.stats.StatsResult.frame) formatted by analysis.stats.format; the lean cache
    # entry is Arrow IPC.
    ("stats", "--no-cache", "-r", "cuda_gpu_kern_sum"): _MODEL | _READ | {"cupy"},
}

# Runs main.py as ``python main.py ARGS`` would, then writes the modules it imported.
_PROBE = """
import json, runpy, sys
out, sys.argv = sys.argv[1], ["main.py", *sys.argv[2:]]
try:
    runpy.run_path("main.py", run_name="__main__")
    status = 0
except SystemExit as exc:
    status = exc.code or 0
with open(out, "w") as fh:
    json.dump({"status": status, "modules": sorted(sys.modules)}, fh)
"""


def _heavy_imports(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    proc = run_python("-c", _PROBE, str(out), *args, timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(out.read_text())
    assert probe["status"] == 0, proc.stderr
    return {name.split(".")[0] for name in probe["modules"]} & HEAVY


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plant(tmp_path_factory.mktemp("import-set") / "r.sqlite")


@pytest.mark.parametrize("command", list(ALLOWED), ids=" ".join)
def test_command_imports_only_what_it_needs(
    command: tuple[str, ...], report: Path, tmp_path: Path
) -> None:
    args = command if command == ("--version",) else (*command, str(report))
    if "--no-cache" not in command and command != ("--version",):
        _heavy_imports(tmp_path, *args)  # fill the cache: the run below is the cached one
    imported = _heavy_imports(tmp_path, *args)
    assert not imported & NEVER, f"{' '.join(command)} imports {sorted(imported & NEVER)}"
    extra = imported - ALLOWED[command]
    assert not extra, f"{' '.join(command)} imports {sorted(extra)}, not needed there"


def test_version_imports_no_sub_command(tmp_path: Path) -> None:
    """``--version`` builds no sub-command parser: their modules import the model."""
    out = tmp_path / "modules.json"
    proc = run_python("-c", _PROBE, str(out), "--version", timeout_s=120)
    assert proc.stdout.startswith("strata ")
    modules = set(json.loads(out.read_text())["modules"])
    assert not {m for m in modules if m.startswith("strata.app.cli.")}
    assert "strata.analysis.model" not in modules


@pytest.mark.parametrize("specs", ["cuda_gpu_kern_sum", "cuda_api_sum,osrt_sum", None])
def test_first_stats_on_a_small_report_imports_nothing_heavy(
    specs: str | None, report: Path, tmp_path: Path
) -> None:
    """The SQL path (the default for a report this small): the first run (no stored answer
    yet, which it stores) and the second (answered) import nothing heavy; None: the default
    summary set (nvtx_sum first), as a plain ``stats R``."""
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path / "fresh-cache")}
    env.pop("STRATA_STATS_PATH", None)
    args = ("stats", str(report)) if specs is None else ("stats", "-r", specs, str(report))
    for run in ("first", "answered"):
        out = tmp_path / f"{run}.json"
        proc = run_python("-c", _PROBE, str(out), *args, env=env)
        assert proc.returncode == 0, proc.stderr
        modules = {m.split(".")[0] for m in json.loads(out.read_text())["modules"]}
        assert not modules & HEAVY, f"{run} run imports {sorted(modules & HEAVY)}"
    assert (tmp_path / "fresh-cache" / "answers").is_dir()  # the first run stored them


# Opens a report for the two lean summaries, noting which thread first imports pandas.
_LEAN_PROBE = """
import importlib.abc, json, sys, threading
importers = []

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "pandas" and "pandas" not in sys.modules:
            importers.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watch())
from strata.analysis.stats.lean import open_for_stats
imported = "pandas" in sys.modules
report = open_for_stats(sys.argv[1], ["cuda_gpu_kern_sum", "cuda_api_sum"], use_cache=False)
print(json.dumps({"imported": imported, "importers": importers, "rows": len(report.kernels)}))
"""


def test_a_cold_stats_reads_its_columns_before_it_needs_pandas(report: Path) -> None:
    """``stats`` imports pandas on another thread while the reader threads read the columns
    (analysis.stats.compute): neither the lean read's modules nor the reader threads may
    import it, or the read waits for that import (~0.25 s) instead of overlapping it."""
    proc = run_python("-c", _LEAN_PROBE, str(report), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    assert probe["rows"] == 2
    assert not probe["imported"], "importing analysis.stats.lean imports pandas"
    assert not [t for t in probe["importers"] if t.startswith("strata-read")], probe


#: Standard modules a small report's stats (computed in SQLite, or answered from its stored
#: answer) has no use for, each a millisecond or more of a ~60 ms run (hashlib's OpenSSL
#: binding: ~2 ms; logging, with the traceback and tokenize it imports, ~6 %; shutil, with
#: its archive modules, ~3 %; textwrap, whose wrapper compiles five patterns: help only).
_INCIDENTAL = frozenset(
    {"_hashlib", "tempfile", "secrets", "gzip", "html", "concurrent.futures", "logging",
     "shutil", "bz2", "lzma", "difflib", "traceback", "textwrap"}
)  # fmt: skip


def test_a_small_stats_imports_no_incidental_standard_module(report: Path, tmp_path: Path) -> None:
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("STRATA_STATS_PATH", None)
    for run in ("first", "answered"):
        out = tmp_path / f"{run}.json"
        proc = run_python("-c", _PROBE, str(out), "stats", "-r", "cuda_gpu_kern_sum",
                          str(report), env=env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        modules = set(json.loads(out.read_text())["modules"])
        # The first run stores its answer (a file written aside, renamed into place) and
        # computes in SQLite: the answered run does neither (threading: the reader's).
        unused = _INCIDENTAL if run == "first" else _INCIDENTAL | {"sqlite3", "threading"}
        assert not modules & unused, (run, sorted(modules & unused))
