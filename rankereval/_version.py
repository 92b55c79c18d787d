"""The version of rankereval: the one place it is written.

setuptools reads ``__version__`` from this file without importing the package
(``[tool.setuptools.dynamic]`` in pyproject.toml), so it must stay a plain string literal.
"""
__version__ = "0.3.0"
