"""``python -m arena.cli``: the same as the ``arena`` command."""

from __future__ import annotations

import sys

from arena.cli import main

sys.exit(main())
