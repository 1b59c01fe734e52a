"""``python -m tooldec.bench NAME ...``: the same as ``tooldec bench NAME ...``."""

import sys

from .cli import main

sys.exit(main())
