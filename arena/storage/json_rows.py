"""Rows gathered into one JSON value, on SQLite and PostgreSQL alike.

A worker's claim hands back, from its one UPDATE, what it used to read in two more statements (the seats'
bots, the deal's statuses): each as a scalar subquery of ``json_rows`` in its RETURNING; and the read of a
deal being published brings its matches' seats and its bots' live ratings the same way
(``publication.settle_deal``). On PostgreSQL a statement saved is a round trip saved, and both are on a
worker's path.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement


class json_rows(FunctionElement[Any]):  # lower case: a SQL function's name, as SQLAlchemy's own are
    """An aggregate: a JSON array holding, per row, a JSON array of the given columns. No rows: NULL on
    PostgreSQL, ``[]`` on SQLite (``rows_of`` reads both as an empty list). The rows' order is not
    guaranteed: carry what orders them as a column."""

    type = JSON()
    inherit_cache = True
    name = "json_rows"


@compiles(json_rows, "sqlite")
def _sqlite(element: json_rows, compiler: Any, **kw: Any) -> str:
    return f"json_group_array(json_array({compiler.process(element.clauses, **kw)}))"


@compiles(json_rows, "postgresql")
def _postgresql(element: json_rows, compiler: Any, **kw: Any) -> str:
    return f"json_agg(json_build_array({compiler.process(element.clauses, **kw)}))"


def rows_of(value: Any) -> list[list[Any]]:
    """The rows of a ``json_rows`` value as the driver hands it back (NULL: none)."""
    return [] if value is None else list(value)
