"""Writing Noetic into a host's configuration (one module per host) and checking it is there
(``noetic doctor``)."""
