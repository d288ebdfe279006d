"""Noetic inside the agents people already use: host configuration and host hooks.

One small module per host writes Noetic's MCP server entry in that host's configuration file
(and, for Claude Code, its hooks and an instructions block), through :mod:`noetic.hosts.files`,
which plans every change before making it, backs files up once, shows diffs and undoes exactly
what it added. :mod:`noetic.hosts.hooks` answers the events a host sends to ``noetic hook``,
and :mod:`noetic.hosts.outcomes` turns command exit statuses into outcomes.

The package sits between the interfaces and the engines in the layer contract: it drives the
runtime (the tracker, the store, the outcome recording of calibration) on behalf of a host, runs
no model and no engine, and the CLI calls it.
"""
