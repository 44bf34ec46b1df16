# Two entry points on a fresh machine: `make run` (the app on the demo reports) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
# The native integer column reader (native/sqlread.c, loaded by analysis/_native.py), built
# where `pip install .` and `pip install -e .` build it (setup.py): inside the package.
# Optional: without a C compiler Strata reads through ADBC, with the same results, 2-3x slower.
NATIVE := analysis/libstrata_sqlread.so
CC ?= cc

.PHONY: run test fuzz lint qt-deps clean native

# The suite is CPU-bound (7.4 min of CPU for 7.5 min of wall on 2 cores, run serially): one
# pytest-xdist worker per core. A module's tests stay on one worker (loadscope), so a
# module-scoped fixture (every damaged copy of a cache entry, a generated report) is built once. Every
# worker has its own temporary folders, cache folder and fork server (tests/conftest.py,
# tests/_forkserver.py). `make test PYTEST_JOBS=` runs it in one process.
PYTEST_JOBS ?= -n auto --dist loadscope

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[plots]"
	touch $@

# --no-compile: pip would byte-compile all ~5,800 modules of the dependencies (~23 s of CPU,
# measured); the suite imports a fraction of them, and Python compiles those on first import.
$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install -q --no-compile -e ".[test]"
	touch $@ $(STAMP_RUN)

$(NATIVE): native/sqlread.c
	@$(CC) -O2 -Wall -Wextra -shared -fPIC -o $@ $< -l:libsqlite3.so.0 \
		|| echo "note: the native reader was not built (no C compiler or libsqlite3.so.0); reading through ADBC"

native: $(NATIVE)

# Qt's xcb/offscreen plugins need a few system libraries and a font on a bare Debian machine.
qt-deps:
	@bash resources/install_qt_deps.sh

run: qt-deps $(STAMP_RUN) native
	$(PY) main.py

test: qt-deps $(STAMP_TEST) native
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(PYTEST_JOBS)

# Before a release: the fuzz suite's long profile (tests/fuzz, docs/reliability.md): ten times
# the examples of `make test`, random rather than a fixed seed, each failure shrunk to a
# minimal reproducer; prints how many cases each property tried. Takes several minutes.
fuzz: qt-deps $(STAMP_TEST) native
	STRATA_FUZZ_PROFILE=long QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider \
		--hypothesis-show-statistics tests/fuzz

clean:
	rm -rf $(VENV) .pytest_cache build $(NATIVE)
