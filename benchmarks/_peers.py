"""Peers of ``stats`` that are not nsys: DuckDB's SQLite scanner and nsys-ai.

Each peer runs as a whole process (start-up included, as a user runs it) with its wall
seconds, CPU seconds and peak resident memory measured by :func:`measure`. A peer that is
not installed is skipped with the reason (``Skipped``); neither is a runtime dependency of
Strata (``pip install -e .[bench]`` brings DuckDB 1.4 and its SQLite scanner package).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Measured",
    "Skipped",
    "duckdb_command",
    "measure",
    "nsys_ai_command",
    "python_for_duckdb",
]

# The two summaries' work in DuckDB: one GROUP BY per table with nsys stats's columns
# (count, total, mean, median, min, max, sample standard deviation), names from StringIds.
_DUCKDB_SCRIPT = r"""
import sys, duckdb
path = sys.argv[1]
con = duckdb.connect()
try:
    import duckdb_ext, os
    ext = os.path.join(list(duckdb_ext.__path__)[0], "extensions",
                       "v" + duckdb.__version__, "linux_amd64", "sqlite_scanner.duckdb_extension")
    con.load_extension(ext)
except ImportError:
    con.load_extension("sqlite")
q = '''
SELECT s.value AS name, count(*), sum(d), avg(d), median(d), min(d), max(d), stddev_samp(d)
FROM (SELECT {name} AS id, "end" - start AS d FROM sqlite_scan(?, '{table}')) t
JOIN sqlite_scan(?, 'StringIds') s ON s.id = t.id
GROUP BY s.value ORDER BY 3 DESC
'''
rows = 0
for table, name in (("CUPTI_ACTIVITY_KIND_KERNEL", "shortName"),
                    ("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId")):
    rows += len(con.execute(q.format(table=table, name=name), [path, path]).fetchall())
print(rows)
"""


class Skipped(Exception):
    """A peer that cannot run here; the message says why."""


@dataclass(frozen=True)
class Measured:
    """One whole-process run: wall and CPU seconds, peak resident memory in bytes."""

    wall_s: float
    cpu_s: float
    peak_rss_bytes: int


# The measured command runs under this small launcher, which reports its children's peak
# RSS: a child forked straight from the benchmark would inherit the benchmark's own high-water
# mark (Linux keeps a process's peak RSS across fork and exec), so every peer read ~120 MB.
_LAUNCHER = r"""
import json, os, resource, subprocess, sys, time
cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
proc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, check=False)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump({"rc": proc.returncode, "cpu": u.ru_utime + u.ru_stime - cpu0.ru_utime
               - cpu0.ru_stime, "maxrss_kib": u.ru_maxrss}, out)
"""


def measure(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> Measured:
    """Run ``cmd`` to its end; its wall, CPU (it and its children) and peak RSS."""
    import json

    with tempfile.TemporaryDirectory(prefix="bench-measure-") as tmp:
        result = Path(tmp) / "usage.json"
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, str(result), *cmd],
                              env=env, cwd=cwd, stderr=subprocess.PIPE, check=False)  # fmt: skip
        wall = time.perf_counter() - t0
        usage = json.loads(result.read_text()) if result.exists() else {"rc": proc.returncode}
    if proc.returncode != 0 or usage["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed: {proc.stderr.decode()[-500:]}")
    return Measured(wall, usage["cpu"], usage["maxrss_kib"] * 1024)


def duckdb_command(python: str, report: Path) -> list[str]:
    """The DuckDB peer's command line, or :class:`Skipped` when ``python`` lacks DuckDB."""
    probe = subprocess.run([python, "-c", "import duckdb; print(duckdb.__version__)"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if probe.returncode != 0:
        raise Skipped(f"DuckDB not importable by {python} (pip install -e '.[bench]')")
    return [python, "-c", _DUCKDB_SCRIPT, str(report)]


def nsys_ai_command(executable: str | None, workdir: Path, report: Path) -> tuple[list[str], Path]:
    """nsys-ai's kernel summary (``skill run top_kernels``) on a link to ``report``.

    nsys-ai writes a cache beside the report it reads, so it reads a symbolic link in a fresh
    scratch folder (returned; the caller removes it): the first run builds that cache, a
    second run of the same command reads it. :class:`Skipped` when not installed.
    """
    exe = executable or shutil.which("nsys-ai")
    if not exe:
        raise Skipped("nsys-ai not installed (pip install nsys-ai; give --nsys-ai PATH)")
    scratch = Path(tempfile.mkdtemp(prefix="bench-nsys-ai-", dir=workdir))
    link = scratch / report.name
    os.symlink(report.resolve(), link)
    return [exe, "skill", "run", "top_kernels", str(link)], scratch


def python_for_duckdb(given: str | None) -> str:
    """The interpreter that runs the DuckDB peer: ``given``, else this one."""
    return given or sys.executable
