"""``python -m rankereval``: the ``rankereval`` command line (see :mod:`rankereval.cli`)."""
import sys

if __name__ == "__main__":
    from rankereval.cli import main

    sys.exit(main())
