"""Where a warning of the package points: the user's line, whatever the entry point.

``warnings.warn(..., stacklevel=n)`` with a hand-counted ``n`` breaks whenever a call path
gains or loses a frame (``Metric.mean`` pointed one frame too high, at ``sys:1``). Instead
:func:`user_stacklevel` counts the frames from the caller of ``warnings.warn`` to the first
frame outside this package, as pandas' ``find_stack_level`` does.
"""
import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _inside(filename):
    return os.path.abspath(filename).startswith(_PACKAGE)


def user_stacklevel():
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function: the first frame
    outside rankereval (the user's line); the outermost frame if every frame is inside."""
    frame = sys._getframe(1)  # the function that calls warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level
