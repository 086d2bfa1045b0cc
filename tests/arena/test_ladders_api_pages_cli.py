"""Organizer controls of the ladders through the API, the pages and ``arena ladder``; the leaderboard and
match views say which ladder a match came from."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

from sqlalchemy import select

from arena.services.ladders import ensure_ladders
from arena.storage.models import Account, Bot, Ladder, Match, MatchSeat, MatchStatus
from tests.arena.helpers import auth, token_for
from tests.arena.service_harness import ROOT
from tests.pages.builders import csrf_token, log_in


def _ladders(context) -> dict[tuple[str, int], int]:
    with context.db.session() as session:
        return {(lad.game, lad.players): lad.id for lad in ensure_ladders(session, context.settings)}


def test_organizers_pause_resume_and_tune_a_ladder_through_the_api(client, context) -> None:
    ladder_id = _ladders(context)[("piranha-pedro", 3)]
    admin, user = token_for(context, "org", admin=True), token_for(context, "user")
    listed = client.get("/api/ladders").get_json()
    assert {(lad["game"], lad["players"]) for lad in listed} >= {("piranha-pedro", 3), ("pajarracos", 3)}
    assert client.post(f"/api/ladders/{ladder_id}/pause").status_code == 401
    assert client.post(f"/api/ladders/{ladder_id}/pause", headers=auth(user)).status_code == 403
    paused = client.post(f"/api/ladders/{ladder_id}/pause", json={"reason": "upgrade"}, headers=auth(admin))
    assert paused.status_code == 200 and paused.get_json()["status"] == "paused"
    assert paused.get_json()["paused_reason"] == "upgrade"
    assert client.post(f"/api/ladders/{ladder_id}/resume", headers=auth(admin)).get_json()["status"] == "running"
    tuned = client.patch(f"/api/ladders/{ladder_id}/settings", json={"per_hour": 120, "weight": 3},
                         headers=auth(admin))
    assert tuned.status_code == 200
    assert tuned.get_json()["settings"]["per_hour"] == 120 and tuned.get_json()["overrides"] == {"per_hour": 120,
                                                                                                  "weight": 3}
    back = client.patch(f"/api/ladders/{ladder_id}/settings", json={"per_hour": None}, headers=auth(admin))
    assert back.get_json()["settings"]["per_hour"] == context.settings.ladder_per_hour
    for bad in ({"per_hour": -1}, {"speed": 3}, {}, {"weight": True}):
        assert client.patch(f"/api/ladders/{ladder_id}/settings", json=bad, headers=auth(admin)).status_code == 422
    assert client.get("/api/ladders/999999").status_code == 404
    assert client.get("/api/openapi.json").get_json()["paths"]["/api/ladders/{ladder_id}/settings"]


def test_the_ladder_pages_show_state_and_forms_only_to_organizers(client, context) -> None:
    ladder_id = _ladders(context)[("piranha-pedro", 3)]
    assert "Ladders" in client.get("/ladders").get_data(as_text=True)
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert "Organizer controls" not in page
    assert 'id="ladder-pause"' not in page
    log_in(client, token_for(context, "org", admin=True))
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert 'id="ladder-pause"' in page and 'id="ladder-tune"' in page
    response = client.post(f"/ladders/{ladder_id}/pause", data={"reason": "night", "csrf_token": csrf_token(page)})
    assert response.status_code == 302
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert "Paused: night" in page and 'id="ladder-resume"' in page
    response = client.post(f"/ladders/{ladder_id}/tune", data={"per_hour": "50", "csrf_token": csrf_token(page)})
    assert response.status_code == 302
    assert client.get(f"/api/ladders/{ladder_id}").get_json()["settings"]["per_hour"] == 50
    board = client.get("/leaderboards/piranha-pedro?players=3").get_data(as_text=True)
    assert 'id="ladder-state"' in board and "paused" in board


def test_a_ladder_match_says_so_on_its_page_and_in_its_json(client, context) -> None:
    ladder_id = _ladders(context)[("piranha-pedro", 3)]
    with context.db.session() as session:
        owner = Account(name="o", token_hash="x" * 64)
        session.add(owner)
        session.flush()
        bots = [Bot(owner_id=owner.id, name=f"b{i}", url="http://127.0.0.1:1", game="piranha-pedro", secret="s",
                    info={}) for i in range(3)]
        session.add_all(bots)
        session.flush()
        match = Match(ladder_id=ladder_id, game="piranha-pedro", num_players=3, seed=5, params={},
                      time_limit_ms=1000, status=MatchStatus.SCHEDULED)
        session.add(match)
        session.flush()
        session.add_all([MatchSeat(match_id=match.id, seat=i, bot_id=b.id) for i, b in enumerate(bots)])
        match_id = match.id
    data = client.get(f"/api/matches/{match_id}").get_json()
    assert data["kind"] == "ladder" and data["ladder"] == ladder_id and data["tournament"] is None
    assert data["seed"] is None
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert f'href="/ladders/{ladder_id}"' in page and "5" not in page.split("Seed", 1)[1][:120]


def test_arena_ladder_cli_lists_pauses_tunes_and_resumes(tmp_path, settings) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({"ARENA_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT), "ARENA_LADDER_PLAYERS": "3,4"})

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena.cli", "ladder", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)

    listed = arena("list")
    assert listed.returncode == 0 and "piranha-pedro, 4 players" in listed.stdout, listed.stderr
    # an empty ladder in the pages' words (it read "placing/settling" here, "waiting for bots" on its page)
    assert "waiting for bots (a table needs 4 of different owners); 0 bot(s)" in listed.stdout, listed.stdout
    ladder_id = listed.stdout.split("#", 1)[1].split(" ", 1)[0]
    assert "paused (lunch)" in arena("pause", ladder_id, "--reason", "lunch").stdout
    assert "per_hour=60" in arena("tune", ladder_id, "--per-hour", "60").stdout
    assert arena("tune", ladder_id, "--per-hour", "lots").returncode == 2
    assert arena("tune", ladder_id, "--weight", "0").returncode == 1
    assert ": running;" in arena("resume", ladder_id).stdout
    assert arena("pause", "99999").returncode == 1


def test_the_ladder_is_off_under_the_test_environment_unless_asked(settings) -> None:
    from arena.config import load_settings

    assert settings.ladder is False
    assert load_settings({"ARENA_LADDER": "1"}, env="test").ladder is True
    assert load_settings({}).ladder is True
    assert replace(settings, ladder_players="3").ladder_players == "3"


def test_ensure_ladders_skips_counts_a_game_does_not_allow(context) -> None:
    with context.db.session() as session:
        ensure_ladders(session, replace(context.settings, ladder_players="2"))
        boards = set(session.execute(select(Ladder.game, Ladder.players)).all())
    assert ("piranha-pedro", 2) in boards and ("pajarracos", 2) not in boards


def test_a_ladder_without_enough_bots_says_it_waits_rather_than_placing_and_settling(client, context) -> None:
    """Regression: with no bot on it, a ladder's page, the ladders list and its leaderboard said "placing and
    settling: full rate", and the leaderboard "Arena Elo fitted over 0 finished matches"."""
    ladder_id = _ladders(context)[("piranha-pedro", 3)]
    assert client.get(f"/api/ladders/{ladder_id}").get_json()["waiting"] is True
    for url in (f"/ladders/{ladder_id}", "/ladders", "/leaderboards/piranha-pedro?players=3"):
        page = client.get(url).get_data(as_text=True)
        assert "waiting for bots" in page and "placing and settling" not in page, url
    board = client.get("/leaderboards/piranha-pedro?players=3").get_data(as_text=True)
    assert "fitted over 0" not in board and "0 matches in the last hour" in board


