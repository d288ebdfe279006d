"""Adaptive session loading: which past tasks to bring into a new session, and how much."""
