"""Open a recipe output folder (what ``main.py recipe NAME --output DIR`` wrote) as tables.

:class:`RecipeOutputOpener` reads the folder on a worker job (the tables with
:func:`analysis.recipes.load_output`, ``summary.txt``, the PNG plots as ``QImage``) and
shows each in its own :class:`RecipeWindow`, titled ``Recipe: <name> — <folder>``, so that
several outputs can be open side by side. Opening a folder that is already shown replaces
its window (the recipe may have been run again).
"""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMainWindow, QWidget

from strata.analysis.progress import Progress
from strata.analysis.recipes.output import load_manifest, load_output
from strata.app.jobs import JobRunner
from strata.viewer.recipe_view import RecipeOutputContent, RecipeOutputWidget

__all__ = ["RecipeOutputOpener", "RecipeWindow", "read_recipe_output"]

_WINDOW_SIZE = QSize(1200, 800)


def read_recipe_output(
    folder: Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RecipeOutputContent:
    """Read everything a recipe output folder shows (runs on a worker: QImage, not QPixmap).

    Raises
    ------
    AnalysisError
        Not a recipe output folder, or its manifest or a table is unreadable.
    """
    if progress is not None:
        progress(0.0, f"reading {folder.name}")
    manifest = load_manifest(folder)
    tables = load_output(folder)
    outputs = manifest.get("Outputs", {})
    problems = []
    summary = ""
    summary_file = folder / outputs.get("summary", "summary.txt")
    try:
        summary = summary_file.read_text(encoding="utf-8")
    except OSError as exc:
        problems.append(f"summary: cannot read {summary_file.name} ({exc.strerror or exc})")
    plots = {}
    for name, file in outputs.get("plots", {}).items():
        if cancel is not None and cancel.is_set():
            break
        image = QImage(str(folder / file))
        if image.isNull():
            problems.append(f"plot {name}: cannot read {file}")
        else:
            plots[name] = image
    inputs = manifest.get("InputFiles") or manifest.get("Files") or []
    return RecipeOutputContent(
        recipe=str(manifest.get("RecipeName", "")),
        folder=str(folder),
        input_count=len(inputs),
        mode=str(manifest.get("Mode", "")),
        tables=tables,
        summary=summary.rstrip("\n"),
        plots=plots,
        problems=tuple(problems),
    )


class RecipeWindow(QMainWindow):
    """A top-level window showing one recipe output folder."""

    def __init__(self, content: RecipeOutputContent, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.folder = Path(content.folder)
        self.setWindowTitle(f"Recipe: {content.recipe} — {content.folder}")
        self.view = RecipeOutputWidget(self)
        self.view.set_content(content)
        self.setCentralWidget(self.view)
        self.resize(_WINDOW_SIZE)


class RecipeOutputOpener(QObject):
    """Load recipe output folders in the background and show each in a :class:`RecipeWindow`.

    Signals
    -------
    opened(RecipeWindow)
        A folder's window is shown.
    failed(Path, Exception)
        A folder could not be read (the main window shows the one-line reason).
    """

    opened = Signal(object)
    failed = Signal(object, object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._parent_widget = parent
        self._windows: dict[Path, RecipeWindow] = {}

    def open(self, folder: str | Path) -> None:
        """Start reading ``folder``; :attr:`opened` or :attr:`failed` follows."""
        folder = Path(folder).resolve()
        job = self._runner.submit(partial(read_recipe_output, folder), channel=f"recipe:{folder}")
        job.finished.connect(self._on_read)
        job.failed.connect(partial(self._on_failed, folder))

    def windows(self) -> list[RecipeWindow]:
        """Return the recipe windows that are open, oldest first."""
        return list(self._windows.values())

    def close_all(self) -> None:
        """Close every recipe window (the main window is closing)."""
        windows, self._windows = list(self._windows.values()), {}
        for window in windows:
            window.close()

    def _on_read(self, content: RecipeOutputContent) -> None:
        folder = Path(content.folder)
        old = self._windows.pop(folder, None)
        if old is not None:
            old.close()
        window = RecipeWindow(content, self._parent_widget)
        window.destroyed.connect(partial(self._forget, folder, window))
        self._windows[folder] = window
        window.show()
        window.raise_()
        self.opened.emit(window)

    def _forget(self, folder: Path, window: RecipeWindow, *_args) -> None:
        if self._windows.get(folder) is window:
            del self._windows[folder]

    def _on_failed(self, folder: Path, error: Exception) -> None:
        self.failed.emit(folder, error)
