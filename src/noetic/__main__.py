"""``python -m noetic``: the ``noetic`` command, for environments without the console script."""

from noetic.cli import entry

if __name__ == "__main__":
    entry()
