"""``python -m benchmarks.paper NAME ...`` from the repository root: one of the paper's experiments."""

import sys

from .cli import main

sys.exit(main())
