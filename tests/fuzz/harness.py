"""Run CLI steps in a forked child of the fuzz server and check what came back.

:class:`Runner` talks to :mod:`tests.fuzz._server`; :func:`check_clean` and the other checks
raise a :class:`FuzzFailure` subclass named after what went wrong (``Crash``, ``Hang``,
``Escaped_MemoryError_at_analysis_x_py_12`` ...), one stable class per kind of failure, so
that Hypothesis tells distinct bugs apart and a report lists each once.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ROOT, fingerprint

__all__ = [
    "FuzzFailure",
    "JobResult",
    "Runner",
    "StepResult",
    "check_clean",
    "check_same",
    "check_unchanged",
    "failure",
    "folder_state",
]


class FuzzFailure(AssertionError):
    """Base of every property violation the fuzz suite reports."""


_CLASSES: dict[str, type[FuzzFailure]] = {}


def failure(kind: str, message: str) -> FuzzFailure:
    """Return a FuzzFailure of the (stable, cached) subclass named after ``kind``."""
    name = re.sub(r"\W+", "_", kind).strip("_")[:120] or "Failure"
    if name not in _CLASSES:
        _CLASSES[name] = type(name, (FuzzFailure,), {"__module__": __name__})
    return _CLASSES[name](message)


@dataclass
class StepResult:
    """One ``main(argv)`` call in the child: exit status, outputs, what escaped."""

    argv: list[str]
    rc: int | None = None
    out: str = ""
    err: str = ""
    exc: dict | None = None
    wall_s: float = 0.0
    finished: bool = False

    def where(self) -> str:
        """The command, printable: odd characters of a path shown as escapes."""
        return "main.py " + " ".join(_printable(a) for a in self.argv)


def _printable(text: str) -> str:
    if text.isprintable() and text.isascii():
        return text
    return ascii(text)


@dataclass
class JobResult:
    """What a job left: its steps (the last one unfinished if the child died in it)."""

    steps: list[StepResult] = field(default_factory=list)
    timed_out: bool = False
    signal: int | None = None
    exit: int | None = None
    wall_s: float = 0.0
    raw_stderr: str = ""

    def check_alive(self, context: str = "") -> None:
        """Raise Hang or Crash when the child did not end normally."""
        step = next((s for s in self.steps if not s.finished), None)
        where = step.where() if step else "(between steps)"
        tail = self.raw_stderr[-3000:]
        if self.timed_out:
            raise failure("Hang", f"{where}: no answer within the time limit; {context}\n{tail}")
        if self.signal is not None:
            name = signal.Signals(self.signal).name
            raise failure(f"Crash_{name}", f"{where}: killed by {name}; {context}\n{tail}")
        if self.exit != 0 or step is not None:
            raise failure("Crash", f"{where}: child exit {self.exit}; {context}\n{tail}")


class Runner:
    """A client of the fork server (one per test session)."""

    def __init__(self, timeout_s: float, mem_mb: int) -> None:
        self.timeout_s = timeout_s
        self.mem_mb = mem_mb
        self.jobs = 0
        self._tmp = Path(tempfile.mkdtemp(prefix="strata-fuzz-jobs-"))
        self._proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT)  # this checkout's packages, never an installed copy
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz._server"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read_line(proc, 120.0)
        if "ready" not in ready:
            raise RuntimeError(f"the fuzz server did not start: {ready}")
        return proc

    @staticmethod
    def _read_line(proc: subprocess.Popen, timeout_s: float) -> dict:
        ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            raise RuntimeError("the fuzz server stopped answering")
        return json.loads(line)

    def run(
        self, steps: list[list[str]], env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> JobResult:
        """Run ``main(argv)`` for each argv of ``steps``, in order, in one fresh child."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        self.jobs += 1
        result = self._tmp / f"job{self.jobs}.jsonl"
        job = {
            "steps": [[str(a) for a in argv] for argv in steps],
            "env": env or {},
            "timeout_s": self.timeout_s,
            "mem_mb": self.mem_mb,
            "result": str(result),
            "cwd": str(cwd) if cwd else None,
        }
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        reply = self._read_line(self._proc, self.timeout_s + 60.0)
        out = JobResult(**reply)
        out.steps = _read_steps(result)
        raw = Path(f"{result}.stderr")
        out.raw_stderr = raw.read_text(errors="replace") if raw.exists() else ""
        result.unlink(missing_ok=True)
        raw.unlink(missing_ok=True)
        return out

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        for leftover in self._tmp.glob("*"):
            leftover.unlink(missing_ok=True)
        self._tmp.rmdir()


