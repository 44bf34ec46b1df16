"""Choose the array module once: CuPy on an NVIDIA GPU when present, NumPy otherwise.

``STRATA_BACKEND=numpy|cupy`` (or ``--backend``) forces a choice. Engine functions take the
module as ``xp`` and are written once for both.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING

from strata.analysis.errors import StrataError
from strata.analysis.lazylog import get_logger

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BACKENDS", "backend_name", "cupy_available", "get_xp", "to_numpy"]

log = get_logger(__name__)

BACKENDS = ("numpy", "cupy")
_unavailable_reason: str | None = None


def cupy_available() -> bool:
    """Return whether CuPy imports and sees at least one CUDA device."""
    global _unavailable_reason
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return True
        _unavailable_reason = "no CUDA device"
    except Exception as exc:  # noqa: BLE001 - ImportError, CUDA driver errors of every kind
        _unavailable_reason = f"{type(exc).__name__}: {exc}"
    return False


def get_xp(backend: str | None = None) -> ModuleType:
    """Return ``numpy`` or ``cupy``.

    Parameters
    ----------
    backend
        'numpy', 'cupy' or None (then ``$STRATA_BACKEND``, else CuPy when usable).

    Raises
    ------
    StrataError
        'cupy' was asked for but is not usable, or the name is unknown.
    """
    import numpy as np

    choice = backend or os.environ.get("STRATA_BACKEND") or "auto"
    if choice == "numpy":
        return np
    if choice == "cupy":
        if not cupy_available():
            raise StrataError(f"backend 'cupy' is not usable here ({_unavailable_reason})")
        import cupy

        return cupy
    if choice != "auto":
        raise StrataError(f"unknown backend '{choice}'; choose one of {', '.join(BACKENDS)}")
    if cupy_available():
        import cupy

        return cupy
    log.info("using NumPy (CuPy not usable: %s)", _unavailable_reason)
    return np


def backend_name(xp: ModuleType) -> str:
    return "cupy" if xp.__name__.startswith("cupy") else "numpy"


def to_numpy(array: object) -> np.ndarray:
    """Return a NumPy array for a NumPy or CuPy array (CuPy arrays never leave analysis)."""
    import numpy as np

    if hasattr(array, "get") and not isinstance(array, np.ndarray):
        return array.get()
    return np.asarray(array)
