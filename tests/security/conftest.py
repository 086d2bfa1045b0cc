"""Security-test fixtures: the service fixtures (SQLite and PostgreSQL) and an app built with the
offline health check, so nothing the API is sent can make it leave loopback."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arena.composition import Context
from tests.arena.conftest import (  # noqa: F401 - fixtures shared with the service tests
    app,
    client,
    context,
    database,
    queued_context,
    redis_url,
    settings,
)
from tests.security.helpers import offline_health_check


@pytest.fixture
def offline_context(context: Context) -> Context:  # noqa: F811
    """The service context with the offline health check (tests/security/helpers.py)."""
    return replace(context, health_check=offline_health_check)


@pytest.fixture
def offline_app(offline_context: Context):
    from arena.web import create_app

    return create_app(context=offline_context)


@pytest.fixture
def offline_client(offline_app):
    return offline_app.test_client()