def test_regression_a_settled_ladder_placing_newcomers_does_not_say_maintenance_rate(client, context) -> None:
    """Regression (a user's trial, twenty-first session): a leaderboard read "2 of 7 bots provisional · table settled
    (maintenance rate)": a settled ladder places a newcomer without reopening the rest (``ladder_planner``), but a
    provisional bot is played at the full rate. The pages now say it is placing them."""
    from arena.storage.models import Rating, utcnow

    ladder_id = _ladders(context)[("piranha-pedro", 3)]
    with context.db.session() as session:
        account = Account(name="placing-owner", token_hash="h" * 64, is_admin=False)
        session.add(account)
        session.flush()
        owner = account.id
        bots = [Bot(owner_id=owner, name=f"b{i}", url=f"http://127.0.0.1:{9100 + i}/", game="piranha-pedro",
                    secret="s", info={}) for i in range(4)]
        session.add_all(bots)
        session.flush()
        session.add_all([Rating(game="piranha-pedro", players=3, bot_id=bot.id, rank=i + 1, provisional=i == 3)
                         for i, bot in enumerate(bots)])
        session.get(Ladder, ladder_id).settled_at = utcnow()
    board = client.get("/leaderboards/piranha-pedro?players=3").get_data(as_text=True)
    assert "table settled, placing 1 newcomer" in board and "maintenance rate" not in board
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert "placing 1 newcomer, the rest at the maintenance rate" in page
    with context.db.session() as session:
        for rating in session.scalars(select(Rating)):
            rating.provisional = False
    board = client.get("/leaderboards/piranha-pedro?players=3").get_data(as_text=True)
    assert "table settled (maintenance rate)" in board and "newcomer" not in board
