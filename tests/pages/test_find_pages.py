"""The index pages and their services: filters narrow exactly, keyset paging walks every match once,
result filters never reveal a sealed match, head-to-head records equal a count from the seat rows, and
every unknown path gets the styled 404."""

from __future__ import annotations

from sqlalchemy import select, text

from arena.services import find_lists, find_matches
from arena.services.find_matches import MatchFilter, parse_filter
from arena.storage.models import Ladder, Match, MatchSeat, MatchStatus


def _ids(context, f: MatchFilter, limit: int = 50) -> list[int]:
    with context.db.session(readonly=True) as session:
        return [m["id"] for m in find_matches.find_matches(session, f, limit)["matches"]]


def _seats(context) -> dict[int, dict[int, int | None]]:
    """match id: {bot id: rank} for every match with seats."""
    with context.db.session(readonly=True) as session:
        out: dict[int, dict[int, int | None]] = {}
        for match_id, bot_id, rank in session.execute(select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank)):
            out.setdefault(match_id, {})[bot_id] = rank
        return out


def test_filters_select_exactly_the_matching_matches(context, world) -> None:
    seats = _seats(context)
    everything = _ids(context, MatchFilter(), 500)
    assert everything == sorted(everything, reverse=True) and len(everything) == len(seats)
    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    assert _ids(context, MatchFilter(bot=rnd1), 500) == [m for m in everything if rnd1 in seats[m]]
    assert _ids(context, MatchFilter(bot=rnd1, opponent=rnd2), 500) == [
        m for m in everything if rnd1 in seats[m] and rnd2 in seats[m]]
    assert _ids(context, MatchFilter(tournament=world.piranha_tournament), 500) == [
        m for m in everything if world.bots["pp0"] in seats[m]]
    assert _ids(context, MatchFilter(game="piranha-pedro", players=2), 500) == _ids(
        context, MatchFilter(tournament=world.piranha_tournament), 500)
    assert _ids(context, MatchFilter(status="sealed")) == world.sealed
    assert set(_ids(context, MatchFilter(status="queued"), 500)) == set(world.queued)
    assert _ids(context, MatchFilter(game="pajarracos", players=4)) == []


def test_result_filters_partition_the_finished_matches_and_never_hold_a_sealed_one(context, world) -> None:
    """A sealed match is in no result list, whatever its (stored, unpublished) result: leaving it out of
    "won" but not "lost" would tell its outcome before the deal is over."""
    seats = _seats(context)
    sealed = world.sealed[0]
    for name in ("rnd1", "rnd2", "rnd3", "faulty"):
        bot = world.bots[name]
        lists = {r: _ids(context, MatchFilter(bot=bot, result=r), 500) for r in find_matches.RESULTS}
        found = [m for ids in lists.values() for m in ids]
        assert sealed not in found
        assert sorted(found) == sorted(m for m in world.finished if bot in seats[m])  # each once, all of them
        for match_id in lists["win"]:
            assert seats[match_id][bot] == 1 and list(seats[match_id].values()).count(1) == 1
        for match_id in lists["draw"]:
            assert seats[match_id][bot] == 1 and list(seats[match_id].values()).count(1) > 1
        for match_id in lists["loss"]:
            assert seats[match_id][bot] > 1
    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    for result, holds in (("win", lambda a, b: a < b), ("draw", lambda a, b: a == b), ("loss", lambda a, b: a > b)):
        assert _ids(context, MatchFilter(bot=rnd1, opponent=rnd2, result=result), 500) == [
            m for m in sorted(world.finished, reverse=True)
            if rnd1 in seats[m] and rnd2 in seats[m] and holds(seats[m][rnd1], seats[m][rnd2])]


