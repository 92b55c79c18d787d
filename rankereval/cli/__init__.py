"""The ``rankereval`` command line (``rankereval.cli:main``, also ``python -m rankereval``).

``_main`` parses the arguments and runs ``evaluate``, ``example`` and ``metrics``;
``_compare`` and ``_agreement`` are the ``compare`` and ``agreement`` subcommands;
``_common`` holds what they share. The command line only parses arguments, calls the
library and renders its results.
"""
from rankereval.cli._main import main

__all__ = ["main"]
