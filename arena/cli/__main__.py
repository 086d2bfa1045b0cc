"""``python -m arena.cli``: the same as the ``arena`` command."""

from __future__ import annotations

import sys

from arena.runtime.lifeline import watch_lifeline_from_env

# A worker or ladder scheduler that ``arena up`` started dies with it (``arena.runtime.lifeline``), and starts
# watching before the rest of the command line is imported: that import takes 1.5 s on a quiet machine and
# more than 5 s on a loaded one, and a SIGKILLed ``arena up`` left its workers running that long (CI, twice:
# test_sigkill_of_arena_up_leaves_nothing_and_the_next_start_works; reproduced with three busy loops beside it,
# before this session's changes too).
watch_lifeline_from_env()

from arena.cli import main  # noqa: E402  (after the watch, on purpose)

sys.exit(main())
