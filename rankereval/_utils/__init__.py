"""Shared internals of every layer (scikit-learn's ``sklearn/utils`` is the model): the C
declarations the kernels share (``_openmp.pxd``, ``_limits.h``), the values of the string
options (``_choices``), optional imports (``_optional``), forced code paths for tests
(``_switches``) and plain-text rendering (``_render``). Nothing here is public API.
"""
