"""What others must never learn: a bot's URL and signing secret, and anyone's API token.

Real matches: two random SDK bots on loopback and one bot that passed its health check and then went
away (so its matches record connection faults), registered through the API, a small tournament created
through the API and every match played in process with ``run_match``. Then everything an anonymous
caller and another account can read (API, and the public pages) is searched for URLs, host:port pairs
and secrets; and every database row for API tokens, which must exist only as their SHA-256.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from arena.services.accounts import hash_token
from arena.services.matches import run_match
from arena.storage.models import Account, Base, Match
from referee.replay import verify_replay
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests.arena.helpers import auth, token_for

GAME = "piranha-pedro"


@dataclass
class Played:
    owner: str
    stranger: str
    organizer: str
    bots: list[dict[str, Any]]  # as answered at creation: id, url, secret
    tournament_id: int
    match_ids: list[int]


@pytest.fixture
def gone_bot() -> Iterator[Any]:
    """A bot that answers its health check, then stops before the matches are played."""
    server = start_in_thread(make_bot(99))
    yield server
    server.server_close()


@pytest.fixture
def played(client, context, random_bots, gone_bot) -> Played:
    owner = client.post("/api/accounts", json={"name": "owner"}).get_json()["token"]
    stranger = client.post("/api/accounts", json={"name": "stranger"}).get_json()["token"]
    organizer = token_for(context, "organizer", admin=True)
    bots = []
    for i, url in enumerate([server.url for server in random_bots[:2]] + [gone_bot.url]):
        response = client.post("/api/bots", json={"name": f"b{i}", "url": url, "game": GAME}, headers=auth(owner))
        assert response.status_code == 201, response.get_json()
        bots.append(response.get_json())
    gone_bot.shutdown()  # from now on its port refuses connections: connection faults get recorded
    gone_bot.server_close()
    response = client.post("/api/tournaments", json={"game": GAME, "bots": [b["id"] for b in bots], "seats": 3,
                                                     "seed": 4, "time_limit_ms": 2000}, headers=auth(organizer))
    assert response.status_code == 201, response.get_json()
    tournament_id = response.get_json()["id"]
    with context.db.session() as session:
        match_ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)))
    for match_id in match_ids:
        assert run_match(context.db, context.settings, match_id, "test") == "recorded"
    return Played(owner, stranger, organizer, bots, tournament_id, match_ids)


def _needles(played: Played) -> dict[str, str]:
    """Every string whose appearance would give a bot's address or secret away."""
    needles = {}
    for bot in played.bots:
        url = bot["url"]
        host_port = url.split("://", 1)[1]
        port = host_port.rsplit(":", 1)[1]
        needles |= {f"url of bot {bot['id']}": url, f"host:port of bot {bot['id']}": host_port,
                    f"port of bot {bot['id']} (requests' wording)": f"port={port}",
                    f"secret of bot {bot['id']}": bot["secret"]}
    return needles


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _assert_nothing_leaks(where: str, text: str, needles: dict[str, str]) -> None:
    for label, needle in needles.items():
        assert needle not in text, f"{where} shows the {label}"


def test_others_never_see_a_bots_url_or_secret(client, played: Played) -> None:
    """Bots, matches (with their replays and faults), tournaments and leaderboards, to an anonymous
    caller, another account and an organizer; the owner does see the URLs (so the search could find
    them) but never the secret again."""
    assert played.match_ids and all(len(b["secret"]) >= 32 for b in played.bots)
    needles = _needles(played)
    paths = ["/api/bots", f"/api/tournaments/{played.tournament_id}", "/api/tournaments", "/api/matches",
             f"/api/matches?tournament={played.tournament_id}", f"/api/leaderboards/{GAME}",
             f"/api/leaderboards/{GAME}?players=3"]
    paths += [f"/api/bots/{b['id']}" for b in played.bots]
    paths += [f"/api/matches?bot={b['id']}" for b in played.bots]
    paths += [f"/api/matches/{m}" for m in played.match_ids]
    faults = []
    for viewer, headers in (("anonymous", {}), ("another account", auth(played.stranger)),
                            ("an organizer", auth(played.organizer))):
        for path in paths:
            response = client.get(path, headers=headers)
            assert response.status_code == 200, (path, response.get_json())
            _assert_nothing_leaks(f"{path} to {viewer}", response.get_data(as_text=True), needles)
            assert not {"url", "secret", "token", "token_hash"} & _keys(response.get_json()), (path, viewer)
            if path.startswith("/api/matches/"):
                replay = response.get_json()["replay"]
                assert replay and {p["name"] for p in replay["players"]} <= {b["name"] for b in played.bots}
                assert verify_replay(replay).ok  # blanking addresses keeps the replay checkable
                faults += replay["faults"]
    connection = [f for f in faults if f["kind"] == "connection_error"]
    assert connection, "the gone bot's matches should have recorded connection faults"
    assert all("<bot>" in f["message"] for f in connection), connection[0]["message"]
    for bot in played.bots:
        shown = client.get(f"/api/bots/{bot['id']}", headers=auth(played.owner)).get_json()
        assert shown["url"] == bot["url"] and "secret" not in shown
    listed = client.get("/api/bots", headers=auth(played.owner)).get_data(as_text=True)
    assert all(bot["url"] in listed for bot in played.bots)
    assert not any(bot["secret"] in listed for bot in played.bots)


