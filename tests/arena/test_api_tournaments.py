"""Tournaments, matches and leaderboards through the API (matches played in process, no workers)."""

from __future__ import annotations

import json

from sqlalchemy import select, update

from arena.services.matches import run_match
from arena.storage.models import Bot, Match, MatchSeat
from referee.replay import verify_replay
from sample_bots import heuristic_bot, random_bot
from sample_bots.sdk import start_in_thread
from tests.arena.helpers import auth, token_for


def _bots(client, token, urls, game):
    ids = []
    for i, url in enumerate(urls):
        response = client.post("/api/bots", json={"name": f"b{i}", "url": url, "game": game}, headers=auth(token))
        assert response.status_code == 201, response.get_json()
        ids.append(response.get_json()["id"])
    return ids


def _play_all(context) -> None:
    with context.db.session() as session:
        ids = list(session.scalars(select(Match.id).order_by(Match.id)))
    for match_id in ids:
        assert run_match(context.db, context.settings, match_id, "test") == "recorded"


def test_only_organizers_create_and_cancel_tournaments(client, context, random_bots) -> None:
    user = token_for(context, "user")
    ids = _bots(client, user, [s.url for s in random_bots[:3]], "piranha-pedro")
    body = {"game": "piranha-pedro", "bots": ids, "seats": 3}
    assert client.post("/api/tournaments", json=body).status_code == 401
    assert client.post("/api/tournaments", json=body, headers=auth("arena_nope")).status_code == 401
    assert client.post("/api/tournaments", json=body, headers=auth(user)).status_code == 403
    admin = token_for(context, "boss", admin=True)
    created = client.post("/api/tournaments", json=body, headers=auth(admin))
    assert created.status_code == 201
    tid = created.get_json()["id"]
    assert client.post(f"/api/tournaments/{tid}/cancel", headers=auth(user)).status_code == 403
    cancelled = client.post(f"/api/tournaments/{tid}/cancel", headers=auth(admin)).get_json()
    assert cancelled["status"] == "cancelled" and cancelled["progress"]["cancelled"] == 3


def test_tournament_validation_errors_are_clear(client, context, random_bots) -> None:
    admin = token_for(context, "boss", admin=True)
    ids = _bots(client, admin, [s.url for s in random_bots[:3]], "piranha-pedro")
    cases = [
        ({"game": "chess", "bots": ids}, "game"),
        ({"game": "piranha-pedro", "bots": ids[:2], "seats": 3}, "at least 3 bots"),
        ({"game": "piranha-pedro", "bots": [*ids, 999]}, "unknown bot"),
        ({"game": "pajarracos", "bots": ids, "seats": 3}, "do not play"),
        ({"game": "piranha-pedro", "bots": ids, "params": {"supply": -3}}, "params"),
        ({"game": "piranha-pedro", "bots": ids, "cycles": 0}, "cycles"),
        ({"game": "piranha-pedro", "bots": [ids[0], ids[0]]}, "bots"),
        ({"game": "piranha-pedro", "bots": ids, "deals": "mirrored"}, "deals"),
        ({"game": "piranha-pedro", "bots": ids, "seats": 3, "params": {"loss_threshold": 4}}, "up to 10 piranhas"),
    ]
    for body, words in cases:
        response = client.post("/api/tournaments", json=body, headers=auth(admin))
        assert response.status_code == 422, (body, response.get_json())
        assert words in response.get_json()["error"], response.get_json()


