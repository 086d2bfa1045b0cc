"""The spectators' feed of a match (arena.services.live_feed): the public board step by step while the deal
allows it, a bare "being played" while a twin of its deal is still open, and statuses, nothing more."""

from __future__ import annotations

import json
import random
from typing import Any

from sqlalchemy import select, update

from arena.services import live_feed
from arena.services.live_feed import MatchFeed, board_may_show
from arena.services.matches import run_match
from arena.storage.models import Match, MatchStatus
from referee.games import get_game
from referee.live_view import PublicStep, public_step
from tests.arena import service_harness as h


class FakeSink:
    """Every event as the bus would carry it (JSON text), in order; kept events apart."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str]] = []
        self.kept: dict[str, tuple[str, str]] = {}

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False) -> None:
        text = json.dumps(data, sort_keys=True)
        self.sent.append((topic, kind, text))
        if keep:
            self.kept[topic] = (kind, text)

    def keep(self, topic: str, kind: str, data: dict[str, Any]) -> None:
        self.kept[topic] = (kind, json.dumps(data, sort_keys=True))

    def kinds(self, topic: str) -> list[str]:
        return [kind for t, kind, _ in self.sent if t == topic]


def random_steps(game_name: str, players: int, seed: int) -> list[PublicStep]:
    """A whole match of random legal actions, as the referee hands it to ``on_public_step``."""
    game, rng = get_game(game_name), random.Random(seed)
    state = game.initial_state(players, seed, {})
    steps = [public_step(game, state, 0, [0] * players, [False] * players)]
    turn = 0
    while not game.is_terminal(state):
        turn += 1
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})
        steps.append(public_step(game, state, turn, [turn * 7.0] * players, [False] * players))
    return steps


def apply(view: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """What the browser does with a step's changes (static/live.js ``applyChanges``)."""
    out = dict(view)
    out.update(changes.get("set", {}))
    for key, tail in changes.get("append", {}).items():
        out[key] = list(view.get(key, [])) + tail
    for key in changes.get("unset", []):
        out.pop(key, None)
    return out


def test_a_shown_board_is_rebuilt_exactly_from_the_first_board_and_the_changes() -> None:
    for game_name, players in (("piranha-pedro", 3), ("pajarracos", 4)):
        sink = FakeSink()
        feed = MatchFeed(sink, 7, may_show=lambda: True)
        steps = random_steps(game_name, players, seed=11)
        for step in steps:
            feed(step)
        topic = live_feed.match_topic(7)
        assert sink.kinds(topic) == ["board"] + ["step"] * (len(steps) - 1)
        events = [json.loads(text) for _, _, text in sink.sent]
        view = events[0]["view"]
        for step, event in zip(steps[1:], events[1:], strict=True):
            assert event["turn"] == step.turn and "view" not in event
            view = apply(view, event["changes"])
            assert json.dumps(view, sort_keys=True) == json.dumps(step.to_json()["view"], sort_keys=True)
        assert sink.kept[topic][0] == "board" and json.loads(sink.kept[topic][1])["turn"] == steps[-1].turn
        assert events[-1]["over"] is True and events[-1]["thinking"] == []


def test_no_event_ever_carries_the_result_or_the_seed() -> None:
    sink = FakeSink()
    feed = MatchFeed(sink, 3, may_show=lambda: True)
    for step in random_steps("piranha-pedro", 2, seed=5):
        feed(step)
    kept = json.loads(sink.kept[live_feed.match_topic(3)][1])
    assert "result" not in kept["view"] and "stalled" not in kept["view"]
    assert all('"result"' not in text and '"seed"' not in text and '"hand"' not in text for _, _, text in sink.sent)


def test_while_a_twin_is_open_the_feed_says_only_that_the_match_is_played_whatever_the_deal() -> None:
    """Two different deals, of different lengths, give the same bytes: neither the board nor the pace of
    the match (its step count) can be read from the feed of a sealed deal."""
    streams = []
    for seed in (1, 2):
        sink, now = FakeSink(), [0.0]
        feed = MatchFeed(sink, 9, may_show=lambda: False, clock=lambda now=now: now[0])
        steps = random_steps("pajarracos", 3, seed)
        for step in steps:
            now[0] += 0.5  # rechecks every RECHECK_S while it stays hidden
            feed(step)
        streams.append((sink.sent, sink.kept))
    assert len(random_steps("pajarracos", 3, 1)) != len(random_steps("pajarracos", 3, 2))
    assert streams[0] == streams[1]
    assert streams[0][0] == [("match-9", "hidden", '{"match": 9, "status": "running"}')]


def test_the_board_appears_once_the_last_twin_is_over() -> None:
    sink, now, open_twins = FakeSink(), [0.0], [True]
    feed = MatchFeed(sink, 4, may_show=lambda: not open_twins[0], clock=lambda: now[0])
    steps = random_steps("piranha-pedro", 2, seed=3)
    for index, step in enumerate(steps):
        if index == 5:
            open_twins[0] = False
        now[0] += 1.0
        feed(step)
    kinds = sink.kinds("match-4")
    assert kinds[0] == "hidden" and "board" in kinds
    first_board = json.loads(next(text for _, kind, text in sink.sent if kind == "board"))
    assert first_board["turn"] >= 5  # not before the twin was over, and whole (the page had no board yet)


