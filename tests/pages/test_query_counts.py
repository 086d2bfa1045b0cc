"""No page issues a query per row: the number of SQL statements a page runs does not grow with the
matches, seats and tournaments it lists."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from arena.services.find_matches import find_ids, parse_filter
from arena.services.matches import run_match


@contextmanager
def counting(engine) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """The statements this thread runs on ``engine`` meanwhile (the test client serves a request in the
    caller's thread). Another thread's statements on the same engine are not the page's: counting them
    made the counts of one page differ between two looks, once in a helper's run."""
    statements: list[str] = []
    mine = threading.get_ident()

    def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() == mine:
            statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


def queries(client, engine, url: str) -> int:  # type: ignore[no-untyped-def]
    with counting(engine) as statements:
        assert client.get(url).status_code == 200
    return len(statements)


def _a_result_listed_already(context, bot: int) -> str:  # type: ignore[no-untyped-def]
    """A result of ``bot``'s that lists a match before the test plays more. Regression: the list filtered by
    ``result=loss`` ran 4 statements, then 8 (two runs on a loaded machine): rnd1 had lost none of the
    world's matches, and a page that goes from no rows to some reads its rows' seats and kinds. Whether it
    had lost one depended on the tests before, since the random bots and their generators are the
    session's. From none to some is not growth with the data, so the test filters by a result that lists
    rows on both looks."""
    with context.db.session(readonly=True) as session:
        for result in ("loss", "win", "draw"):
            if find_ids(session, parse_filter({"bot": str(bot), "result": result})):
                return result
    raise AssertionError(f"bot {bot} has no finished match in the world")


def test_page_query_counts_do_not_grow_with_the_data(client, context, world) -> None:
    result = _a_result_listed_already(context, world.bots["rnd1"])
    urls = ["/", f"/tournaments/{world.tournament}", f"/bots/{world.bots['rnd1']}",
            "/leaderboards/pajarracos?players=3", f"/matches/{world.finished[0]}", "/matches", "/bots", "/tournaments",
            "/leaderboards", f"/matches?bot={world.bots['rnd1']}&opponent={world.bots['rnd2']}",
            f"/matches?bot={world.bots['rnd1']}&result={result}", f"/bots/{world.bots['rnd1']}/vs/{world.bots['rnd2']}"]
    before = {url: queries(client, context.db.engine, url) for url in urls}
    for match_id in world.queued[:3]:
        run_match(context.db, context.settings, match_id, "test-worker")
    after = {url: queries(client, context.db.engine, url) for url in urls}
    assert after == before
    assert max(before.values()) <= 25, before


def test_match_list_api_reads_no_replays_and_names_bots_in_one_query(client, context, world) -> None:
    """Regression: ``/api/matches`` loaded every listed match's replay blob and asked for the bots' names
    once per match (about 50 statements and 150 ms at the 99th percentile with 100,000 matches)."""
    url = "/api/matches?limit=50"
    before = queries(client, context.db.engine, url)
    for match_id in world.queued[:3]:
        run_match(context.db, context.settings, match_id, "test-worker")
    with counting(context.db.engine) as statements:
        listed = client.get(url).get_json()
    assert len(statements) == before <= 5, statements
    assert sum(m["status"] == "finished" for m in listed) >= 3
    assert not any("replay_gz" in statement for statement in statements)
    assert all(seat["name"] and not seat["name"].startswith("bot ") for m in listed for seat in m["seats"])
