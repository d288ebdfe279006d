"""BLAS threads for small products: a query's arithmetic is too small for threads to pay."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _blas_threads() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()  # inspects the loaded libraries once per process


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread: a query's products (embedding a short text,
    one matrix-vector product) are too small for threads to pay, and waking threads that went
    to sleep costs more than the arithmetic (3–30× slower on a busy 2-core machine)."""
    import contextlib

    controller = _blas_threads()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
