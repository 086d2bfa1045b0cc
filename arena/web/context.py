"""What every view, API or page, needs first: the arena's context and one unit of work per request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import current_app, request
from sqlalchemy.orm import Session

from arena.composition import Context


def context() -> Context:
    return current_app.extensions["arena"]


@contextmanager
def unit_of_work(readonly: bool = False) -> Iterator[Session]:
    """One transaction; a GET or HEAD (or a ``readonly`` unit, e.g. around a bot's health check) never
    takes the database's write lock."""
    with context().db.session(readonly=readonly or request.method in ("GET", "HEAD")) as session:
        yield session
