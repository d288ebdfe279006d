"""The observer chain: staged reasoning that stops when it has crystallized."""
