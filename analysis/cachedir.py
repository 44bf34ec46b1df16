"""Where Strata's caches live, and the format version of the columnar entries.

Plain Python: what a command that answers from a stored result needs (the answer cache's
key names the columnar format, see :mod:`analysis.answers`) without importing the columnar
cache itself (NumPy, pyarrow).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from strata.analysis._cachefiles import file_fingerprint

__all__ = ["COLUMNS_FORMAT", "cache_key", "cache_root"]

#: The format of the columnar entries (:mod:`analysis.cache`): bumped whenever what an entry
#: holds, or how the report is read into it, changes; an entry of another format is rebuilt.
COLUMNS_FORMAT = 9


def cache_root() -> Path:
    """Return the cache folder: ``$STRATA_CACHE_DIR`` or the user cache dir (platformdirs)."""
    env = os.environ.get("STRATA_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("strata", appauthor=False))


def cache_key(path: Path) -> str:
    """Return the cache key of ``path``: its resolved path, size, mtime, content and format.

    The content is a fingerprint of a few pages (:func:`analysis._cachefiles.content_fingerprint`):
    a report rewritten in place with its size and mtime put back gets another key.
    """
    try:
        st, fingerprint = file_fingerprint(path)  # never blocks on a FIFO
    except OSError:  # unreadable: keyed without content (opening it will say why)
        st, fingerprint = path.stat(), None
    version = COLUMNS_FORMAT
    text = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{fingerprint or ''}|{version}"
    # surrogateescape: a file name that is not valid UTF-8 keys by its bytes, not a crash.
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]