def test_keyset_pages_walk_every_match_once_both_ways(context, world) -> None:
    for f in (MatchFilter(), MatchFilter(bot=world.bots["rnd1"]), MatchFilter(tournament=world.tournament)):
        expected = _ids(context, f, 500)
        seen, cursor, pages = [], None, []
        with context.db.session(readonly=True) as session:
            while True:
                page = find_matches.find_matches(session, MatchFilter(**{**f.__dict__, "before": cursor}), 3)
                pages.append(page)
                seen += [m["id"] for m in page["matches"]]
                if page["older"] is None:
                    break
                cursor = page["older"]
            assert seen == expected and pages[0]["newer"] is None and pages[-1]["older"] is None
            assert len(pages) > 1
            newest_of_last = pages[-1]["matches"][0]["id"]
            back = find_matches.find_matches(session, MatchFilter(**{**f.__dict__, "after": newest_of_last}), 3)
            assert [m["id"] for m in back["matches"]] == [m["id"] for m in pages[-2]["matches"]]
        for other in pages[1:]:
            assert other["newer"] is not None


def test_bot_and_tournament_lists_filter_and_page(context, world) -> None:
    with context.db.session(readonly=True) as session:
        bots = find_lists.find_bots(session, find_lists.ListFilter(game="piranha-pedro"))["bots"]
        assert [b["id"] for b in bots] == [world.bots["pp1"], world.bots["pp0"]]
        named = find_lists.find_bots(session, find_lists.ListFilter(name="RND"))["bots"]
        assert {b["name"] for b in named} == {"rnd1", "rnd2", "rnd3"}
        first = find_lists.find_bots(session, find_lists.ListFilter(), limit=2)
        second = find_lists.find_bots(session, find_lists.ListFilter(before=first["older"]), limit=2)
        assert first["newer"] is None and second["newer"] is not None
        assert not {b["id"] for b in first["bots"]} & {b["id"] for b in second["bots"]}
        with_pp = find_lists.find_tournaments(session, find_lists.ListFilter(bot=world.bots["pp0"]))
        assert [t["id"] for t in with_pp["tournaments"]] == [world.piranha_tournament]
        running = find_lists.find_tournaments(session, find_lists.ListFilter(status="running", game="pajarracos"))
        assert [t["id"] for t in running["tournaments"]] == [world.tournament]
        boards = find_lists.leaderboards(session)
        assert {(b["game"], b["players"]) for b in boards} >= {("pajarracos", 3), ("piranha-pedro", 2)}


def test_head_to_head_counts_every_finished_match_by_places(client, context, world) -> None:
    seats = _seats(context)
    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    met = [m for m in world.finished if rnd1 in seats[m] and rnd2 in seats[m]]
    expected = {"matches": len(met), "wins": sum(seats[m][rnd1] < seats[m][rnd2] for m in met),
                "draws": sum(seats[m][rnd1] == seats[m][rnd2] for m in met),
                "losses": sum(seats[m][rnd1] > seats[m][rnd2] for m in met)}
    record = client.get(f"/api/bots/{rnd1}/vs/{rnd2}").get_json()
    assert record["total"] == expected and expected["matches"] > 0
    mirror = client.get(f"/api/bots/{rnd2}/vs/{rnd1}").get_json()["total"]
    assert [mirror[k] for k in ("wins", "draws", "losses")] == [expected[k] for k in ("losses", "draws", "wins")]
    html = client.get(f"/bots/{rnd1}/vs/{rnd2}").get_data(as_text=True)
    assert f"{expected['matches']} matches:" in html and "rnd2" in html
    assert client.get(f"/api/bots/{rnd1}/vs/{rnd1}").status_code == 422
    assert client.get(f"/api/bots/{rnd1}/vs/999999").status_code == 404


def test_index_pages_render_and_refuse_filters_that_name_nothing(client, world) -> None:
    rnd1 = world.bots["rnd1"]
    for path in ("/bots", "/bots?game=pajarracos&status=active&name=rnd", "/matches", f"/matches?bot={rnd1}&result=win",
                 f"/matches?bot={rnd1}&opponent={world.bots['rnd2']}", f"/matches?tournament={world.tournament}",
                 "/tournaments?status=running", f"/tournaments?bot={rnd1}", "/leaderboards",
                 "/leaderboards?game=pajarracos"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:400])
    html = client.get("/matches?status=sealed").get_data(as_text=True)
    assert f"#{world.sealed[0]}" in html and "result shown when its deal is over" in html
    for path in ("/matches?game=chess", "/matches?result=win", "/matches?players=9", "/bots?status=asleep",
                 f"/matches?bot={rnd1}&opponent={rnd1}"):
        response = client.get(path)
        assert response.status_code == 422 and "<main" in response.get_data(as_text=True), path
    assert client.get("/matches?bot=999999").status_code == 404


