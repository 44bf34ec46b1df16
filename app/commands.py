"""The sub-commands of the command line, by name: what ``app.cli`` parses and runs, and what
the window's no-display hint lists (imported by both without either importing the other)."""

from __future__ import annotations

__all__ = ["SUBCOMMANDS"]

#: sub-command -> its module (``add_parser(subparsers)``, ``run(args) -> int``); all headless
SUBCOMMANDS = {
    "info": "app.cli.info",
    "stats": "app.cli.stats",
    "outliers": "app.cli.outliers",
    "recipe": "app.cli.recipe",
    "render": "app.cli.render",
    "analyze": "app.cli.analyze",
    "export": "app.cli.export",
    "diff": "app.cli.diff",
    "dlprof": "app.cli.dlprof",
    "collectives": "app.cli.collectives",
    "calltree": "app.cli.calltree",
}
