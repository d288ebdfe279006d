"""``python -m noetic``: the ``noetic`` command, for environments without the console script."""

from noetic.cli import main

if __name__ == "__main__":
    main()
