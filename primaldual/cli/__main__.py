"""``python -m primaldual.cli``: the command line (see :mod:`primaldual.cli`)."""

import sys

from . import main

sys.exit(main())
