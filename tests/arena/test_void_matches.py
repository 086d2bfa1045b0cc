"""Issue 15, "a match in which every seat forfeited before playing is recorded and rated": its ranks
came from random default play. Now it is recorded as void with its reason and never rated (no live Elo,
outcome, leaderboard, tournament standings, matches-played counter), and still counts as done for its
tournament."""

from __future__ import annotations

from sqlalchemy import func, select

from arena.services.matches import run_match
from arena.services.void_matches import VOID_REASON, void_reason
from arena.storage.models import (
    BoardOutcome,
    Fault,
    LiveRating,
    Match,
    MatchSeat,
    MatchStatus,
    MetricCounter,
    Rating,
    Tournament,
    TournamentScore,
    TournamentStatus,
)
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests.arena import service_harness as h


def _count(session, model) -> int:  # type: ignore[no-untyped-def]
    return session.scalar(select(func.count()).select_from(model))


def test_match_where_every_seat_forfeited_before_playing_is_rated(context, app) -> None:
    servers = [start_in_thread(make_bot(i)) for i in range(2)]
    bots = h.register_bots(context, servers, "piranha-pedro")
    tournament_id = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
    for server in servers:  # both bots go away before the match: /start cannot reach either
        server.shutdown()
        server.server_close()
    with context.db.session(readonly=True) as session:
        match_ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)))
    for match_id in match_ids:
        assert run_match(context.db, context.settings, match_id, "w1") == "recorded"
    with context.db.session(readonly=True) as session:
        matches = list(session.scalars(select(Match).where(Match.id.in_(match_ids))))
        assert {m.status for m in matches} == {MatchStatus.VOID}
        assert all(m.error == VOID_REASON for m in matches)
        seats = list(session.scalars(select(MatchSeat).where(MatchSeat.match_id.in_(match_ids))))
        assert all(s.rank is None and s.score is None and s.forfeited and s.faults == 1 for s in seats)
        assert _count(session, Fault) == len(seats)  # the owners still see why (connection_error at /start)
        for model in (LiveRating, BoardOutcome, Rating, TournamentScore):
            assert _count(session, model) == 0, model.__name__
        assert session.scalar(select(MetricCounter.value).where(MetricCounter.name == "matches_played")) is None
        assert session.get(Tournament, tournament_id).status == TournamentStatus.FINISHED
    client = app.test_client()
    shown = client.get(f"/api/matches/{match_ids[0]}").get_json()
    assert shown["status"] == "void" and shown["error"] == VOID_REASON
    assert all(seat["rank"] is None for seat in shown["seats"])
    progress = client.get(f"/api/tournaments/{tournament_id}").get_json()["progress"]
    assert progress["done"] == progress["total"] == len(match_ids)
    page = client.get(f"/matches/{match_ids[0]}").get_data(as_text=True)
    assert "This match is void" in page and "not rated" in page


def _replay(forfeited: list[int], defaults: list[bool]) -> dict:
    return {"result": {"ranks": [1, 2], "forfeited": forfeited},
            "steps": [{"decisions": [{"default": d}]} for d in defaults]}


def test_void_only_when_every_seat_forfeited_without_a_move_of_its_own() -> None:
    assert void_reason(_replay([0, 1], [True, True])) == VOID_REASON
    assert void_reason(_replay([0, 1], [])) == VOID_REASON
    assert void_reason(_replay([0, 1], [True, False])) is None  # someone played before forfeiting
    assert void_reason(_replay([0], [True, True])) is None  # seat 1 never forfeited: it won
