"""arena.storage.upsert: one statement that inserts new rows and adds to (or replaces in) existing ones."""

from __future__ import annotations

from sqlalchemy import select

from arena.storage.models import MetricCounter
from arena.storage.upsert import upsert


def test_upsert_inserts_then_adds_to_the_same_rows(database) -> None:
    rows = [{"name": "a", "labels": "", "value": 1.0}, {"name": "b", "labels": "x=1", "value": 2.5}]
    with database.session() as session:
        upsert(session, MetricCounter, rows, ("name", "labels"), add=("value",))
        upsert(session, MetricCounter, rows[:1], ("name", "labels"), add=("value",))  # one row: no executemany
    with database.session() as session:
        upsert(session, MetricCounter, rows, ("name", "labels"), add=("value",))
        upsert(session, MetricCounter, [], ("name", "labels"), add=("value",))  # nothing to write
    with database.session(readonly=True) as session:
        values = dict(session.execute(select(MetricCounter.name, MetricCounter.value)).all())
    assert values == {"a": 3.0, "b": 5.0}


def test_upsert_replaces_the_columns_it_is_told_to(database) -> None:
    with database.session() as session:
        upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
               replace=("value",))
        upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 7.0}], ("name", "labels"),
               replace=("value",))
    with database.session(readonly=True) as session:
        assert session.execute(select(MetricCounter.value)).scalars().all() == [7.0]
