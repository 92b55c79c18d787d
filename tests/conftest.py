"""Shared pytest configuration for the rankereval test suite.

Hypothesis profiles:

* ``ci`` (default): deterministic (``derandomize=True``), ~100 examples per
  property, no deadline (CI machines are shared and slow), failing examples are
  printed together with a reproduction blob.  No example database is written.
* ``long``: ~2000 examples per property, random seeds, for a thorough local
  run: ``HYPOTHESIS_PROFILE=long python -m pytest tests``.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
