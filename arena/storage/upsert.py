"""One INSERT ... ON CONFLICT DO UPDATE for many rows, on SQLite and PostgreSQL alike.

Recording a match adds to sums kept in rows that may or may not exist yet (counters, a tournament's
standings, a leaderboard's outcome store). Read-then-write costs two statements per table and leans on
the caller's lock; an upsert is one statement per table and adds atomically in the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from arena.storage.compiled_plans import write


def upsert(session: Session, model: type, rows: Sequence[dict[str, Any]], keys: tuple[str, ...],
           add: tuple[str, ...] = (), replace: tuple[str, ...] = ()) -> None:
    """Insert ``rows`` of ``model`` (all with the same keys); where a row with the same ``keys`` exists,
    add the new values of the ``add`` columns to it and overwrite the ``replace`` columns. One execute
    (an executemany for several rows) of a statement built once per shape, so it is compiled once
    (``compiled_plans.write``)."""
    if not rows:
        return
    stmt = _statement(session.get_bind().dialect.name, model, keys, add, replace)
    write(session.connection(), stmt, rows)  # Core: no ORM bulk path


@lru_cache(maxsize=64)
def _statement(dialect: str, model: type, keys: tuple[str, ...], add: tuple[str, ...], replace: tuple[str, ...]) -> Any:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(model)
    changes = {name: getattr(model, name) + getattr(stmt.excluded, name) for name in add}
    changes.update({name: getattr(stmt.excluded, name) for name in replace})
    if changes:
        return stmt.on_conflict_do_update(index_elements=list(keys), set_=changes)
    return stmt.on_conflict_do_nothing(index_elements=list(keys))
