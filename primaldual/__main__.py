"""``python -m primaldual``: the command line (see :mod:`primaldual.cli`)."""

import sys

from .cli import main

sys.exit(main())
