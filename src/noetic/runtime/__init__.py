"""The runtime: what every engine shares.

An engine (CASCADE, the observer chain, Nova, the agent) takes a :class:`RunContext` and needs
nothing from another engine. This layer holds the recorded provider wiring, session and task
recording (:mod:`noetic.runtime.tracker`), the Sentinel's universal constraints
(:mod:`noetic.runtime.sentinel`) and the run context itself. Tools live beside it in
:mod:`noetic.tools`, recall in :mod:`noetic.recall`. See ``docs/architecture.md``.
"""
