"""Page-test fixtures: the service fixtures (both databases) plus a small world of real data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import bot_zoo
from tests.arena.conftest import (  # noqa: F401 - fixtures shared with the service tests
    app,
    client,
    context,
    database,
    queued_context,
    redis_url,
    settings,
)
from tests.pages.builders import World, build_world


@pytest.fixture
def world(context, random_bots) -> Iterator[World]:  # noqa: F811
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.illegal)) as faulty:
        yield build_world(context, [b.url for b in random_bots], faulty.url)
