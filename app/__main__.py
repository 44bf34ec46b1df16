"""``python -m app``: the same as ``python main.py`` (GUI, or a sub-command)."""

from app.cli import run

if __name__ == "__main__":
    run()