def _read_steps(path: Path) -> list[StepResult]:
    steps: list[StepResult] = []
    if not path.exists():
        return steps
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "start" in record:
            steps.append(StepResult(argv=record["start"]))
        else:
            step = steps[-1]
            step.rc, step.out, step.err = record["rc"], record["out"], record["err"]
            step.exc, step.wall_s, step.finished = record["exc"], record["wall_s"], True
    return steps


#: What stderr may hold: our one-line errors and log records (logging.basicConfig's format).
_STDERR_LINE = re.compile(r"(strata|DEBUG|INFO|WARNING|ERROR|CRITICAL): ?")
#: Control characters a report could use to drive a terminal (everything but \t and \n).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def check_clean(step: StepResult, reports: int = 1, context: str = "") -> None:
    """Property (a): only Strata's own errors, as ``strata: ...`` lines, no traceback.

    ``main`` returned 0, 1 or 2; nothing escaped; stderr holds no traceback and at most one
    ``strata:`` line per report (at least one when the status is not 0); a failure wrote
    nothing to stdout; stderr holds nothing else than log records; neither stream holds a raw
    control character (a report's names must not reach the terminal unescaped).
    """
    where = f"{step.where()}  [{context}]"
    if step.exc is not None:
        exc = step.exc
        raise failure(
            f"Escaped_{exc['type']}_at_{exc['origin']}",
            f"{where}: {exc['type']} escaped main(): {exc['message'][:300]}\n{exc['traceback']}",
        )
    if step.rc not in (0, 1, 2):
        raise failure("BadExitStatus", f"{where}: exit status {step.rc}")
    lines = step.err.splitlines()
    if any("Traceback (most recent call last)" in line for line in lines):
        raise failure("TracebackOnStderr", f"{where}: traceback on stderr:\n{step.err[-2000:]}")
    errors = [line for line in lines if line.startswith("strata: ")]
    if len(errors) > reports or (step.rc != 0 and not errors):
        raise failure(
            "ErrorLines", f"{where}: exit {step.rc} with {len(errors)} 'strata:' lines:\n{step.err}"
        )
    stray = [line for line in lines if line.strip() and not _STDERR_LINE.match(line)]
    if stray:
        raise failure("StrayStderr", f"{where}: unexpected stderr lines: {stray[:5]!r}")
    if step.rc == 2 and step.out.strip():
        raise failure("OutputOnFailure", f"{where}: exit 2 but stdout holds:\n{step.out[:500]}")
    for stream, text in (("stdout", step.out), ("stderr", step.err)):
        found = _CONTROL.search(text)
        if found:
            at = found.start()
            raise failure(
                f"ControlCharOn{stream}",
                f"{where}: raw control character {found.group()!r} on {stream}: "
                f"{text[max(0, at - 80) : at + 40]!r}",
            )


def check_same(step: StepResult, truth: StepResult, context: str = "") -> None:
    """Property (d): a cached run gives what ``--no-cache`` gives (status and output).

    ``info`` is compared line by line in any order: its list of event tables comes out in
    another order from the cache (a cosmetic difference, reported apart), and must not hide
    a wrong number here.
    """
    if step.rc != truth.rc:
        raise failure(
            "CachedStatusDiffers",
            f"{step.where()}  [{context}]: exit {step.rc}, but {truth.where()} exits "
            f"{truth.rc}\ncached stderr: {step.err[-600:]}\nuncached stderr: {truth.err[-600:]}",
        )
    if step.rc != 0 or step.out == truth.out:
        return
    if step.argv[0] == "info" and sorted(step.out.splitlines()) == sorted(truth.out.splitlines()):
        return
    raise failure(
        "CachedOutputDiffers",
        f"{step.where()}  [{context}]: output differs from {truth.where()}:\n"
        + first_difference(step.out, truth.out),
    )


def first_difference(got: str, want: str) -> str:
    a, b = got.splitlines(), want.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            head = "\n".join(b[max(0, i - 3) : i])
            return f"line {i + 1}:\n{head}\n  got:  {x[:300]}\n  want: {y[:300]}"
    return f"got {len(a)} lines, want {len(b)}; tail got {a[-3:]!r}, want {b[-3:]!r}"


def folder_state(folder: Path) -> dict[str, tuple[str, int] | str]:
    """Property (c)'s snapshot: every entry of ``folder`` with (sha256, mtime_ns) for files."""
    state: dict[str, tuple[str, int] | str] = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or not entry.is_file():
            state[entry.name] = "link" if entry.is_symlink() else "other"
        else:
            state[entry.name] = fingerprint(entry)
    return state


def check_unchanged(before: dict, folder: Path, context: str = "") -> None:
    """Property (c): no input file changed, and nothing appeared next to the inputs."""
    after = folder_state(folder)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        raise failure("InputChanged", f"[{context}] files changed beside the report: {changed}")
