"""Build the native column reader (native/sqlread.c) into the package at install time.

Everything else about the package is in pyproject.toml; this file only adds the C part, so
that a plain ``pip install .`` (or ``pip install -e .``) compiles it with the machine's C
compiler, as ``make native`` does, instead of leaving every read to ADBC (2-3x slower on big
reports).

The reader has no Python API: ``analysis/_native.py`` loads it with ctypes. So it is built as
a plain shared library, ``analysis/libstrata_sqlread.so`` (no ABI tag in its name, never
imported as a module), linked against the ``libsqlite3.so.0`` that Python's sqlite3 module
uses. The extension is optional: without a C compiler (or that library) the build step warns
and the install still succeeds; Strata then reads through ADBC and logs once why.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: The library's name inside the package; analysis/_native.py looks for it there.
NATIVE_NAME = "strata.analysis.libstrata_sqlread"


class _PlainLibraryBuild(build_ext):
    """build_ext for a ctypes library: the file is named ``libstrata_sqlread.so``, not
    ``libstrata_sqlread.cpython-311-x86_64-linux-gnu.so``, since it uses no Python ABI."""

    def get_ext_filename(self, fullname: str) -> str:
        # distutils asks with the last part of the name alone (get_ext_fullpath), setuptools
        # with the whole dotted name.
        if fullname == NATIVE_NAME or NATIVE_NAME.endswith("." + fullname):
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext: Extension) -> list[str]:
        # No PyInit_ function: the library is not a Python module.
        return ext.export_symbols


setup(
    ext_modules=[
        Extension(
            NATIVE_NAME,
            sources=["native/sqlread.c"],
            extra_compile_args=["-O2", "-Wall", "-Wextra"],
            # The soname Python's sqlite3 module loads, as the Makefile links it (no -dev
            # package needed: sqlread.c declares the few functions it calls itself).
            extra_link_args=["-l:libsqlite3.so.0"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": _PlainLibraryBuild},
)
