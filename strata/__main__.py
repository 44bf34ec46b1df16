"""``python -m strata``: the same as ``python main.py`` (the window, or a sub-command)."""

from strata.launch import run

if __name__ == "__main__":
    run()
