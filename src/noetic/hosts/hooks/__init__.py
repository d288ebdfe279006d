"""Answering the events a host sends to ``noetic hook``: :mod:`~noetic.hosts.hooks.answer` for
every event, the PreToolUse gate (:mod:`~noetic.hosts.hooks.pretool`, with the irreversible
class), the session's trace (:mod:`~noetic.hosts.hooks.session_trace`); what all of them need
to know about a request (its agent, project, store and session, and ``hooks.log``) is
:mod:`~noetic.hosts.hooks.shared`, which imports none of them."""
