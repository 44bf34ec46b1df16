"""Write outputs safely: never onto an input, never half a file, one line when it fails.

Every writer of Strata (``stats -o``, ``outliers -o``, ``render -o``, a recipe's output
folder) goes through this module:

* :func:`check_output` refuses, before anything is read or written, an output path that
  is, contains or lies inside an input (a report file or folder given, or the cache
  folder). Paths are compared after resolving symlinks and ``..``, and by device and inode,
  so a hard link or a second mount of the same folder is caught as well.
* :func:`check_file_target` refuses an output file whose folder is missing or read-only,
  or that is a folder, with one line, before the (possibly long) work starts.
* :func:`atomic_file` writes to a temporary name in the output's own folder and renames it
  into place only when everything was written: a full disk, an error or Ctrl-C leaves the
  old file as it was and no partial file behind.
* :func:`staged_folder` does the same for a folder: it is built beside its final place and
  swapped in; the old folder is removed only after the swap, and only when the caller's
  test says it may be replaced.

Failures are :class:`~analysis.errors.AnalysisError` with a one-line message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.lazylog import get_logger

# secrets is imported where used: a small report's `stats` is mostly start-up
# (benchmarks/bench_startup.py).

__all__ = [
    "STDOUT",
    "atomic_file",
    "check_file_target",
    "check_folder_target",
    "check_output",
    "is_stdout",
    "real_path",
    "staged_folder",
    "write_failure",
]

log = get_logger(__name__)

#: The output name that means standard output.
STDOUT = "-"
_TMP_SUFFIX = ".strata-tmp"
_OLD_SUFFIX = ".strata-old"


def real_path(path: str | Path) -> Path:
    """Return ``path`` absolute, with every symlink and ``..`` resolved (it need not exist)."""
    return Path(os.path.realpath(os.fspath(path)))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _lineage(path: Path) -> Iterator[tuple[Path, tuple[int, int]]]:
    """``path`` and each of its parents that exists, with its (device, inode)."""
    for node in (path, *path.parents):
        ident = _identity(node)
        if ident is not None:
            yield node, ident


def _relation(
    out: Path, out_lineage: list[tuple[Path, tuple[int, int]]], given: Path
) -> str | None:
    """How the resolved output relates to one resolved input: 'is', 'is inside', 'contains'.

    ``out_lineage`` is :func:`_lineage` of ``out``, computed once for every input.
    """
    if out == given:
        return "is"
    if given in out.parents:
        return "is inside"
    if out in given.parents:
        return "contains"
    given_id = _identity(given)
    if given_id is None:
        return None
    # Same file or folder under another name: a hard link, a bind mount.
    for node, ident in out_lineage:
        if ident == given_id:
            return "is" if node == out else "is inside"
    out_id = out_lineage[0][1] if out_lineage and out_lineage[0][0] == out else None
    if out_id is not None:
        for _node, ident in _lineage(given.parent):
            if ident == out_id:
                return "contains"
    return None


def check_output(
    output: str | Path,
    inputs: Iterable[str | Path],
    option: str = "output",
    cache: str | Path | None = None,
) -> Path:
    """Refuse an output that is, contains or lies inside one of ``inputs``.

    Parameters
    ----------
    output
        Where something will be written (file or folder; need not exist).
    inputs
        Every report file and folder given, the reports found in those folders, and the
        cache folder: nothing written may land on, in or around any of them.
    option
        How the user named the output, for the message (``-o``, ``--output``).
    cache
        The cache folder (exports of ``.nsys-rep`` files and column caches live there).

    Returns
    -------
    Path
        The output's resolved path.

    Raises
    ------
    AnalysisError
        The output and an input overlap.
    """
    out = real_path(output)
    out_lineage = list(_lineage(out))
    named = [("the input", raw) for raw in inputs]
    if cache is not None:
        named.append(("the cache folder", cache))
    for what, raw in named:
        relation = _relation(out, out_lineage, real_path(raw))
        if relation is not None:
            raise AnalysisError(
                f"{option} {escape_text(os.fspath(output))} {relation} {what} "
                f"{escape_text(os.fspath(raw))}; write it somewhere else"
            )
    return out


def check_file_target(output: str | Path, option: str = "output") -> Path:
    """Refuse an output file that cannot be written, before any work starts.

    A missing or read-only folder, or an output that is a folder, is refused. A device or
    pipe (``/dev/null``, a FIFO) is accepted: it is written in place.

    Returns
    -------
    Path
        The resolved path the file will be written to.

    Raises
    ------
    AnalysisError
        The output cannot be written.
    """
    shown = escape_text(os.fspath(output))
    out = real_path(output)
    if out.is_dir():
        raise AnalysisError(f"{option} {shown} is a folder; give a file name")
    if out.exists():
        if not out.is_file() or os.access(out, os.W_OK):
            return out
        raise AnalysisError(f"{option} {shown}: file is read-only")
    parent = out.parent
    _check_writable(
        parent, f"{option} {shown}", f"folder {escape_text(str(parent))} does not exist"
    )
    return out


def _check_writable(folder: Path, what: str, not_a_folder: str) -> None:
    """Refuse ``what`` unless ``folder`` is a folder we may create files in."""
    if not folder.is_dir():
        raise AnalysisError(f"{what}: {not_a_folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise AnalysisError(f"{what}: cannot write into {escape_text(str(folder))}")


def check_folder_target(folder: str | Path, option: str = "output") -> Path:
    """Refuse an output folder that cannot be created or written, before any work starts.

    The folder may be missing (it is created with its parents) but the nearest folder that
    exists must be writable; an existing ``folder`` must be a folder.

    Raises
    ------
    AnalysisError
        The folder cannot be written.
    """
    shown = escape_text(os.fspath(folder))
    out = real_path(folder)
    if out.exists() and not out.is_dir():
        raise AnalysisError(f"{option} {shown} exists and is not a folder")
    base = out.parent
    while not base.exists() and base != base.parent:
        base = base.parent
    _check_writable(base, f"{option} {shown}", f"{escape_text(str(base))} is not a folder")
    return out


def write_failure(path: str | Path, exc: OSError) -> AnalysisError:
    """Return the one-line error for a failed write of ``path``."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        reason += "; nothing was written, the old file (if any) is unchanged"
    return AnalysisError(f"cannot write {escape_text(os.fspath(path))}: {reason}")


