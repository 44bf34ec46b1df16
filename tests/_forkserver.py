"""A fork server for tests that run many short CLI commands: fresh processes, warm libraries.

``python main.py ...`` spends most of a small command's second importing NumPy, pandas and
pyarrow. The server (``python -m tests._forkserver``, one per test session, started on first
use) imports those libraries only, never a Strata module, then forks one child per request.
Each child is a fresh Strata: its own environment, working folder, streams (files) and exit
status, nothing shared with any other run but the libraries' read-only module state.

Protocol (one JSON line each way): the client sends ``{"argv", "env", "folder"}``; the
server forks and answers ``{"pid"}``. The child writes ``stdout``/``stderr`` into ``folder``
and, last, its exit status into ``folder/status`` (renamed into place), which the client
waits for. Children are reaped by the server (SIGCHLD ignored there).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PRELOAD = ("numpy", "pandas", "pyarrow", "pyarrow.compute", "pyarrow.ipc")
_STRATA = ("strata",)

_lock = threading.Lock()
_server: subprocess.Popen[str] | None = None


def run(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, str, str]:
    """Run ``python ARGV`` in a forked child; return (exit status, stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="strata-fork-") as name:
        folder = Path(name)
        request = json.dumps({"argv": argv, "env": env, "folder": name})
        with _lock:
            server = _ensure_server()
            server.stdin.write(request + "\n")
            server.stdin.flush()
            pid = json.loads(server.stdout.readline())["pid"]
        status = folder / "status"
        deadline = time.monotonic() + timeout_s
        while not status.exists():
            if not _alive(pid):  # gone without a status: killed by a signal (a crash)
                if status.exists():
                    break
                return -signal.SIGKILL, _read(folder, "stdout"), _read(folder, "stderr")
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(argv, timeout_s)
            time.sleep(0.005)
        return int(status.read_text()), _read(folder, "stdout"), _read(folder, "stderr")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _read(folder: Path, name: str) -> str:
    path = folder / name
    return path.read_text(errors="replace") if path.exists() else ""


def _ensure_server() -> subprocess.Popen[str]:
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen(
            [sys.executable, "-m", "tests._forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        atexit.register(_server.kill)
    return _server


def _serve() -> None:
    for module in _PRELOAD:
        __import__(module)
    strata = sorted(m for m in sys.modules if m.split(".")[0] in _STRATA)
    assert not strata, f"the fork server imported Strata modules: {strata[:5]}"
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request["argv"], request["env"], Path(request["folder"]))
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


def _child(argv: list[str], env: dict[str, str], folder: Path) -> None:
    """Become ``python ARGV`` run from the repository root; never returns."""
    import runpy

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocess.wait must work in the child
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            handle = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, fd)
            os.close(handle)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own fds
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(env)
        os.chdir(ROOT)
        sys.path[0] = str(ROOT)
        try:
            if argv[0] == "-c":
                sys.argv = ["-c", *argv[2:]]
                exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102
            else:
                sys.argv = list(argv)
                runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - shown as a crashed subprocess would show it
            import traceback

            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        partial = folder / "status.part"
        partial.write_text(str(code))
        partial.rename(folder / "status")
    finally:
        os._exit(code)


if __name__ == "__main__":
    _serve()
