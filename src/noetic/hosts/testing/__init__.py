"""Outcomes nobody has to type: which commands are the project's tests
(:mod:`~noetic.hosts.testing.detect`), recognising a run of them in a shell line
(:mod:`~noetic.hosts.testing.commands`), its JUnit report (:mod:`~noetic.hosts.testing.junit`) and
the outcome recorded from its exit status (:mod:`~noetic.hosts.testing.recording`)."""
