"""The sub-commands of the command line, by name: what ``app.cli`` parses and runs, and what
the window's no-display hint lists (imported by both without either importing the other)."""

from __future__ import annotations

__all__ = ["SUBCOMMANDS"]

#: sub-command -> its module (``add_parser(subparsers)``, ``run(args) -> int``); all headless
SUBCOMMANDS = {
    "info": "strata.app.cli.info",
    "stats": "strata.app.cli.stats",
    "outliers": "strata.app.cli.outliers",
    "recipe": "strata.app.cli.recipe",
    "render": "strata.app.cli.render",
    "analyze": "strata.app.cli.analyze",
    "export": "strata.app.cli.export",
    "diff": "strata.app.cli.diff",
    "dlprof": "strata.app.cli.dlprof",
    "collectives": "strata.app.cli.collectives",
    "calltree": "strata.app.cli.calltree",
}
