"""Strata: a timeline viewer for NVIDIA Nsight Systems reports.

Everything installs and imports under this one name: ``strata.analysis`` (reports, the
columnar model, every number; no Qt), ``strata.viewer`` (the Qt widgets), ``strata.app`` (the
window and the command line) and ``strata.resources`` (the demo reports, fonts). In the
repository those four folders stay at the top, where they show the architecture; here they
are links to them, and an installed wheel holds real copies (nothing is installed as a
top-level ``analysis`` or ``app`` that a user's own folder could shadow or collide with).
"""

from __future__ import annotations

from pathlib import Path

# A checkout whose links were written as plain files (git with core.symlinks=false, as on
# Windows without developer mode) still finds the four folders beside this one.
_HERE = Path(__file__).resolve().parent
if not (_HERE / "analysis").is_dir() and (_HERE.parent / "analysis" / "__init__.py").is_file():
    __path__.append(str(_HERE.parent))  # noqa: F821 - a package's own __path__

from strata.analysis import __version__  # noqa: E402

__all__ = ["__version__"]