def test_regression_a_tournament_of_54000_matches_held_the_database_for_34_seconds(client, context) -> None:
    """A user's trial: 9 bots, 6 seats, 1,000 cycles was accepted as 54,000 matches stored one flush at a time
    (34 s): SQLite's other writers waited, the ladder scheduler lost its lock and the reconciler failed. The
    matches go in in bulk now, and a plan over ``MAX_MATCHES`` is refused with what to do instead."""
    from arena.services.tournaments import MAX_MATCHES
    from tests.arena.owner_fakes import owner_with_bot

    ids = [owner_with_bot(context.db, f"owner-{i}", f"pj-{i}", f"http://127.0.0.1:90{i:02d}")[1] for i in range(9)]
    with context.db.session() as session:
        session.execute(update(Bot).values(game="pajarracos"))
    admin = token_for(context, "boss", admin=True)
    big = client.post("/api/tournaments", json={"game": "pajarracos", "bots": ids, "seats": 6, "cycles": 1000},
                      headers=auth(admin))
    assert big.status_code == 422 and "54000 matches (54 a cycle)" in big.get_json()["error"]
    cycles = MAX_MATCHES // 54
    made = client.post("/api/tournaments", json={"game": "pajarracos", "bots": ids, "seats": 6, "cycles": cycles},
                       headers=auth(admin))
    assert made.status_code == 201, made.get_json()
    with context.db.session(readonly=True) as session:
        rows = session.execute(select(Match.id, Match.table_index, Match.rotation, MatchSeat.seat, MatchSeat.bot_id)
                               .join(MatchSeat, MatchSeat.match_id == Match.id)
                               .where(Match.tournament_id == made.get_json()["id"])).all()
    assert len(rows) == 54 * cycles * 6  # every match with its six seats, each bot once a match
    seats: dict[int, list[int]] = {}
    for match_id, _table, _rotation, _seat, bot_id in rows:
        seats.setdefault(match_id, []).append(bot_id)
    assert len(seats) == 54 * cycles and all(len(set(bots)) == 6 for bots in seats.values())


def test_a_finished_tournament_shows_standings_cross_table_matches_and_leaderboard(client, context) -> None:
    servers = [start_in_thread(random_bot.make_bot(1)), start_in_thread(heuristic_bot.make_bot(2)),
               start_in_thread(random_bot.make_bot(3))]
    try:
        admin = token_for(context, "boss", admin=True)
        ids = _bots(client, admin, [s.url for s in servers], "piranha-pedro")
        created = client.post("/api/tournaments", json={"game": "piranha-pedro", "bots": ids, "seats": 2,
                                                        "cycles": 2, "seed": 4}, headers=auth(admin)).get_json()
        assert created["progress"] == {"done": 0, "total": 12, "running": 0, "sealed": 0, "queued": 12, "cancelled": 0,
                                       "errors": 0}
        _play_all(context)
    finally:
        for s in servers:
            s.shutdown()
            s.server_close()
    tournament = client.get(f"/api/tournaments/{created['id']}").get_json()
    assert tournament["status"] == "finished" and tournament["progress"]["done"] == 12
    assert [s["matches"] for s in tournament["standings"]] == [8, 8, 8]
    assert tournament["standings"][0]["bot_id"] == ids[1]  # the heuristic bot
    cross = tournament["cross_table"]
    a, b = str(ids[0]), str(ids[1])
    assert cross[a][b]["wins"] == cross[b][a]["losses"]
    matches = client.get(f"/api/matches?tournament={created['id']}&limit=5").get_json()
    assert len(matches) == 5 and matches[0]["id"] > matches[-1]["id"]
    by_bot = client.get(f"/api/matches?bot={ids[0]}").get_json()
    assert len(by_bot) == 8
    detail = client.get(f"/api/matches/{matches[0]['id']}").get_json()
    assert detail["status"] == "finished" and verify_replay(json.loads(json.dumps(detail["replay"]))).ok
    assert "url" not in json.dumps(detail["replay"]["players"])
    board = client.get("/api/leaderboards/piranha-pedro?players=2").get_json()
    assert board["entries"][0]["bot_id"] == ids[1]
    assert all(e["elo_low"] <= e["elo"] <= e["elo_high"] for e in board["entries"])
    assert all(e["games"] == 8 for e in board["entries"]) and board["matches"] == 12
    assert board["available_players"] == [2]
    assert client.get("/api/leaderboards/chess").status_code == 404
    assert client.get("/api/leaderboards/piranha-pedro?players=9").status_code == 422
