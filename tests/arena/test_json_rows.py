"""arena.storage.json_rows: rows gathered into one JSON value, read back alike on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select

from arena.storage.json_rows import json_rows, rows_of
from arena.storage.models import MetricCounter


def test_json_rows_hands_back_every_row_with_its_types(database) -> None:
    with database.session() as session:
        session.add_all([MetricCounter(name="a", labels="", value=1.5),
                         MetricCounter(name="b", labels="x=\"1\", \u00e9", value=2.0)])
    with database.session(readonly=True) as session:
        value = session.scalar(select(json_rows(MetricCounter.name, MetricCounter.labels, MetricCounter.value)))
        none = session.scalar(select(json_rows(MetricCounter.name)).where(MetricCounter.name == "missing"))
    assert sorted(rows_of(value)) == [["a", "", 1.5], ["b", "x=\"1\", \u00e9", 2.0]]
    assert rows_of(none) == []  # no rows: NULL on PostgreSQL, [] on SQLite


def test_json_rows_as_a_correlated_subquery(database) -> None:
    """One value per outer row, each with the inner rows that match it (a correlated subquery; the claim's
    subqueries name their match by a bound id instead, ``claims._of_claimed`` says why)."""
    with database.session() as session:
        session.add_all([MetricCounter(name=name, labels=labels, value=1.0)
                         for name, labels in [("a", "1"), ("a", "2"), ("b", "1")]])
    inner = MetricCounter.__table__.alias("inner")
    outer = MetricCounter.__table__
    labels = (select(json_rows(inner.c.labels)).where(inner.c.name == outer.c.name).scalar_subquery())
    with database.session(readonly=True) as session:
        rows = session.execute(select(outer.c.name, labels).where(outer.c.labels == "1").order_by(outer.c.name)).all()
    assert [(name, sorted(rows_of(value))) for name, value in rows] == [("a", [["1"], ["2"]]), ("b", [["1"]])]