def test_addresses_are_blanked_in_the_messages_of_the_http_client() -> None:
    from arena.services.redaction import without_addresses

    url = "https://bots.example.org:8443/alice"
    text = ("HTTPSConnectionPool(host='bots.example.org', port=8443): Max retries exceeded with url: /alice/act "
            "(Caused by NameResolutionError(\"Failed to resolve 'bots.example.org'\")); "
            "bots.example.org resolves to 10.1.2.3, a private address; and [fd00:b07::5]:8443")
    cleaned = without_addresses(text, [url])
    for needle in ("bots.example.org", "8443", "alice", "10.1.2.3", "fd00:b07::5"):
        assert needle not in cleaned, needle
    assert "/act" in cleaned and "Max retries exceeded" in cleaned  # still says what went wrong


def test_the_public_pages_never_show_a_bots_url_or_secret(client, played: Played) -> None:
    """Also the regression: the page of a bot whose every seat recorded no latency sample (the bot that
    went away) answered 500 (percentiles of an all-zero histogram are None, and None has no format)."""
    needles = _needles(played)
    paths = ["/", f"/tournaments/{played.tournament_id}", f"/leaderboards/{GAME}"]
    paths += [f"/bots/{b['id']}" for b in played.bots]
    paths += [f"/matches/{m}" for m in played.match_ids] + [f"/matches/{m}/replay.json" for m in played.match_ids]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        _assert_nothing_leaks(f"page {path}", response.get_data(as_text=True), needles)


def _cells(context) -> Iterator[tuple[str, str, str]]:
    """(table, column, text) for every cell of every table; gzip-compressed bytes are opened."""
    with context.db.session() as session:
        for table in Base.metadata.sorted_tables:
            for row in session.execute(select(table)).mappings():
                for column, value in row.items():
                    if isinstance(value, bytes | memoryview):
                        raw = bytes(value)
                        text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode("latin-1")
                    else:
                        text = value if isinstance(value, str) else json.dumps(value, default=str)
                    yield table.name, column, text


def test_regression_connection_faults_showed_the_bots_host_and_port(context, played: Played) -> None:
    """The HTTP client's message ("HTTPConnectionPool(host='127.0.0.1', port=33213): ...") went into the
    public replay and the faults table as it was, giving every visitor the address of a bot that failed.
    Checked here in every stored cell (the API and pages above); in the same pass: API tokens are
    stored only as their SHA-256, and a bot's secret only in its own row (the referee signs with it)."""
    tokens = {"owner": played.owner, "stranger": played.stranger, "organizer": played.organizer}
    with context.db.session() as session:
        stored = {a.name: a.token_hash for a in session.scalars(select(Account))}
    for name, token in tokens.items():
        assert stored[name] == hash_token(token) and len(stored[name]) == 64
    secrets_ = {b["secret"] for b in played.bots}
    addresses = {k: v for k, v in _needles(played).items() if not k.startswith("secret")}
    checked = 0
    for table, column, text in _cells(context):
        checked += 1
        if (table, column) != ("bots", "url"):  # the one place a URL must be kept
            _assert_nothing_leaks(f"{table}.{column}", text, addresses)
        for name, token in tokens.items():
            assert token not in text, f"{name}'s API token is stored in {table}.{column}"
            assert token.removeprefix("arena_") not in text, f"{name}'s token (unprefixed) in {table}.{column}"
        if (table, column) != ("bots", "secret"):  # the one place a secret must be kept (to sign calls)
            for secret in secrets_:
                assert secret not in text, f"a bot secret is stored in {table}.{column}"
    assert checked > 100


def _wrong_turn_replay(guesses: str) -> dict[str, Any]:
    """A replay whose seat 0 answered ``{"action": ..., "turn": guesses}``: a WRONG_TURN fault whose
    public message quotes what the bot wrote (as ``runner._step`` records it)."""
    from referee.bot_client import Reply
    from referee.games import GAMES
    from referee.runner import vet_action

    game = GAMES[GAME]
    state = game.initial_state(3, 1, {})
    _action, fault = vet_action(game, state, 0, 3, Reply({"action": None, "turn": guesses}, 5.0, None, 200))
    assert fault is not None and fault.kind == "wrong_turn"
    return {"faults": [{"seat": 0, "turn": 3, "path": "/act", **fault.to_json()}],
            "steps": [{"turn": 3, "decisions": [{"seat": 0, "fault": fault.to_json()}, {"seat": 1, "fault": None}]}]}


def test_regression_redaction_confirmed_a_bots_guess_of_another_bots_host_and_path() -> None:
    """Every fault was blanked with the URLs of every seat, so a bot that wrote guesses into its own fault
    (a wrong "turn" is quoted in the public message) read in the replay which guess had become "<bot>":
    another bot's host name and path, its owner's alone, confirmed by the arena. A fault names the bot
    that made it: it is blanked with that seat's URL only, and a right guess reads like a wrong one."""
    from arena.services.redaction import redact_replay

    attacker = "http://attacker.example:8001"
    guesses = "try alpha-bots.example.com victim-bot.example.net /v1/act bravo.example.org"
    shown = []
    for victim in ("https://victim-bot.example.net:8443/v1", "https://someone-else.example.org:9443/x"):
        replay = _wrong_turn_replay(guesses)
        redact_replay(replay, [attacker, victim, "http://third.example:8003"])
        shown.append((replay["faults"][0]["message"], replay["steps"][0]["decisions"][0]["fault"]["message"]))
    assert shown[0] == shown[1], "the redacted message tells which guess was another seat's address"
    assert "victim-bot.example.net" in shown[0][0] and "<bot>" not in shown[0][0]