def test_a_feed_told_at_the_claim_whether_it_may_show_does_not_ask_again_at_the_first_step() -> None:
    """The worker reads the deal's statuses in the claim's transaction (``Deal.may_show_now``); the first
    step uses that answer, and a hidden board still asks again every RECHECK_S."""
    asked = []
    sink, now = FakeSink(), [0.0]
    feed = MatchFeed(sink, 5, may_show=lambda: asked.append(1) or True, clock=lambda: now[0], shown=False)
    steps = random_steps("piranha-pedro", 2, seed=4)
    feed(steps[0])
    assert asked == [] and sink.kinds("match-5") == ["hidden"]
    now[0] += 2 * live_feed.RECHECK_S
    feed(steps[1])
    assert asked == [1] and sink.kinds("match-5") == ["hidden", "board"]
    shown = FakeSink()
    feed = MatchFeed(shown, 6, may_show=lambda: asked.append(1) or False, shown=True)
    feed(steps[0])
    assert asked == [1] and shown.kinds("match-6") == ["board"]


def test_a_deal_may_show_only_when_no_other_of_its_matches_is_open() -> None:
    deal = live_feed.Deal(3, 1, None, [(2, MatchStatus.QUEUED), (3, MatchStatus.RUNNING)])
    assert not deal.may_show_now()
    assert live_feed.Deal(3, 1, None, [(2, MatchStatus.SEALED), (3, MatchStatus.RUNNING)]).may_show_now()


def test_a_feed_that_fails_never_breaks_the_match() -> None:
    class Broken(FakeSink):
        def publish(self, *args: Any, **kwargs: Any) -> None:
            raise ConnectionError("redis away")

    feed = MatchFeed(Broken(), 1, may_show=lambda: True)
    for step in random_steps("pajarracos", 3, seed=1)[:3]:
        feed(step)  # no exception


def test_the_board_may_show_only_when_no_other_match_of_the_deal_is_open(context) -> None:
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        tournament_id = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
        with context.db.session() as session:
            first, twin = session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                                          .order_by(Match.id)).all()
            assert not board_may_show(session, first) and not board_may_show(session, twin)
            session.execute(update(Match).where(Match.id == first).values(status=MatchStatus.SEALED))
            assert board_may_show(session, twin)  # its only twin is played (sealed): nobody can use the deal
            assert not board_may_show(session, first)  # its twin is still queued


def test_run_match_shows_the_last_rotation_live_and_hides_the_first(context) -> None:
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        tournament_id = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
        with context.db.session(readonly=True) as session:
            first, twin = session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                                          .order_by(Match.id)).all()
        sink = FakeSink()
        assert run_match(context.db, context.settings, first, "w", live=sink) == "recorded"  # announces it too
        assert [k for k in sink.kinds(f"match-{first}")] == ["status", "hidden", "status"]
        statuses = [json.loads(text)["status"] for t, kind, text in sink.sent if kind == "status"]
        assert statuses[-2:] == ["sealed", "queued"]  # the match, then its twin: statuses only
        sink.sent.clear()
        assert run_match(context.db, context.settings, twin, "w", live=sink) == "recorded"
        kinds = sink.kinds(f"match-{twin}")
        assert kinds[:2] == ["status", "board"] and kinds.count("step") >= 1
        assert (f"match-{first}", "status", json.dumps({"match": first, "status": "finished"})) in sink.sent
        assert sink.kinds(f"tournament-{tournament_id}") == ["changed", "changed"]


def test_a_refit_tells_the_leaderboard_page_to_look_again(client) -> None:
    sink = FakeSink()
    live_feed.refitted(sink, "pajarracos", 4)
    assert sink.sent == [("leaderboard-pajarracos-4", "refitted", '{"game": "pajarracos", "players": 4}')]
    assert sink.kept["leaderboard-pajarracos-4"][0] == "refitted"  # for pages that poll
    live_feed.refitted(None, "pajarracos", 4)  # no Redis: nothing to tell, nothing fails
    page = client.get("/leaderboards/pajarracos?players=4").get_data(as_text=True)
    assert 'data-live-topic="leaderboard-pajarracos-4"' in page and "live.js" in page


def test_ladder_activity_shows_as_it_happens_on_the_ladder_page(client, context) -> None:
    """Issue 18: a ladder's page follows its topic; every change of one of its matches says "look again",
    and the page lists its latest matches (results only once their deal is over)."""
    from arena.services.ladders import ensure_ladders
    from arena.storage.models import Match

    with context.db.session() as session:
        ladder_id = next(lad.id for lad in ensure_ladders(session, context.settings)
                         if (lad.game, lad.players) == ("pajarracos", 3))
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert f'data-live-topic="ladder-{ladder_id}"' in page and "live.js" in page and "No match yet" in page
    with context.db.session() as session:
        match = Match(ladder_id=ladder_id, game="pajarracos", num_players=3, seed=7, time_limit_ms=1000,
                      status=MatchStatus.SEALED)
        session.add(match)
        session.flush()
        match_id = match.id
    sink = FakeSink()
    live_feed.announce(context.db, sink, match_id)
    assert sink.sent[-1] == (f"ladder-{ladder_id}", "changed", json.dumps({"ladder": ladder_id}))
    assert client.get(f"/live/ladder-{ladder_id}/last").status_code in (200, 204, 503)  # a topic the web knows
    page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)
    assert f"/matches/{match_id}" in page and "No match yet" not in page
