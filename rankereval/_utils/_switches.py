"""Private switches that tests (and benchmarks) use to force one of several equivalent code
paths, e.g. a lookup strategy of the metric kernel or the parser of the readers.

They are context variables, not module globals: read once per call, local to the thread
(and asyncio task) that set them, undone on leaving the ``with`` block. The code that reads
one refuses a forced path that cannot apply instead of silently running another.
"""
import contextlib


@contextlib.contextmanager
def forced(var, value, allowed):
    """Set context variable ``var`` to ``value`` (one of ``allowed``) within the block."""
    if value not in allowed:
        raise ValueError(f"unknown {var.name.split('_', 1)[-1]} {value!r}; one of {sorted(allowed)}")
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)