def _temp_name(final: Path, suffix: str) -> Path:
    # Short enough for a 255-byte name limit whatever the final name's length.
    import secrets

    stem = final.name[:80]
    return final.with_name(f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{suffix}")


@contextmanager
def atomic_file(path: str | Path, binary: bool = False) -> Iterator[IO]:
    """Yield a file to write; it replaces ``path`` only when the block ends without error.

    The data goes to a temporary file in the same folder, is flushed to disk, and is
    renamed over ``path`` (keeping an existing file's permissions). A device or pipe is
    written in place. On any error, or Ctrl-C, the temporary file is removed and ``path``
    is left as it was.

    Raises
    ------
    AnalysisError
        The file cannot be written (missing or read-only folder, disk full, ...).
    """
    final = real_path(path)
    mode = "wb" if binary else "w"
    text = {} if binary else {"encoding": "utf-8", "newline": "", "errors": "backslashreplace"}
    try:
        if final.exists() and not final.is_file() and not final.is_dir():
            with open(final, mode, **text) as fh:  # noqa: SIM115 - a device, a FIFO
                yield fh
            return
        if final.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        keep_mode = stat.S_IMODE(final.stat().st_mode) if final.is_file() else None
        tmp = _temp_name(final, _TMP_SUFFIX)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, mode, **text) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            if keep_mode is not None:
                os.chmod(tmp, keep_mode)
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise write_failure(path, exc) from exc


@contextmanager
def staged_folder(folder: str | Path, may_replace: Callable[[Path], None]) -> Iterator[Path]:
    """Yield an empty folder to fill; it becomes ``folder`` when the block ends without error.

    The staging folder lies beside ``folder`` (same file system, so the swap is a rename).
    An existing ``folder`` is passed to ``may_replace`` first, which raises to keep it; it
    is renamed aside, the new folder renamed into place, and only then removed. On any
    error, or Ctrl-C, the staging folder is removed and ``folder`` is left as it was.

    Raises
    ------
    AnalysisError
        The folder cannot be written (an ``OSError`` in the block too: its one line names
        ``folder``), or ``may_replace`` refused the existing one.
    """
    final = real_path(folder)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temp_name(final, _TMP_SUFFIX)
        os.mkdir(tmp, 0o777)
    except OSError as exc:
        raise write_failure(folder, exc) from exc
    try:
        try:
            yield tmp
        except OSError as exc:
            raise write_failure(folder, exc) from exc
        _swap_in(tmp, final, may_replace)
    except BaseException:
        import shutil  # here, not at the top: its archive modules cost a small stats run

        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_in(tmp: Path, final: Path, may_replace: Callable[[Path], None]) -> None:
    try:
        if not os.path.lexists(final):
            os.rename(tmp, final)
            return
        may_replace(final)
        old = _temp_name(final, _OLD_SUFFIX)
        os.rename(final, old)
        try:
            os.rename(tmp, final)
        except BaseException:
            os.rename(old, final)
            raise
    except OSError as exc:
        raise write_failure(final, exc) from exc
    import shutil  # here, not at the top: its archive modules cost a small stats run

    try:
        shutil.rmtree(old)
    except OSError as exc:
        log.warning("could not remove the replaced folder %s: %s", old, exc.strerror or exc)


def is_stdout(output: str | Path | None) -> bool:
    """Whether ``output`` means standard output (none given, or ``-``)."""
    return output is None or os.fspath(output) == STDOUT
