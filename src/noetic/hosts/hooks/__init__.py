"""Answering the events a host sends to ``noetic hook`` (:mod:`~noetic.hosts.hooks.answer`); what
every handler needs to know about a request is :mod:`~noetic.hosts.hooks.shared`, which imports
no handler."""
