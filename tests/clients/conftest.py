"""Tests against real MCP hosts installed from their registries: opt-in, by `make
test-clients`, which installs them and sets ``NOETIC_CLIENTS`` to where they are. `make test`
does not collect them."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("NOETIC_CLIENTS") else ["test_*.py"]
