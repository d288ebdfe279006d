"""CASCADE: PREFLIGHT → THINK → PLAN → INVESTIGATE ⇄ CHECK → ACT → POSTFLIGHT.

:mod:`noetic.runtime.tracker` records a cascade that an agent drives itself (it supplies its
own assessments, through the CLI or MCP).
"""