def test_unknown_paths_get_the_styled_404_page_and_api_paths_json(client) -> None:
    for path in ("/no-such-page", "/bots/abc", "/matches/1/nothing", "/leaderboards/x/y/z"):
        response = client.get(path)
        body = response.get_data(as_text=True)
        assert response.status_code == 404 and 'class="site-header"' in body and "Not found" in body, path
        assert 'href="/matches"' in body
    for path in ("/api/no-such", "/api/bots/abc"):
        response = client.get(path)
        assert response.status_code == 404 and response.get_json() == {"error": "no such resource", "status": 404}


def test_ladder_filter_lists_a_ladders_matches(context, world) -> None:
    with context.db.session() as session:
        ladder = Ladder(game="pajarracos", players=3, time_limit_ms=1000)
        session.add(ladder)
        session.flush()
        match = Match(ladder_id=ladder.id, game="pajarracos", num_players=3, seed=5, time_limit_ms=1000,
                      status=MatchStatus.QUEUED)
        session.add(match)
        session.flush()
        ladder_id, match_id = ladder.id, match.id
    assert _ids(context, parse_filter({"ladder": str(ladder_id)})) == [match_id]
    with context.db.session(readonly=True) as session:
        rows = find_matches.find_matches(session, MatchFilter(ladder=ladder_id))["matches"]
        assert rows[0]["ladder_id"] == ladder_id
        boards = {(b["game"], b["players"]): b for b in find_lists.leaderboards(session)}
        assert boards[("pajarracos", 3)]["ladder"] == {"id": ladder_id, "status": "running"}


def test_each_filter_walks_an_index_in_id_order_on_sqlite(tmp_path) -> None:
    """100,000 matches stay fast: no filter sorts its matches in a temporary B-tree (SQLite's plan on the
    migrated schema, so the indexes of revision 0008_find are the ones checked)."""
    from sqlalchemy.dialects import sqlite

    from arena.storage.db import Database

    db = Database(f"sqlite:///{tmp_path / 'plan.db'}")
    db.migrate()

    filters = [MatchFilter(), MatchFilter(tournament=1), MatchFilter(ladder=1),
               MatchFilter(game="pajarracos", players=3), MatchFilter(bot=1), MatchFilter(bot=1, opponent=2),
               MatchFilter(bot=1, result="win"), MatchFilter(status="finished"), MatchFilter(status="queued")]
    with db.engine.connect() as connection:
        for f in filters:
            query, column = find_matches._id_query(f)
            compiled = query.order_by(column.desc()).limit(51).compile(dialect=sqlite.dialect(),
                                                                      compile_kwargs={"literal_binds": True})
            plan = " | ".join(row[-1] for row in connection.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
            assert "TEMP B-TREE" not in plan, (f, plan)
    db.dispose()


def test_the_api_match_list_takes_the_same_filters_and_cursor(client, context, world) -> None:
    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    for query, f in ((f"bot={rnd1}&result=win", MatchFilter(bot=rnd1, result="win")),
                     (f"bot={rnd1}&opponent={rnd2}", MatchFilter(bot=rnd1, opponent=rnd2)),
                     ("status=queued", MatchFilter(status="queued")),
                     (f"before={world.finished[3]}", MatchFilter(before=world.finished[3]))):
        listed = client.get(f"/api/matches?{query}&limit=500").get_json()
        assert [m["id"] for m in listed] == _ids(context, f, 500), query
    assert client.get("/api/matches?result=win").status_code == 422
