"""Where Strata's caches live, and the format version of the columnar entries.

Plain Python: what a command that answers from a stored result needs (the answer cache's
key names the columnar format, see :mod:`analysis.answers`) without importing the columnar
cache itself (NumPy, pyarrow).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["COLUMNS_FORMAT", "cache_root"]

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
