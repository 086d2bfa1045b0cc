"""Real data for the page tests, made through the services: accounts, bots on loopback, a tournament
and matches played by ``run_match`` (no Redis needed)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from sqlalchemy import select

from arena.composition import Context
from arena.services import bots as bot_service
from arena.services import tournaments as tournament_service
from arena.services.accounts import create_account
from arena.services.matches import run_match
from arena.storage.models import Account, Match, MatchSeat, MatchStatus, Tournament, TournamentStatus

CSRF = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"|name="csrf_token" value="([^"]+)"')


@dataclass
class World:
    organizer_token: str = ""
    owner_token: str = ""
    other_token: str = ""
    bots: dict[str, int] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    tournament: int = 0
    piranha_tournament: int = 0
    finished: list[int] = field(default_factory=list)
    sealed: list[int] = field(default_factory=list)  # played, but another match of its deal is still open
    queued: list[int] = field(default_factory=list)


def account(context: Context, name: str, admin: bool = False) -> str:
    with context.db.session() as session:
        return create_account(session, name, admin=admin)[1]


def register(context: Context, owner_name: str, name: str, url: str, game: str, check: bool = True) -> tuple[int, str]:
    settings = context.settings if check else replace(context.settings, health_check=False)
    with context.db.session() as session:
        owner = session.scalar(select(Account).where(Account.name == owner_name))
        bot, secret = bot_service.register_bot(session, owner, name, url, game, settings, context.health_check)
        return bot.id, secret


def tournament(context: Context, bots: list[int], game: str, seats: int) -> tuple[int, list[int]]:
    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.is_admin.is_(True)))
        tournament_id = tournament_service.create_tournament(
            session, organizer, {"game": game, "bots": bots, "seats": seats, "seed": 7},
            context.settings.deal_key()).id
    with context.db.session() as session:
        ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))
    return tournament_id, ids


def build_world(context: Context, random_urls: list[str], faulty_url: str) -> World:
    """alice owns three random Pajarracos bots and one that answers illegal actions; a tournament of the
    four has some matches played and the rest queued; a 2-player Piranha Pedro match is played too."""
    world = World(organizer_token=account(context, "org", admin=True), owner_token=account(context, "alice"),
                  other_token=account(context, "mallory"))
    for number, url in enumerate(random_urls[:3], start=1):
        name = f"rnd{number}"
        world.bots[name], world.secrets[name] = register(context, "alice", name, url, "pajarracos")
        world.urls[name] = url
    world.bots["faulty"], world.secrets["faulty"] = register(context, "alice", "faulty", faulty_url, "pajarracos",
                                                             check=False)
    world.urls["faulty"] = faulty_url
    world.tournament, ids = tournament(context, list(world.bots.values()), "pajarracos", 3)
    for match_id in ids[:7]:  # two whole deals (three rotations each), and one rotation of a third
        assert run_match(context.db, context.settings, match_id, "test-worker") == "recorded"
    world.finished, world.sealed, world.queued = ids[:6], ids[6:7], ids[7:]
    pp = [register(context, "alice", f"pp{n}", url, "piranha-pedro")[0] for n, url in enumerate(random_urls[3:5])]
    world.bots.update({"pp0": pp[0], "pp1": pp[1]})
    world.piranha_tournament, pids = tournament(context, pp, "piranha-pedro", 2)
    for match_id in pids[:2]:  # both rotations of its first deal
        assert run_match(context.db, context.settings, match_id, "test-worker") == "recorded"
    world.finished += pids[:2]
    return world


def csrf_token(html: str) -> str:
    found = CSRF.search(html)
    assert found, "no CSRF token in the page"
    return found.group(1) or found.group(2)


def log_in(client, token: str) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/login", data={"token": token, "csrf_token": csrf_token(page)})
    assert response.status_code == 302, response.get_data(as_text=True)


def tied_piranha_tournament(context: Context, world: World, ties: int) -> int:
    """A finished 2-seat Piranha Pedro tournament of pp0 and pp1 whose every match both bots survived
    (both rank 1: shared first place), stored through the recorders like a played match."""
    from arena.services.publication import publish

    bots = [world.bots["pp0"], world.bots["pp1"]]
    with context.db.session() as session:
        organizer = session.scalar(select(Tournament.created_by).limit(1))
        tournament = Tournament(game="piranha-pedro", seats=2, time_limit_ms=1000, seed=1, bot_ids=bots,
                                status=TournamentStatus.FINISHED, total=ties, created_by=organizer)
        session.add(tournament)
        session.flush()
        for n in range(ties):
            match = Match(tournament_id=tournament.id, game="piranha-pedro", num_players=2, seed=100 + n,
                          time_limit_ms=1000, status=MatchStatus.FINISHED, result={"ranks": [1, 1], "scores": [1, 1]})
            session.add(match)
            session.flush()
            seats = [MatchSeat(match_id=match.id, seat=i, bot_id=b) for i, b in enumerate(bots[::1 if n % 2 else -1])]
            session.add_all(seats)
            session.flush()
            replay = {"game": "piranha-pedro", "steps": [], "faults": [], "result": {
                "ranks": [1, 1], "scores": [1, 1], "forfeited": []}}
            publish(session, match.id, replay)
        return tournament.id
